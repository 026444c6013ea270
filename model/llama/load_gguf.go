package llama

import (
	"errors"
	"fmt"
	"math"

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
	{gguf.Q5_0, tensor.Q5_0},
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

// LoadGGUF reads the weights and the tokenizer of a GGUF file of any family
// hlm runs (see family.go). The weights reference the file's memory
// mapping, which stays open for the life of the process.
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

// FromGGUF builds weights and tokenizer from a parsed GGUF file, reading the
// hyperparameters and tensors as llama.cpp does for the architecture. A
// tensor hlm would not use, or a key that asks for a computation hlm does
// not implement (YaRN or LongRoPE scaling, experts), is an error naming
// it, never ignored. The tokenizer is nil when the file has none.
func FromGGUF(f *gguf.File) (*Weights, *tokenizer.Tokenizer, error) {
	cfg, err := configFromGGUF(f)
	if err != nil {
		return nil, nil, err
	}
	w := &Weights{Config: cfg, Layers: make([]Layer, cfg.Layers)}
	names := make([]string, len(f.Tensors))
	for i, ti := range f.Tensors {
		names[i] = ti.Name
	}
	lookup := func(name string) (srcTensor, bool, error) {
		ti, ok := f.Tensor(name)
		if !ok {
			return srcTensor{}, false, nil
		}
		st := srcTensor{name: name, release: f.Release, whole: f.MappedWhole}
		var known bool
		if st.dt, known = dtypeOf(ti.Type); !known {
			return st, true, fmt.Errorf("%w: tensor %s has type %v (hlm reads F32, F16, BF16, Q8_0, Q4_0, Q5_0, Q4_K and Q6_K)", model.ErrUnsupported, name, ti.Type)
		}
		switch len(ti.Dims) {
		case 1:
			st.rows = int(ti.Dims[0])
		case 2:
			st.cols, st.rows = int(ti.Dims[0]), int(ti.Dims[1])
		default:
			return st, true, fmt.Errorf("%w: tensor %s has %d dimensions", model.ErrFormat, name, len(ti.Dims))
		}
		data, err := f.TensorData(name)
		st.data = data
		return st, true, err
	}
	if err := w.fill(lookup, names); err != nil {
		return nil, nil, err
	}
	tok, err := tokenizerFromGGUF(f)
	if err != nil {
		return nil, nil, err
	}
	return w, tok, nil
}

// srcTensor is a tensor of a file in the engine's layout: rows × cols
// ([out][in]; cols 0: a vector of rows values), its data in type dt.
type srcTensor struct {
	name       string
	dt         tensor.DType
	rows, cols int
	data       []byte
	release    func([]byte) // lets the mapped pages go once packed (nil: none)
	whole      func() bool  // whether the mapped pages are in 2 MiB pages already (gguf's File.MappedWhole)
}

// fill binds the tensors lookup finds, by their GGUF names, to w's
// fields, requires those the family needs, and refuses any tensor of
// names (the file's) that nothing binds. A missing classifier is tied to
// the token embedding.
func (w *Weights) fill(lookup func(name string) (srcTensor, bool, error), names []string) error {
	bs, err := w.bindings()
	if err != nil {
		return err
	}
	used := map[string]bool{}
	for _, b := range bs {
		st, ok, err := lookup(b.name)
		if err != nil {
			return err
		}
		if !ok {
			if b.optional {
				continue
			}
			return fmt.Errorf("%w: tensor %s missing", model.ErrFormat, b.name)
		}
		used[b.name] = true
		if err := bindTensor(st, b); err != nil {
			return err
		}
	}
	for _, n := range names {
		if !used[n] {
			return fmt.Errorf("%w: tensor %s is not used by hlm's %s (refusing rather than computing without it)",
				model.ErrUnsupported, n, w.Config.Arch)
		}
	}
	if w.Output == nil {
		w.Output = w.Embedding // tied classifier
	}
	return w.Validate()
}

// bindTensor puts st into the weights b names: a matrix (in place,
// referencing the file's data), a vector (float32 copy), or the parts of a
// fused tensor.
func bindTensor(st srcTensor, b binding) error {
	matrix := b.cols > 0
	switch {
	case matrix && (st.cols != b.cols || st.rows != b.rows):
		return fmt.Errorf("%w: tensor %s is %d×%d, want %d×%d", model.ErrFormat, st.name, st.rows, st.cols, b.rows, b.cols)
	case !matrix && (st.cols != 0 || st.rows != b.rows):
		return fmt.Errorf("%w: tensor %s has shape %d×%d, want a vector of %d", model.ErrFormat, st.name, st.rows, st.cols, b.rows)
	case !matrix && st.dt.BlockSize() != 1:
		return fmt.Errorf("%w: vector %s has type %v", model.ErrUnsupported, st.name, st.dt)
	}
	parts := b.parts
	if len(parts) == 0 {
		parts = []part{{rows: b.rows, mat: b.mat, vec: b.vec}}
	}
	cols := max(b.cols, 1)
	rowBytes, err := st.dt.RowBytes(cols)
	if err != nil || len(st.data) != rowBytes*st.rows {
		return fmt.Errorf("%w: tensor %s has %d bytes for %d×%d %v", model.ErrFormat, st.name, len(st.data), st.rows, cols, st.dt)
	}
	off := 0
	for _, p := range parts {
		chunk := st.data[off*rowBytes : (off+p.rows)*rowBytes]
		off += p.rows
		if p.vec != nil {
			*p.vec = make([]float32, p.rows)
			tensor.DequantizeRow(*p.vec, st.dt, chunk)
			continue
		}
		m, err := tensor.NewRaw(st.dt, p.rows, cols, chunk)
		if err != nil {
			return fmt.Errorf("%s: %w", st.name, err)
		}
		if st.release != nil {
			// A copy of its own (tensor/pack.go: packed rows, or K-quant rows
			// copied as they are) makes the mapped bytes cold.
			m.SetDataRelease(st.release)
			m.SetDataMappedWhole(st.whole)
		}
		*p.mat = m
	}
	return nil
}

// configFromGGUF reads the hyperparameters of a GGUF file as llama.cpp
// does for its architecture (llama_model_base::load_hparams and the
// architecture's load_arch_hparams), with llama.cpp's defaults.
func configFromGGUF(f *gguf.File) (model.Config, error) {
	var c model.Config
	c.Arch = f.Architecture()
	fam, err := familyOf(c.Arch)
	if err != nil {
		return c, err
	}
	if _, ok := f.Get(f.ArchKey("block_count")); !ok && f.Architecture() != "" {
		return c, fmt.Errorf("%w: no %s (a vocabulary-only file?)", model.ErrFormat, f.ArchKey("block_count"))
	}
	k := ggufKeys{f}
	for _, p := range []struct {
		dst *int
		key string
	}{{&c.Dim, "embedding_length"}, {&c.Hidden, "feed_forward_length"}, {&c.Layers, "block_count"},
		{&c.Heads, "attention.head_count"}, {&c.SeqLen, "context_length"}} {
		if *p.dst, err = k.need(p.key); err != nil {
			return c, err
		}
	}
	if c.KVHeads, err = k.optUint("attention.head_count_kv", c.Heads); err != nil {
		return c, err
	}
	hd, err := k.optUint("attention.key_length", 0)
	if err != nil {
		return c, err
	}
	if vd, err := k.optUint("attention.value_length", hd); err != nil {
		return c, err
	} else if vd != hd {
		return c, fmt.Errorf("%w: key width %d and value width %d differ", model.ErrUnsupported, hd, vd)
	}
	if hd > 0 && hd*c.Heads != c.Dim {
		c.HeadDim = hd // (equal to Dim/Heads it stays implicit)
	}
	if c.RopeTheta, err = k.opt("rope.freq_base", 10000); err != nil {
		return c, err
	}
	epsKey, defEps := "attention.layer_norm_rms_epsilon", 1e-5
	if fam.layerNorm {
		epsKey = "attention.layer_norm_epsilon"
	}
	eps, err := k.opt(epsKey, defEps)
	if err != nil {
		return c, err
	}
	c.NormEps = float32(eps)
	emb, ok := f.Tensor("token_embd.weight")
	if !ok || len(emb.Dims) != 2 {
		return c, fmt.Errorf("%w: no 2-D token_embd.weight", model.ErrFormat)
	}
	if emb.Dims[1] > 1<<22 || emb.Dims[0] > 1<<16 {
		return c, fmt.Errorf("%w: token_embd.weight of %v", model.ErrFormat, emb.Dims)
	}
	c.Vocab = int(emb.Dims[1])
	if int(emb.Dims[0]) != c.Dim {
		c.EmbedDim = int(emb.Dims[0])
	}
	if n, err := k.optUint("expert_count", 0); err != nil || n > 0 {
		return c, fmt.Errorf("%w: mixture of %d experts", model.ErrUnsupported, n)
	}
	if v, ok := f.Get(k.key("attention.causal")); ok {
		if b, _ := v.Bool(); !b {
			return c, fmt.Errorf("%w: non-causal attention (%s)", model.ErrUnsupported, k.key("attention.causal"))
		}
	}

	if fam.learnedPos {
		c.RopeTheta = 10000 // unused: learned positions
	} else if err := ropeFromGGUF(&c, k, fam); err != nil {
		return c, err
	}
	if err := familyFromGGUF(&c, k); err != nil {
		return c, err
	}
	c.Window = windowInContext(c.Window, c.SeqLen)
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c, nil
}

// ggufKeys reads a file's architecture keys (general.architecture's
// prefix), any malformed value an ErrFormat.
type ggufKeys struct{ f *gguf.File }

// key is the architecture's key k.
func (k ggufKeys) key(name string) string { return k.f.ArchKey(name) }

// need is the unsigned integer under name (at most 2³¹), which must be
// there.
func (k ggufKeys) need(name string) (int, error) {
	v, err := k.f.Uint(k.key(name))
	if err != nil {
		return 0, fmt.Errorf("%w: %v", model.ErrFormat, err)
	}
	if v > 1<<31 {
		return 0, fmt.Errorf("%w: %s = %d", model.ErrFormat, k.key(name), v)
	}
	return int(v), nil
}

// optUint is the unsigned integer under name, def when it is absent.
func (k ggufKeys) optUint(name string, def int) (int, error) {
	if _, ok := k.f.Get(k.key(name)); !ok {
		return def, nil
	}
	return k.need(name)
}

// opt is the number under name, def when it is absent.
func (k ggufKeys) opt(name string, def float64) (float64, error) {
	v, err := k.f.Float(k.key(name))
	if errors.Is(err, gguf.ErrMissingKey) {
		return def, nil
	}
	if err != nil {
		return 0, fmt.Errorf("%w: %v", model.ErrFormat, err)
	}
	return v, nil
}

// ropeFromGGUF reads the rotary embedding's settings: its width, linear
// or YaRN scaling (as llama.cpp), and the attention factor.
func ropeFromGGUF(c *model.Config, k ggufKeys, fam family) error {
	c.RopeNeox = fam.neox
	rd, err := k.optUint("rope.dimension_count", 0)
	if err != nil {
		return err
	}
	if rd > 0 && rd != c.HeadSize() {
		if c.Arch == "llama" {
			return fmt.Errorf("%w: invalid rope.dimension_count %d for head size %d (llama.cpp refuses it too)", model.ErrFormat, rd, c.HeadSize())
		}
		c.RopeDims = rd
	}
	scaling, _ := k.f.String(k.key("rope.scaling.type"))
	factor, err := k.opt("rope.scaling.factor", 0)
	if err != nil {
		return err
	}
	if factor == 0 {
		if factor, err = k.opt("rope.scale_linear", 0); err != nil {
			return err
		}
	}
	if !(factor >= 0 && factor <= 1<<20) {
		return fmt.Errorf("%w: %s = %g is out of range", model.ErrFormat, k.key("rope.scaling.factor"), factor)
	}
	switch scaling {
	case "", "none", "linear":
		if scaling != "none" && factor > 0 && factor != 1 {
			c.RopeScale = factor
		}
	case "yarn":
		// As llama.cpp: ramp over the training context
		// (original_context_length, else context_length), β 32 and
		// 1, rotations scaled by 1 + 0.1·ln(factor) times
		// rope.scaling.attn_factor.
		if factor > 1 {
			c.RopeScale = factor
			if c.YarnOrigCtx, err = k.optUint("rope.scaling.original_context_length", c.SeqLen); err != nil {
				return err
			}
			if c.YarnOrigCtx == 0 {
				return fmt.Errorf("%w: %s is 0", model.ErrFormat, k.key("rope.scaling.original_context_length"))
			}
		}
		// Keys llama.cpp ignores for these architectures: refused
		// unless they say what it does anyway.
		for name, def := range map[string]float64{"rope.scaling.yarn_log_multiplier": 0, "rope.scaling.yarn_ext_factor": 1,
			"rope.scaling.yarn_attn_factor": 1, "rope.scaling.yarn_beta_fast": 32, "rope.scaling.yarn_beta_slow": 1} {
			if v, err := k.opt(name, def); err != nil || v != def {
				return fmt.Errorf("%w: %s = %g (llama.cpp runs %s without it; hlm will not guess)", model.ErrUnsupported, k.key(name), v, c.Arch)
			}
		}
	default:
		return fmt.Errorf("%w: rope scaling %q (hlm implements linear, YaRN and Llama-3's rope_freqs)", model.ErrUnsupported, scaling)
	}
	if c.RopeAttnFactor, err = k.opt("rope.scaling.attn_factor", 0); err != nil {
		return err
	}
	if c.RopeAttnFactor == 1 {
		c.RopeAttnFactor = 0
	}
	return nil
}

// familyFromGGUF reads the family specifics, as llama.cpp's
// load_arch_hparams: Gemma's scales, windows and soft-caps, and the keys of
// hlm's own OPT and GPT-Neo files.
func familyFromGGUF(c *model.Config, k ggufKeys) error {
	var err error
	switch c.Arch {
	case "gemma2", "gemma3":
		c.EmbedScale = float32(math.Sqrt(float64(c.Dim)))
		big := c.Arch == "gemma2" && c.Layers == 46 || c.Arch == "gemma3" && c.Layers == 62 // the 27B models
		if big {
			c.AttnScale = float32(1 / math.Sqrt(float64(c.Dim/c.Heads)))
		}
		pattern, window := 2, 4096
		if c.Arch == "gemma3" {
			pattern, window = 6, 0
		}
		if c.Window, err = k.optUint("attention.sliding_window", window); err != nil {
			return err
		}
		if c.Window > 0 {
			if c.LocalLayers, err = swaPattern(k.f, c.Layers, pattern); err != nil {
				return err
			}
			local := c.RopeTheta // gemma2: the local layers share the global base and scale
			if c.Arch == "gemma3" {
				local = 10000
			}
			if c.LocalTheta, err = k.opt("rope.freq_base_swa", local); err != nil {
				return err
			}
		}
		if c.Arch == "gemma2" {
			cap, err := k.opt("attn_logit_softcapping", 50)
			if err != nil {
				return err
			}
			c.AttnSoftcap = float32(cap)
			fc, err := k.opt("final_logit_softcapping", 30)
			if err != nil {
				return err
			}
			c.FinalSoftcap = float32(fc)
		} else {
			fc, err := k.opt("final_logit_softcapping", 0)
			if err != nil {
				return err
			}
			c.FinalSoftcap = float32(fc)
		}
	case "opt", "gpt_neo":
		// hlm's own GGUF files of the families llama.cpp does not run.
		if c.PosOffset, err = k.optUint("position_offset", 0); err != nil {
			return err
		}
		if v, ok := k.f.Get(k.key("post_norm")); ok {
			c.PostNorm, _ = v.Bool()
		}
		if s, err := k.opt("attention.scale", 0); err != nil {
			return err
		} else {
			c.AttnScale = float32(s)
		}
		if c.Window, err = k.optUint("attention.sliding_window", 0); err != nil {
			return err
		}
		if c.Window > 0 {
			if c.LocalLayers, err = swaPattern(k.f, c.Layers, 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// windowInContext is a sliding window as the engine keeps it: one longer
// than the context masks nothing the context can hold, so its layers attend
// to every earlier position, as transformers and llama.cpp run them
// (GPT-Neo's local mask over a position table shorter than window_size
// keeps every position; Gemma's and llama.cpp's masks never reach back that
// far). It is kept as the context's length — the same attention, and a
// value hlm convert writes and reads back (an HF window_size need not fit
// GGUF's uint32). The layers stay local: Gemma 3's keep their own rotary
// base.
func windowInContext(window, seqLen int) int {
	if seqLen > 0 && window > seqLen {
		return seqLen
	}
	return window
}

// swaPattern reads which layers use the sliding window: the
// attention.sliding_window_pattern array of bools, else its period n (or
// def): layer l is local unless l%n == n−1 (llama.cpp's set_swa_pattern).
func swaPattern(f *gguf.File, layers, def int) (string, error) {
	v, ok := f.Get(f.ArchKey("attention.sliding_window_pattern"))
	if ok && v.Len() > 0 {
		vs, _ := v.Values()
		if len(vs) < layers {
			return "", fmt.Errorf("%w: sliding_window_pattern of %d layers for %d", model.ErrFormat, len(vs), layers)
		}
		out := make([]byte, layers)
		for i := range out {
			b, ok := vs[i].Bool()
			if !ok {
				return "", fmt.Errorf("%w: sliding_window_pattern is not an array of bools", model.ErrFormat)
			}
			out[i] = localMark(b)
		}
		return string(out), nil
	}
	n := def
	if ok {
		u, isUint := v.Uint()
		if !isUint || u > 1<<16 {
			return "", fmt.Errorf("%w: sliding_window_pattern %v", model.ErrFormat, v)
		}
		n = int(u)
	}
	out := make([]byte, layers)
	for l := range out {
		out[l] = localMark(n == 0 || l%n < n-1)
	}
	return string(out), nil
}

// localMark is a layer's letter in model.Config.LocalLayers.
func localMark(local bool) byte {
	if local {
		return 'L'
	}
	return 'G'
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
	for _, s := range []struct {
		key string
		dst **int
	}{{"tokenizer.ggml.eot_token_id", &v.EOT}, {"tokenizer.ggml.eom_token_id", &v.EOM}} {
		if i := id(s.key, -1); i >= 0 {
			*s.dst = &i
		}
	}
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
