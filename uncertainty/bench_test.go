package uncertainty

import (
	"math/rand/v2"
	"testing"
	"time"
)

const benchV = 32000

// benchLogits returns Llama-like logits: Gaussian with standard deviation 3
// plus a few strongly preferred tokens, and a draft sampled at temperature
// 1 (so u covers its whole range over the benchmark's tokens).
func benchLogits(seed uint64, boost float32) []float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	z := make([]float32, benchV)
	for i := range z {
		z[i] = float32(rng.NormFloat64() * 3)
	}
	for range 5 {
		z[rng.IntN(benchV)] += boost
	}
	return z
}

func benchMeasure(b *testing.B, naive bool) {
	const sets = 8
	var zs [sets][]float32
	var ds [sets]int
	rng := rand.New(rand.NewPCG(7, 7))
	for s := range sets {
		zs[s] = benchLogits(uint64(s), float32(4*s))
		ds[s] = rng.IntN(benchV)
		if s%2 == 0 { // the argmax
			for i, v := range zs[s] {
				if v > zs[s][ds[s]] {
					ds[s] = i
				}
			}
		}
	}
	p := Perturbation{M: 20, ThetaMax: 2}
	i := 0
	start := time.Now()
	for b.Loop() {
		if naive {
			p.MeasureNaive(zs[i%sets], ds[i%sets], rng)
		} else {
			p.Measure(zs[i%sets], ds[i%sets], rng)
		}
		i++
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N), "µs/token")
}

// BenchmarkMeasure is the fast path at V = 32,000, M = 20.
func BenchmarkMeasure(b *testing.B) { benchMeasure(b, false) }

// BenchmarkMeasureNaive is the reference: 20 full softmax passes.
func BenchmarkMeasureNaive(b *testing.B) { benchMeasure(b, true) }
