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

func assertSame(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for j := range want {
		if got[j] != want[j] {
			t.Fatalf("%s: logit %d = %g, want %g (must be bit-identical)", what, j, got[j], want[j])
		}
	}
}
