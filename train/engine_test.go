package train

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/hlmproject/hlm/internal/sharedtest"
	"github.com/hlmproject/hlm/model/llama"
)

func sharedPath(t testing.TB, rel string) string { return sharedtest.Path(t, rel) }

// The training forward pass must compute what the engine computes: same
// weights, same tokens, logits within float32 rounding, on both real models
// (tied llama2.c weights; Hugging Face weights with GQA).
func TestForwardMatchesEngine(t *testing.T) {
	for _, rel := range []string{"models/stories260K/stories260K.bin", "models/tinystories-656k"} {
		t.Run(filepath.Base(rel), func(t *testing.T) {
			eng, err := llama.OpenSpec(sharedPath(t, rel), "")
			if err != nil {
				t.Fatal(err)
			}
			p, err := FromWeights[float32](eng.Weights(), 0)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			b, tt, v := 2, 24, p.Shape.Vocab
			toks := make([]int, b*tt)
			for i := range toks {
				toks[i] = rng.IntN(v)
			}
			m := NewModel(p)
			z, err := m.Forward(toks, b, tt)
			if err != nil {
				t.Fatal(err)
			}
			worst := 0.0
			for s := 0; s < b; s++ {
				ref, err := eng.Session().Eval(toks[s*tt : (s+1)*tt])
				if err != nil {
					t.Fatal(err)
				}
				for i, row := range ref {
					var scale float64
					for _, x := range row {
						scale = max(scale, math.Abs(float64(x)))
					}
					for j, x := range row {
						d := math.Abs(float64(z[(s*tt+i)*v+j])-float64(x)) / scale
						worst = max(worst, d)
					}
				}
			}
			t.Logf("max |train − engine| / max|logit| = %.2g", worst)
			if worst > 1e-5 {
				t.Fatalf("training forward differs from the engine: %.3g relative (tolerance 1e-5)", worst)
			}

			// And back: the parameters as engine weights give the engine's logits.
			w, err := p.Weights()
			if err != nil {
				t.Fatal(err)
			}
			back, err := llama.New(w, eng.Tokenizer(), "roundtrip")
			if err != nil {
				t.Fatal(err)
			}
			a, _ := eng.Session().Eval(toks[:tt])
			c, _ := back.Session().Eval(toks[:tt])
			for i := range a {
				for j := range a[i] {
					if a[i][j] != c[i][j] {
						t.Fatalf("Weights() round trip changed logit [%d][%d]: %g vs %g", i, j, a[i][j], c[i][j])
					}
				}
			}
		})
	}
}
