package speculative

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hlmproject/hlm/sampling"
	"github.com/hlmproject/hlm/tensor"
)

// randLogits fills a vocabulary of n logits of one of several shapes: an
// LLM-like spread, a peaked one, exact repeats, −Inf and NaN entries, all
// equal, a +Inf.
func randLogits(rng *rand.Rand, n, shape int) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch shape % 7 {
		case 0: // an LLM's spread
			x[i] = float32(rng.NormFloat64()*3 + 2)
		case 1: // peaked
			x[i] = float32(rng.NormFloat64() * 12)
		case 2: // few distinct values
			x[i] = float32(rng.IntN(4))
		case 3: // masked tokens
			x[i] = float32(rng.NormFloat64())
			if rng.IntN(3) == 0 {
				x[i] = float32(math.Inf(-1))
			}
		case 4: // NaN rows in a spread
			x[i] = float32(rng.NormFloat64() * 2)
			if rng.IntN(50) == 0 {
				x[i] = float32(math.NaN())
			}
		case 5: // flat
			x[i] = 7
		default: // huge spread, far below the exponential's range
			x[i] = float32(rng.NormFloat64() * 1e3)
		}
	}
	if shape%11 == 10 {
		x[rng.IntN(n)] = float32(math.Inf(1))
	}
	return x
}

var raceTemperatures = []float64{0, 0.05, 0.7, 1, 1.6, 40, math.Inf(1), 5e-324} // 5e-324: 1/T overflows

// TestCoupledSampleLogitsIsCoupledSample: the race from logits returns
// CoupledSample's token over Softmax of the same logits, for every shape,
// temperature and vocabulary length (shorter than a vector group, and long
// enough to be shared over threads), at every kernel level; and it decides
// by itself, without the distribution, in nearly every case (else the
// test would only exercise the fallback).
func TestCoupledSampleLogitsIsCoupledSample(t *testing.T) {
	defer tensor.SetKernels(tensor.Kernels())
	for _, level := range tensor.AvailableKernels() {
		if err := tensor.SetKernels(level); err != nil {
			t.Fatal(err)
		}
		t.Run(level, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(71, 72))
			decided, trials := 0, 0
			for trial := range 1500 {
				n := 1 + rng.IntN(3000)
				if trial%5 == 4 {
					n = 1 + rng.IntN(20)
				}
				x := randLogits(rng, n, trial)
				T := raceTemperatures[trial%len(raceTemperatures)]
				seed, pos := rng.Uint64(), rng.IntN(1<<20)
				want := CoupledSample(sampling.Softmax(nil, x, T), seed, pos)
				if got := CoupledSampleLogits(x, T, seed, pos); got != want {
					t.Fatalf("trial %d (n %d, shape %d, T %g): %d, CoupledSample %d", trial, n, trial%7, T, got, want)
				}
				if r, ok := raceLogits(x, T, noiseKey(seed), pos); ok {
					trials++
					if r.decided() {
						decided++
					}
				}
			}
			if decided < trials*99/100 || trials < 1000 {
				t.Fatalf("decided %d of %d races from the logits", decided, trials)
			}
		})
	}
}

// TestCoupledSampleLogitsThreads: at Qwen's vocabulary the race from
// logits runs in chunks on the threads, merging their leaders; the token
// is CoupledSample's with 4 threads and with one.
func TestCoupledSampleLogitsThreads(t *testing.T) {
	defer tensor.SetThreads(tensor.Threads())
	rng := rand.New(rand.NewPCG(73, 74))
	const n = 151936
	for c := range 5 {
		x := randLogits(rng, n, c)
		for pos := range 12 {
			seed, T := rng.Uint64(), raceTemperatures[1+pos%5]
			want := CoupledSample(sampling.Softmax(nil, x, T), seed, pos)
			for _, th := range []int{1, 4} {
				tensor.SetThreads(th)
				if got := CoupledSampleLogits(x, T, seed, pos); got != want {
					t.Fatalf("shape %d pos %d T %g, %d threads: %d, CoupledSample %d", c, pos, T, th, got, want)
				}
			}
		}
	}
}

