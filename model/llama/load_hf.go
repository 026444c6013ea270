package llama

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/safetensors"
	"github.com/hlmproject/hlm/tensor"
)

// hfConfig is the part of a Hugging Face config.json hlm reads, for every
// model_type it runs (the key names differ between families).
type hfConfig struct {
	ModelType         string          `json:"model_type"`
	HiddenSize        int             `json:"hidden_size"`
	IntermediateSize  *int            `json:"intermediate_size"`
	NumLayers         int             `json:"num_hidden_layers"`
	NumHeads          int             `json:"num_attention_heads"`
	NumKVHeads        int             `json:"num_key_value_heads"`
	VocabSize         int             `json:"vocab_size"`
	MaxPositions      int             `json:"max_position_embeddings"`
	RMSNormEps        float64         `json:"rms_norm_eps"`
	LayerNormEps      float64         `json:"layer_norm_epsilon"`
	RopeTheta         float64         `json:"rope_theta"`
	RopeScaling       json.RawMessage `json:"rope_scaling"`
	TieWordEmbeddings *bool           `json:"tie_word_embeddings"`
	HiddenAct         string          `json:"hidden_act"`
	HiddenActivation  string          `json:"hidden_activation"` // Gemma
	ActivationFn      string          `json:"activation_function"`
	AttentionBias     bool            `json:"attention_bias"`
	MLPBias           bool            `json:"mlp_bias"`
	HeadDim           int             `json:"head_dim"`
	// Gemma.
	QueryPreAttnScalar  float64  `json:"query_pre_attn_scalar"`
	AttnSoftcap         *float64 `json:"attn_logit_softcapping"`
	FinalSoftcap        *float64 `json:"final_logit_softcapping"`
	SlidingWindow       *int     `json:"sliding_window"`
	SlidingWindowPeriod int      `json:"sliding_window_pattern"`
	LayerTypes          []string `json:"layer_types"`
	RopeLocalBase       float64  `json:"rope_local_base_freq"`
	// Qwen2/Qwen3.
	UseSlidingWindow bool `json:"use_sliding_window"`
	MaxWindowLayers  int  `json:"max_window_layers"`
	// transformers v5 writes rope_parameters instead of rope_theta and
	// rope_scaling: one set, or one per layer type (Gemma 3).
	RopeParameters json.RawMessage `json:"rope_parameters"`
	// Phi-3.
	PartialRotary *float64 `json:"partial_rotary_factor"`
	// GPT-2.
	NEmbd      int  `json:"n_embd"`
	NLayer     int  `json:"n_layer"`
	NHead      int  `json:"n_head"`
	NPositions int  `json:"n_positions"`
	NInner     *int `json:"n_inner"`
	// OPT.
	FFNDim            int   `json:"ffn_dim"`
	DoLayerNormBefore *bool `json:"do_layer_norm_before"`
	RemoveFinalLN     bool  `json:"_remove_final_layer_norm"`
	WordEmbedProjDim  int   `json:"word_embed_proj_dim"`
	EnableBias        *bool `json:"enable_bias"`
	LayerNormAffine   *bool `json:"layer_norm_elementwise_affine"`
	// GPT-Neo.
	NumLayersNeo   int               `json:"num_layers"`
	NumHeadsNeo    int               `json:"num_heads"`
	AttentionTypes []json.RawMessage `json:"attention_types"`
	WindowSize     int               `json:"window_size"`
}

