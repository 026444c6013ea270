package train

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/tensor"
)

// Shape is a decoder's configuration plus whether its classifier is the
// token embedding (tied).
type Shape struct {
	model.Config
	Tied bool
}

// Validate checks the shape the way the engine will.
func (s Shape) Validate() error { return s.Config.Validate() }

// count is the number of parameters (computed without overflow for any
// shape that validates).
func (s Shape) count() uint64 {
	c := s.Config
	d, kv, h := uint64(c.Dim), uint64(c.KVDim()), uint64(c.Hidden)
	n := uint64(c.Vocab)*d + d + uint64(c.Layers)*(2*d+2*d*d+2*kv*d+3*h*d)
	if !s.Tied {
		n += uint64(c.Vocab) * d
	}
	return n
}

// Params holds every parameter of a decoder in one flat slice, with named
// views into it. Gradients use the same layout (Like), and the optimizer
// walks the Tensors list.
type Params[F Float] struct {
	Shape   Shape
	Data    []F
	Tensors []Tensor

	Embedding []F // [Vocab][Dim]
	Layers    []LayerParams[F]
	FinalNorm []F // [Dim]
	Output    []F // [Vocab][Dim]; aliases Embedding when tied
}

// LayerParams are one block's views.
type LayerParams[F Float] struct {
	AttnNorm, Wq, Wk, Wv, Wo, FFNNorm, W1, W2, W3 []F
}

// Tensor describes one parameter tensor of the flat layout.
type Tensor struct {
	Name       string // GGUF tensor name ("blk.0.attn_q.weight")
	Off, Rows  int    // offset into Data; rows (1 for a vector)
	Cols       int
	Matrix     bool // weight-decayed; norms and vectors are not
	Frozen     bool // left unchanged by the optimizer and not differentiated
	layer, idx int  // block index (-1 outside blocks) and slot in the block
}

// Size is the number of elements.
func (t Tensor) Size() int { return t.Rows * t.Cols }

// layerSlots names a block's tensors in LayerParams order, with their shapes.
var layerSlots = []struct {
	name   string
	matrix bool
}{
	{"attn_norm.weight", false},
	{"attn_q.weight", true},
	{"attn_k.weight", true},
	{"attn_v.weight", true},
	{"attn_output.weight", true},
	{"ffn_norm.weight", false},
	{"ffn_gate.weight", true},
	{"ffn_down.weight", true},
	{"ffn_up.weight", true},
}

// slotShape is the [rows][cols] shape of slot i of a block.
func slotShape(c model.Config, i int) (int, int) {
	d, kv, h := c.Dim, c.KVDim(), c.Hidden
	switch i {
	case 0, 5:
		return 1, d
	case 1, 4:
		return d, d
	case 2, 3:
		return kv, d
	case 6, 8:
		return h, d
	case 7:
		return d, h
	}
	panic("train: bad layer slot")
}

// NewParams allocates zeroed parameters of a shape.
func NewParams[F Float](s Shape) (*Params[F], error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	c := s.Config
	var ts []Tensor
	off := 0
	add := func(name string, rows, cols int, matrix bool, layer, idx int) {
		ts = append(ts, Tensor{Name: name, Off: off, Rows: rows, Cols: cols, Matrix: matrix, layer: layer, idx: idx})
		off += rows * cols
	}
	add("token_embd.weight", c.Vocab, c.Dim, true, -1, 0)
	for l := 0; l < c.Layers; l++ {
		for i, sl := range layerSlots {
			r, cc := slotShape(c, i)
			add(fmt.Sprintf("blk.%d.%s", l, sl.name), r, cc, sl.matrix, l, i)
		}
	}
	add("output_norm.weight", 1, c.Dim, false, -1, 1)
	if !s.Tied {
		add("output.weight", c.Vocab, c.Dim, true, -1, 2)
	}
	p := &Params[F]{Shape: s, Data: make([]F, off), Tensors: ts}
	p.bind()
	return p, nil
}

// bind points the named views at Data.
func (p *Params[F]) bind() {
	p.Layers = make([]LayerParams[F], p.Shape.Layers)
	for _, t := range p.Tensors {
		v := p.Data[t.Off : t.Off+t.Size() : t.Off+t.Size()]
		if t.layer >= 0 {
			l := &p.Layers[t.layer]
			*[]*[]F{&l.AttnNorm, &l.Wq, &l.Wk, &l.Wv, &l.Wo, &l.FFNNorm, &l.W1, &l.W2, &l.W3}[t.idx] = v
			continue
		}
		switch t.idx {
		case 0:
			p.Embedding = v
		case 1:
			p.FinalNorm = v
		case 2:
			p.Output = v
		}
	}
	if p.Shape.Tied {
		p.Output = p.Embedding
	}
}

// Like returns zeroed parameters of the same layout (a gradient buffer).
func (p *Params[F]) Like() *Params[F] {
	q := &Params[F]{Shape: p.Shape, Data: make([]F, len(p.Data)), Tensors: p.Tensors}
	q.bind()
	return q
}

// Clone returns a deep copy.
func (p *Params[F]) Clone() *Params[F] {
	q := p.Like()
	q.Tensors = append([]Tensor(nil), p.Tensors...)
	copy(q.Data, p.Data)
	return q
}

// Info describes the named tensor.
func (p *Params[F]) Info(name string) (Tensor, bool) {
	for _, t := range p.Tensors {
		if t.Name == name {
			return t, true
		}
	}
	return Tensor{}, false
}

