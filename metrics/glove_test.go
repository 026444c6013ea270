package metrics

import (
	"compress/gzip"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const gloveFile = "../../shared/models/glove/glove-100d-top40k.txt.gz"

const tinyGloVe = "a 1 0\nb 0 1\nc 1 1\n"

func mustReadGloVe(t testing.TB, s string) *Embeddings {
	t.Helper()
	e, err := ReadGloVe(strings.NewReader(s), "tiny")
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestEmbeddingsCosine(t *testing.T) {
	e := mustReadGloVe(t, tinyGloVe)
	if e.Dim != 2 || e.Len() != 3 {
		t.Fatalf("Dim %d, Len %d; want 2, 3", e.Dim, e.Len())
	}
	for _, tc := range []struct {
		a, b string
		want float64 // NaN: undefined
	}{
		{"a", "a", 1},
		{"a", "b", 0},
		{"a", "a b", math.Sqrt(0.5)},
		{"A, a. B!", "c", (2./3 + 1./3) / math.Sqrt((4./9+1./9)*2)}, // mean (2/3, 1/3) against (1, 1)
		{"a zzz", "a", 1}, // unknown words are left out
		{"zzz", "yyy", math.NaN()},
		{"", "", math.NaN()},
		{"", "a", 0}, // one side without a known word
		{"a", "qqq", 0},
	} {
		got := e.Cosine(tc.a, tc.b)
		if math.IsNaN(tc.want) != math.IsNaN(got) || !math.IsNaN(got) && math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Cosine(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	v, n := e.Vector("A, a. B! zzz")
	if n != 3 || math.Abs(v[0]-2./3) > 1e-15 || math.Abs(v[1]-1./3) > 1e-15 {
		t.Errorf("Vector = %v, %d; want [2/3 1/3], 3", v, n)
	}
	if v, n := e.Vector("zzz"); v != nil || n != 0 {
		t.Errorf("Vector(unknown) = %v, %d; want nil, 0", v, n)
	}
	if e.Lookup("c")[1] != 1 || e.Lookup("zzz") != nil {
		t.Error("Lookup")
	}
}

func TestReadGloVeFormats(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		dim, n   int
		word     string
		vec      []float32
	}{
		{"word2vec header", "2 3\nx 1 2 3\ny 4 5 6\n", 3, 2, "y", []float32{4, 5, 6}},
		{"CRLF and blank lines", "x 1 2\r\n\r\ny 3 4\r\n", 2, 2, "y", []float32{3, 4}},
		{"no final newline, trailing space", "x 1 2 \ny -1e-3 5", 2, 2, "y", []float32{-1e-3, 5}},
		{"word with a space", "x 1 2\nnew york 3 4\n", 2, 2, "new york", []float32{3, 4}},
		{"duplicate keeps the first", "x 1 2\nx 3 4\n", 2, 1, "x", []float32{1, 2}},
		{"numeric word", "x 1\n2024 2\n", 1, 2, "2024", []float32{2}},
	} {
		e, err := ReadGloVe(strings.NewReader(tc.in), "t")
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if e.Dim != tc.dim || e.Len() != tc.n {
			t.Errorf("%s: Dim %d, Len %d; want %d, %d", tc.name, e.Dim, e.Len(), tc.dim, tc.n)
		}
		if got := e.Lookup(tc.word); len(got) != len(tc.vec) || !equalF32(got, tc.vec) {
			t.Errorf("%s: %q = %v, want %v", tc.name, tc.word, got, tc.vec)
		}
	}
}

func equalF32(a, b []float32) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

func TestReadGloVeErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "no vectors"},
		{"\n\n", "no vectors"},
		{"2 3\n", "no vectors"},
		{"x\n", "t:1: bad word vectors: no vector after the word"},
		{"x 1 2\ny 3\n", "t:2: bad word vectors: 2 fields, want a word and 2 components"},
		{"x 1 2\ny 3 z\n", `t:2: bad word vectors: component 2 of "y" is "z"`},
		{"x 1 NaN\n", "not a finite number"},
		{"x 1 inf\n", "not a finite number"},
		{"x 1 1e99\n", "not a finite number"}, // overflows float32
		{"x" + strings.Repeat(" 1", maxDim+1) + "\n", "more than 4096"},
	} {
		_, err := ReadGloVe(strings.NewReader(tc.in), "t")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrBadEmbeddings) {
			t.Errorf("ReadGloVe(%.40q): error %v, want one containing %q and wrapping ErrBadEmbeddings", tc.in, err, tc.want)
		}
	}
	long := "x " + strings.Repeat("1", maxLineLen) + "\n"
	if _, err := ReadGloVe(strings.NewReader(long), "t"); err == nil || !strings.Contains(err.Error(), "t:1:") {
		t.Errorf("over-long line: error %v", err)
	}
}

