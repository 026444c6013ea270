package sampling

import (
	"math/rand/v2"
	"testing"
	"time"
)

// benchV is the Llama-2 vocabulary size.
const benchV = 32000

// benchLogits returns Llama-like logits: Gaussian with standard deviation 3
// and a few strongly preferred tokens.
func benchLogits(seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	z := make([]float32, benchV)
	for i := range z {
		z[i] = float32(rng.NormFloat64() * 3)
	}
	for range 5 {
		z[rng.IntN(benchV)] += 12
	}
	return z
}

func reportPerToken(b *testing.B, start time.Time, tokens int) {
	us := float64(time.Since(start).Microseconds()) / float64(tokens)
	b.ReportMetric(us, "µs/token")
}

func BenchmarkSoftmax(b *testing.B) {
	z := benchLogits(1)
	dst := make([]float64, benchV)
	start := time.Now()
	for b.Loop() {
		dst = Softmax(dst, z, 1)
	}
	reportPerToken(b, start, b.N)
}

func BenchmarkSample(b *testing.B) {
	p := Softmax(nil, benchLogits(2), 1)
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Now()
	for b.Loop() {
		Sample(p, rng)
	}
	reportPerToken(b, start, b.N)
}

func BenchmarkTopK40(b *testing.B) {
	p := Softmax(nil, benchLogits(3), 1)
	q := make([]float64, benchV)
	start := time.Now()
	for b.Loop() {
		copy(q, p)
		TopK(q, 40)
	}
	reportPerToken(b, start, b.N)
}

func BenchmarkTopP95(b *testing.B) {
	p := Softmax(nil, benchLogits(4), 1)
	q := make([]float64, benchV)
	start := time.Now()
	for b.Loop() {
		copy(q, p)
		TopP(q, 0.95)
	}
	reportPerToken(b, start, b.N)
}

func BenchmarkSamplerNext(b *testing.B) {
	z := benchLogits(5)
	s := Sampler{Temperature: 0.8, TopK: 40, TopP: 0.95}
	rng := rand.New(rand.NewPCG(1, 2))
	dst := make([]float64, benchV)
	start := time.Now()
	for b.Loop() {
		_, dst = s.NextInto(dst, z, rng)
	}
	reportPerToken(b, start, b.N)
}
