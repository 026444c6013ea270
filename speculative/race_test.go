package speculative

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hlmproject/hlm/tensor"
)

// TestRaceWinnerPruningIsExact: raceWinner skips the logarithm of tokens
// that cannot win, and at the vector kernel levels whole groups of them
// (raceKernel); it must return exactly the full scan's winner and score, for
// peaked, flat, sparse and tiny-mass distributions, at every kernel level
// this CPU has.
func TestRaceWinnerPruningIsExact(t *testing.T) {
	defer tensor.SetKernels(tensor.Kernels())
	for _, level := range tensor.AvailableKernels() {
		if err := tensor.SetKernels(level); err != nil {
			t.Fatal(err)
		}
		t.Run(level, testRacePruning)
	}
}

func testRacePruning(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	full := func(p []float64, seed uint64, k, pos int) (int, float64) {
		key := noiseKey(listSeed(seed, k))
		best, bestScore := -1, math.Inf(1)
		for i, pi := range p {
			if pi > 0 {
				if sc := -math.Log1p(-keyedUniform(key, pos, i)) / pi; sc < bestScore {
					best, bestScore = i, sc
				}
			}
		}
		return best, bestScore
	}
	for trial := 0; trial < 400; trial++ {
		n := 1 + rng.IntN(3000)
		if trial%5 == 4 {
			n = 1 + rng.IntN(20) // shorter than a vector group, or a few
		}
		p := make([]float64, n)
		var sum float64
		for i := range p {
			switch trial % 4 {
			case 0: // peaked
				p[i] = math.Exp(rng.NormFloat64() * 4)
			case 1: // flat
				p[i] = 1
			case 2: // sparse
				if rng.IntN(10) == 0 {
					p[i] = rng.Float64()
				}
			default: // tiny masses
				p[i] = rng.Float64() * 1e-300
			}
			sum += p[i]
		}
		for i := range p {
			if trial%4 != 3 {
				p[i] /= sum
			}
		}
		seed, k, pos := rng.Uint64(), rng.IntN(3), rng.IntN(1000)
		gb, gs := raceWinner(p, seed, k, pos)
		wb, ws := full(p, seed, k, pos)
		if gb != wb || math.Float64bits(gs) != math.Float64bits(ws) {
			t.Fatalf("trial %d: winner %d (%g), full scan %d (%g)", trial, gb, gs, wb, ws)
		}
	}
}

// TestRaceWinnerThreads: at Qwen's vocabulary the race runs in chunks on
// the threads; winner and score are the one-pass scan's, for peaked and
// flat distributions, tokens of probability 0 and no mass at all.
func TestRaceWinnerThreads(t *testing.T) {
	defer tensor.SetThreads(tensor.Threads())
	const n = 151936
	rng := rand.New(rand.NewPCG(41, 42))
	for c := range 6 {
		p := make([]float64, n)
		var s float64
		for i := range p {
			switch {
			case c == 5: // no mass
			case c >= 3 && i%7 != 0: // most tokens filtered out
			default:
				p[i] = math.Exp(rng.NormFloat64() * float64(1+c))
			}
			s += p[i]
		}
		for i := range p {
			if s > 0 {
				p[i] /= s
			}
		}
		for pos := range 20 {
			seed := rng.Uint64()
			tensor.SetThreads(4)
			tok, score := raceWinner(p, seed, c%2, pos)
			want, wantScore := raceRange(p, noiseKey(listSeed(seed, c%2)), pos, 0)
			if tok != want || math.Float64bits(score) != math.Float64bits(wantScore) {
				t.Fatalf("case %d pos %d: 4 threads %d (%v), one pass %d (%v)", c, pos, tok, score, want, wantScore)
			}
		}
	}
}

// TestRaceSkipStopsAtFirstCandidate pins the vector filter to its
// definition at every kernel level that has one: the filter returns the
// start of the first group of lanes holding a token with
// keyedUniform·raceLoose < s·p_i, computed here in Go with the same
// roundings. A wrong hash, conversion or comparison moves that point.
func TestRaceSkipStopsAtFirstCandidate(t *testing.T) {
	defer tensor.SetKernels(tensor.Kernels())
	rng := rand.New(rand.NewPCG(63, 64))
	tested := false
	for _, level := range tensor.AvailableKernels() {
		if err := tensor.SetKernels(level); err != nil {
			t.Fatal(err)
		}
		for trial := range 2000 {
			n := 1 + rng.IntN(600)
			p := make([]float64, n)
			for i := range p {
				if rng.IntN(8) != 0 {
					p[i] = rng.Float64() / float64(n)
				}
			}
			key, pos, tok0 := rng.Uint64(), rng.IntN(1<<20), rng.IntN(200000)
			pmix := uint64(pos) * 0x9e3779b97f4a7c15
			// s such that about one token in 200 is a candidate.
			s := float64(n) / 200 * (0.5 + rng.Float64())
			filter, lanes := raceKernel()
			if lanes == 0 {
				break // no vector code at this level
			}
			skip := 0
			if n := n &^ (lanes - 1); n > 0 {
				skip = filter(&p[0], n, key, pmix, tok0, s, raceLoose)
			}
			tested = true
			want := n &^ (lanes - 1)
			for i := range want {
				if keyedUniform(key, pos, tok0+i)*raceLoose < s*p[i] {
					want = i &^ (lanes - 1)
					break
				}
			}
			if skip != want {
				t.Fatalf("%s trial %d (n %d, tok0 %d): skipped %d tokens, want %d", level, trial, n, tok0, skip, want)
			}
		}
	}
	if !tested {
		t.Skip("no vector kernel level on this CPU")
	}
}
