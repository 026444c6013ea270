package speculative

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hlmproject/hlm/sampling"
	"github.com/hlmproject/hlm/tensor"
)

const benchV = 32000

// benchPair returns a Llama-sized draft/target pair: SLM logits Gaussian
// (σ = 3) with a few preferred tokens, LLM logits the same plus N(0, 1)
// noise, both at temperature 1. Acceptance 1 − TV is then around 0.6–0.7.
func benchPair(seed uint64) (x, y []float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	zs := make([]float32, benchV)
	zl := make([]float32, benchV)
	for i := range zs {
		zs[i] = float32(rng.NormFloat64() * 3)
	}
	for range 5 {
		zs[rng.IntN(benchV)] += 12
	}
	for i := range zl {
		zl[i] = zs[i] + float32(rng.NormFloat64())
	}
	return sampling.Softmax(nil, zs, 1), sampling.Softmax(nil, zl, 1)
}

func BenchmarkVerify(b *testing.B) {
	x, y := benchPair(1)
	rng := rand.New(rand.NewPCG(2, 3))
	drafts := make([]int, 1024)
	for i := range drafts {
		drafts[i] = sampling.Sample(x, rng)
	}
	b.ReportMetric(AcceptProb(x, x, y), "acceptance")
	i := 0
	start := time.Now()
	for b.Loop() {
		Verify(x, y, drafts[i%len(drafts)], rng)
		i++
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N), "µs/token")
}

func BenchmarkVerifyBlockL8(b *testing.B) {
	const L = 8
	xhats := make([][]float64, L)
	ys := make([][]float64, L+1)
	for l := range L + 1 {
		x, y := benchPair(uint64(10 + l))
		if l < L {
			xhats[l] = x
		}
		ys[l] = y
	}
	rng := rand.New(rand.NewPCG(4, 5))
	const sets = 256
	drafts := make([][]int, sets)
	for s := range drafts {
		drafts[s] = make([]int, L)
		for l := range L {
			drafts[s][l] = sampling.Sample(xhats[l], rng)
		}
	}
	committed, i := 0, 0
	start := time.Now()
	for b.Loop() {
		r := VerifyBlock(xhats, ys, drafts[i%sets], rng)
		committed += r.Accepted + 1
		i++
	}
	el := time.Since(start)
	b.ReportMetric(float64(el.Microseconds())/float64(committed), "µs/token")
	b.ReportMetric(float64(committed)/float64(b.N), "tokens/round")
}

// BenchmarkRace times one exponential race (CoupledSample: the coupled
// methods' token on either side) over a peaked distribution at a
// vocabulary of 32,000 (Llama-2) and 151,936 (Qwen), one thread, at each
// kernel level: the vector levels hash the tokens 4 or 8 at a time and
// scan only the groups that may hold the winner.
func BenchmarkRace(b *testing.B) {
	defer tensor.SetKernels(tensor.Kernels())
	defer tensor.SetThreads(tensor.Threads())
	tensor.SetThreads(1)
	for _, vocab := range []int{32000, 151936} {
		rng := rand.New(rand.NewPCG(7, uint64(vocab)))
		p := make([]float64, vocab)
		var s float64
		for i := range p {
			p[i] = math.Exp(rng.NormFloat64() * 3)
			s += p[i]
		}
		for i := range p {
			p[i] /= s
		}
		for _, level := range tensor.AvailableKernels() {
			b.Run(fmt.Sprintf("vocab=%d/%s", vocab, level), func(b *testing.B) {
				if err := tensor.SetKernels(level); err != nil {
					b.Fatal(err)
				}
				pos := 0
				for b.Loop() {
					CoupledSample(p, 42, pos)
					pos++
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/op")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(vocab), "ns/token")
			})
		}
	}
}
