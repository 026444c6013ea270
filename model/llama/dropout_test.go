package llama

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hlmproject/hlm/model"
)

// TestDropout: off (the default, or p = 0) gives bit-identical logits;
// on, the logits change, reproducibly for the same mask seed, only at the
// positions evaluated with it; truncating and re-evaluating without
// dropout restores the exact logits; and in a batch only the session that
// asked for dropout is perturbed.
func TestDropout(t *testing.T) {
	c := model.Config{Dim: 32, Hidden: 48, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 50, SeqLen: 16}
	m := randomModel(t, c, 3)
	toks := []int{1, 5, 9, 2}
	eval := func(s *Session, toks []int) [][]float32 {
		t.Helper()
		rows, err := s.Eval(toks)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	ref := eval(m.Session(), toks)

	off := m.Session()
	off.SetDropout(0, rand.New(rand.NewPCG(1, 1)))
	assertSame(t, "p = 0", ref[3], eval(off, toks)[3])

	on := func(seed uint64) [][]float32 {
		s := m.Session()
		eval(s, toks[:3])
		s.SetDropout(0.1, rand.New(rand.NewPCG(seed, 1)))
		return eval(s, toks[3:])
	}
	a, b, other := on(7), on(7), on(8)
	assertSame(t, "same mask seed", a[0], b[0])
	if slices.Equal(a[0], ref[3]) || slices.Equal(a[0], other[0]) {
		t.Error("dropout did not change the logits, or two mask seeds gave the same")
	}

	// Restore: truncate the perturbed position, re-evaluate without dropout.
	s := m.Session()
	eval(s, toks[:3])
	s.SetDropout(0.1, rand.New(rand.NewPCG(7, 1)))
	eval(s, toks[3:])
	s.SetDropout(0, nil)
	if err := s.Truncate(3); err != nil {
		t.Fatal(err)
	}
	assertSame(t, "restored", ref[3], eval(s, toks[3:])[0])

	// Batch: one session with dropout, one without.
	s1, s2 := m.Session(), m.Session()
	s1.SetDropout(0.1, rand.New(rand.NewPCG(7, 1)))
	out, err := EvalBatch([]*Session{s1, s2}, [][]int{toks, toks}, true)
	if err != nil {
		t.Fatal(err)
	}
	assertSame(t, "batch neighbour", ref[3], out[1][0])
	if slices.Equal(out[0][0], ref[3]) {
		t.Error("batched session with dropout unchanged")
	}
}
