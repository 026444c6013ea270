package llama

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/safetensors"
	"github.com/hlmproject/hlm/tensor"
)

// hfConfig is the part of a Hugging Face config.json that a Llama needs.
type hfConfig struct {
	Architectures     []string        `json:"architectures"`
	ModelType         string          `json:"model_type"`
	HiddenSize        int             `json:"hidden_size"`
	IntermediateSize  int             `json:"intermediate_size"`
	NumLayers         int             `json:"num_hidden_layers"`
	NumHeads          int             `json:"num_attention_heads"`
	NumKVHeads        int             `json:"num_key_value_heads"`
	VocabSize         int             `json:"vocab_size"`
	MaxPositions      int             `json:"max_position_embeddings"`
	RMSNormEps        float64         `json:"rms_norm_eps"`
	RopeTheta         float64         `json:"rope_theta"`
	RopeScaling       json.RawMessage `json:"rope_scaling"`
	TieWordEmbeddings bool            `json:"tie_word_embeddings"`
	HiddenAct         string          `json:"hidden_act"`
	AttentionBias     bool            `json:"attention_bias"`
	MLPBias           bool            `json:"mlp_bias"`
	HeadDim           int             `json:"head_dim"`
}

// LoadHF reads a Hugging Face Llama directory: config.json and
// model.safetensors (or the shards named by model.safetensors.index.json), in
// F32, F16 or BF16. The q and k projections are stored by Hugging Face with
// their rows permuted for the half-split rotary embedding; they are permuted
// back to the interleaved pair order this engine (and llama2.c and GGUF) uses.
func LoadHF(dir string) (*Weights, error) {
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, err
	}
	var hc hfConfig
	if err := json.Unmarshal(b, &hc); err != nil {
		return nil, fmt.Errorf("%w: %s/config.json: %v", model.ErrFormat, dir, err)
	}
	if hc.ModelType != "llama" && hc.ModelType != "mistral" {
		return nil, fmt.Errorf("%w: model_type %q (want llama)", model.ErrUnsupported, hc.ModelType)
	}
	if len(hc.RopeScaling) > 0 && string(hc.RopeScaling) != "null" {
		return nil, fmt.Errorf("%w: rope_scaling %s", model.ErrUnsupported, hc.RopeScaling)
	}
	if hc.HiddenAct != "" && hc.HiddenAct != "silu" {
		return nil, fmt.Errorf("%w: hidden_act %q (want silu)", model.ErrUnsupported, hc.HiddenAct)
	}
	if hc.AttentionBias || hc.MLPBias {
		return nil, fmt.Errorf("%w: attention or MLP biases", model.ErrUnsupported)
	}
	if hc.NumKVHeads == 0 {
		hc.NumKVHeads = hc.NumHeads
	}
	if hc.RopeTheta == 0 {
		hc.RopeTheta = 10000
	}
	if hc.RMSNormEps == 0 {
		hc.RMSNormEps = 1e-6
	}
	cfg := model.Config{Arch: "llama", Dim: hc.HiddenSize, Hidden: hc.IntermediateSize, Layers: hc.NumLayers,
		Heads: hc.NumHeads, KVHeads: hc.NumKVHeads, Vocab: hc.VocabSize, SeqLen: hc.MaxPositions,
		RopeTheta: hc.RopeTheta, NormEps: float32(hc.RMSNormEps)}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%s/config.json: %w", dir, err)
	}
	if hc.HeadDim != 0 && hc.HeadDim != cfg.HeadSize() {
		return nil, fmt.Errorf("%w: head_dim %d differs from hidden_size/heads %d", model.ErrUnsupported, hc.HeadDim, cfg.HeadSize())
	}

	tensors, err := openShards(dir)
	if err != nil {
		return nil, err
	}
	get := func(name string, rows, cols int) (*tensor.Matrix, error) {
		st, ok := tensors[name]
		if !ok {
			return nil, fmt.Errorf("%w: tensor %s missing", model.ErrFormat, name)
		}
		t := st.tensor
		shape := t.Shape
		if cols == 0 { // a vector
			if len(shape) != 1 || shape[0] != int64(rows) {
				return nil, fmt.Errorf("%w: tensor %s has shape %v, want [%d]", model.ErrFormat, name, shape, rows)
			}
			cols, rows = rows, 1
		} else if len(shape) != 2 || shape[0] != int64(rows) || shape[1] != int64(cols) {
			return nil, fmt.Errorf("%w: tensor %s has shape %v, want [%d %d]", model.ErrFormat, name, shape, rows, cols)
		}
		var dt tensor.DType
		switch t.DType {
		case "F32":
			dt = tensor.F32
		case "F16":
			dt = tensor.F16
		case "BF16":
			dt = tensor.BF16
		default:
			return nil, fmt.Errorf("%w: tensor %s has dtype %s", model.ErrUnsupported, name, t.DType)
		}
		return tensor.NewRaw(dt, rows, cols, st.file.Data(t))
	}
	vec := func(name string, n int) ([]float32, error) {
		m, err := get(name, n, 0)
		if err != nil {
			return nil, err
		}
		out := make([]float32, n)
		m.Row(out, 0)
		return out, nil
	}

	// Tied checkpoints may store only one of the two matrices
	// (TinyStories-656K keeps lm_head.weight and declares embed_tokens tied).
	w := &Weights{Config: cfg, Layers: make([]Layer, cfg.Layers)}
	embName := "model.embed_tokens.weight"
	if _, ok := tensors[embName]; !ok && hc.TieWordEmbeddings {
		embName = "lm_head.weight"
	}
	if w.Embedding, err = get(embName, cfg.Vocab, cfg.Dim); err != nil {
		return nil, err
	}
	w.Output = w.Embedding
	if !hc.TieWordEmbeddings {
		if w.Output, err = get("lm_head.weight", cfg.Vocab, cfg.Dim); err != nil {
			return nil, err
		}
	}
	if w.FinalNorm, err = vec("model.norm.weight", cfg.Dim); err != nil {
		return nil, err
	}
	kv := cfg.KVDim()
	for l := range w.Layers {
		p := fmt.Sprintf("model.layers.%d.", l)
		ly := &w.Layers[l]
		steps := []struct {
			dst        **tensor.Matrix
			name       string
			rows, cols int
		}{
			{&ly.Wq, "self_attn.q_proj.weight", cfg.Dim, cfg.Dim},
			{&ly.Wk, "self_attn.k_proj.weight", kv, cfg.Dim},
			{&ly.Wv, "self_attn.v_proj.weight", kv, cfg.Dim},
			{&ly.Wo, "self_attn.o_proj.weight", cfg.Dim, cfg.Dim},
			{&ly.W1, "mlp.gate_proj.weight", cfg.Hidden, cfg.Dim},
			{&ly.W2, "mlp.down_proj.weight", cfg.Dim, cfg.Hidden},
			{&ly.W3, "mlp.up_proj.weight", cfg.Hidden, cfg.Dim},
		}
		for _, s := range steps {
			if *s.dst, err = get(p+s.name, s.rows, s.cols); err != nil {
				return nil, err
			}
		}
		if ly.Wq, err = unpermuteRotary(ly.Wq, cfg.Heads); err != nil {
			return nil, err
		}
		if ly.Wk, err = unpermuteRotary(ly.Wk, cfg.KVHeads); err != nil {
			return nil, err
		}
		if ly.AttnNorm, err = vec(p+"input_layernorm.weight", cfg.Dim); err != nil {
			return nil, err
		}
		if ly.FFNNorm, err = vec(p+"post_attention_layernorm.weight", cfg.Dim); err != nil {
			return nil, err
		}
	}
	return w, w.Validate()
}