// parseHFConfig reads a config.json over the defaults transformers' config
// class of its model_type has for the keys a file may leave out.
func parseHFConfig(b []byte) (*hfConfig, error) {
	var head struct {
		ModelType string `json:"model_type"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, err
	}
	hc := hfDefaults(head.ModelType)
	if err := json.Unmarshal(b, &hc); err != nil {
		return nil, err
	}
	if err := hc.ropeParameters(); err != nil {
		return nil, err
	}
	return &hc, nil
}

// hfDefaults are the defaults of transformers' configuration classes for
// the keys hlm reads (LlamaConfig, MistralConfig, Qwen2Config, …);
// dimensions have none that a real checkpoint relies on.
func hfDefaults(modelType string) hfConfig {
	f := func(v float64) *float64 { return &v }
	i := func(v int) *int { return &v }
	hc := hfConfig{ModelType: modelType, RopeTheta: 10000}
	switch modelType {
	case "llama", "mistral", "qwen2", "qwen3", "phi3":
		hc.HiddenAct = "silu"
		hc.RMSNormEps = 1e-6
		switch modelType {
		case "mistral":
			hc.SlidingWindow = i(4096)
		case "qwen2", "qwen3":
			hc.SlidingWindow, hc.MaxWindowLayers = i(4096), 28
			if modelType == "qwen3" {
				hc.HeadDim = 128
			}
		case "phi3":
			hc.RMSNormEps = 1e-5
		}
	case "gemma2", "gemma3_text":
		hc.HiddenActivation, hc.RMSNormEps, hc.HeadDim = "gelu_pytorch_tanh", 1e-6, 256
		hc.QueryPreAttnScalar, hc.SlidingWindow = 256, i(4096)
		if modelType == "gemma2" {
			hc.AttnSoftcap, hc.FinalSoftcap = f(50), f(30)
		} else {
			hc.RopeTheta, hc.RopeLocalBase, hc.SlidingWindowPeriod = 1e6, 10000, 6
		}
	case "gpt2", "gpt_neo":
		hc.ActivationFn, hc.LayerNormEps = "gelu_new", 1e-5
		if modelType == "gpt_neo" {
			hc.WindowSize = 256
		}
	case "opt":
		hc.ActivationFn = "relu"
	}
	return hc
}

// ropeParameters moves transformers v5's rope_parameters into rope_theta
// and rope_scaling (and, per layer type, the local layers' base).
func (hc *hfConfig) ropeParameters() error {
	if len(hc.RopeParameters) == 0 || string(hc.RopeParameters) == "null" {
		return nil
	}
	type params struct {
		Theta *float64 `json:"rope_theta"`
		Type  string   `json:"rope_type"`
	}
	var one params
	if err := json.Unmarshal(hc.RopeParameters, &one); err != nil {
		return fmt.Errorf("rope_parameters: %v", err)
	}
	if one.Type != "" || one.Theta != nil {
		if one.Theta != nil {
			hc.RopeTheta = *one.Theta
		}
		hc.RopeScaling = hc.RopeParameters
		return nil
	}
	var byLayer map[string]json.RawMessage
	if err := json.Unmarshal(hc.RopeParameters, &byLayer); err != nil {
		return fmt.Errorf("rope_parameters: %v", err)
	}
	for kind, raw := range byLayer {
		var p params
		if err := json.Unmarshal(raw, &p); err != nil {
			return fmt.Errorf("rope_parameters[%q]: %v", kind, err)
		}
		switch kind {
		case "full_attention":
			if p.Theta != nil {
				hc.RopeTheta = *p.Theta
			}
			hc.RopeScaling = raw
		case "sliding_attention":
			if p.Type != "" && p.Type != "default" {
				return fmt.Errorf("%w: rope_parameters[%q] of type %q (hlm scales the global layers only)", model.ErrUnsupported, kind, p.Type)
			}
			if p.Theta != nil {
				hc.RopeLocalBase = *p.Theta
			}
		default:
			return fmt.Errorf("%w: rope_parameters for layer type %q", model.ErrUnsupported, kind)
		}
	}
	return nil
}

// hfArch maps a Hugging Face model_type to the family hlm runs it as.
var hfArch = map[string]string{
	"llama": "llama", "mistral": "llama", "qwen2": "qwen2", "qwen3": "qwen3",
	"gemma2": "gemma2", "gemma3_text": "gemma3", "phi3": "phi3", "gpt2": "gpt2",
	"opt": "opt", "gpt_neo": "gpt_neo",
}

// LoadHF reads a Hugging Face model directory: config.json and
// model.safetensors (or the shards model.safetensors.index.json names), in
// F32, F16 or BF16, for every model_type of hfArch. Tensors are renamed to
// their GGUF names and bound as a GGUF file's are, with the conversions
// llama.cpp's converter makes: Llama's q and k rows permuted back to the
// interleaved rotary order, Gemma's norm weights w stored as 1+w, GPT-2's
// Conv1D weights transposed. Every tensor of the checkpoint must be used
// (the causal-mask buffers of GPT-2 aside).
func LoadHF(dir string) (*Weights, error) {
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errors.New("a directory without config.json, so no Hugging Face model (a model is a llama2.c .bin, a .gguf, a Hugging Face directory with config.json and model.safetensors, or builtin:NAME)")
	}
	if err != nil {
		return nil, err
	}
	hc, err := parseHFConfig(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %s/config.json: %v", model.ErrFormat, dir, err)
	}
	arch, ok := hfArch[hc.ModelType]
	if !ok {
		names := make([]string, 0, len(hfArch))
		for n := range hfArch {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("%w: model_type %q (hlm reads %s)", model.ErrUnsupported, hc.ModelType, strings.Join(names, ", "))
	}
	cfg, factors, err := hc.config(arch)
	if err != nil {
		return nil, fmt.Errorf("%s/config.json: %w", dir, err)
	}
	tensors, err := openShards(dir)
	if err != nil {
		return nil, err
	}
	w := &Weights{Config: cfg, Layers: make([]Layer, cfg.Layers)}
	m := newHFMapping(arch, cfg, tensors)
	if err := w.fill(m.lookup, m.names()); err != nil {
		return nil, err
	}
	if factors != nil {
		w.RopeFactors = factors
	}
	if hc.TieWordEmbeddings != nil && !*hc.TieWordEmbeddings && w.Output == w.Embedding {
		return nil, fmt.Errorf("%w: tensor lm_head.weight missing (tie_word_embeddings is false)", model.ErrFormat)
	}
	return w, w.Validate()
}

// config turns the config.json into the engine's configuration, and the
// rotary frequency divisors of Llama-3's rope scaling (nil: none).
func (hc *hfConfig) config(arch string) (model.Config, []float32, error) {
	c := model.Config{Arch: arch, Dim: hc.HiddenSize, Layers: hc.NumLayers, Heads: hc.NumHeads,
		KVHeads: hc.NumKVHeads, Vocab: hc.VocabSize, SeqLen: hc.MaxPositions, RopeTheta: hc.RopeTheta,
		NormEps: float32(hc.RMSNormEps)}
	if hc.IntermediateSize != nil {
		c.Hidden = *hc.IntermediateSize
	}
	act, err := hc.familyShape(&c, arch)
	if err != nil {
		return c, nil, err
	}
	fam, err := familyOf(arch)
	if err != nil {
		return c, nil, err
	}
	if err := checkActivation(fam, act, arch); err != nil {
		return c, nil, err
	}
	if c.KVHeads == 0 {
		c.KVHeads = c.Heads
	}
	if c.RopeTheta == 0 {
		c.RopeTheta = 10000
	}
	if c.NormEps == 0 {
		c.NormEps = 1e-6
		if fam.layerNorm {
			c.NormEps = 1e-5
		}
	}
	if hc.HeadDim > 0 && hc.HeadDim*c.Heads != c.Dim {
		c.HeadDim = hc.HeadDim
	}
	if arch == "llama" && (hc.AttentionBias || hc.MLPBias) {
		return c, nil, fmt.Errorf("%w: Llama with attention or MLP biases", model.ErrUnsupported)
	}
	if !fam.learnedPos {
		c.RopeNeox = fam.neox
	}
	if hc.PartialRotary != nil && *hc.PartialRotary != 1 {
		// As llama.cpp's converter: int(factor·hidden) / heads.
		c.RopeDims = int(*hc.PartialRotary*float64(c.Dim)) / c.Heads
	}
	if err := hc.windows(&c, arch); err != nil {
		return c, nil, err
	}
	c.Window = windowInContext(c.Window, c.SeqLen)
	if err := c.Validate(); err != nil {
		return c, nil, err
	}
	factors, err := hc.ropeScaling(&c)
	if err != nil {
		return c, nil, err
	}
	return c, factors, c.Validate()
}

// familyShape reads the shape keys that a family names its own way (GPT-2,
// OPT, GPT-Neo) into c, refuses OPT variants hlm does not run, and returns
// the activation's name as the family's config gives it.
func (hc *hfConfig) familyShape(c *model.Config, arch string) (string, error) {
	act := hc.HiddenAct
	switch arch {
	case "gemma2", "gemma3":
		act = hc.HiddenActivation
		if act == "" {
			act = hc.HiddenAct
		}
	case "gpt2":
		c.Dim, c.Layers, c.Heads, c.SeqLen = hc.NEmbd, hc.NLayer, hc.NHead, hc.NPositions
		c.Hidden = 4 * c.Dim
		if hc.NInner != nil {
			c.Hidden = *hc.NInner
		}
		c.NormEps = float32(hc.LayerNormEps)
		act = hc.ActivationFn
	case "opt":
		c.Hidden, c.PosOffset = hc.FFNDim, 2
		c.NormEps = 1e-5 // torch.nn.LayerNorm's default; OPT's config has none
		c.PostNorm = hc.DoLayerNormBefore != nil && !*hc.DoLayerNormBefore
		if hc.WordEmbedProjDim != 0 && hc.WordEmbedProjDim != c.Dim {
			c.EmbedDim = hc.WordEmbedProjDim
		}
		act = hc.ActivationFn
		switch {
		case hc.EnableBias != nil && !*hc.EnableBias, hc.LayerNormAffine != nil && !*hc.LayerNormAffine:
			return "", fmt.Errorf("%w: OPT without biases or LayerNorm weights", model.ErrUnsupported)
		case hc.RemoveFinalLN:
			return "", fmt.Errorf("%w: OPT with _remove_final_layer_norm", model.ErrUnsupported)
		}
	case "gpt_neo":
		c.Layers, c.Heads = hc.NumLayersNeo, hc.NumHeadsNeo
		if c.Hidden == 0 {
			c.Hidden = 4 * c.Dim
		}
		c.NormEps = float32(hc.LayerNormEps)
		c.AttnScale = 1 // GPT-Neo does not scale the attention scores
		act = hc.ActivationFn
		pattern, err := neoLayers(hc.AttentionTypes, c.Layers)
		if err != nil {
			return "", err
		}
		if strings.Contains(pattern, "L") {
			c.Window, c.LocalLayers = hc.WindowSize, pattern
		}
	}
	return act, nil
}

// checkActivation refuses an activation other than the family's.
func checkActivation(fam family, act, arch string) error {
	switch want := map[activation][]string{actSiLU: {"silu", "swish"}, actGELU: {"gelu_pytorch_tanh", "gelu_new"}, actReLU: {"relu"}}[fam.act]; {
	case act == "" && fam.act == actSiLU:
	case !slices.Contains(want, act):
		return fmt.Errorf("%w: activation %q (hlm runs %s with %s)", model.ErrUnsupported, act, arch, strings.Join(want, " or "))
	}
	return nil
}

// windows reads the sliding windows as transformers applies them: Gemma's
// local layers (and their rotary base), Qwen2/3's window layers, Phi-3's
// and Mistral's window on every layer; and Gemma's scales and soft-caps.
func (hc *hfConfig) windows(c *model.Config, arch string) error {
	var err error
	switch arch {
	case "gemma2", "gemma3":
		c.EmbedScale = float32(math.Sqrt(float64(c.Dim)))
		if hc.QueryPreAttnScalar > 0 {
			c.AttnScale = float32(1 / math.Sqrt(hc.QueryPreAttnScalar))
		}
		if hc.AttnSoftcap != nil {
			c.AttnSoftcap = float32(*hc.AttnSoftcap)
		}
		if hc.FinalSoftcap != nil {
			c.FinalSoftcap = float32(*hc.FinalSoftcap)
		}
		if hc.SlidingWindow != nil && *hc.SlidingWindow > 0 {
			c.Window = *hc.SlidingWindow
			if c.LocalLayers, err = hc.localLayers(arch, c.Layers); err != nil {
				return err
			}
			if arch == "gemma3" {
				c.LocalTheta = 10000
				if hc.RopeLocalBase > 0 {
					c.LocalTheta = hc.RopeLocalBase
				}
			}
		}
	case "qwen2", "qwen3":
		// transformers' Qwen2/Qwen3 (llama.cpp ignores the window): layer
		// types if given, else the layers from max_window_layers on.
		if hc.UseSlidingWindow && hc.SlidingWindow != nil && *hc.SlidingWindow > 0 {
			c.Window = *hc.SlidingWindow
			if len(hc.LayerTypes) > 0 {
				if c.LocalLayers, err = hc.localLayers(arch, c.Layers); err != nil {
					return err
				}
			} else {
				out := make([]byte, c.Layers)
				for l := range out {
					out[l] = localMark(l >= hc.MaxWindowLayers)
				}
				c.LocalLayers = string(out)
			}
			if !strings.Contains(c.LocalLayers, "L") {
				c.Window, c.LocalLayers = 0, ""
			}
		}
	}
	if arch == "phi3" || hc.ModelType == "mistral" {
		// transformers' Phi3 and Mistral (v0.1) mask attention to the
		// sliding window (llama.cpp does not: its GGUF files differ past
		// the window).
		if hc.SlidingWindow != nil && *hc.SlidingWindow > 0 && *hc.SlidingWindow < c.SeqLen {
			c.Window, c.LocalLayers = *hc.SlidingWindow, strings.Repeat("L", c.Layers)
		}
	}
	return nil
}

// localLayers is Gemma's pattern of sliding-window layers: layer_types, or
// every sliding_window_pattern-th layer global (Gemma 3, default 6), or
// every other layer local (Gemma 2).
func (hc *hfConfig) localLayers(arch string, layers int) (string, error) {
	out := make([]byte, layers)
	if len(hc.LayerTypes) > 0 {
		if len(hc.LayerTypes) < layers {
			return "", fmt.Errorf("%w: layer_types for %d of %d layers", model.ErrFormat, len(hc.LayerTypes), layers)
		}
		for l := range out {
			switch hc.LayerTypes[l] {
			case "sliding_attention":
				out[l] = 'L'
			case "full_attention":
				out[l] = 'G'
			default:
				return "", fmt.Errorf("%w: layer type %q", model.ErrUnsupported, hc.LayerTypes[l])
			}
		}
		return string(out), nil
	}
	n := 2
	if arch == "gemma3" {
		n = 6
		if hc.SlidingWindowPeriod > 0 {
			n = hc.SlidingWindowPeriod
		}
	}
	for l := range out {
		out[l] = localMark(l%n < n-1)
	}
	return string(out), nil
}

// neoLayers expands GPT-Neo's attention_types ([[["global", "local"], 12]])
// into one letter per layer.
func neoLayers(types []json.RawMessage, layers int) (string, error) {
	var out []byte
	for _, raw := range types {
		var entry []json.RawMessage
		var kinds []string
		var repeat int
		if json.Unmarshal(raw, &entry) != nil || len(entry) != 2 ||
			json.Unmarshal(entry[0], &kinds) != nil || json.Unmarshal(entry[1], &repeat) != nil || repeat < 0 || repeat > 1<<12 {
			return "", fmt.Errorf("%w: attention_types entry %s", model.ErrFormat, raw)
		}
		for range repeat {
			for _, k := range kinds {
				switch k {
				case "global":
					out = append(out, 'G')
				case "local":
					out = append(out, 'L')
				default:
					return "", fmt.Errorf("%w: attention type %q", model.ErrUnsupported, k)
				}
			}
		}
	}
	if len(out) != layers {
		return "", fmt.Errorf("%w: attention_types cover %d layers of %d", model.ErrFormat, len(out), layers)
	}
	return string(out), nil
}

// ropeScaling applies rope_scaling: "linear" divides the positions (of
// the global layers), "llama3" gives per-frequency divisors as llama.cpp's
// converter computes them (LlamaModel.generate_extra_tensors); the others
// (YaRN, dynamic NTK, LongRoPE) are refused.
func (hc *hfConfig) ropeScaling(c *model.Config) ([]float32, error) {
	if len(hc.RopeScaling) == 0 || string(hc.RopeScaling) == "null" {
		return nil, nil
	}
	var rs struct {
		Type            string
		RopeType        string `json:"rope_type"`
		Factor          float64
		LowFreqFactor   float64 `json:"low_freq_factor"`
		HighFreqFactor  float64 `json:"high_freq_factor"`
		OriginalContext float64 `json:"original_max_position_embeddings"`
		// YaRN's settings hlm does not vary (refused unless default).
		BetaFast     *float64        `json:"beta_fast"`
		BetaSlow     *float64        `json:"beta_slow"`
		AttnFactor   *float64        `json:"attention_factor"`
		Mscale       json.RawMessage `json:"mscale"`
		MscaleAll    json.RawMessage `json:"mscale_all_dim"`
		Truncate     *bool           `json:"truncate"`
		Extrapolated *float64        `json:"extrapolation_factor"`
	}
	if err := json.Unmarshal(hc.RopeScaling, &rs); err != nil {
		return nil, fmt.Errorf("%w: rope_scaling %s", model.ErrFormat, hc.RopeScaling)
	}
	kind := rs.RopeType
	if kind == "" {
		kind = rs.Type
	}
	switch {
	case kind == "default":
		return nil, nil
	case kind == "linear" && rs.Factor > 0:
		if rs.Factor != 1 {
			c.RopeScale = rs.Factor
		}
		return nil, nil
	case kind == "yarn" && rs.Factor >= 1 && rs.Factor <= 1<<20:
		// transformers' _compute_yarn_parameters with its defaults (β 32
		// and 1, attention factor 0.1·ln(factor) + 1, truncated
		// correction range), as llama.cpp runs the converted file.
		switch {
		case rs.BetaFast != nil && *rs.BetaFast != 32, rs.BetaSlow != nil && *rs.BetaSlow != 1,
			rs.AttnFactor != nil, len(rs.Mscale) > 0, len(rs.MscaleAll) > 0,
			rs.Truncate != nil && !*rs.Truncate, rs.Extrapolated != nil && *rs.Extrapolated != 1:
			return nil, fmt.Errorf("%w: rope_scaling %s (hlm runs YaRN with its default β, attention factor and truncation, as llama.cpp does)", model.ErrUnsupported, hc.RopeScaling)
		}
		orig := int(rs.OriginalContext)
		if orig == 0 {
			orig = c.SeqLen
		}
		if rs.OriginalContext < 0 || rs.OriginalContext > 1<<30 || orig <= 0 {
			return nil, fmt.Errorf("%w: rope_scaling %s: original_max_position_embeddings", model.ErrFormat, hc.RopeScaling)
		}
		if rs.Factor > 1 {
			c.RopeScale, c.YarnOrigCtx = rs.Factor, orig
		}
		return nil, nil
	case kind == "llama3" && rs.Factor > 0 && rs.LowFreqFactor > 0 && rs.HighFreqFactor > rs.LowFreqFactor && rs.OriginalContext > 0:
		dims := c.RopeWidth()
		factors := make([]float32, dims/2)
		lowWave, highWave := rs.OriginalContext/rs.LowFreqFactor, rs.OriginalContext/rs.HighFreqFactor
		for i := range factors {
			freq := 1 / math.Pow(c.RopeTheta, float64(float32(2*i)/float32(dims)))
			wave := 2 * math.Pi / freq
			switch {
			case wave < highWave:
				factors[i] = 1
			case wave > lowWave:
				factors[i] = float32(rs.Factor)
			default:
				smooth := (rs.OriginalContext/wave - rs.LowFreqFactor) / (rs.HighFreqFactor - rs.LowFreqFactor)
				factors[i] = float32(1 / ((1-smooth)/rs.Factor + smooth))
			}
		}
		return factors, nil
	}
	return nil, fmt.Errorf("%w: rope_scaling %s (hlm implements linear, llama3 and yarn)", model.ErrUnsupported, hc.RopeScaling)
}

// hfMapping serves a checkpoint's tensors under their GGUF names, with
// llama.cpp's converter's transformations.
type hfMapping struct {
	arch    string
	cfg     model.Config
	tensors map[string]shardTensor
	ggufOf  map[string]string // HF name → GGUF name
	hfOf    map[string]string // GGUF name → HF name
	skip    map[string]bool   // HF buffers that are not weights
}

func newHFMapping(arch string, cfg model.Config, tensors map[string]shardTensor) *hfMapping {
	m := &hfMapping{arch: arch, cfg: cfg, tensors: tensors, ggufOf: map[string]string{}, hfOf: map[string]string{}, skip: map[string]bool{}}
	for name := range tensors {
		if g, ok := hfToGGUF(arch, name); ok {
			m.ggufOf[name] = g
			m.hfOf[g] = name
		} else if hfBuffer(name) {
			m.skip[name] = true
		}
	}
	if _, ok := m.hfOf["token_embd.weight"]; !ok {
		// A tied checkpoint may keep only lm_head.weight (TinyStories-656K).
		if n, ok := m.hfOf["output.weight"]; ok {
			m.hfOf["token_embd.weight"] = n
			delete(m.hfOf, "output.weight")
			m.ggufOf[n] = "token_embd.weight"
		}
	}
	return m
}

// hfBuffer reports whether a checkpoint tensor is a buffer, not a weight:
// GPT-2's and GPT-Neo's causal masks, cached rotary tables.
func hfBuffer(name string) bool {
	for _, suffix := range []string{".attn.bias", ".attn.masked_bias", ".attn.attention.bias",
		".attn.attention.masked_bias", ".rotary_emb.inv_freq"} {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return false
}

// names are the checkpoint's tensors by their GGUF names (an unknown one
// by its own name, so that fill refuses it).
func (m *hfMapping) names() []string {
	var out []string
	for name := range m.tensors {
		if g, ok := m.ggufOf[name]; ok {
			out = append(out, g)
		} else if !m.skip[name] {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// lookup returns the tensor with GGUF name g, converted.
func (m *hfMapping) lookup(g string) (srcTensor, bool, error) {
	name, ok := m.hfOf[g]
	if !ok {
		return srcTensor{}, false, nil
	}
	st := m.tensors[name]
	t := st.tensor
	out := srcTensor{name: name, data: st.file.Data(t)}
	switch t.DType {
	case "F32":
		out.dt = tensor.F32
	case "F16":
		out.dt = tensor.F16
	case "BF16":
		out.dt = tensor.BF16
	default:
		return out, true, fmt.Errorf("%w: tensor %s has dtype %s", model.ErrUnsupported, name, t.DType)
	}
	switch len(t.Shape) {
	case 1:
		out.rows = int(t.Shape[0])
	case 2:
		out.rows, out.cols = int(t.Shape[0]), int(t.Shape[1])
	default:
		return out, true, fmt.Errorf("%w: tensor %s has shape %v", model.ErrFormat, name, t.Shape)
	}
	var err error
	switch {
	case m.arch == "gpt2" && out.cols > 0 && !strings.HasSuffix(g, "embd.weight") && g != "output.weight":
		// GPT-2's Conv1D stores [in][out].
		out, err = transposed(out)
	case m.arch == "llama" && (strings.HasSuffix(g, "attn_q.weight") || strings.HasSuffix(g, "attn_k.weight")):
		heads := m.cfg.Heads
		if strings.HasSuffix(g, "attn_k.weight") {
			heads = m.cfg.KVHeads
		}
		var mt *tensor.Matrix
		if mt, err = tensor.NewRaw(out.dt, out.rows, out.cols, out.data); err == nil {
			if mt, err = unpermuteRotary(mt, heads); err == nil {
				out.data = mt.Bytes()
			}
		}
	case (m.arch == "gemma2" || m.arch == "gemma3") && strings.HasSuffix(g, "norm.weight"):
		// GGUF (and the engine) hold Gemma's RMSNorm weights as 1+w.
		v := make([]float32, out.rows)
		tensor.DequantizeRow(v, out.dt, out.data)
		for i := range v {
			v[i]++
		}
		out.dt, out.data = tensor.F32, tensor.EncodeRow(nil, tensor.F32, v)
	}
	return out, true, err
}

// transposed is t with rows and columns swapped, in its type (F32, F16 or
// BF16: whole elements).
func transposed(t srcTensor) (srcTensor, error) {
	es := 4
	if t.dt != tensor.F32 {
		es = 2
	}
	if len(t.data) != t.rows*t.cols*es {
		return t, fmt.Errorf("%w: tensor %s has %d bytes for %d×%d", model.ErrFormat, t.name, len(t.data), t.rows, t.cols)
	}
	out := make([]byte, len(t.data))
	for r := 0; r < t.rows; r++ {
		for c := 0; c < t.cols; c++ {
			copy(out[(c*t.rows+r)*es:(c*t.rows+r+1)*es], t.data[(r*t.cols+c)*es:(r*t.cols+c+1)*es])
		}
	}
	t.rows, t.cols, t.data = t.cols, t.rows, out
	return t, nil
}

// hfToGGUF renames a checkpoint tensor as llama.cpp's converter does.
func hfToGGUF(arch, name string) (string, bool) {
	for _, p := range []string{"model.", "transformer.", "language_model.model.", "language_model."} {
		if strings.HasPrefix(name, p) && !strings.HasPrefix(name, "model.decoder.") {
			name = strings.TrimPrefix(name, p)
			break
		}
	}
	name = strings.TrimPrefix(name, "model.decoder.")
	name = strings.TrimPrefix(name, "decoder.")
	if name == "lm_head.weight" {
		return "output.weight", true
	}
	if rest, ok := strings.CutPrefix(name, "layers."); ok {
		return layerName(arch, rest)
	}
	if rest, ok := strings.CutPrefix(name, "h."); ok {
		return layerName(arch, rest)
	}
	top := map[string]string{
		"embed_tokens.weight": "token_embd.weight", "wte.weight": "token_embd.weight",
		"wpe.weight": "position_embd.weight", "embed_positions.weight": "position_embd.weight",
		"norm.weight": "output_norm.weight", "ln_f.weight": "output_norm.weight", "ln_f.bias": "output_norm.bias",
		"final_layer_norm.weight": "output_norm.weight", "final_layer_norm.bias": "output_norm.bias",
		"project_in.weight": "proj_in.weight", "project_out.weight": "proj_out.weight",
	}
	g, ok := top[name]
	return g, ok
}

// layerName renames "N.rest" of layer N.
func layerName(arch, s string) (string, bool) {
	n, rest, ok := strings.Cut(s, ".")
	if !ok {
		return "", false
	}
	if _, err := strconv.Atoi(n); err != nil {
		return "", false
	}
	names := map[string]string{
		"self_attn.q_proj.weight": "attn_q.weight", "self_attn.k_proj.weight": "attn_k.weight", "self_attn.v_proj.weight": "attn_v.weight",
		"self_attn.q_proj.bias": "attn_q.bias", "self_attn.k_proj.bias": "attn_k.bias", "self_attn.v_proj.bias": "attn_v.bias",
		"self_attn.o_proj.weight": "attn_output.weight", "self_attn.qkv_proj.weight": "attn_qkv.weight",
		"self_attn.q_norm.weight": "attn_q_norm.weight", "self_attn.k_norm.weight": "attn_k_norm.weight",
		"mlp.gate_proj.weight": "ffn_gate.weight", "mlp.up_proj.weight": "ffn_up.weight", "mlp.down_proj.weight": "ffn_down.weight",
		"mlp.gate_up_proj.weight": "ffn_up.weight",
		"input_layernorm.weight":  "attn_norm.weight", "post_attention_layernorm.weight": "ffn_norm.weight",
	}
	switch arch {
	case "gemma2", "gemma3":
		names["post_attention_layernorm.weight"] = "post_attention_norm.weight"
		names["pre_feedforward_layernorm.weight"] = "ffn_norm.weight"
		names["post_feedforward_layernorm.weight"] = "post_ffw_norm.weight"
	case "gpt2", "gpt_neo":
		names = map[string]string{
			"ln_1.weight": "attn_norm.weight", "ln_1.bias": "attn_norm.bias", "ln_2.weight": "ffn_norm.weight", "ln_2.bias": "ffn_norm.bias",
			"attn.c_attn.weight": "attn_qkv.weight", "attn.c_attn.bias": "attn_qkv.bias",
			"attn.c_proj.weight": "attn_output.weight", "attn.c_proj.bias": "attn_output.bias",
			"attn.attention.q_proj.weight": "attn_q.weight", "attn.attention.k_proj.weight": "attn_k.weight",
			"attn.attention.v_proj.weight":   "attn_v.weight",
			"attn.attention.out_proj.weight": "attn_output.weight", "attn.attention.out_proj.bias": "attn_output.bias",
			"mlp.c_fc.weight": "ffn_up.weight", "mlp.c_fc.bias": "ffn_up.bias", "mlp.c_proj.weight": "ffn_down.weight", "mlp.c_proj.bias": "ffn_down.bias",
		}
	case "opt":
		names = map[string]string{
			"self_attn.q_proj.weight": "attn_q.weight", "self_attn.k_proj.weight": "attn_k.weight", "self_attn.v_proj.weight": "attn_v.weight",
			"self_attn.q_proj.bias": "attn_q.bias", "self_attn.k_proj.bias": "attn_k.bias", "self_attn.v_proj.bias": "attn_v.bias",
			"self_attn.out_proj.weight": "attn_output.weight", "self_attn.out_proj.bias": "attn_output.bias",
			"self_attn_layer_norm.weight": "attn_norm.weight", "self_attn_layer_norm.bias": "attn_norm.bias",
			"final_layer_norm.weight": "ffn_norm.weight", "final_layer_norm.bias": "ffn_norm.bias",
			"fc1.weight": "ffn_up.weight", "fc1.bias": "ffn_up.bias", "fc2.weight": "ffn_down.weight", "fc2.bias": "ffn_down.bias",
		}
	}
	g, ok := names[rest]
	if !ok {
		return "", false
	}
	return "blk." + n + "." + g, true
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
