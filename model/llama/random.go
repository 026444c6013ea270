package llama

import (
	"math"
	"math/rand/v2"
	"strings"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/tensor"
)

// RandomWeights makes float32 weights of a given shape from a seed, scaled
// like an initialised network (normal with std 1/sqrt(fan-in), unit norms,
// small biases), for any family (c.Arch; "" is "llama"). Benchmarks and
// tests use them for model shapes no file here provides. Unset RopeTheta
// and NormEps default to 10000 and 1e-5.
func RandomWeights(c model.Config, seed uint64) (*Weights, error) {
	if c.Arch == "" {
		c.Arch = "llama"
	}
	if c.RopeTheta == 0 {
		c.RopeTheta = 10000
	}
	if c.NormEps == 0 {
		c.NormEps = 1e-5
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	mat := func(rows, cols int) *tensor.Matrix {
		v := make([]float32, rows*cols)
		s := 1 / math.Sqrt(float64(cols))
		for i := range v {
			v[i] = float32(rng.NormFloat64() * s)
		}
		m, _ := tensor.NewF32(rows, cols, v)
		return m
	}
	ones := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = 1
		}
		return v
	}
	if c.Arch != "llama" {
		return randomFamily(c, mat, ones, rng)
	}
	kv := c.KVDim()
	w := &Weights{Config: c, Layers: make([]Layer, c.Layers)}
	w.Embedding = mat(c.Vocab, c.Dim)
	for l := range w.Layers {
		w.Layers[l] = Layer{AttnNorm: ones(c.Dim), Wq: mat(c.Dim, c.Dim), Wk: mat(kv, c.Dim), Wv: mat(kv, c.Dim),
			Wo: mat(c.Dim, c.Dim), FFNNorm: ones(c.Dim), W1: mat(c.Hidden, c.Dim), W2: mat(c.Dim, c.Hidden), W3: mat(c.Hidden, c.Dim)}
	}
	w.FinalNorm = ones(c.Dim)
	w.Output = w.Embedding
	return w, w.Validate()
}

// randomFamily fills every tensor the family binds (its optional ones
// aside, the classifier included: untied).
func randomFamily(c model.Config, mat func(rows, cols int) *tensor.Matrix, ones func(int) []float32, rng *rand.Rand) (*Weights, error) {
	w := &Weights{Config: c, Layers: make([]Layer, c.Layers)}
	bs, err := w.bindings()
	if err != nil {
		return nil, err
	}
	small := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(0.02 * rng.NormFloat64())
		}
		return v
	}
	for _, b := range bs {
		if b.optional && b.name != "output.weight" {
			continue
		}
		parts := b.parts
		if len(parts) == 0 {
			parts = []part{{rows: b.rows, mat: b.mat, vec: b.vec}}
		}
		for _, p := range parts {
			switch {
			case p.mat != nil:
				*p.mat = mat(p.rows, b.cols)
			case strings.Contains(b.name, "norm.weight"):
				*p.vec = ones(p.rows)
			default: // biases
				*p.vec = small(p.rows)
			}
		}
	}
	return w, w.Validate()
}
