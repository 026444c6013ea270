package llama

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/tensor"
)

// A family is what a decoder architecture does differently from Llama's,
// beyond the numbers of model.Config: the forward pass (EvalBatch) is one
// function that reads these fields, and the tensors of each family are
// bound to the weights by one table (bindings), so adding a family is a
// table entry, not a copy of the loop.
type family struct {
	layerNorm  bool // LayerNorm with a bias instead of RMSNorm
	act        activation
	gated      bool // act(gate)·up (W1, W3) instead of act(up) (W3)
	learnedPos bool // a learned position table instead of rotary embeddings
	neox       bool // rotary pairs (i, i+d/2), llama.cpp's NEOX rope type
	// qkvBias, postNorms and qkNorm mark tensors the family requires (a
	// Llama file may carry q/k/v biases too: they are used when present).
	qkvBias   bool
	postNorms bool // RMSNorm after attention and after the feed-forward (Gemma)
	qkNorm    bool // per-head RMSNorm of queries and keys (Qwen3, Gemma 3)
	// fusedQKV and fusedGateUp: GGUF stores Q, K, V (and gate, up) as one
	// tensor (GPT-2, Phi-3), split on load by rows.
	fusedQKV, fusedGateUp bool
	// llamaCpp: llama.cpp runs this architecture (GGUF files hlm writes
	// for it are llama.cpp's); otherwise hlm reads it from Hugging Face
	// directories only and writes GGUF for itself.
	llamaCpp bool
}

type activation uint8

const (
	actSiLU activation = iota
	actGELU            // tanh form (gelu_pytorch_tanh, gelu_new, ggml's GELU)
	actReLU
)

// families are the architectures hlm runs, by GGUF general.architecture
// (Hugging Face model_type maps onto them in load_hf.go).
var families = map[string]family{
	"llama":   {act: actSiLU, gated: true, llamaCpp: true},
	"qwen2":   {act: actSiLU, gated: true, neox: true, qkvBias: true, llamaCpp: true},
	"qwen3":   {act: actSiLU, gated: true, neox: true, qkNorm: true, llamaCpp: true},
	"gemma2":  {act: actGELU, gated: true, neox: true, postNorms: true, llamaCpp: true},
	"gemma3":  {act: actGELU, gated: true, neox: true, postNorms: true, qkNorm: true, llamaCpp: true},
	"phi3":    {act: actSiLU, gated: true, neox: true, fusedQKV: true, fusedGateUp: true, llamaCpp: true},
	"gpt2":    {layerNorm: true, act: actGELU, learnedPos: true, fusedQKV: true, qkvBias: true, llamaCpp: true},
	"opt":     {layerNorm: true, act: actReLU, learnedPos: true, qkvBias: true},
	"gpt_neo": {layerNorm: true, act: actGELU, learnedPos: true},
}

// familyOf returns the family of an architecture, or an error naming the
// ones hlm runs.
func familyOf(arch string) (family, error) {
	f, ok := families[arch]
	if !ok {
		names := make([]string, 0, len(families))
		for n := range families {
			names = append(names, n)
		}
		sort.Strings(names)
		return f, fmt.Errorf("%w: architecture %q (hlm runs %s)", model.ErrUnsupported, arch, strings.Join(names, ", "))
	}
	return f, nil
}

// A binding ties one GGUF tensor to the weights: a matrix [rows][cols] or a
// vector of rows values (cols 0), or, fused, a tensor whose rows are split
// into parts.
type binding struct {
	name       string
	rows, cols int
	optional   bool
	mat        **tensor.Matrix
	vec        *[]float32
	parts      []part // fused: consecutive row ranges of the tensor
}

// part is one row range of a fused tensor.
type part struct {
	rows int
	mat  **tensor.Matrix
	vec  *[]float32
}

