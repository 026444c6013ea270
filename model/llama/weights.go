package llama

import (
	"fmt"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/tensor"
)

// Weights are the parameters of a Llama decoder. Matrices are [out][in]:
// y = W·x is tensor.MatVec(y, W, x).
type Weights struct {
	Config    model.Config
	Embedding *tensor.Matrix // [Vocab][Dim] token embeddings
	Layers    []Layer
	FinalNorm []float32      // [Dim]
	Output    *tensor.Matrix // [Vocab][Dim] classifier (may be Embedding: tied)
}

// Layer is one transformer block.
type Layer struct {
	AttnNorm []float32      // [Dim]
	Wq       *tensor.Matrix // [Dim][Dim]     (rows in rotary pair order)
	Wk       *tensor.Matrix // [KVDim][Dim]   (rows in rotary pair order)
	Wv       *tensor.Matrix // [KVDim][Dim]
	Wo       *tensor.Matrix // [Dim][Dim]
	FFNNorm  []float32      // [Dim]
	W1       *tensor.Matrix // [Hidden][Dim] gate
	W2       *tensor.Matrix // [Dim][Hidden] down
	W3       *tensor.Matrix // [Hidden][Dim] up
}

// Validate checks every shape against the config, so that a forward pass
// cannot index out of range.
func (w *Weights) Validate() error {
	c := w.Config
	if err := c.Validate(); err != nil {
		return err
	}
	if len(w.Layers) != c.Layers {
		return fmt.Errorf("%w: %d layers in the weights, %d in the config", model.ErrFormat, len(w.Layers), c.Layers)
	}
	mat := func(name string, m *tensor.Matrix, rows, cols int) error {
		if m == nil {
			return fmt.Errorf("%w: missing %s", model.ErrFormat, name)
		}
		if m.Rows != rows || m.Cols != cols {
			return fmt.Errorf("%w: %s is %d×%d, want %d×%d", model.ErrFormat, name, m.Rows, m.Cols, rows, cols)
		}
		return nil
	}
	vec := func(name string, v []float32, n int) error {
		if len(v) != n {
			return fmt.Errorf("%w: %s has %d values, want %d", model.ErrFormat, name, len(v), n)
		}
		return nil
	}
	if err := mat("token embedding", w.Embedding, c.Vocab, c.Dim); err != nil {
		return err
	}
	if err := mat("output", w.Output, c.Vocab, c.Dim); err != nil {
		return err
	}
	if err := vec("final norm", w.FinalNorm, c.Dim); err != nil {
		return err
	}
	kv := c.KVDim()
	for i, l := range w.Layers {
		p := fmt.Sprintf("layer %d ", i)
		for _, e := range []error{
			vec(p+"attention norm", l.AttnNorm, c.Dim),
			vec(p+"ffn norm", l.FFNNorm, c.Dim),
			mat(p+"wq", l.Wq, c.Dim, c.Dim),
			mat(p+"wk", l.Wk, kv, c.Dim),
			mat(p+"wv", l.Wv, kv, c.Dim),
			mat(p+"wo", l.Wo, c.Dim, c.Dim),
			mat(p+"w1", l.W1, c.Hidden, c.Dim),
			mat(p+"w2", l.W2, c.Dim, c.Hidden),
			mat(p+"w3", l.W3, c.Hidden, c.Dim),
		} {
			if e != nil {
				return e
			}
		}
	}
	return nil
}

// Matrices calls fn for every weight matrix with its GGUF tensor name.
func (w *Weights) Matrices(fn func(name string, m *tensor.Matrix)) {
	fn("token_embd.weight", w.Embedding)
	for i := range w.Layers {
		l := &w.Layers[i]
		p := fmt.Sprintf("blk.%d.", i)
		fn(p+"attn_q.weight", l.Wq)
		fn(p+"attn_k.weight", l.Wk)
		fn(p+"attn_v.weight", l.Wv)
		fn(p+"attn_output.weight", l.Wo)
		fn(p+"ffn_gate.weight", l.W1)
		fn(p+"ffn_down.weight", l.W2)
		fn(p+"ffn_up.weight", l.W3)
	}
	if w.Output != w.Embedding {
		fn("output.weight", w.Output)
	}
}

// Quantized returns a copy of w whose matrices are stored as t (tensor.Q8_0
// or tensor.Q4_0; norms stay float32). A matrix whose row length is not a
// multiple of the 32-element block stays in its type; the count of such
// matrices is returned so callers can say so.
func (w *Weights) Quantized(t tensor.DType) (*Weights, int, error) {
	out := *w
	out.Layers = append([]Layer(nil), w.Layers...)
	kept := 0
	conv := func(m *tensor.Matrix) (*tensor.Matrix, error) {
		if m.Cols%t.BlockSize() != 0 {
			kept++
			return m, nil
		}
		return m.Convert(t)
	}
	var err error
	if out.Embedding, err = conv(w.Embedding); err != nil {
		return nil, 0, err
	}
	if w.Output == w.Embedding {
		out.Output = out.Embedding
	} else if out.Output, err = conv(w.Output); err != nil {
		return nil, 0, err
	}
	for i := range out.Layers {
		l := &out.Layers[i]
		for _, p := range []**tensor.Matrix{&l.Wq, &l.Wk, &l.Wv, &l.Wo, &l.W1, &l.W2, &l.W3} {
			if *p, err = conv(*p); err != nil {
				return nil, 0, err
			}
		}
	}
	return &out, kept, nil
}
