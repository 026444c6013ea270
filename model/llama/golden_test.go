package llama

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/hlmproject/hlm/internal/sharedtest"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/tensor"
)

func sharedPath(t testing.TB, rel string) string { return sharedtest.Path(t, rel) }

// golden is a reference run of the llama2.c C engine: logits teacher-forced
// over a prompt, then a greedy continuation (format in ../shared/README.md).
type golden struct {
	ids    []int
	vocab  int
	logits [][]float32
	greedy []int
}

func readGolden(t testing.TB, rel string) golden {
	return readGoldenFile(t, sharedPath(t, rel))
}

// readGoldenFile reads a golden file in the layout of ../shared/golden.
func readGoldenFile(t testing.TB, path string) golden {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i32 := func() int {
		v := int(int32(binary.LittleEndian.Uint32(b)))
		b = b[4:]
		return v
	}
	var g golden
	n := i32()
	g.vocab = i32()
	for i := 0; i < n; i++ {
		g.ids = append(g.ids, i32())
	}
	for i := 0; i < n; i++ {
		row := make([]float32, g.vocab)
		for j := range row {
			row[j] = math.Float32frombits(binary.LittleEndian.Uint32(b))
			b = b[4:]
		}
		g.logits = append(g.logits, row)
	}
	for k := i32(); k > 0; k-- {
		g.greedy = append(g.greedy, i32())
	}
	return g
}

// compareLogits reports the largest absolute difference and fails when an
// element differs by more than tol·max(1, |ref|).
func compareLogits(t *testing.T, what string, got, want [][]float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	var maxAbs, maxRel float64
	for i := range want {
		for j := range want[i] {
			d := math.Abs(float64(got[i][j] - want[i][j]))
			maxAbs = math.Max(maxAbs, d)
			maxRel = math.Max(maxRel, d/math.Max(1, math.Abs(float64(want[i][j]))))
		}
	}
	t.Logf("%s: max abs diff %.3g, max relative diff %.3g over %d×%d logits", what, maxAbs, maxRel, len(want), len(want[0]))
	if maxRel > tol {
		t.Errorf("%s: logits differ by %.3g relative (tolerance %g)", what, maxRel, tol)
	}
}

func greedy(t *testing.T, s model.Session, last []float32, n int) []int {
	t.Helper()
	var out []int
	for i := 0; i < n; i++ {
		next := argmax(last)
		out = append(out, next)
		rows, err := s.Eval([]int{next})
		if err != nil {
			t.Fatal(err)
		}
		last = rows[0]
	}
	return out
}

func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

func checkGolden(t *testing.T, m *Model, files ...string) {
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			g := readGolden(t, f)
			if g.vocab != m.Config().Vocab {
				t.Fatalf("golden vocab %d, model %d", g.vocab, m.Config().Vocab)
			}
			s := m.NewSession()
			rows, err := s.Eval(g.ids)
			if err != nil {
				t.Fatal(err)
			}
			compareLogits(t, "block", rows, g.logits, 1e-4)
			got := greedy(t, s, rows[len(rows)-1], len(g.greedy))
			if fmt.Sprint(got) != fmt.Sprint(g.greedy) {
				t.Errorf("greedy continuation\n got %v\nwant %v", got, g.greedy)
			}
		})
	}
}