// TestRaceLogitsRunnerUp widens the near-tie margins so that runners-up
// are common, and checks the leader and the runner-up against every
// token's score over the weights, at every kernel level and with the
// chunks on threads: the leader's token and score exactly, and the
// runner-up's score wherever it is within nearTie (where the race must
// not decide). CoupledSampleLogits still gives CoupledSample's tokens.
func TestRaceLogitsRunnerUp(t *testing.T) {
	defer tensor.SetKernels(tensor.Kernels())
	defer tensor.SetThreads(tensor.Threads())
	defer func(a, b float64) { nearTie, nearPrune = a, b }(nearTie, nearPrune)
	nearTie, nearPrune = 1.3, 1.4
	for _, level := range tensor.AvailableKernels() {
		if err := tensor.SetKernels(level); err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(75, 76))
		undecided := 0
		for trial := range 300 {
			n := 1 + rng.IntN(2000)
			if trial%10 == 9 {
				n = tensor.ShareMin + rng.IntN(3*tensor.ShareChunk)
				tensor.SetThreads(3)
			} else {
				tensor.SetThreads(1)
			}
			x := randLogits(rng, n, trial%5)
			T := raceTemperatures[1+trial%4]
			key, pos := rng.Uint64(), rng.IntN(1<<20)
			r, ok := raceLogits(x, T, key, pos)
			if !ok {
				t.Fatalf("%s trial %d: not raced", level, trial)
			}
			zmax := float64(x[sampling.Argmax(x)])
			var scores []float64
			best, bestTok := math.Inf(1), -1
			for i, v := range x {
				w := tensor.Exp(float64(float64(v)-zmax) * (1 / T))
				if !(w > 0) {
					continue
				}
				sc := -math.Log1p(-keyedUniform(key, pos, i)) / w
				scores = append(scores, sc)
				if sc < best {
					best, bestTok = sc, i
				}
			}
			slices.Sort(scores)
			second := math.Inf(1)
			if len(scores) > 1 {
				second = scores[1]
			}
			if r.tok != bestTok || r.best != best {
				t.Fatalf("%s trial %d: leader %d (%v), want %d (%v)", level, trial, r.tok, r.best, bestTok, best)
			}
			if second <= best*nearTie {
				undecided++
				if r.second != second || r.decided() {
					t.Fatalf("%s trial %d: runner-up %v (decided %v), want %v", level, trial, r.second, r.decided(), second)
				}
			} else if !r.decided() {
				t.Fatalf("%s trial %d: undecided with the runner-up at %v of the leader", level, trial, second/best)
			}
			seed := rng.Uint64()
			if got, want := CoupledSampleLogits(x, T, seed, pos), CoupledSample(sampling.Softmax(nil, x, T), seed, pos); got != want {
				t.Fatalf("%s trial %d: %d, CoupledSample %d", level, trial, got, want)
			}
		}
		if undecided < 10 {
			t.Fatalf("%s: only %d races with a runner-up within the margin", level, undecided)
		}
	}
}

// TestRaceLogitSkipStopsAtFirstCandidate pins the logits' vector filter
// to its definition (logitBound in Go, the same roundings) at every kernel
// level that has one, as TestRaceSkipStopsAtFirstCandidate does the
// race's over probabilities: a wrong conversion, shift, scale, rounding or
// exponent moves the point where it stops.
func TestRaceLogitSkipStopsAtFirstCandidate(t *testing.T) {
	defer tensor.SetKernels(tensor.Kernels())
	rng := rand.New(rand.NewPCG(77, 78))
	tested := false
	for _, level := range tensor.AvailableKernels() {
		if err := tensor.SetKernels(level); err != nil {
			t.Fatal(err)
		}
		filter, lanes := raceLogitKernel()
		if lanes == 0 {
			continue
		}
		for trial := range 3000 {
			n := 1 + rng.IntN(600)
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(rng.NormFloat64() * 4)
				if rng.IntN(40) == 0 {
					x[i] = float32(math.Inf(-1))
				}
			}
			zmax := float64(slices.Max(x)) + rng.Float64()*3
			scale := []float64{1, 0.5, 1.7, 1e-3, 30}[trial%5]
			key, pos, tok0 := rng.Uint64(), rng.IntN(1<<20), rng.IntN(200000)
			pmix := uint64(pos) * 0x9e3779b97f4a7c15
			// s2 such that about one token in 100 is a candidate.
			s2 := math.Exp(rng.NormFloat64()*8) * 1e-3
			skip := 0
			if m := n &^ (lanes - 1); m > 0 {
				skip = filter(&x[0], m, key, pmix, tok0, zmax, scale, s2, raceLoose)
			}
			tested = true
			want := n &^ (lanes - 1)
			for i := range want {
				y := float64(float64(x[i])-zmax) * scale
				if keyedUniform(key, pos, tok0+i)*raceLoose < logitBound(y, s2) {
					want = i &^ (lanes - 1)
					break
				}
			}
			if skip != want {
				t.Fatalf("%s trial %d (n %d, scale %g, s2 %g): skipped %d tokens, want %d", level, trial, n, scale, s2, skip, want)
			}
		}
	}
	if !tested {
		t.Skip("no vector kernel level on this CPU")
	}
}

