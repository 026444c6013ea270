package llama

import (
	"testing"

	"github.com/hlmproject/hlm/model"
)

// randomModel builds a model of the given shape with seeded random weights.
func randomModel(t testing.TB, c model.Config, seed uint64) *Model {
	t.Helper()
	w, err := RandomWeights(c, seed)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(w, nil, "random")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRandomWeightsDeterministic(t *testing.T) {
	c := model.Config{Dim: 32, Hidden: 48, Layers: 2, Heads: 4, KVHeads: 4, Vocab: 50, SeqLen: 16}
	a, b := randomModel(t, c, 7), randomModel(t, c, 7)
	ra, _ := a.NewSession().Eval([]int{1, 2, 3})
	rb, _ := b.NewSession().Eval([]int{1, 2, 3})
	assertSame(t, "same seed", ra[2], rb[2])
}
