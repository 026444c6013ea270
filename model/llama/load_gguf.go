package llama

import (
	"errors"
	"fmt"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/gguf"
	"github.com/hlmproject/hlm/tensor"
	"github.com/hlmproject/hlm/tokenizer"
)

// ggufTypes pairs each GGUF tensor type the engine reads with its storage
// type; dtypeOf and ggufTypeOf look it up in either direction.
var ggufTypes = []struct {
	gguf gguf.Type
	dt   tensor.DType
}{
	{gguf.F32, tensor.F32},
	{gguf.F16, tensor.F16},
	{gguf.BF16, tensor.BF16},
	{gguf.Q8_0, tensor.Q8_0},
	{gguf.Q4_0, tensor.Q4_0},
	{gguf.Q4_K, tensor.Q4_K},
	{gguf.Q6_K, tensor.Q6_K},
}

// dtypeOf maps a GGUF tensor type to the engine's storage type.
func dtypeOf(t gguf.Type) (tensor.DType, bool) {
	for _, p := range ggufTypes {
		if p.gguf == t {
			return p.dt, true
		}
	}
	return 0, false
}

// ggufTypeOf maps a storage type to its GGUF tensor type.
func ggufTypeOf(t tensor.DType) (gguf.Type, error) {
	for _, p := range ggufTypes {
		if p.dt == t {
			return p.gguf, nil
		}
	}
	return 0, fmt.Errorf("%w: no GGUF tensor type for %v", model.ErrUnsupported, t)
}

// LoadGGUF reads the weights and the tokenizer of a Llama GGUF file. The
// weights reference the file's memory mapping, which stays open for the life
// of the process.
func LoadGGUF(path string) (*Weights, *tokenizer.Tokenizer, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, nil, err
	}
	w, tok, err := FromGGUF(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return w, tok, nil
}

