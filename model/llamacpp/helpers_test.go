package llamacpp

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/internal/libllama"
	"github.com/hlmproject/hlm/model"
)

// familiesDir holds the committed tiny models of every family and their
// llama.cpp goldens (model/llama/testdata/families/README.md).
var familiesDir = filepath.Join("..", "llama", "testdata", "families")

// needLib skips when no libllama is named or built.
func needLib(t testing.TB) *libllama.Lib {
	t.Helper()
	if _, ok := LibraryPath(); !ok {
		t.Skip("no libllama: run internal/libllama/build.sh (about 4 minutes on 2 cores; CI does) or set HLM_LLAMA_LIB")
	}
	l, err := OpenLibrary()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// onDevice is the spec option every test opens its models with: "@ngl=0",
// the CPU, where the package doc's determinism contract holds, also with a
// library built for a GPU; HLM_TEST_NGL=N offloads N layers instead
// (bench/gpu.sh sets 99 to measure the contract on a GPU, where its tests
// fail and their messages are the measurement). cloud's tests read it too.
//
// withDevice puts it before opts, unless opts names ngl itself (a spec
// gives each option once).
func withDevice(opts string) string {
	if strings.Contains(opts, "@ngl=") {
		return opts
	}
	return onDevice() + opts
}

func onDevice() string {
	if n := os.Getenv("HLM_TEST_NGL"); n != "" {
		return "@ngl=" + n
	}
	return "@ngl=0"
}

// openLC opens a family model on llama.cpp with options (spec text after
// "@llama.cpp"), closing it at the end of the test.
func openLC(t testing.TB, file, opts string) *Model {
	t.Helper()
	needLib(t)
	m, err := OpenSpec(filepath.Join(familiesDir, file)+"@llama.cpp"+withDevice(opts), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

type golden struct {
	vocab  int
	ids    []int
	logits [][]float32
	greedy []int
}

// readGolden reads a golden of model/llama/testdata/families (layout in
// its README).
func readGolden(t testing.TB, name string) golden {
	t.Helper()
	return readGoldenPath(t, filepath.Join(familiesDir, name))
}

// readGoldenPath reads a file in the goldens' layout.
func readGoldenPath(t testing.TB, path string) golden {
	t.Helper()
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
	for range n {
		g.ids = append(g.ids, i32())
	}
	for range n {
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

// diff is the largest |a − b| and the range of b.
func diff(a, b [][]float32) (maxAbs, rng float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range b {
		for j, w := range b[i] {
			lo, hi = math.Min(lo, float64(w)), math.Max(hi, float64(w))
			maxAbs = math.Max(maxAbs, math.Abs(float64(a[i][j]-w)))
		}
	}
	return maxAbs, hi - lo
}

// sameBits reports whether two sets of rows are identical bit for bit,
// and where they first differ.
func sameBits(a, b [][]float32) (bool, int, int) {
	if len(a) != len(b) {
		return false, -1, -1
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false, i, -1
		}
		for j := range a[i] {
			if math.Float32bits(a[i][j]) != math.Float32bits(b[i][j]) {
				return false, i, j
			}
		}
	}
	return true, 0, 0
}

func argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

// greedy continues s from the logits last for n tokens, one at a time.
func greedy(t testing.TB, s model.Session, last []float32, n int) []int {
	t.Helper()
	var out []int
	next := argmax(last)
	for k := 0; k < n; k++ {
		out = append(out, next)
		if k+1 == n {
			break
		}
		rows, err := s.Eval([]int{next})
		if err != nil {
			t.Fatal(err)
		}
		next = argmax(rows[0])
	}
	return out
}
