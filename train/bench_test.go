package train

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hlmproject/hlm/model"
)

// benchShapes are students of the two shipped drafts' shapes.
var benchShapes = []struct {
	name  string
	shape Shape
}{
	{"stories260K-draft", Shape{Config: model.Config{Dim: 48, Hidden: 160, Layers: 2, Heads: 8, KVHeads: 4, Vocab: 512, SeqLen: 512, RopeTheta: 10000, NormEps: 1e-5}, Tied: true}},
	{"656K-draft", Shape{Config: model.Config{Dim: 64, Hidden: 320, Layers: 1, Heads: 8, KVHeads: 4, Vocab: 2048, SeqLen: 512, RopeTheta: 10000, NormEps: 1e-6}, Tied: true}},
}

// BenchmarkStep is one training step (forward, loss, backward, AdamW) on 16
// sequences of 128 tokens, forward KL (the shipped drafts' loss), and reports tokens/s and the step's time over 3×
// its forward pass (the usual rule of thumb for a step's cost).
func BenchmarkStep(b *testing.B) {
	for _, bs := range benchShapes {
		b.Run(bs.name, func(b *testing.B) {
			p, _ := NewParams[float32](bs.shape)
			p.InitRandom(1, 0.02)
			m := NewModel(p)
			opt := NewOptimizer(DefaultAdamW(), p)
			bsz, t, v := 16, 128, bs.shape.Vocab
			rng := rand.New(rand.NewPCG(1, 1))
			toks := make([]int, bsz*t)
			for i := range toks {
				toks[i] = rng.IntN(v)
			}
			y := make([]float32, bsz*t*v)
			for i := range y {
				y[i] = 1 / float32(v)
			}
			dz := make([]float32, len(y))
			var fwd, step time.Duration
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				z, _ := m.Forward(toks, bsz, t)
				t1 := time.Now()
				Eval(FKL, dz, z, y, bsz*t, v)
				m.ZeroGrad()
				m.Backward(dz)
				opt.Update(p, m.G)
				fwd += t1.Sub(t0)
				step += time.Since(t0)
			}
			b.ReportMetric(float64(b.N*bsz*t)/step.Seconds(), "tokens/s")
			b.ReportMetric(step.Seconds()/(3*fwd.Seconds()), "step/3fwd")
		})
	}
}