// FromGGUF builds weights and tokenizer from a parsed GGUF file. The tokenizer
// is nil when the file has none.
func FromGGUF(f *gguf.File) (*Weights, *tokenizer.Tokenizer, error) {
	arch := f.Architecture()
	if arch != "llama" {
		return nil, nil, fmt.Errorf("%w: architecture %q (want llama)", model.ErrUnsupported, arch)
	}
	need := func(key string) (int, error) {
		k := f.ArchKey(key)
		v, err := f.Uint(k)
		if err != nil {
			return 0, fmt.Errorf("%w: %v", model.ErrFormat, err)
		}
		if v > 1<<31 {
			return 0, fmt.Errorf("%w: %s = %d", model.ErrFormat, k, v)
		}
		return int(v), nil
	}
	opt := func(key string, def float64) (float64, error) {
		v, err := f.Float(f.ArchKey(key))
		if errors.Is(err, gguf.ErrMissingKey) {
			return def, nil
		}
		if err != nil {
			return 0, fmt.Errorf("%w: %v", model.ErrFormat, err)
		}
		return v, nil
	}
	var cfg model.Config
	cfg.Arch = "llama"
	var err error
	for _, p := range []struct {
		dst *int
		key string
	}{{&cfg.Dim, "embedding_length"}, {&cfg.Hidden, "feed_forward_length"}, {&cfg.Layers, "block_count"},
		{&cfg.Heads, "attention.head_count"}, {&cfg.SeqLen, "context_length"}} {
		if *p.dst, err = need(p.key); err != nil {
			return nil, nil, err
		}
	}
	kvHeads, err := opt("attention.head_count_kv", float64(cfg.Heads))
	if err != nil {
		return nil, nil, err
	}
	cfg.KVHeads = int(kvHeads)
	if cfg.RopeTheta, err = opt("rope.freq_base", 10000); err != nil {
		return nil, nil, err
	}
	eps, err := opt("attention.layer_norm_rms_epsilon", 1e-5)
	if err != nil {
		return nil, nil, err
	}
	cfg.NormEps = float32(eps)
	if s, err := f.String(f.ArchKey("rope.scaling.type")); err == nil && s != "none" {
		if factor, _ := opt("rope.scaling.factor", 1); s != "linear" || factor != 1 {
			return nil, nil, fmt.Errorf("%w: rope scaling %q", model.ErrUnsupported, s)
		}
	}
	emb, ok := f.Tensor("token_embd.weight")
	if !ok || len(emb.Dims) != 2 {
		return nil, nil, fmt.Errorf("%w: no 2-D token_embd.weight", model.ErrFormat)
	}
	if emb.Dims[1] > 1<<22 {
		return nil, nil, fmt.Errorf("%w: vocabulary of %d", model.ErrFormat, emb.Dims[1])
	}
	cfg.Vocab = int(emb.Dims[1])
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	if rd, err := f.Uint(f.ArchKey("rope.dimension_count")); err == nil && int(rd) != cfg.HeadSize() {
		return nil, nil, fmt.Errorf("%w: partial rotary embedding (%d of %d dims)", model.ErrUnsupported, rd, cfg.HeadSize())
	}

	mat := func(name string, rows, cols int) (*tensor.Matrix, error) {
		ti, ok := f.Tensor(name)
		if !ok {
			return nil, fmt.Errorf("%w: tensor %s missing", model.ErrFormat, name)
		}
		if len(ti.Dims) != 2 || ti.Dims[0] != uint64(cols) || ti.Dims[1] != uint64(rows) {
			return nil, fmt.Errorf("%w: tensor %s has dims %v, want [%d %d]", model.ErrFormat, name, ti.Dims, cols, rows)
		}
		dt, ok := dtypeOf(ti.Type)
		if !ok {
			return nil, fmt.Errorf("%w: tensor %s has type %v (hlm reads F32, F16, BF16, Q8_0, Q4_0, Q4_K and Q6_K)", model.ErrUnsupported, name, ti.Type)
		}
		data, err := f.TensorData(name)
		if err != nil {
			return nil, err
		}
		m, err := tensor.NewRaw(dt, rows, cols, data)
		if err == nil {
			// A packed copy (tensor/pack.go) makes the mapped bytes cold.
			m.SetDataRelease(f.Release)
		}
		return m, err
	}
	vec := func(name string, n int) ([]float32, error) {
		ti, ok := f.Tensor(name)
		if !ok {
			return nil, fmt.Errorf("%w: tensor %s missing", model.ErrFormat, name)
		}
		if len(ti.Dims) != 1 || ti.Dims[0] != uint64(n) {
			return nil, fmt.Errorf("%w: tensor %s has dims %v, want [%d]", model.ErrFormat, name, ti.Dims, n)
		}
		dt, ok := dtypeOf(ti.Type)
		if !ok || dt.BlockSize() != 1 {
			return nil, fmt.Errorf("%w: norm %s has type %v", model.ErrUnsupported, name, ti.Type)
		}
		data, err := f.TensorData(name)
		if err != nil {
			return nil, err
		}
		out := make([]float32, n)
		tensor.DequantizeRow(out, dt, data)
		return out, nil
	}

	w := &Weights{Config: cfg, Layers: make([]Layer, cfg.Layers)}
	if w.Embedding, err = mat("token_embd.weight", cfg.Vocab, cfg.Dim); err != nil {
		return nil, nil, err
	}
	w.Output = w.Embedding
	if _, ok := f.Tensor("output.weight"); ok {
		if w.Output, err = mat("output.weight", cfg.Vocab, cfg.Dim); err != nil {
			return nil, nil, err
		}
	}
	if w.FinalNorm, err = vec("output_norm.weight", cfg.Dim); err != nil {
		return nil, nil, err
	}
	kv := cfg.KVDim()
	for l := range w.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		ly := &w.Layers[l]
		for _, s := range []struct {
			dst        **tensor.Matrix
			name       string
			rows, cols int
		}{
			{&ly.Wq, "attn_q.weight", cfg.Dim, cfg.Dim},
			{&ly.Wk, "attn_k.weight", kv, cfg.Dim},
			{&ly.Wv, "attn_v.weight", kv, cfg.Dim},
			{&ly.Wo, "attn_output.weight", cfg.Dim, cfg.Dim},
			{&ly.W1, "ffn_gate.weight", cfg.Hidden, cfg.Dim},
			{&ly.W2, "ffn_down.weight", cfg.Dim, cfg.Hidden},
			{&ly.W3, "ffn_up.weight", cfg.Hidden, cfg.Dim},
		} {
			if *s.dst, err = mat(p+s.name, s.rows, s.cols); err != nil {
				return nil, nil, err
			}
		}
		if ly.AttnNorm, err = vec(p+"attn_norm.weight", cfg.Dim); err != nil {
			return nil, nil, err
		}
		if ly.FFNNorm, err = vec(p+"ffn_norm.weight", cfg.Dim); err != nil {
			return nil, nil, err
		}
	}
	if err := w.Validate(); err != nil {
		return nil, nil, err
	}
	tok, err := tokenizerFromGGUF(f)
	if err != nil {
		return nil, nil, err
	}
	return w, tok, nil
}