// Freeze marks the named tensors frozen (or unfrozen); it reports an unknown
// name.
func (p *Params[F]) Freeze(frozen bool, names ...string) error {
	for _, n := range names {
		found := false
		for i := range p.Tensors {
			if p.Tensors[i].Name == n {
				p.Tensors[i].Frozen, found = frozen, true
			}
		}
		if !found {
			return fmt.Errorf("no parameter tensor %q", n)
		}
	}
	return nil
}

// Trainable is the number of parameters the optimizer updates.
func (p *Params[F]) Trainable() int {
	n := 0
	for _, t := range p.Tensors {
		if !t.Frozen {
			n += t.Size()
		}
	}
	return n
}

// InitRandom fills p the way small Llama models are initialised: matrices
// from N(0, std²), the two projections back into the residual stream (Wo, W2)
// scaled by 1/√(2·layers) (GPT-2), norms at 1.
func (p *Params[F]) InitRandom(seed uint64, std float64) {
	rng := rand.New(rand.NewPCG(seed, 0x7472_6169_6e21))
	resid := std / math.Sqrt(2*float64(max(1, p.Shape.Layers)))
	for _, t := range p.Tensors {
		v := p.Data[t.Off : t.Off+t.Size()]
		if !t.Matrix {
			for i := range v {
				v[i] = 1
			}
			continue
		}
		s := std
		if t.layer >= 0 && (t.idx == 4 || t.idx == 7) {
			s = resid
		}
		for i := range v {
			v[i] = F(rng.NormFloat64() * s)
		}
	}
}

// FromWeights copies an engine's weights (any storage type, dequantized) into
// parameters of their shape: the layers [0, layers) (all when layers ≤ 0).
func FromWeights[F Float](w *llama.Weights, layers int) (*Params[F], error) {
	c := w.Config
	if c.Arch != "llama" || c.HeadDim > 0 || c.RopeNeox || c.RopeDims > 0 || c.RopeScale > 0 || c.Window > 0 || w.RopeFactors != nil || w.Layers[0].Bq != nil {
		return nil, fmt.Errorf("%w: hlm trains Llama-architecture decoders; the %s weights cannot be copied into one (distill a student from random, svd or a Llama --init instead)", model.ErrUnsupported, c.Arch)
	}
	if layers <= 0 || layers > len(w.Layers) {
		layers = len(w.Layers)
	}
	c.Layers = layers
	p, err := NewParams[F](Shape{Config: c, Tied: w.Output == w.Embedding})
	if err != nil {
		return nil, err
	}
	row := make([]float32, max(c.Dim, c.Hidden))
	mat := func(dst []F, m *tensor.Matrix) {
		for r := 0; r < m.Rows; r++ {
			x := row[:m.Cols]
			m.Row(x, r)
			for i, v := range x {
				dst[r*m.Cols+i] = F(v)
			}
		}
	}
	vec := func(dst []F, v []float32) {
		for i, x := range v {
			dst[i] = F(x)
		}
	}
	mat(p.Embedding, w.Embedding)
	for l := 0; l < layers; l++ {
		src, dst := &w.Layers[l], &p.Layers[l]
		vec(dst.AttnNorm, src.AttnNorm)
		vec(dst.FFNNorm, src.FFNNorm)
		for _, m := range []struct {
			d []F
			s *tensor.Matrix
		}{{dst.Wq, src.Wq}, {dst.Wk, src.Wk}, {dst.Wv, src.Wv}, {dst.Wo, src.Wo}, {dst.W1, src.W1}, {dst.W2, src.W2}, {dst.W3, src.W3}} {
			mat(m.d, m.s)
		}
	}
	vec(p.FinalNorm, w.FinalNorm)
	if !p.Shape.Tied {
		mat(p.Output, w.Output)
	}
	return p, nil
}

// Weights returns the parameters as engine weights (F32 matrices, copied).
func (p *Params[F]) Weights() (*llama.Weights, error) {
	c := p.Shape.Config
	f32 := func(v []F) []float32 {
		out := make([]float32, len(v))
		for i, x := range v {
			out[i] = float32(x)
		}
		return out
	}
	mat := func(v []F, rows, cols int) *tensor.Matrix {
		m, err := tensor.NewF32(rows, cols, f32(v))
		if err != nil {
			panic(err) // shapes come from the layout
		}
		return m
	}
	w := &llama.Weights{Config: c, FinalNorm: f32(p.FinalNorm)}
	w.Embedding = mat(p.Embedding, c.Vocab, c.Dim)
	w.Output = w.Embedding
	if !p.Shape.Tied {
		w.Output = mat(p.Output, c.Vocab, c.Dim)
	}
	kv := c.KVDim()
	for _, l := range p.Layers {
		w.Layers = append(w.Layers, llama.Layer{
			AttnNorm: f32(l.AttnNorm), FFNNorm: f32(l.FFNNorm),
			Wq: mat(l.Wq, c.Dim, c.Dim), Wk: mat(l.Wk, kv, c.Dim), Wv: mat(l.Wv, kv, c.Dim), Wo: mat(l.Wo, c.Dim, c.Dim),
			W1: mat(l.W1, c.Hidden, c.Dim), W2: mat(l.W2, c.Dim, c.Hidden), W3: mat(l.W3, c.Hidden, c.Dim),
		})
	}
	return w, w.Validate()
}

// Convert copies p into another float type (tests check float32 training
// against a float64 reference).
func Convert[G, F Float](p *Params[F]) *Params[G] {
	q := &Params[G]{Shape: p.Shape, Data: make([]G, len(p.Data)), Tensors: append([]Tensor(nil), p.Tensors...)}
	for i, v := range p.Data {
		q.Data[i] = G(v)
	}
	q.bind()
	return q
}
