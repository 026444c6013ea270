package speculative

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hlmproject/hlm/tensor"
)

// TestRaceWinnerPruningIsExact: raceWinner skips the logarithm of tokens
// that cannot win; it must return exactly the full scan's winner and score,
// for peaked, flat, sparse and tiny-mass distributions.
func TestRaceWinnerPruningIsExact(t *testing.T) {
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
	for trial := 0; trial < 300; trial++ {
		n := 1 + rng.IntN(3000)
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
