package llama

import (
	"math"
	"math/rand/v2"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/tensor"
)

// RandomWeights makes float32 weights of a given shape from a seed, scaled
// like an initialised network (normal with std 1/sqrt(fan-in), unit norms).
// Benchmarks and tests use them for model shapes no file here provides.
// Unset RopeTheta and NormEps default to 10000 and 1e-5; Arch to "llama".
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
