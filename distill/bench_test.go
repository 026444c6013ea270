package distill

import (
	"math/rand/v2"
	"testing"

	"github.com/hlmproject/hlm/internal/sharedtest"
	"github.com/hlmproject/hlm/model/llama"
)

func sharedPath(t testing.TB, rel string) string { return sharedtest.Path(t, rel) }

// BenchmarkSample is teacher sampling, the data of a distillation step:
// 16 sequences of 256 tokens from stories260K.
func BenchmarkSample(b *testing.B) {
	m, err := llama.OpenSpec(sharedPath(b, "models/stories260K/stories260K.bin"), "")
	if err != nil {
		b.Fatal(err)
	}
	n, t := 16, 256
	toks := make([]int, n*t)
	probs := make([]float32, n*t*m.Config().Vocab)
	b.ResetTimer()
	for range b.N {
		rngs := make([]*rand.Rand, n)
		for i := range rngs {
			rngs[i] = rngFor(1, 0, i, fromTeacher)
		}
		if err := sample(m, 1, toks, probs, n, t, rngs, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*n*t)/b.Elapsed().Seconds(), "tokens/s")
}
