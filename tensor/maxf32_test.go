package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMaxIndexF32 compares MaxF32 and IndexF32 with plain loops at every
// kernel level, over lengths around the vector widths, with NaN, ±Inf,
// both zeros and ties placed anywhere.
func TestMaxIndexF32(t *testing.T) {
	defer SetKernels(Kernels())
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	specials := []float32{nan, inf, -inf, 0, float32(math.Copysign(0, -1)), 1e-40, -3}
	for _, l := range availableLevels() {
		level = l
		rng := rand.New(rand.NewPCG(3, 4))
		for trial := range 3000 {
			n := rng.IntN(300)
			if trial%50 == 0 {
				n = 4096 + rng.IntN(200)
			}
			x := make([]float32, n)
			for i := range x {
				switch rng.IntN(6) {
				case 0:
					x[i] = specials[rng.IntN(len(specials))]
				case 1:
					x[i] = float32(rng.IntN(3)) // ties
				default:
					x[i] = float32(rng.NormFloat64() * 10)
				}
				if trial%7 == 0 && rng.IntN(4) != 0 {
					x[i] = nan // mostly NaN
				}
			}
			want := float32(math.Inf(-1))
			for _, z := range x {
				if z > want {
					want = z
				}
			}
			got := MaxF32(x)
			if got != want && !(got != got && want != want) {
				t.Fatalf("%s trial %d (n %d): MaxF32 %v, want %v", levelNames[l], trial, n, got, want)
			}
			probes := []float32{want, 0, nan, 12345}
			if n > 0 {
				probes = append(probes, x[rng.IntN(n)])
			}
			for _, v := range probes {
				wi := -1
				for i, z := range x {
					if z == v {
						wi = i
						break
					}
				}
				if gi := IndexF32(x, v); gi != wi {
					t.Fatalf("%s trial %d (n %d): IndexF32(%v) = %d, want %d", levelNames[l], trial, n, v, gi, wi)
				}
			}
		}
	}
}

// BenchmarkMaxF32 times MaxF32 and IndexF32 (a value in the middle) over
// Qwen's vocabulary, one thread, at each kernel level.
func BenchmarkMaxF32(b *testing.B) {
	defer SetKernels(Kernels())
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, 151936)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	x[len(x)/2] = 100
	for _, l := range availableLevels() {
		b.Run(levelNames[l], func(b *testing.B) {
			level = l
			for b.Loop() {
				if IndexF32(x, MaxF32(x)) != len(x)/2 {
					b.Fatal("wrong index")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/op")
		})
	}
}
