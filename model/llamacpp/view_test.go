package llamacpp

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/hlmproject/hlm/model"
)

// TestEvalBatchView: EvalBatchView's rows are EvalBatch's, bit for bit,
// those after random skip counts included (a lone wanted row in every
// round), over rounds of four sessions with drafts of unequal length and rollback
// — with four sequences (every block in the last llama_decode: its rows
// are llama.cpp's buffer, not buf) and with two (the first pair's rows
// copied into buf before the second pair's decode, which evicts them).
func TestEvalBatchView(t *testing.T) {
	sc := defaultScript(t, "qwen3_golden")
	path := filepath.Join(familiesDir, "qwen3.gguf")
	for _, opts := range []string{"@c=128@np=4@t=2", "@c=128@np=2@t=2"} {
		t.Run(opts, func(t *testing.T) {
			ref, view := openPath(t, path, opts), openPath(t, path, opts)
			vocab := ref.Config().Vocab
			rng := rand.New(rand.NewPCG(3, 4))
			n := len(sc.prompts)
			rs, vs := make([]model.Session, n), make([]model.Session, n)
			for i, p := range sc.prompts {
				rs[i], vs[i] = ref.NewSession(), view.NewSession()
				for _, s := range []model.Session{rs[i], vs[i]} {
					if _, err := s.Eval(p); err != nil {
						t.Fatal(err)
					}
				}
			}
			buf := make([]float32, 64*vocab)
			inBuf := func(r []float32) bool {
				p, lo := uintptr(unsafe.Pointer(&r[0])), uintptr(unsafe.Pointer(&buf[0]))
				return p >= lo && p < lo+uintptr(len(buf))*4
			}
			viewed := 0
			for round := range sc.rounds {
				blocks, keep, skip := make([][]int, n), make([]int, n), make([]int, n)
				for i := range blocks {
					blocks[i] = make([]int, 1+sc.draftL[i])
					for k := range blocks[i] {
						blocks[i][k] = rng.IntN(vocab)
					}
					keep[i] = rs[i].Len() + 1 + rng.IntN(sc.draftL[i]+1)
					skip[i] = rng.IntN(len(blocks[i])) // rows wanted after the first skip[i] tokens only
				}
				skip[n-1] = len(blocks[n-1]) - 1 // a lone wanted row (outputs)
				want, err := ref.EvalBatch(rs, blocks)
				if err != nil {
					t.Fatal(err)
				}
				got, err := view.EvalBatchView(buf, vs, blocks, skip)
				if err != nil {
					t.Fatal(err)
				}
				for i := range got {
					if ok, r, j := sameBits(got[i], want[i][skip[i]:]); !ok {
						view.ReleaseView()
						t.Fatalf("round %d, session %d: row %d differs at token %d", round, i, r, j)
					}
					for _, r := range got[i] {
						if !inBuf(r) {
							viewed++
						}
					}
				}
				view.ReleaseView()
				// The first sessions' rows are copies when the batch was split.
				if opts == "@c=128@np=2@t=2" {
					for _, r := range append(got[0], got[1]...) {
						if !inBuf(r) {
							t.Fatalf("round %d: a row of the first decode was not copied into buf", round)
						}
					}
				}
				for i := range rs {
					if err := rs[i].Truncate(keep[i]); err != nil {
						t.Fatal(err)
					}
					if err := vs[i].Truncate(keep[i]); err != nil {
						t.Fatal(err)
					}
				}
			}
			if viewed == 0 {
				t.Fatal("no row was left in llama.cpp's buffer")
			}
		})
	}
}

// TestEvalBatchViewHolds: while EvalBatchView's rows are out, another
// session's Eval waits, and goes on after ReleaseView with the rows it
// would have had.
func TestEvalBatchViewHolds(t *testing.T) {
	path := filepath.Join(familiesDir, "qwen3.gguf")
	m := openPath(t, path, "@c=64@np=2@t=2")
	a, b := m.NewSession(), m.NewSession()
	rows, err := m.EvalBatchView(nil, []model.Session{a}, [][]int{{1, 2, 3}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kept := slices.Clone(rows[0][2])
	done := make(chan error, 1)
	go func() {
		_, err := b.Eval([]int{4, 5, 6, 7})
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("an evaluation ran while the view was held (err %v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	if !slices.Equal(rows[0][2], kept) {
		t.Fatal("the viewed rows changed while held")
	}
	m.ReleaseView()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the evaluation did not go on after ReleaseView")
	}
}

// TestPrefillBatchView: the last rows of PrefillBatchView are
// PrefillBatch's, bit for bit, and they are llama.cpp's buffer, not
// copies: after ReleaseView the next evaluation overwrites them.
func TestPrefillBatchView(t *testing.T) {
	path := filepath.Join(familiesDir, "qwen3.gguf")
	ref, view := openPath(t, path, "@c=64@np=2@t=2"), openPath(t, path, "@c=64@np=2@t=2")
	blocks := [][]int{{1, 2, 3}, {4, 5, 6}} // one llama_decode
	open := func(m *Model) []model.Session { return []model.Session{m.NewSession(), m.NewSession()} }
	rs, vs := open(ref), open(view)
	want, err := ref.PrefillBatch(rs, blocks)
	if err != nil {
		t.Fatal(err)
	}
	got, err := view.PrefillBatchView(vs, blocks)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if ok, _, j := sameBits([][]float32{got[i]}, [][]float32{want[i]}); !ok {
			t.Fatalf("session %d: the last row differs at token %d", i, j)
		}
	}
	kept := [][]float32{slices.Clone(got[0]), slices.Clone(got[1])}
	view.ReleaseView()
	if _, err := view.PrefillBatch(vs, [][]int{{7}, {8}}); err != nil {
		t.Fatal(err)
	}
	if slices.Equal(got[0], kept[0]) && slices.Equal(got[1], kept[1]) {
		t.Fatal("the rows were copies: the next evaluation left them as they were")
	}
}
