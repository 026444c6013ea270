package llama

import (
	"errors"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/model"
)

// TestHFConfig reads the config.json fields of real models (abridged to the
// keys that matter) into the engine's configuration: sliding windows and
// which layers use them, rotary variants and scaling, Gemma's scales, and
// the settings hlm refuses.
func TestHFConfig(t *testing.T) {
	base := `"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 6, "num_attention_heads": 4,
		"num_key_value_heads": 2, "vocab_size": 100, "rms_norm_eps": 1e-5, "rope_theta": 10000, `
	tests := []struct {
		name, json string
		check      func(c model.Config, factors []float32) string
		err        error
	}{
		{"mistral-v0.1 window", `{"model_type": "mistral", ` + base + `"max_position_embeddings": 32768, "sliding_window": 4096}`,
			func(c model.Config, _ []float32) string {
				if c.Arch != "llama" || c.Window != 4096 || c.LocalLayers != "LLLLLL" || c.RopeNeox {
					return "want llama, window 4096 on every layer, normal rope"
				}
				return ""
			}, nil},
		{"mistral-v0.3 no window", `{"model_type": "mistral", ` + base + `"max_position_embeddings": 32768, "sliding_window": null}`,
			func(c model.Config, _ []float32) string {
				if c.Window != 0 || c.LocalLayers != "" {
					return "want no window"
				}
				return ""
			}, nil},
		{"phi3-mini-4k", `{"model_type": "phi3", ` + base + `"max_position_embeddings": 4096, "sliding_window": 2047}`,
			func(c model.Config, _ []float32) string {
				if c.Window != 2047 || c.LocalLayers != "LLLLLL" || !c.RopeNeox {
					return "want window 2047 on every layer, NEOX rope"
				}
				return ""
			}, nil},
		{"phi3 partial rotary", `{"model_type": "phi3", ` + base + `"max_position_embeddings": 4096, "partial_rotary_factor": 0.5}`,
			func(c model.Config, _ []float32) string {
				if c.RopeDims != 8 || c.RopeWidth() != 8 {
					return "want 8 rotary dimensions of 16"
				}
				return ""
			}, nil},
		{"gemma2", `{"model_type": "gemma2", ` + base + `"max_position_embeddings": 8192, "sliding_window": 4096,
			"head_dim": 32, "query_pre_attn_scalar": 256, "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0,
			"hidden_activation": "gelu_pytorch_tanh"}`,
			func(c model.Config, _ []float32) string {
				if c.LocalLayers != "LGLGLG" || c.Window != 4096 || c.LocalTheta != 0 || c.HeadSize() != 32 ||
					c.AttnScale != 1.0/16 || c.AttnSoftcap != 50 || c.FinalSoftcap != 30 || c.EmbedScale != 8 {
					return "want even layers local, head 32, scale 1/16, caps 50/30, embedding ×8"
				}
				return ""
			}, nil},
		{"gemma3 pattern", `{"model_type": "gemma3_text", ` + base + `"max_position_embeddings": 32768, "sliding_window": 512,
			"sliding_window_pattern": 6, "rope_local_base_freq": 10000, "rope_theta": 1000000, "hidden_activation": "gelu_pytorch_tanh"}`,
			func(c model.Config, _ []float32) string {
				if c.LocalLayers != "LLLLLG" || c.Window != 512 || c.LocalTheta != 10000 || c.RopeTheta != 1e6 {
					return "want five local layers then a global one, local base 10000, global 1e6"
				}
				return ""
			}, nil},
		{"gemma3 layer_types", `{"model_type": "gemma3_text", ` + base + `"max_position_embeddings": 32768, "sliding_window": 512,
			"layer_types": ["full_attention", "sliding_attention", "sliding_attention", "full_attention", "sliding_attention", "sliding_attention"],
			"hidden_activation": "gelu_pytorch_tanh"}`,
			func(c model.Config, _ []float32) string {
				if c.LocalLayers != "GLLGLL" {
					return "want layer_types followed"
				}
				return ""
			}, nil},
		{"llama3 rope scaling", `{"model_type": "llama", ` + base + `"max_position_embeddings": 131072, "rope_theta": 500000,
			"rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"}}`,
			func(c model.Config, f []float32) string {
				if len(f) != 8 || f[0] != 1 || f[7] != 32 {
					return "want 8 divisors from 1 (high frequencies) to 32 (low)"
				}
				return ""
			}, nil},
		{"linear scaling", `{"model_type": "llama", ` + base + `"max_position_embeddings": 4096, "rope_scaling": {"type": "linear", "factor": 2.0}}`,
			func(c model.Config, _ []float32) string {
				if c.RopeScale != 2 {
					return "want scale 2"
				}
				return ""
			}, nil},
		{"gemma2 defaults", `{"model_type": "gemma2", ` + base + `"max_position_embeddings": 8192}`,
			func(c model.Config, _ []float32) string {
				if c.AttnSoftcap != 50 || c.FinalSoftcap != 30 || c.Window != 4096 || c.HeadSize() != 256 || c.AttnScale != 1.0/16 {
					return "want transformers' Gemma2Config defaults: caps 50/30, window 4096, head 256, scale 1/16"
				}
				return ""
			}, nil},
		{"mistral window by default", `{"model_type": "mistral", ` + base + `"max_position_embeddings": 32768}`,
			func(c model.Config, _ []float32) string {
				if c.Window != 4096 {
					return "want MistralConfig's default window 4096"
				}
				return ""
			}, nil},
		{"qwen2 sliding window", `{"model_type": "qwen2", ` + base + `"max_position_embeddings": 32768,
			"use_sliding_window": true, "sliding_window": 1024, "max_window_layers": 4}`,
			func(c model.Config, _ []float32) string {
				if c.Window != 1024 || c.LocalLayers != "GGGGLL" {
					return "want layers from max_window_layers on local"
				}
				return ""
			}, nil},
		{"qwen2 window off", `{"model_type": "qwen2", ` + base + `"max_position_embeddings": 32768,
			"use_sliding_window": false, "sliding_window": 1024, "max_window_layers": 4}`,
			func(c model.Config, _ []float32) string {
				if c.Window != 0 {
					return "want no window"
				}
				return ""
			}, nil},
		{"v5 rope_parameters", `{"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
			"num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100, "max_position_embeddings": 131072,
			"rope_parameters": {"rope_theta": 500000.0, "factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
			"original_max_position_embeddings": 8192, "rope_type": "llama3"}}`,
			func(c model.Config, f []float32) string {
				if c.RopeTheta != 500000 || len(f) != 8 {
					return "want theta 500000 and llama3 divisors"
				}
				return ""
			}, nil},
		{"v5 rope_parameters per layer type", `{"model_type": "gemma3_text", ` + base + `"max_position_embeddings": 32768, "sliding_window": 512,
			"rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
			"sliding_attention": {"rope_type": "default", "rope_theta": 20000.0}}}`,
			func(c model.Config, _ []float32) string {
				if c.RopeTheta != 1e6 || c.RopeScale != 8 || c.LocalTheta != 20000 {
					return "want global theta 1e6 scaled by 8, local theta 20000"
				}
				return ""
			}, nil},
		{"qwen3 yarn", `{"model_type": "qwen3", ` + base + `"max_position_embeddings": 131072,
			"rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 32768, "rope_type": "yarn"}}`,
			func(c model.Config, _ []float32) string {
				if c.RopeScale != 4 || c.YarnOrigCtx != 32768 {
					return "want YaRN factor 4 over 32768"
				}
				return ""
			}, nil},
		{"yarn with other beta refused", `{"model_type": "qwen3", ` + base + `"max_position_embeddings": 32768,
			"rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 8192, "rope_type": "yarn", "beta_fast": 64}}`, nil, model.ErrUnsupported},
		{"deepseek yarn refused", `{"model_type": "llama", ` + base + `"max_position_embeddings": 32768,
			"rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 8192, "type": "yarn", "mscale": 0.707, "mscale_all_dim": 0.707}}`, nil, model.ErrUnsupported},
		{"longrope refused", `{"model_type": "phi3", ` + base + `"max_position_embeddings": 131072,
			"rope_scaling": {"type": "longrope", "long_factor": [1], "short_factor": [1]}}`, nil, model.ErrUnsupported},
		// A window longer than the context masks nothing in it (transformers
		// runs such layers as global ones): kept local, cut to the context.
		{"window beyond context", `{"model_type": "gemma2", ` + base + `"max_position_embeddings": 1024, "sliding_window": 4096}`,
			func(c model.Config, _ []float32) string {
				if c.Window != 1024 || c.LocalLayers != "LGLGLG" {
					return "want window 1024 (the context) on the even layers"
				}
				return ""
			}, nil},
		{"gpt_neo window beyond positions", `{"model_type": "gpt_neo", "hidden_size": 64, "num_layers": 2, "num_heads": 4, "vocab_size": 100,
			"max_position_embeddings": 64, "attention_types": [[["global", "local"], 1]], "window_size": 256}`,
			func(c model.Config, _ []float32) string {
				if c.Window != 64 || c.LocalLayers != "GL" {
					return "want window 64 (the context) on layer 1"
				}
				return ""
			}, nil},
		{"llama with biases", `{"model_type": "llama", ` + base + `"max_position_embeddings": 1024, "attention_bias": true}`, nil, model.ErrUnsupported},
		{"short layer_types", `{"model_type": "gemma3_text", ` + base + `"max_position_embeddings": 1024, "sliding_window": 512,
			"layer_types": ["full_attention"]}`, nil, model.ErrFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hc, err := parseHFConfig([]byte(tt.json))
			if err != nil {
				t.Fatal(err)
			}
			c, factors, err := hc.config(hfArch[hc.ModelType])
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if msg := tt.check(c, factors); msg != "" {
				t.Errorf("%s; got %+v (factors %v)", msg, c, factors)
			}
		})
	}
}