// tokenizerFromGGUF reads tokenizer.ggml.* and tokenizer.chat_template
// (nil, nil when there is no vocabulary).
func tokenizerFromGGUF(f *gguf.File) (*tokenizer.Tokenizer, error) {
	v, err := VocabFromGGUF(f)
	if err != nil || v == nil {
		return nil, err
	}
	tok, err := tokenizer.FromVocab(*v)
	if err != nil {
		return nil, fmt.Errorf("GGUF tokenizer: %w", err)
	}
	return tok, nil
}

// VocabFromGGUF reads a GGUF file's vocabulary as llama.cpp does, with
// llama.cpp's defaults for the keys left out (nil, nil when the file has
// no tokenizer.ggml.tokens).
func VocabFromGGUF(f *gguf.File) (*tokenizer.Vocab, error) {
	tokens, err := f.Strings("tokenizer.ggml.tokens")
	if errors.Is(err, gguf.ErrMissingKey) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", model.ErrFormat, err)
	}
	v := &tokenizer.Vocab{Tokens: tokens}
	str := func(key string) (string, error) {
		s, err := f.String(key)
		if err != nil && !errors.Is(err, gguf.ErrMissingKey) {
			return "", fmt.Errorf("%w: %v", model.ErrFormat, err)
		}
		return s, nil
	}
	if v.Model, err = str("tokenizer.ggml.model"); err != nil {
		return nil, err
	}
	if v.Pre, err = str("tokenizer.ggml.pre"); err != nil {
		return nil, err
	}
	if v.ChatTemplate, err = str("tokenizer.chat_template"); err != nil {
		return nil, err
	}
	if v.Name, err = str("general.name"); err != nil {
		return nil, err
	}
	if v.Scores, err = f.Float32s("tokenizer.ggml.scores"); err != nil && !errors.Is(err, gguf.ErrMissingKey) {
		return nil, fmt.Errorf("%w: %v", model.ErrFormat, err)
	}
	if v.Types, err = f.Int32s("tokenizer.ggml.token_type"); err != nil && !errors.Is(err, gguf.ErrMissingKey) {
		return nil, fmt.Errorf("%w: %v", model.ErrFormat, err)
	}
	if v.Merges, err = f.Strings("tokenizer.ggml.merges"); err != nil && !errors.Is(err, gguf.ErrMissingKey) {
		return nil, fmt.Errorf("%w: %v", model.ErrFormat, err)
	}
	// Special ids: llama.cpp's defaults are <unk> 0, <s> 1, </s> 2 for
	// "llama" vocabularies; the keys override them, and an id out of
	// range is ignored, as llama.cpp does.
	id := func(key string, def int) int {
		if u, err := f.Uint(key); err == nil && u < uint64(len(tokens)) {
			return int(u)
		}
		if def >= len(tokens) {
			return -1
		}
		return def
	}
	bos, eos, unk := -1, -1, -1
	if v.Model == "llama" {
		bos, eos, unk = 1, 2, 0
	}
	v.BOS, v.EOS, v.UNK = id("tokenizer.ggml.bos_token_id", bos), id("tokenizer.ggml.eos_token_id", eos), id("tokenizer.ggml.unknown_token_id", unk)
	v.EOT, v.EOM = id("tokenizer.ggml.eot_token_id", -1), id("tokenizer.ggml.eom_token_id", -1)
	addBOS, addPrefix := tokenizer.VocabDefaults(v.Model, v.Pre)
	flag := func(key string, def bool) bool {
		if b, err := f.Bool(key); err == nil {
			return b
		}
		return def
	}
	v.AddBOS = flag("tokenizer.ggml.add_bos_token", addBOS)
	v.AddEOS = flag("tokenizer.ggml.add_eos_token", false)
	v.AddSpacePrefix = flag("tokenizer.ggml.add_space_prefix", addPrefix)
	return v, nil
}
