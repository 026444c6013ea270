package llama

import (
	"fmt"
	"strings"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/tensor"
)

// Weights are the parameters of a decoder of any family (see family.go).
// Matrices are [out][in]: y = W·x is tensor.MatVec(y, W, x). A nil
// optional tensor is absent: no bias, no post-norm, rotary positions
// instead of a position table.
type Weights struct {
	Config    model.Config
	Embedding *tensor.Matrix // [Vocab][EmbedWidth] token embeddings
	Positions *tensor.Matrix // [SeqLen+PosOffset][Dim] learned positions (GPT-2, OPT, GPT-Neo)
	ProjIn    *tensor.Matrix // [Dim][EmbedWidth] (OPT's project_in, when EmbedDim ≠ Dim)
	ProjOut   *tensor.Matrix // [EmbedWidth][Dim] (OPT's project_out)
	Layers    []Layer
	FinalNorm []float32 // [Dim] (nil: none, OPT after post-norm blocks)
	// FinalNormB is the final LayerNorm's bias.
	FinalNormB []float32
	Output     *tensor.Matrix // [Vocab][EmbedWidth] classifier (may be Embedding: tied)
	// RopeFactors divide the rotary frequencies ([RopeWidth/2]; Llama-3.1's
	// rope_freqs), nil: none.
	RopeFactors []float32
}

// Layer is one transformer block. Families without a gate (GPT-2, OPT,
// GPT-Neo) have W1 nil: the feed-forward is W2·act(W3·x + B3) + B2.
type Layer struct {
	AttnNorm     []float32      // [Dim]
	AttnNormB    []float32      // [Dim] LayerNorm bias
	Wq           *tensor.Matrix // [QDim][Dim]    (rows in rotary pair order)
	Wk           *tensor.Matrix // [KVDim][Dim]   (rows in rotary pair order)
	Wv           *tensor.Matrix // [KVDim][Dim]
	Bq, Bk, Bv   []float32      // biases of q, k, v
	QNorm, KNorm []float32      // [HeadSize] per-head RMSNorm of q and k
	Wo           *tensor.Matrix // [Dim][QDim]
	Bo           []float32      // [Dim]
	PostAttnNorm []float32      // [Dim] RMSNorm of the attention's output (Gemma)
	FFNNorm      []float32      // [Dim]
	FFNNormB     []float32      // [Dim] LayerNorm bias
	W1           *tensor.Matrix // [Hidden][Dim] gate
	W2           *tensor.Matrix // [Dim][Hidden] down
	B2           []float32      // [Dim]
	W3           *tensor.Matrix // [Hidden][Dim] up
	B3           []float32      // [Hidden]
	PostFFNNorm  []float32      // [Dim] RMSNorm of the feed-forward's output (Gemma)
}

// Validate checks every shape against the config, and that every tensor
// the family requires is there and no other, so that a forward pass cannot
// index out of range or run without a tensor that changes its result.
func (w *Weights) Validate() error {
	c := w.Config
	if err := c.Validate(); err != nil {
		return err
	}
	if len(w.Layers) != c.Layers {
		return fmt.Errorf("%w: %d layers in the weights, %d in the config", model.ErrFormat, len(w.Layers), c.Layers)
	}
	bs, err := w.bindings()
	if err != nil {
		return err
	}
	if w.Output == nil {
		return fmt.Errorf("%w: missing output (the classifier)", model.ErrFormat)
	}
	for _, b := range bs {
		if len(b.parts) > 0 {
			for _, p := range b.parts {
				if err := checkTensor(b.name, p.mat, p.vec, p.rows, b.cols, false); err != nil {
					return err
				}
			}
			continue
		}
		if err := checkTensor(b.name, b.mat, b.vec, b.rows, b.cols, b.optional); err != nil {
			return err
		}
	}
	return nil
}

// checkTensor checks one bound tensor's shape (and presence unless
// optional).
func checkTensor(name string, m **tensor.Matrix, v *[]float32, rows, cols int, optional bool) error {
	switch {
	case m != nil && *m == nil, v != nil && *v == nil:
		if optional {
			return nil
		}
		return fmt.Errorf("%w: missing %s", model.ErrFormat, name)
	case m != nil && ((*m).Rows != rows || (*m).Cols != cols):
		return fmt.Errorf("%w: %s is %d×%d, want %d×%d", model.ErrFormat, name, (*m).Rows, (*m).Cols, rows, cols)
	case v != nil && len(*v) != rows:
		return fmt.Errorf("%w: %s has %d values, want %d", model.ErrFormat, name, len(*v), rows)
	}
	return nil
}

// Matrices calls fn for every weight matrix present, with its GGUF tensor
// name (a fused tensor's parts by the names of their own tensors: q, k, v,
// gate, up).
func (w *Weights) Matrices(fn func(name string, m *tensor.Matrix)) {
	bs, err := w.bindings()
	if err != nil {
		return
	}
	for _, b := range bs {
		if b.mat != nil && *b.mat != nil && (b.name != "output.weight" || *b.mat != w.Embedding) {
			fn(b.name, *b.mat)
		}
		for i, p := range b.parts {
			if p.mat != nil && *p.mat != nil {
				fn(partName(b.name, i), *p.mat)
			}
		}
	}
}

// partName names part i of a fused tensor as its own tensor would be
// named: attn_qkv → attn_q, attn_k, attn_v; ffn_up → ffn_gate, ffn_up.
func partName(fused string, i int) string {
	switch {
	case strings.Contains(fused, "attn_qkv"):
		return strings.Replace(fused, "attn_qkv", []string{"attn_q", "attn_k", "attn_v"}[i], 1)
	case strings.Contains(fused, "ffn_up") && i == 0:
		return strings.Replace(fused, "ffn_up", "ffn_gate", 1)
	}
	return fused
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
	for _, p := range []**tensor.Matrix{&out.Positions, &out.ProjIn, &out.ProjOut} {
		if *p != nil {
			if *p, err = conv(*p); err != nil {
				return nil, 0, err
			}
		}
	}
	for i := range out.Layers {
		l := &out.Layers[i]
		for _, p := range []**tensor.Matrix{&l.Wq, &l.Wk, &l.Wv, &l.Wo, &l.W1, &l.W2, &l.W3} {
			if *p == nil {
				continue
			}
			if *p, err = conv(*p); err != nil {
				return nil, 0, err
			}
		}
	}
	return &out, kept, nil
}