func FuzzReadGloVe(f *testing.F) {
	for _, s := range []string{tinyGloVe, "2 2\nx 1 2\n", "x 1 2\r\ny 3 4", "x nan\n", "\x00 1\n", " 1 2\n  \n", "1 0\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ReadGloVe(strings.NewReader(s), "fuzz")
		if err != nil {
			return
		}
		if e.Dim < 1 || e.Len() < 1 || len(e.vecs) != e.Dim*e.Len() {
			t.Fatalf("accepted with Dim %d, Len %d, %d components", e.Dim, e.Len(), len(e.vecs))
		}
		for _, x := range e.vecs {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("non-finite component %v", x)
			}
		}
		if c := e.Cosine(s, s); !math.IsNaN(c) && (c < -1 || c > 1) {
			t.Fatalf("Cosine = %v out of [-1, 1]", c)
		}
	})
}

func TestLoadGloVeGzipAndPlain(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "v.txt")
	if err := os.WriteFile(plain, []byte(tinyGloVe), 0o644); err != nil {
		t.Fatal(err)
	}
	gz := filepath.Join(dir, "v.txt.gz")
	f, err := os.Create(gz)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	zw.Write([]byte(tinyGloVe))
	zw.Close()
	f.Close()
	for _, p := range []string{plain, gz} {
		e, err := LoadGloVe(p)
		if err != nil || e.Len() != 3 {
			t.Errorf("LoadGloVe(%s): %v", p, err)
		}
	}
	if _, err := LoadGloVe(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	lazy := LazyGloVe(gz)
	a, err1 := lazy()
	b, err2 := lazy()
	if err1 != nil || err2 != nil || a != b {
		t.Errorf("LazyGloVe: %p %v, %p %v; want one table", a, err1, b, err2)
	}
}

// TestSharedGloVe loads the real 40,000-word table, reports the time and
// checks it behaves like word vectors.
func TestSharedGloVe(t *testing.T) {
	if _, err := os.Stat(gloveFile); err != nil {
		t.Skipf("shared GloVe vectors not present (%v)", err)
	}
	start := time.Now()
	e, err := LoadGloVe(gloveFile)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded %d × %d GloVe vectors in %v", e.Len(), e.Dim, time.Since(start))
	if e.Len() != 40000 || e.Dim != 100 {
		t.Fatalf("Len %d, Dim %d; want 40000, 100", e.Len(), e.Dim)
	}
	if v := e.Lookup("the"); v[0] != -0.038194 || v[1] != -0.24487 || v[99] == 0 {
		t.Errorf(`"the" = %v...`, v[:2])
	}
	for _, tc := range []struct{ a, b, c string }{
		{"king", "queen", "banana"},
		{"The girl played with her dog in the park.", "A little girl was playing with a puppy outside.", "Stock prices fell sharply on Monday."},
		{"Soup is mainly liquid. So, the answer is no.", "No, soup is a liquid food.", "Paris is the capital of France."},
	} {
		near, far := e.Cosine(tc.a, tc.b), e.Cosine(tc.a, tc.c)
		t.Logf("cos(%q, %q) = %.3f; with %q %.3f", tc.a, tc.b, near, tc.c, far)
		if !(near > far) {
			t.Errorf("cos(%q, %q) = %.3f not above cos(.., %q) = %.3f", tc.a, tc.b, near, tc.c, far)
		}
	}
}

func BenchmarkGloVeCosine(b *testing.B) {
	if _, err := os.Stat(gloveFile); err != nil {
		b.Skipf("shared GloVe vectors not present (%v)", err)
	}
	e, err := LoadGloVe(gloveFile)
	if err != nil {
		b.Fatal(err)
	}
	c, r := benchText(1, 200), benchText(2, 200)
	for b.Loop() {
		e.Cosine(c, r)
	}
}

func BenchmarkLoadGloVe(b *testing.B) {
	if _, err := os.Stat(gloveFile); err != nil {
		b.Skipf("shared GloVe vectors not present (%v)", err)
	}
	for b.Loop() {
		if _, err := LoadGloVe(gloveFile); err != nil {
			b.Fatal(err)
		}
	}
}