func TestGoldenStories260K(t *testing.T) {
	w, err := LoadLlama2C(sharedPath(t, "models/stories260K/stories260K.bin"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(w, nil, "stories260K")
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, m, "golden/stories260K_golden.bin", "golden/stories260K_golden_b.bin")
}

func TestGoldenTinyStories656K(t *testing.T) {
	w, err := LoadHF(sharedPath(t, "models/tinystories-656k"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(w, nil, "tinystories-656k")
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, m, "golden/tinystories656k_golden.bin", "golden/tinystories656k_golden_b.bin")
}

// TestBlockEqualsSteps checks that evaluating n tokens in one pass gives
// bit-identical logits to n single steps, that Truncate followed by
// re-evaluation reproduces them, and that batching sessions changes nothing.
func TestBlockEqualsSteps(t *testing.T) {
	for _, name := range []string{"random", "random-q8"} {
		t.Run(name, func(t *testing.T) {
			m := randomModel(t, model.Config{Dim: 64, Hidden: 96, Layers: 3, Heads: 4, KVHeads: 2, Vocab: 97, SeqLen: 64}, 1)
			if name == "random-q8" {
				var err error
				if m, _, err = m.Quantized(tensor.Q8_0); err != nil {
					t.Fatal(err)
				}
			}
			toks := []int{1, 5, 9, 33, 2, 96, 0, 17, 44, 8}
			block := m.NewSession()
			bl, err := block.Eval(toks)
			if err != nil {
				t.Fatal(err)
			}
			step := m.NewSession()
			for i, tk := range toks {
				r, err := step.Eval([]int{tk})
				if err != nil {
					t.Fatal(err)
				}
				assertSame(t, fmt.Sprintf("position %d", i), r[0], bl[i])
			}
			// Roll back four positions and evaluate them again, in two blocks.
			if err := block.Truncate(6); err != nil {
				t.Fatal(err)
			}
			again, err := block.Eval(toks[6:8])
			if err != nil {
				t.Fatal(err)
			}
			again2, err := block.Eval(toks[8:])
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range append(again, again2...) {
				assertSame(t, fmt.Sprintf("re-evaluated position %d", 6+i), r, bl[6+i])
			}
			// Two sessions in one batch, with different prefixes.
			a, b := m.Session(), m.Session()
			if _, err := a.Eval(toks[:3]); err != nil {
				t.Fatal(err)
			}
			out, err := EvalBatch([]*Session{a, b}, [][]int{toks[3:7], toks[:2]}, false)
			if err != nil {
				t.Fatal(err)
			}
			for i := range out[0] {
				assertSame(t, "batched a", out[0][i], bl[3+i])
			}
			for i := range out[1] {
				assertSame(t, "batched b", out[1][i], bl[i])
			}
		})
	}
}

// TestEvalBatchSkip: rows skipped by EvalBatchSkip are not returned, the
// others are bit-identical to EvalBatch's, the sessions advance past every
// token either way (the next evaluation sees the same cache), and skip
// counts out of range are refused with every session unchanged.
func TestEvalBatchSkip(t *testing.T) {
	m := randomModel(t, model.Config{Dim: 64, Hidden: 96, Layers: 3, Heads: 4, KVHeads: 2, Vocab: 97, SeqLen: 64}, 1)
	toks := []int{1, 5, 9, 33, 2, 96, 0, 17, 44, 8}
	ref := m.NewSession()
	want, err := ref.Eval(toks)
	if err != nil {
		t.Fatal(err)
	}
	blocks := [][]int{toks[:7], toks[:4], toks[:5]}
	for _, skip := range [][]int{nil, {0, 0, 0}, {6, 3, 4}, {3, 1, 0}, {7, 4, 5}, {7, 0, 2}} {
		t.Run(fmt.Sprint(skip), func(t *testing.T) {
			ss := []model.Session{m.NewSession(), m.NewSession(), m.NewSession()}
			out, err := m.EvalBatchSkip(ss, blocks, skip)
			if err != nil {
				t.Fatal(err)
			}
			for i, rows := range out {
				k := 0
				if skip != nil {
					k = skip[i]
				}
				if len(rows) != len(blocks[i])-k {
					t.Fatalf("session %d: %d rows, want %d", i, len(rows), len(blocks[i])-k)
				}
				for r := range rows {
					assertSame(t, fmt.Sprintf("session %d, row %d", i, k+r), rows[r], want[k+r])
				}
				if ss[i].Len() != len(blocks[i]) {
					t.Fatalf("session %d at %d positions, want %d", i, ss[i].Len(), len(blocks[i]))
				}
				next, err := ss[i].Eval(toks[len(blocks[i]) : len(blocks[i])+1])
				if err != nil {
					t.Fatal(err)
				}
				assertSame(t, fmt.Sprintf("session %d after the pass", i), next[0], want[len(blocks[i])])
			}
		})
	}
	for _, skip := range [][]int{{1, 1}, {-1, 0, 0}, {8, 0, 0}} {
		ss := []model.Session{m.NewSession(), m.NewSession(), m.NewSession()}
		if _, err := m.EvalBatchSkip(ss, blocks, skip); err == nil {
			t.Errorf("skip %v: no error", skip)
		}
		for i, s := range ss {
			if s.Len() != 0 {
				t.Errorf("skip %v: session %d moved to %d after a refused pass", skip, i, s.Len())
			}
		}
	}
	s := m.Session()
	rows, err := s.EvalSkip(toks, 9)
	if err != nil || len(rows) != 1 {
		t.Fatalf("EvalSkip: %d rows, %v", len(rows), err)
	}
	assertSame(t, "EvalSkip", rows[0], want[9])
}

func assertSame(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for j := range want {
		if got[j] != want[j] {
			t.Fatalf("%s: logit %d = %g, want %g (must be bit-identical)", what, j, got[j], want[j])
		}
	}
}