// TestLogitBound: for every y ≤ 0 (down to below the exponential's range)
// and score s, s·Exp(y) < ¾·logitBound(y, 2s) — the margin the filter's
// soundness rests on — where the product is normal (below, u ≥ 2⁻⁵⁴
// skips the token either way), and a NaN logit has no bound.
func TestLogitBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(79, 80))
	for range 200000 {
		y := -math.Abs(rng.NormFloat64()) * []float64{1e-3, 1, 30, 400, 800}[rng.IntN(5)]
		s := math.Exp(rng.NormFloat64() * 20)
		if w := tensor.Exp(y); s*w >= 0x1p-1000 && !(s*w < 0.75*logitBound(y, 2*s)) {
			t.Fatalf("y %v s %v: s·e^y = %v, bound %v", y, s, s*w, logitBound(y, 2*s))
		}
	}
	if b := logitBound(math.NaN(), 1); b != 0 {
		t.Fatalf("NaN: bound %v, want 0", b)
	}
}

// BenchmarkRaceLogits times the coupled server's token at one position at
// a vocabulary of 32,000 and 151,936 from an LLM-like row of logits, one
// thread, at each kernel level: "softmax" is Softmax then CoupledSample,
// what verification did before, "logits" is CoupledSampleLogits.
func BenchmarkRaceLogits(b *testing.B) {
	defer tensor.SetKernels(tensor.Kernels())
	defer tensor.SetThreads(tensor.Threads())
	tensor.SetThreads(1)
	for _, vocab := range []int{32000, 151936} {
		x := randLogits(rand.New(rand.NewPCG(9, uint64(vocab))), vocab, 0)
		for _, level := range tensor.AvailableKernels() {
			for _, how := range []string{"softmax", "logits"} {
				b.Run(fmt.Sprintf("vocab=%d/%s/%s", vocab, level, how), func(b *testing.B) {
					if err := tensor.SetKernels(level); err != nil {
						b.Fatal(err)
					}
					p := make([]float64, vocab)
					pos := 0
					for b.Loop() {
						if how == "softmax" {
							CoupledSample(sampling.Softmax(p, x, 0.8), 42, pos)
						} else {
							CoupledSampleLogits(x, 0.8, 42, pos)
						}
						pos++
					}
					b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/op")
				})
			}
		}
	}
}

// FuzzCoupledSampleLogits: for any logits (any float32 bits: NaN
// payloads, infinities, subnormals, both zeros), temperature, seed and
// position, the race from logits gives CoupledSample's token over the
// softmax, at the kernel level in use.
func FuzzCoupledSampleLogits(f *testing.F) {
	f.Add([]byte{0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64}, 1.0, uint64(1), 3)
	f.Add([]byte{0, 0, 128, 127, 0, 0, 128, 255, 1, 0, 0, 0, 0, 0, 0, 128}, 0.7, uint64(9), 0)
	f.Add(make([]byte, 4*40), 1e-30, uint64(5), 17)
	f.Add([]byte{255, 255, 255, 127, 0, 0, 200, 66, 0, 0, 200, 194}, 3.0, uint64(77), 1<<20)
	f.Fuzz(func(t *testing.T, b []byte, temperature float64, seed uint64, pos int) {
		x := make([]float32, len(b)/4)
		for i := range x {
			x[i] = math.Float32frombits(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24)
		}
		want := CoupledSample(sampling.Softmax(nil, x, temperature), seed, pos)
		if got := CoupledSampleLogits(x, temperature, seed, pos); got != want {
			t.Fatalf("logits %v, T %v: %d, CoupledSample %d", x, temperature, got, want)
		}
	})
}
