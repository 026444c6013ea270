package metrics

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
)

// ErrBadEmbeddings is wrapped by every error about the content of a word
// vector file.
var ErrBadEmbeddings = errors.New("bad word vectors")

// Limits on what ReadGloVe accepts.
const (
	maxDim     = 4096
	maxLineLen = 1 << 20
)

// Embeddings are word vectors, such as GloVe's, and the sentence metric
// built on them: the cosine similarity of averaged word vectors. An
// Embeddings is read-only after loading and safe for concurrent use.
type Embeddings struct {
	Dim   int
	index map[string]int // word → row of vecs
	vecs  []float32      // len(index) × Dim, row-major
}

// LoadGloVe reads word vectors in the GloVe text format from path, gzip
// compressed (detected from the magic bytes) or plain.
func LoadGloVe(path string) (*Embeddings, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	var r io.Reader = br
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	return ReadGloVe(r, path)
}

// LazyGloVe returns a function that loads the GloVe file at path on its
// first call and returns the same result on every call after that, for
// callers that may or may not need the embedding metric.
func LazyGloVe(path string) func() (*Embeddings, error) {
	return sync.OnceValues(func() (*Embeddings, error) { return LoadGloVe(path) })
}

// ReadGloVe parses the GloVe text format: one word per line followed by its
// vector components, separated by single spaces. The dimension is taken
// from the first line; a word2vec-style header line ("<count> <dim>") is
// skipped. A word may contain spaces (it is everything before the last Dim
// fields). The first vector of a repeated word is kept. Components must be
// finite numbers. name labels errors, which give the line.
func ReadGloVe(r io.Reader, name string) (*Embeddings, error) {
	e := &Embeddings{index: map[string]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLineLen)
	fail := func(line int, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %w: %s", name, line, ErrBadEmbeddings, fmt.Sprintf(format, args...))
	}
	var fields []string
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimRight(sc.Text(), " \r")
		if s == "" {
			continue
		}
		fields = appendFields(fields[:0], s)
		if e.Dim == 0 {
			if line == 1 && len(fields) == 2 && isUint(fields[0]) && isUint(fields[1]) {
				continue // word2vec header: count and dimension
			}
			if len(fields) < 2 {
				return nil, fail(line, "no vector after the word")
			}
			if len(fields)-1 > maxDim {
				return nil, fail(line, "%d components, more than %d", len(fields)-1, maxDim)
			}
			e.Dim = len(fields) - 1
		}
		if len(fields) < e.Dim+1 {
			return nil, fail(line, "%d fields, want a word and %d components", len(fields), e.Dim)
		}
		k := len(fields) - e.Dim
		word := strings.Join(fields[:k], " ")
		if _, dup := e.index[word]; dup {
			continue
		}
		row := len(e.index)
		e.vecs = append(e.vecs, make([]float32, e.Dim)...)
		v := e.vecs[row*e.Dim:]
		for j, f := range fields[k:] {
			x, err := strconv.ParseFloat(f, 32)
			if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
				return nil, fail(line, "component %d of %q is %q, not a finite number", j+1, word, f)
			}
			v[j] = float32(x)
		}
		e.index[word] = row
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	if len(e.index) == 0 {
		return nil, fmt.Errorf("%s: %w: no vectors", name, ErrBadEmbeddings)
	}
	return e, nil
}

// appendFields splits s at single spaces, as GloVe writes it, keeping empty
// fields out.
func appendFields(dst []string, s string) []string {
	for s != "" {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			return append(dst, s)
		}
		if i > 0 {
			dst = append(dst, s[:i])
		}
		s = s[i+1:]
	}
	return dst
}

func isUint(s string) bool {
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}

// Len is the number of words.
func (e *Embeddings) Len() int { return len(e.index) }

// Lookup is the vector of word (exactly as stored: GloVe 6B words are
// lower-case), or nil when the word is unknown. The slice aliases the
// table: do not modify it.
func (e *Embeddings) Lookup(word string) []float32 {
	i, ok := e.index[word]
	if !ok {
		return nil
	}
	return e.vecs[i*e.Dim : (i+1)*e.Dim : (i+1)*e.Dim]
}

// Vector is the mean of the vectors of the tokens of text (Tokenize: lower
// case, ASCII letters and digits) that are in the vocabulary, each token
// occurrence counted, and the number of tokens averaged. It is nil, 0 when
// no token is known.
func (e *Embeddings) Vector(text string) ([]float64, int) {
	t := tokenize(text)
	var sum []float64
	n := 0
	for i := range t.len() {
		v := e.Lookup(t.tok(i))
		if v == nil {
			continue
		}
		if sum == nil {
			sum = make([]float64, e.Dim)
		}
		for j, x := range v {
			sum[j] += float64(x)
		}
		n++
	}
	for j := range sum {
		sum[j] /= float64(n)
	}
	return sum, n
}

// Cosine is the cosine similarity, in [−1, 1], of the averaged word vectors
// (Vector) of a and b. When neither text has a known word the similarity is
// undefined and Cosine returns NaN: callers skip such pairs (see Summarize).
// When exactly one of them has none (say an empty or gibberish output
// against a real reference) it returns 0, "nothing in common", so that such
// outputs lower a mean rather than vanish from it.
func (e *Embeddings) Cosine(a, b string) float64 {
	va, na := e.Vector(a)
	vb, nb := e.Vector(b)
	switch {
	case na == 0 && nb == 0:
		return math.NaN()
	case na == 0 || nb == 0:
		return 0
	}
	return cosine(va, vb)
}

// cosine is u·v / (|u| |v|), 0 when either vector is zero, clamped to
// [−1, 1] against rounding.
func cosine(u, v []float64) float64 {
	var dot, uu, vv float64
	for i := range u {
		dot += u[i] * v[i]
		uu += u[i] * u[i]
		vv += v[i] * v[i]
	}
	if uu == 0 || vv == 0 {
		return 0
	}
	return max(-1, min(1, dot/math.Sqrt(uu*vv)))
}
