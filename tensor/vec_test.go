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

// TestScaleF64 compares ScaleF64 with a plain loop, bit for bit, at every
// kernel level, over lengths around the vector widths and values that
// overflow, underflow and are NaN or infinite.
func TestScaleF64(t *testing.T) {
	defer SetKernels(Kernels())
	rng := rand.New(rand.NewPCG(5, 6))
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 5e-324, 1.7e308}
	for _, l := range availableLevels() {
		level = l
		for trial := range 500 {
			n := rng.IntN(200)
			d := make([]float64, n)
			for i := range d {
				if rng.IntN(5) == 0 {
					d[i] = specials[rng.IntN(len(specials))]
				} else {
					d[i] = rng.NormFloat64()
				}
			}
			s := []float64{rng.Float64(), 3.5, 1e300, 1e-300, math.Inf(1), -2}[trial%6]
			want := make([]float64, n)
			for i, v := range d {
				want[i] = v * s
			}
			ScaleF64(d, s)
			for i := range d {
				if math.Float64bits(d[i]) != math.Float64bits(want[i]) && !(d[i] != d[i] && want[i] != want[i]) {
					t.Fatalf("%s trial %d (n %d): element %d is %v, want %v", levelNames[l], trial, n, i, d[i], want[i])
				}
			}
		}
	}
}

// BenchmarkScaleF64 times ScaleF64 over a distribution of Qwen's
// vocabulary (1.2 MB), one thread, at each kernel level.
func BenchmarkScaleF64(b *testing.B) {
	defer SetKernels(Kernels())
	d := make([]float64, 151936)
	for i := range d {
		d[i] = 1
	}
	for _, l := range availableLevels() {
		b.Run(levelNames[l], func(b *testing.B) {
			level = l
			for b.Loop() {
				ScaleF64(d, 1)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/op")
		})
	}
}