// TestHFConfigErrorsName checks that a refused setting is named.
func TestHFConfigErrorsName(t *testing.T) {
	hc, err := parseHFConfig([]byte(`{"model_type": "qwen3", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
		"num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100, "max_position_embeddings": 64,
		"rope_scaling": {"rope_type": "dynamic", "factor": 4.0}}`))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = hc.config("qwen3")
	if err == nil || !strings.Contains(err.Error(), "dynamic") {
		t.Fatalf("err = %v, want one naming dynamic", err)
	}
}

// FuzzHFConfig: any config.json either is refused with an error or gives a
// configuration that validates; nothing panics.
func FuzzHFConfig(f *testing.F) {
	for _, s := range []string{
		`{"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100, "max_position_embeddings": 64}`,
		`{"model_type": "gemma3_text", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 6, "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 16, "vocab_size": 100, "max_position_embeddings": 1024, "sliding_window": 16, "rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0}, "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}}`,
		`{"model_type": "qwen2", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 4, "num_attention_heads": 4, "vocab_size": 100, "max_position_embeddings": 64, "use_sliding_window": true, "sliding_window": 16, "max_window_layers": 2}`,
		`{"model_type": "gpt_neo", "hidden_size": 64, "num_layers": 2, "num_heads": 4, "vocab_size": 100, "max_position_embeddings": 64, "attention_types": [[["global", "local"], 1]], "window_size": 8}`,
		`{"model_type": "gpt_neo", "hidden_size": 64, "num_layers": 2, "num_heads": 4, "vocab_size": 100, "max_position_embeddings": 64, "attention_types": [[["global", "local"], 1]], "window_size": 256}`,
		`{"model_type": "opt", "hidden_size": 64, "ffn_dim": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100, "max_position_embeddings": 64, "word_embed_proj_dim": 32, "do_layer_norm_before": false}`,
		`{"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100, "max_position_embeddings": 64, "rope_scaling": {"rope_type": "llama3", "factor": 8, "low_freq_factor": 1, "high_freq_factor": 4, "original_max_position_embeddings": 16}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		hc, err := parseHFConfig(b)
		if err != nil {
			return
		}
		arch, ok := hfArch[hc.ModelType]
		if !ok {
			return
		}
		c, factors, err := hc.config(arch)
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("config %+v passed but does not validate: %v", c, err)
		}
		if factors != nil && len(factors) != c.RopeWidth()/2 {
			t.Fatalf("%d rope factors for %d rotary dimensions", len(factors), c.RopeWidth())
		}
	})
}
