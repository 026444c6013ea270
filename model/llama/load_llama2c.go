package llama

import (
	"encoding/binary"
	"fmt"
	"os"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/tensor"
)

// llama2.c legacy checkpoint: a header of seven int32 (dim, hidden_dim,
// n_layers, n_heads, n_kv_heads, vocab_size, seq_len; a negative vocab_size
// means the classifier is stored separately), then float32 arrays in this
// order: token embedding [vocab][dim], attention norms [layers][dim], wq
// [layers][dim][dim], wk and wv [layers][kv_dim][dim], wo [layers][dim][dim],
// ffn norms [layers][dim], w1 [layers][hidden][dim], w2 [layers][dim][hidden],
// w3 [layers][hidden][dim], final norm [dim], two legacy RoPE tables of
// seq_len × head_size/2 floats each (ignored), and the classifier
// [vocab][dim] when not shared. RMSNorm ε is 1e-5 and the rotary base 10000.
const llama2cHeader = 7 * 4

// LoadLlama2C reads a llama2.c legacy checkpoint.
func LoadLlama2C(path string) (*Weights, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	w, err := ParseLlama2C(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return w, nil
}

// parseLlama2CHeader reads the configuration in a llama2.c checkpoint's
// header, whether the classifier is shared with the embedding, and the
// number of float32 values the weights that follow must have.
func parseLlama2CHeader(b []byte) (cfg model.Config, shared bool, floats int64, err error) {
	if len(b) < llama2cHeader {
		return cfg, false, 0, fmt.Errorf("%w: %d bytes, shorter than a llama2.c checkpoint's %d-byte header: not a llama2.c checkpoint (nor a GGUF file, which starts with \"GGUF\")", model.ErrFormat, len(b), llama2cHeader)
	}
	h := make([]int32, 7)
	for i := range h {
		h[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	if h[0] == 0x616b3432 { // "ak42": the newer versioned export
		return cfg, false, 0, fmt.Errorf("%w: llama2.c versioned export (magic ak42); only the legacy fp32 format is read", model.ErrUnsupported)
	}
	shared = h[5] > 0
	vocab := h[5]
	if !shared {
		vocab = -vocab
	}
	cfg = model.Config{Arch: "llama", Dim: int(h[0]), Hidden: int(h[1]), Layers: int(h[2]), Heads: int(h[3]),
		KVHeads: int(h[4]), Vocab: int(vocab), SeqLen: int(h[6]), RopeTheta: 10000, NormEps: 1e-5}
	if err := cfg.Validate(); err != nil {
		return cfg, false, 0, fmt.Errorf("not a llama2.c checkpoint: its header (dim %d, hidden %d, %d layers, %d heads, %d KV heads, vocabulary %d, context %d) is no model's: %w",
			h[0], h[1], h[2], h[3], h[4], h[5], h[6], err)
	}
	dim, hid, L, V, kv := int64(cfg.Dim), int64(cfg.Hidden), int64(cfg.Layers), int64(cfg.Vocab), int64(cfg.KVDim())
	ropeTables := 2 * int64(cfg.SeqLen) * int64(cfg.HeadSize()/2)
	floats = V*dim + L*dim + L*dim*dim + 2*L*kv*dim + L*dim*dim + L*dim + 3*L*hid*dim + dim + ropeTables
	if !shared {
		floats += V * dim
	}
	return cfg, shared, floats, nil
}

// weightsSizeError says that a llama2.c checkpoint's weights, want bytes
// by its header's shape, are not the got bytes after the header.
func weightsSizeError(cfg model.Config, want, got int64) error {
	what := "it is truncated (an interrupted download or copy?)"
	if got > want {
		what = "not a llama2.c checkpoint of that shape"
	}
	return fmt.Errorf("%w: a llama2.c checkpoint of dim %d, hidden %d, %d layers, %d heads, %d KV heads, vocabulary %d, context %d has %d bytes of weights; this file has %d: %s",
		model.ErrFormat, cfg.Dim, cfg.Hidden, cfg.Layers, cfg.Heads, cfg.KVHeads, cfg.Vocab, cfg.SeqLen, want, got, what)
}

// ParseLlama2C parses a whole llama2.c legacy checkpoint held in b. The
// weights share memory with b.
func ParseLlama2C(b []byte) (*Weights, error) {
	cfg, shared, floats, err := parseLlama2CHeader(b)
	if err != nil {
		return nil, err
	}
	if got := int64(len(b) - llama2cHeader); got != 4*floats {
		return nil, weightsSizeError(cfg, 4*floats, got)
	}
	dim, hid, L, V, kv := int64(cfg.Dim), int64(cfg.Hidden), int64(cfg.Layers), int64(cfg.Vocab), int64(cfg.KVDim())
	data := b[llama2cHeader:]
	take := func(n int64) []byte {
		p := data[: 4*n : 4*n]
		data = data[4*n:]
		return p
	}
	mat := func(p []byte, rows, cols int64) *tensor.Matrix {
		m, err := tensor.NewRaw(tensor.F32, int(rows), int(cols), p)
		if err != nil {
			panic(err) // sizes were checked above
		}
		return m
	}
	split := func(n, each int64) [][]byte {
		p := take(n * each)
		out := make([][]byte, n)
		for i := range out {
			out[i] = p[4*int64(i)*each : 4*int64(i+1)*each]
		}
		return out
	}
	w := &Weights{Config: cfg, Layers: make([]Layer, cfg.Layers)}
	w.Embedding = mat(take(V*dim), V, dim)
	attnNorm := split(L, dim)
	wq := split(L, dim*dim)
	wk := split(L, kv*dim)
	wv := split(L, kv*dim)
	wo := split(L, dim*dim)
	ffnNorm := split(L, dim)
	w1 := split(L, hid*dim)
	w2 := split(L, dim*hid)
	w3 := split(L, hid*dim)
	w.FinalNorm = tensor.BytesToF32(take(dim))
	take(2 * int64(cfg.SeqLen) * int64(cfg.HeadSize()/2)) // the rope tables, unused
	for l := range w.Layers {
		w.Layers[l] = Layer{
			AttnNorm: tensor.BytesToF32(attnNorm[l]),
			Wq:       mat(wq[l], dim, dim),
			Wk:       mat(wk[l], kv, dim),
			Wv:       mat(wv[l], kv, dim),
			Wo:       mat(wo[l], dim, dim),
			FFNNorm:  tensor.BytesToF32(ffnNorm[l]),
			W1:       mat(w1[l], hid, dim),
			W2:       mat(w2[l], dim, hid),
			W3:       mat(w3[l], hid, dim),
		}
	}
	if shared {
		w.Output = w.Embedding
	} else {
		w.Output = mat(take(V*dim), V, dim)
	}
	return w, w.Validate()
}

// WriteLlama2C writes float32 weights as a llama2.c legacy checkpoint (used
// by tests and benchmarks to build checkpoints of any shape).
func WriteLlama2C(w *Weights) ([]byte, error) {
	c := w.Config
	vocab := int32(c.Vocab)
	if w.Output != w.Embedding {
		vocab = -vocab
	}
	out := make([]byte, 0, llama2cHeader)
	for _, v := range []int32{int32(c.Dim), int32(c.Hidden), int32(c.Layers), int32(c.Heads), int32(c.KVHeads), vocab, int32(c.SeqLen)} {
		out = binary.LittleEndian.AppendUint32(out, uint32(v))
	}
	var err error
	f32 := func(m *tensor.Matrix) {
		if m.Type != tensor.F32 && err == nil {
			m, err = m.Convert(tensor.F32)
		}
		if err == nil {
			out = append(out, m.Bytes()...)
		}
	}
	vec := func(v []float32) {
		out = tensor.EncodeRow(out, tensor.F32, v)
	}
	f32(w.Embedding)
	for _, l := range w.Layers {
		vec(l.AttnNorm)
	}
	for _, get := range []func(Layer) *tensor.Matrix{
		func(l Layer) *tensor.Matrix { return l.Wq },
		func(l Layer) *tensor.Matrix { return l.Wk },
		func(l Layer) *tensor.Matrix { return l.Wv },
		func(l Layer) *tensor.Matrix { return l.Wo },
	} {
		for _, l := range w.Layers {
			f32(get(l))
		}
	}
	for _, l := range w.Layers {
		vec(l.FFNNorm)
	}
	for _, get := range []func(Layer) *tensor.Matrix{
		func(l Layer) *tensor.Matrix { return l.W1 },
		func(l Layer) *tensor.Matrix { return l.W2 },
		func(l Layer) *tensor.Matrix { return l.W3 },
	} {
		for _, l := range w.Layers {
			f32(get(l))
		}
	}
	vec(w.FinalNorm)
	out = append(out, make([]byte, 4*2*c.SeqLen*(c.HeadSize()/2))...)
	if w.Output != w.Embedding {
		f32(w.Output)
	}
	return out, err
}
