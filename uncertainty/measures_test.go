package uncertainty

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/sampling"
)

func TestDisagreementAndCorrelation(t *testing.T) {
	if got := Disagreement([]int{3, 1, 3, 2}, 3); got != 0.5 {
		t.Errorf("Disagreement = %v, want 0.5", got)
	}
	if !math.IsNaN(Disagreement(nil, 1)) {
		t.Error("no samples: want NaN")
	}
	// x = 1…5, y = 2x + noise (hand value from the definition).
	x := []float64{1, 2, 3, 4, 5}
	y := []float64{2.1, 3.9, 6.2, 7.8, 10.1}
	if got := Correlation(x, y); math.Abs(got-0.99865176) > 1e-8 {
		t.Errorf("Correlation = %v, want 0.99865176", got)
	}
	if got := Correlation(x, []float64{5, 4, 3, 2, 1}); math.Abs(got+1) > 1e-12 {
		t.Errorf("anti-correlated: %v", got)
	}
	if !math.IsNaN(Correlation(x, []float64{1, 1, 1, 1, 1})) {
		t.Error("constant y: want NaN")
	}
}

// TestMCDropout on a random model (seed 9): the cache is restored exactly
// after the M + 1 passes; with negligible dropout each sample follows the
// unperturbed distribution, so E[u] = 1 − x_d (2000 measurements, M = 20,
// tolerance 4 standard errors); and real dropout (p up to 0.5 here)
// perturbs the samples, so E[u] moves away from that value.
func TestMCDropout(t *testing.T) {
	w, err := llama.RandomWeights(model.Config{Dim: 32, Hidden: 64, Layers: 2, Heads: 4, KVHeads: 4, Vocab: 12, SeqLen: 32}, 9)
	if err != nil {
		t.Fatal(err)
	}
	m, err := llama.New(w, nil, "random")
	if err != nil {
		t.Fatal(err)
	}
	s := m.Session()
	ctx := []int{1, 4, 7, 2}
	rows, err := s.Eval(ctx)
	if err != nil {
		t.Fatal(err)
	}
	logits := slices.Clone(rows[3])
	x := sampling.Softmax(nil, logits, 1)
	draft := 0
	for i := range x {
		if x[i] > x[draft] {
			draft = i
		}
	}
	rng := rand.New(rand.NewPCG(9, 9))
	mean := func(d MCDropout, n int) float64 {
		sum := 0.0
		for range n {
			u, restored, err := d.Measure(s, ctx[3], draft, 1, rng)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(restored, logits) || s.Len() != len(ctx) {
				t.Fatal("the cache was not restored")
			}
			sum += u
		}
		return sum / float64(n)
	}
	const n = 2000
	want := 1 - x[draft]
	se := math.Sqrt(want * (1 - want) / (n * 20))
	if got := mean(MCDropout{M: 20, PMax: 1e-12}, n); math.Abs(got-want) > 4*se {
		t.Errorf("negligible dropout: mean u %.4f, want 1 − x_d = %.4f ± %.4f", got, want, 4*se)
	}
	if got := mean(MCDropout{M: 20, PMax: 0.5}, n); math.Abs(got-want) < 4*se {
		t.Errorf("dropout up to 0.5 leaves mean u at %.4f (undropped %.4f): no effect", got, want)
	}
}