type shardTensor struct {
	file   *safetensors.File
	tensor safetensors.Tensor
}

// openShards opens model.safetensors, or every shard listed in
// model.safetensors.index.json, and indexes their tensors by name.
func openShards(dir string) (map[string]shardTensor, error) {
	files := []string{"model.safetensors"}
	if b, err := os.ReadFile(filepath.Join(dir, "model.safetensors.index.json")); err == nil {
		var idx struct {
			WeightMap map[string]string `json:"weight_map"`
		}
		if err := json.Unmarshal(b, &idx); err != nil {
			return nil, fmt.Errorf("%w: %s/model.safetensors.index.json: %v", model.ErrFormat, dir, err)
		}
		set := map[string]bool{}
		for _, f := range idx.WeightMap {
			if filepath.Base(f) != f {
				return nil, fmt.Errorf("%w: shard name %q is not a plain file name", model.ErrFormat, f)
			}
			set[f] = true
		}
		files = files[:0]
		for f := range set {
			files = append(files, f)
		}
		sort.Strings(files)
	}
	out := map[string]shardTensor{}
	for _, name := range files {
		f, err := safetensors.Open(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		for n, t := range f.Tensors {
			if _, dup := out[n]; dup {
				return nil, fmt.Errorf("%w: tensor %s appears in two shards", model.ErrFormat, n)
			}
			out[n] = shardTensor{f, t}
		}
	}
	return out, nil
}

// unpermuteRotary undoes the row permutation Hugging Face applies to q and k
// projections: within each head of size hs, HF row j·hs/2 + i holds the
// original row 2i + j (i < hs/2, j ∈ {0, 1}).
func unpermuteRotary(m *tensor.Matrix, heads int) (*tensor.Matrix, error) {
	hs := m.Rows / heads
	if hs*heads != m.Rows || hs%2 != 0 {
		return nil, fmt.Errorf("%w: cannot split %d rows into %d rotary heads", model.ErrFormat, m.Rows, heads)
	}
	src := func(r int) int { // original row r = h·hs + 2i + j comes from HF row h·hs + j·hs/2 + i
		h, in := r/hs, r%hs
		return h*hs + (in%2)*(hs/2) + in/2
	}
	if m.Type == tensor.F32 {
		out := make([]float32, len(m.F32))
		for r := 0; r < m.Rows; r++ {
			s := src(r)
			copy(out[r*m.Cols:(r+1)*m.Cols], m.F32[s*m.Cols:(s+1)*m.Cols])
		}
		return tensor.NewF32(m.Rows, m.Cols, out)
	}
	rb := m.RowBytes()
	out := make([]byte, len(m.Data))
	for r := 0; r < m.Rows; r++ {
		s := src(r)
		copy(out[r*rb:(r+1)*rb], m.Data[s*rb:(s+1)*rb])
	}
	return tensor.NewRaw(m.Type, m.Rows, m.Cols, out)
}