// bindings lists w's tensors by their GGUF names, in the order hlm writes
// them (matrices first, then vectors, each in this order). The shapes are
// w.Config's; which tensors exist and which are required is the family's.
func (w *Weights) bindings() ([]binding, error) {
	c := w.Config
	f, err := familyOf(c.Arch)
	if err != nil {
		return nil, err
	}
	d, e, q, kv, h, hs := c.Dim, c.EmbedWidth(), c.QDim(), c.KVDim(), c.Hidden, c.HeadSize()
	var b []binding
	mat := func(name string, dst **tensor.Matrix, rows, cols int, optional bool) {
		b = append(b, binding{name: name, rows: rows, cols: cols, mat: dst, optional: optional})
	}
	vec := func(name string, dst *[]float32, n int, optional bool) {
		b = append(b, binding{name: name, rows: n, vec: dst, optional: optional})
	}
	mat("token_embd.weight", &w.Embedding, c.Vocab, e, false)
	if f.learnedPos {
		mat("position_embd.weight", &w.Positions, c.SeqLen+c.PosOffset, d, false)
	}
	if e != d {
		mat("proj_in.weight", &w.ProjIn, d, e, false)
		mat("proj_out.weight", &w.ProjOut, e, d, false)
	}
	for i := range w.Layers {
		l := &w.Layers[i]
		p := fmt.Sprintf("blk.%d.", i)
		vec(p+"attn_norm.weight", &l.AttnNorm, d, false)
		if f.layerNorm {
			vec(p+"attn_norm.bias", &l.AttnNormB, d, false)
		}
		if f.fusedQKV {
			b = append(b, binding{name: p + "attn_qkv.weight", rows: q + 2*kv, cols: d,
				parts: []part{{rows: q, mat: &l.Wq}, {rows: kv, mat: &l.Wk}, {rows: kv, mat: &l.Wv}}})
			if f.qkvBias {
				b = append(b, binding{name: p + "attn_qkv.bias", rows: q + 2*kv,
					parts: []part{{rows: q, vec: &l.Bq}, {rows: kv, vec: &l.Bk}, {rows: kv, vec: &l.Bv}}})
			}
		} else {
			mat(p+"attn_q.weight", &l.Wq, q, d, false)
			mat(p+"attn_k.weight", &l.Wk, kv, d, false)
			mat(p+"attn_v.weight", &l.Wv, kv, d, false)
			vec(p+"attn_q.bias", &l.Bq, q, !f.qkvBias)
			vec(p+"attn_k.bias", &l.Bk, kv, !f.qkvBias)
			vec(p+"attn_v.bias", &l.Bv, kv, !f.qkvBias)
		}
		if f.qkNorm {
			vec(p+"attn_q_norm.weight", &l.QNorm, hs, false)
			vec(p+"attn_k_norm.weight", &l.KNorm, hs, false)
		}
		mat(p+"attn_output.weight", &l.Wo, d, q, false)
		vec(p+"attn_output.bias", &l.Bo, d, !f.layerNorm)
		if f.postNorms {
			vec(p+"post_attention_norm.weight", &l.PostAttnNorm, d, false)
		}
		vec(p+"ffn_norm.weight", &l.FFNNorm, d, false)
		if f.layerNorm {
			vec(p+"ffn_norm.bias", &l.FFNNormB, d, false)
		}
		switch {
		case f.fusedGateUp:
			b = append(b, binding{name: p + "ffn_up.weight", rows: 2 * h, cols: d,
				parts: []part{{rows: h, mat: &l.W1}, {rows: h, mat: &l.W3}}})
		case f.gated:
			mat(p+"ffn_gate.weight", &l.W1, h, d, false)
		}
		mat(p+"ffn_down.weight", &l.W2, d, h, false)
		vec(p+"ffn_down.bias", &l.B2, d, !f.layerNorm)
		if !f.fusedGateUp {
			mat(p+"ffn_up.weight", &l.W3, h, d, false)
			vec(p+"ffn_up.bias", &l.B3, h, !f.layerNorm)
		}
		if f.postNorms {
			vec(p+"post_ffw_norm.weight", &l.PostFFNNorm, d, false)
		}
	}
	vec("rope_freqs.weight", &w.RopeFactors, c.RopeWidth()/2, true)
	vec("output_norm.weight", &w.FinalNorm, d, c.PostNorm)
	if f.layerNorm {
		vec("output_norm.bias", &w.FinalNormB, d, c.PostNorm)
	}
	mat("output.weight", &w.Output, c.Vocab, e, true) // absent: tied to token_embd
	return b, nil
}
