"""Hugging Face twins of the GGUF tiny models: the checkpoints that llama.cpp's
convert_hf_to_gguf.py turns into exactly those GGUF files.

usage: PYTHONPATH=<llama.cpp>/gguf-py:tools /usr/bin/python3 hf_twins.py DIR [TWIN...]
       ... hf_twins.py --compare A_golden.bin B_golden.bin

For each entry of TWINS, reads DIR/<gguf>.gguf (gguf-py's reader) and writes
DIR/<twin>/ as transformers' save_pretrained leaves a checkpoint of that
model_type: config.json (the real keys of that model_type, sorted, indent 2),
model.safetensors (or shards and model.safetensors.index.json) with the
tensor names and layouts of the *ForCausalLM state dict, and the tokenizer
files (vocab.json, merges.txt, tokenizer_config.json of tinybpe's vocabulary).
The weights are the inverse of the converter (conversion/*.py in llama.cpp's
tree) for the architecture:

  llama   q_proj/k_proj rows un-permuted back to Hugging Face's half-split
          rotary layout (the converter's LlamaModel.permute(w, n_head, n_kv):
          reshape(heads, 2, hd/2, in).swapaxes(1, 2); its inverse is
          reshape(heads, hd/2, 2, in).swapaxes(1, 2)); no rope_freqs tensor:
          config.json's rope_scaling {"rope_type": "llama3", ...} is what the
          converter computes rope_freqs.weight from (generate_extra_tensors).
  qwen2, qwen3, phi3
          renamed only (no permutation: these are NEOX-rotary already); phi3
          keeps the fused self_attn.qkv_proj (Q|K|V rows) and
          mlp.gate_up_proj (gate rows, then up rows) that the converter maps
          to attn_qkv and ffn_up.
  gemma2, gemma3
          every *norm.weight (the four per layer, model.norm, and gemma3's
          self_attn.q_norm/k_norm) stored as w where the GGUF holds 1+w
          (Gemma2Model/Gemma3Model.modify_tensors add 1).
  gpt2    openai-community/gpt2's own layout: no "transformer." prefix, Conv1D
          weights [in][out] (the converter transposes c_attn, c_proj, c_fc),
          and the causal-mask buffers h.N.attn.bias (float32 tril ones,
          [1, 1, n_positions, n_positions]) that checkpoint carries.

Tied classifiers: no lm_head.weight in the file, as save_pretrained writes.

Three checks, printed one line per twin (make.sh puts them in CROSSCHECK.txt):

  1. converter round trip: the files read back, mapped to GGUF names by
     gguf-py's TensorNameMap (the converter's own name table) and transformed
     as the converter does (permute, +1, transpose; BF16 widened to F32),
     equal the GGUF's tensors bit for bit (BF16: the GGUF's rounded to BF16);
     config.json agrees with the GGUF's metadata, and for llama3 scaling the
     converter's formula on config.json gives the GGUF's rope_freqs.weight.
  2. transformers' forward pass in numpy (hf_forward below, written from
     modeling_llama.py, modeling_qwen2.py, modeling_qwen3.py,
     modeling_gemma2.py, modeling_gemma3.py, modeling_phi3.py,
     modeling_gpt2.py), float64, reading config.json and the safetensors:
     its logits against the goldens of the GGUF twin, every prompt of
     tinybpe.PROMPTS (exact tanh-GELU, so ~1e-6 relative against the
     exact-GELU goldens of gemma2, gemma3, gpt2).
  3. the BF16 twin's goldens: llama.cpp's goldens do not hold for weights
     rounded to BF16, so qwen3_bf16_golden.bin (and _p2.bin, _p3.bin, one per
     prompt) are computed here by (2) from
     the BF16 files, float64, 64 greedy ids; ref_gguf.py's GGUF-semantics
     forward on the converted tensors must agree with it, and make.sh also
     runs llama.cpp on an F32 GGUF of the BF16-rounded weights (--bf16-gguf)
     and compares (--compare).

What hf_forward relies on, per model_type (transformers' definitions):
  - RMSNorm x / sqrt(mean(x^2) + rms_norm_eps) * w; Gemma's * (1 + w).
  - rotary: inv_freq = theta^(-2i/d) for i < d/2 (d = head_dim, or
    int(head_dim * partial_rotary_factor) for phi3: only the first d dims
    rotate), cos/sin of position * inv_freq duplicated over both halves,
    x * cos + rotate_half(x) * sin, rotate_half(x) = (-x2, x1); llama3
    rope_scaling (_compute_llama3_parameters): wavelen = 2 pi / inv_freq,
    > original/low_freq_factor -> inv_freq / factor, < original/high -> kept,
    else (1 - s) inv_freq / factor + s inv_freq with s = (original/wavelen
    - low) / (high - low); linear: inv_freq / factor.
  - attention: softmax(q k^T * scaling + mask) v, scaling head_dim^-0.5
    (Gemma: query_pre_attn_scalar^-0.5), key/value head h // (heads/kv) for
    query head h (repeat_kv); Gemma2's scores soft-capped cap * tanh(s / cap)
    before the mask; sliding layers see keys i - j < sliding_window.
  - Qwen2: biases on q, k, v. Qwen3, Gemma3: q_norm/k_norm per head before
    rotary. Gemma: embeddings * sqrt(hidden_size); input_layernorm ->
    attention -> post_attention_layernorm -> residual; pre_feedforward ->
    MLP -> post_feedforward -> residual; down(gelu_tanh(gate) * up); layer
    types from layer_types, else Gemma3's sliding_window_pattern (layer l
    sliding iff (l + 1) % pattern != 0); Gemma3's local layers use
    rope_local_base_freq and no scaling, global ones rope_theta and
    rope_scaling; final_logit_softcapping on the logits.
  - Phi3: qkv_proj split Q|K|V, gate_up_proj split gate|up, up * silu(gate);
    sliding_window null: no window.
  - GPT-2: wte + wpe, LayerNorm(layer_norm_epsilon) with bias, Conv1D
    x @ W + b, c_attn split q|k|v, scores / sqrt(head_dim), gelu_new MLP,
    ln_f, logits against wte.
"""

import json
import math
import struct
import sys
from pathlib import Path

import numpy as np

import gguf
import gen_gguf
import gen_hf
import ref_gguf
import tinybpe

# twin directory -> the GGUF model it is the twin of, and how it is stored.
TWINS = {
    # save_pretrained(max_shard_size=300 kB): model-0000N-of-00002.safetensors + index,
    # layer 1 split between the two shards
    "llama2_hf": dict(gguf="llama2", max_shard_size=300_000),
    "llama31_hf": dict(gguf="llama31"),
    "llama32_hf": dict(gguf="llama32"),
    "qwen2_hf": dict(gguf="qwen2"),
    "qwen3_hf": dict(gguf="qwen3"),
    "qwen3_hf_bf16": dict(gguf="qwen3", dtype="BF16", golden="qwen3_bf16_golden"),  # + .bin, _p2.bin, _p3.bin
    "gemma2_hf": dict(gguf="gemma2"),
    "gemma3_hf": dict(gguf="gemma3"),
    "phi3_hf": dict(gguf="phi3"),
    "gpt2_hf": dict(gguf="gpt2"),
}

GGUF_ARCH = {"llama": gguf.MODEL_ARCH.LLAMA, "qwen2": gguf.MODEL_ARCH.QWEN2, "qwen3": gguf.MODEL_ARCH.QWEN3,
             "gemma2": gguf.MODEL_ARCH.GEMMA2, "gemma3": gguf.MODEL_ARCH.GEMMA3, "phi3": gguf.MODEL_ARCH.PHI3,
             "gpt2": gguf.MODEL_ARCH.GPT2}


# --- BF16 and safetensors ---------------------------------------------------------------

def bf16_bits(a):
    """float32 -> bfloat16 bit patterns, round to nearest even (torch's .to(torch.bfloat16))."""
    u = np.ascontiguousarray(a, dtype="<f4").view("<u4").astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype("<u2")


def bf16_round(a):
    return (bf16_bits(a).astype("<u4") << 16).view("<f4")


def write_safetensors(path, tensors, dtype):
    """tensors: name -> float32 array. Sorted by name, as the safetensors library orders
    tensors of one dtype; header padded with spaces to 8 bytes; metadata {"format": "pt"}."""
    header = {"__metadata__": {"format": "pt"}}
    blobs, offset = [], 0
    for name in sorted(tensors):
        a = np.asarray(tensors[name], dtype=np.float32)
        b = bf16_bits(a).tobytes() if dtype == "BF16" else np.ascontiguousarray(a, "<f4").tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [offset, offset + len(b)]}
        offset += len(b)
        blobs.append(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
    return offset


def read_safetensors(path):
    """name -> float32 array (BF16 widened exactly)."""
    b = open(path, "rb").read()
    (n,) = struct.unpack_from("<Q", b, 0)
    out = {}
    for name, info in json.loads(b[8:8 + n]).items():
        if name == "__metadata__":
            continue
        s, e = info["data_offsets"]
        raw = b[8 + n + s:8 + n + e]
        if info["dtype"] == "F32":
            a = np.frombuffer(raw, "<f4")
        elif info["dtype"] == "BF16":
            a = (np.frombuffer(raw, "<u2").astype("<u4") << 16).view("<f4")
        else:
            raise ValueError(f"{path}: {name}: dtype {info['dtype']}")
        out[name] = a.reshape(info["shape"])
    return out


def read_checkpoint(d):
    """Every tensor of a Hugging Face directory, single file or shards."""
    idx = d / "model.safetensors.index.json"
    if not idx.exists():
        return read_safetensors(d / "model.safetensors")
    out = {}
    for f in sorted(set(json.loads(idx.read_text())["weight_map"].values())):
        part = read_safetensors(d / f)
        assert not set(part) & set(out), f
        out.update(part)
    return out


# --- GGUF -> Hugging Face ------------------------------------------------------------

def unpermute(w, n_head):
    """Inverse of the converter's LlamaModel.permute: GGUF's interleaved rotary rows back
    to Hugging Face's half-split rows, within each of n_head heads."""
    return w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def permute(w, n_head):
    """The converter's LlamaModel.permute (n_head already the KV count for k_proj)."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def hf_tensors(spec, t):
    """GGUF tensors t (float32, numpy (out, in)) -> the *ForCausalLM state dict, in module order."""
    arch, L = spec["arch"], spec["n_layer"]
    gemma = arch in ("gemma2", "gemma3")
    norm = (lambda a: (a - np.float32(1)).astype(np.float32)) if gemma else (lambda a: a)
    w = {}
    if arch == "gpt2":
        w["wte.weight"] = t["token_embd.weight"]
        w["wpe.weight"] = t["position_embd.weight"]
        mask = np.tril(np.ones((spec["ctx"], spec["ctx"]), np.float32))[None, None]
        for l in range(L):
            b, h = f"blk.{l}.", f"h.{l}."
            w[h + "ln_1.weight"], w[h + "ln_1.bias"] = t[b + "attn_norm.weight"], t[b + "attn_norm.bias"]
            w[h + "attn.bias"] = mask
            w[h + "attn.c_attn.weight"] = t[b + "attn_qkv.weight"].T.copy()  # Conv1D: [in][out]
            w[h + "attn.c_attn.bias"] = t[b + "attn_qkv.bias"]
            w[h + "attn.c_proj.weight"] = t[b + "attn_output.weight"].T.copy()
            w[h + "attn.c_proj.bias"] = t[b + "attn_output.bias"]
            w[h + "ln_2.weight"], w[h + "ln_2.bias"] = t[b + "ffn_norm.weight"], t[b + "ffn_norm.bias"]
            w[h + "mlp.c_fc.weight"] = t[b + "ffn_up.weight"].T.copy()
            w[h + "mlp.c_fc.bias"] = t[b + "ffn_up.bias"]
            w[h + "mlp.c_proj.weight"] = t[b + "ffn_down.weight"].T.copy()
            w[h + "mlp.c_proj.bias"] = t[b + "ffn_down.bias"]
        w["ln_f.weight"], w["ln_f.bias"] = t["output_norm.weight"], t["output_norm.bias"]
        return w
    w["model.embed_tokens.weight"] = t["token_embd.weight"]
    for l in range(L):
        b, h = f"blk.{l}.", f"model.layers.{l}."
        if arch == "phi3":
            w[h + "self_attn.o_proj.weight"] = t[b + "attn_output.weight"]
            w[h + "self_attn.qkv_proj.weight"] = t[b + "attn_qkv.weight"]
            w[h + "mlp.gate_up_proj.weight"] = t[b + "ffn_up.weight"]
            w[h + "mlp.down_proj.weight"] = t[b + "ffn_down.weight"]
            w[h + "input_layernorm.weight"] = t[b + "attn_norm.weight"]
            w[h + "post_attention_layernorm.weight"] = t[b + "ffn_norm.weight"]
            continue
        q, k = t[b + "attn_q.weight"], t[b + "attn_k.weight"]
        if arch == "llama":
            q, k = unpermute(q, spec["n_head"]), unpermute(k, spec["n_kv"])
        for name, a in (("q", q), ("k", k), ("v", t[b + "attn_v.weight"])):
            w[h + f"self_attn.{name}_proj.weight"] = a
            if b + f"attn_{name}.bias" in t:
                w[h + f"self_attn.{name}_proj.bias"] = t[b + f"attn_{name}.bias"]
        w[h + "self_attn.o_proj.weight"] = t[b + "attn_output.weight"]
        if b + "attn_q_norm.weight" in t:
            w[h + "self_attn.q_norm.weight"] = norm(t[b + "attn_q_norm.weight"])
            w[h + "self_attn.k_norm.weight"] = norm(t[b + "attn_k_norm.weight"])
        w[h + "mlp.gate_proj.weight"] = t[b + "ffn_gate.weight"]
        w[h + "mlp.up_proj.weight"] = t[b + "ffn_up.weight"]
        w[h + "mlp.down_proj.weight"] = t[b + "ffn_down.weight"]
        w[h + "input_layernorm.weight"] = norm(t[b + "attn_norm.weight"])
        if gemma:
            w[h + "post_attention_layernorm.weight"] = norm(t[b + "post_attention_norm.weight"])
            w[h + "pre_feedforward_layernorm.weight"] = norm(t[b + "ffn_norm.weight"])
            w[h + "post_feedforward_layernorm.weight"] = norm(t[b + "post_ffw_norm.weight"])
        else:
            w[h + "post_attention_layernorm.weight"] = t[b + "ffn_norm.weight"]
    w["model.norm.weight"] = norm(t["output_norm.weight"])
    if "output.weight" in t:
        w["lm_head.weight"] = t["output.weight"]
    return w


def hf_config(spec, n_vocab, bos, eos, dtype):
    """config.json of the model_type, with the keys its released checkpoints carry."""
    arch = spec["arch"]
    torch_dtype = "bfloat16" if dtype == "BF16" else "float32"
    if arch == "gpt2":  # openai-community/gpt2
        return {
            "activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1,
            "bos_token_id": bos, "embd_pdrop": 0.1, "eos_token_id": eos, "initializer_range": 0.02,
            "layer_norm_epsilon": spec["eps"], "model_type": "gpt2", "n_ctx": spec["ctx"], "n_embd": gen_gguf.DIM,
            "n_head": spec["n_head"], "n_inner": None, "n_layer": spec["n_layer"], "n_positions": spec["ctx"],
            "resid_pdrop": 0.1, "summary_activation": None, "summary_first_dropout": 0.1,
            "summary_proj_to_labels": True, "summary_type": "cls_index", "summary_use_proj": True,
            "torch_dtype": torch_dtype, "use_cache": True, "vocab_size": n_vocab,
        }
    c = {
        "architectures": [{"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM",
                           "gemma2": "Gemma2ForCausalLM", "gemma3": "Gemma3ForCausalLM",
                           "phi3": "Phi3ForCausalLM"}[arch]],
        "attention_dropout": 0.0, "bos_token_id": bos, "eos_token_id": eos, "hidden_act": "silu",
        "hidden_size": gen_gguf.DIM, "initializer_range": 0.02, "intermediate_size": spec["n_ff"],
        "max_position_embeddings": spec["ctx"],
        "model_type": "gemma3_text" if arch == "gemma3" else arch,
        "num_attention_heads": spec["n_head"], "num_hidden_layers": spec["n_layer"],
        "num_key_value_heads": spec["n_kv"], "rms_norm_eps": spec["eps"], "rope_scaling": None,
        "rope_theta": spec["theta"], "tie_word_embeddings": spec["tied"], "torch_dtype": torch_dtype,
        "use_cache": True, "vocab_size": n_vocab,
    }
    if arch == "llama":  # Llama-2-7b-hf, Llama-3.1-8B, Llama-3.2-1B
        c.update(attention_bias=False, mlp_bias=False, pretraining_tp=1)
        if "llama3" in spec:
            p = spec["llama3"]
            c["rope_scaling"] = {"factor": p["factor"], "high_freq_factor": p["high_freq_factor"],
                                 "low_freq_factor": p["low_freq_factor"],
                                 "original_max_position_embeddings": p["original_max_position_embeddings"],
                                 "rope_type": "llama3"}
            c["head_dim"] = spec["head_dim"]
    elif arch in ("qwen2", "qwen3"):  # Qwen2.5-0.5B, Qwen3-0.6B
        c.update(max_window_layers=spec["n_layer"], use_sliding_window=False)
        c["sliding_window"] = spec["ctx"] if arch == "qwen2" else None  # unused: use_sliding_window false
        if arch == "qwen3":
            c.update(attention_bias=False, head_dim=spec["head_dim"])
    elif arch in ("gemma2", "gemma3"):  # gemma-2-2b, gemma-3-1b-pt (text)
        c.update(attention_bias=False, head_dim=spec["head_dim"], hidden_activation="gelu_pytorch_tanh",
                 hidden_act="gelu_pytorch_tanh", query_pre_attn_scalar=spec["head_dim"],
                 sliding_window=spec["window"], pad_token_id=eos, cache_implementation="hybrid")
        if arch == "gemma2":
            # layer_types, as transformers >= 4.53 saves it (llama.cpp's fixed pattern: even layers local)
            c.update(attn_logit_softcapping=spec["attn_softcap"], final_logit_softcapping=spec["final_softcap"],
                     layer_types=["sliding_attention" if l % 2 == 0 else "full_attention"
                                  for l in range(spec["n_layer"])])
        else:
            # sliding_window_pattern, as the released gemma-3 configs (llama.cpp's default 6)
            c.update(attn_logit_softcapping=None, final_logit_softcapping=None, sliding_window_pattern=6,
                     rope_local_base_freq=spec["theta_swa"], rope_theta=spec["theta"],
                     rope_scaling={"factor": spec["linear_scale"], "rope_type": "linear"})
    elif arch == "phi3":  # Phi-4-mini-instruct, without LongRoPE
        c.update(attention_bias=False, embd_pdrop=0.0, mlp_bias=False, lm_head_bias=False,
                 original_max_position_embeddings=spec["ctx"],
                 partial_rotary_factor=spec["n_rot"] / spec["head_dim"], resid_pdrop=0.0, sliding_window=None)
    return c


def write_tokenizer(d, n_positions):
    tokens, merges, _, _ = tinybpe.vocabulary()
    (d / "vocab.json").write_text(json.dumps({t: i for i, t in enumerate(tokens)}, ensure_ascii=False) + "\n")
    (d / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n")
    (d / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "GPT2Tokenizer",
        "add_bos_token": True,  # as the GGUF twin's tokenizer.ggml.add_bos_token
        "bos_token": tinybpe.BOS,
        "eos_token": tinybpe.EOS,
        "unk_token": tinybpe.EOS,
        "model_max_length": n_positions,
    }, indent=2) + "\n")


def write_twin(out, name, twin):
    spec = gen_gguf.SPECS[twin["gguf"]]
    m = ref_gguf.Model(str(out / f"{twin['gguf']}.gguf"))
    t = {k: v.astype(np.float32) for k, v in m.t.items()}  # float64 of float32: exact
    tokens, _, bos, eos = tinybpe.vocabulary()
    dtype = twin.get("dtype", "F32")
    d = out / name
    d.mkdir(parents=True, exist_ok=True)
    for old in list(d.glob("model*.safetensors")) + list(d.glob("model.safetensors.index.json")):
        old.unlink()
    config = hf_config(spec, len(tokens), bos, eos, dtype)
    (d / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    w = hf_tensors(spec, t)
    limit = twin.get("max_shard_size")
    if not limit:
        write_safetensors(d / "model.safetensors", w, dtype)
    else:
        # save_pretrained's split: state-dict order, a new shard when the next tensor would
        # pass max_shard_size.
        size = lambda a: a.size * (2 if dtype == "BF16" else 4)
        shards, cur, cur_size = [], {}, 0
        for k, a in w.items():
            if cur and cur_size + size(a) > limit:
                shards.append(cur)
                cur, cur_size = {}, 0
            cur[k], cur_size = a, cur_size + size(a)
        shards.append(cur)
        n = len(shards)
        weight_map, total = {}, 0
        for i, s in enumerate(shards):
            f = f"model-{i + 1:05d}-of-{n:05d}.safetensors"
            total += write_safetensors(d / f, s, dtype)
            weight_map.update({k: f for k in s})
        index = {"metadata": {"total_size": total}, "weight_map": weight_map}
        (d / "model.safetensors.index.json").write_text(json.dumps(index, indent=2, sort_keys=True) + "\n")
    write_tokenizer(d, spec["ctx"])
    return d, m, t


# --- check 1: what the converter makes of the directory -----------------------------------------

def convert(d, spec):
    """convert_hf_to_gguf.py's tensors (F32) for directory d, names from gguf-py's TensorNameMap."""
    arch = spec["arch"]
    c = json.loads((d / "config.json").read_text())
    tmap = gguf.get_tensor_name_map(GGUF_ARCH[arch], spec["n_layer"])
    out = {}
    for name, a in read_checkpoint(d).items():
        a = a.astype(np.float32)  # the converter widens BF16 to F32
        if arch == "gpt2" and name.endswith((".attn.bias", ".attn.masked_bias")):
            continue  # GPT2Model.modify_tensors: "we don't need these"
        if arch == "gpt2" and name.endswith((".c_attn.weight", ".c_proj.weight", ".c_fc.weight")):
            a = a.T
        if arch == "llama" and name.endswith("q_proj.weight"):
            a = permute(a, c["num_attention_heads"])
        if arch == "llama" and name.endswith("k_proj.weight"):
            a = permute(a, c["num_key_value_heads"])
        if arch in ("gemma2", "gemma3") and name.endswith("norm.weight"):
            a = a + np.float32(1)
        g = tmap.get_name(name, try_suffixes=(".weight", ".bias"))
        assert g is not None, f"{d}: the converter cannot map {name}"
        out[g] = np.ascontiguousarray(a, np.float32)
    rs = c.get("rope_scaling") or {}
    if rs.get("rope_type") == "llama3":  # LlamaModel.generate_extra_tensors, torch float32 freqs
        dim = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
        freqs = (1.0 / (np.float32(c["rope_theta"]) ** (np.arange(0, dim, 2, dtype=np.float32) / np.float32(dim))))
        freqs = freqs.astype(np.float32)
        lo, hi = rs["original_max_position_embeddings"] / rs["low_freq_factor"], \
            rs["original_max_position_embeddings"] / rs["high_freq_factor"]
        f = []
        for fr in freqs:
            wl = 2 * math.pi / float(fr)
            if wl < hi:
                f.append(1.0)
            elif wl > lo:
                f.append(rs["factor"])
            else:
                s = (rs["original_max_position_embeddings"] / wl - rs["low_freq_factor"]) / (
                    rs["high_freq_factor"] - rs["low_freq_factor"])
                f.append(1 / ((1 - s) / rs["factor"] + s))
        out["rope_freqs.weight"] = np.array(f, np.float32)
    return out, c


def check_metadata(m, c, spec):
    """config.json against the GGUF's keys, as the converter's set_gguf_parameters writes them."""
    arch = spec["arch"]
    k = lambda key: m.kv.get(f"{arch}.{key}")
    f32 = lambda x: float(np.float32(x))
    if arch == "gpt2":
        want = {"block_count": c["n_layer"], "context_length": c["n_ctx"], "embedding_length": c["n_embd"],
                "feed_forward_length": 4 * c["n_embd"], "attention.head_count": c["n_head"],
                "attention.layer_norm_epsilon": f32(c["layer_norm_epsilon"])}
    else:
        hd = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
        want = {"block_count": c["num_hidden_layers"], "context_length": c["max_position_embeddings"],
                "embedding_length": c["hidden_size"], "feed_forward_length": c["intermediate_size"],
                "attention.head_count": c["num_attention_heads"],
                "attention.head_count_kv": c["num_key_value_heads"],
                "attention.layer_norm_rms_epsilon": f32(c["rms_norm_eps"])}
        if arch != "gemma2":
            want["rope.freq_base"] = f32(c["rope_theta"])
        if arch == "llama":
            want["rope.dimension_count"] = hd
        if arch == "phi3":
            want["rope.dimension_count"] = int(c["partial_rotary_factor"] * c["hidden_size"]) // c["num_attention_heads"]
            want["attention.sliding_window"] = c["sliding_window"] or 0
            want["rope.scaling.original_context_length"] = c["original_max_position_embeddings"]
        if arch in ("gemma2", "gemma3", "qwen3"):
            want["attention.key_length"] = want["attention.value_length"] = hd
        if arch in ("gemma2", "gemma3"):
            want["attention.sliding_window"] = c["sliding_window"]
        if arch == "gemma2":
            want["attn_logit_softcapping"] = f32(c["attn_logit_softcapping"])
            want["final_logit_softcapping"] = f32(c["final_logit_softcapping"])
            assert c["layer_types"] == ["sliding_attention" if l % 2 == 0 else "full_attention"
                                        for l in range(c["num_hidden_layers"])]  # llama.cpp's pattern 2
        if arch == "gemma3":
            want["rope.freq_base_swa"] = f32(c["rope_local_base_freq"])
            want["rope.scaling.type"] = c["rope_scaling"]["rope_type"]
            want["rope.scaling.factor"] = f32(c["rope_scaling"]["factor"])
            assert c["sliding_window_pattern"] == 6  # llama.cpp's default for gemma3
            assert c["query_pre_attn_scalar"] == hd  # llama.cpp: 1/sqrt(head_dim) (not 27B)
        if arch == "gemma2":
            assert c["query_pre_attn_scalar"] == hd
    for key, v in want.items():
        assert k(key) == v, (arch, key, k(key), v)


# --- check 2: transformers' forward pass -------------------------------------------------------

def rms(x, w, eps, gemma=False):
    y = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    return y * (1.0 + w) if gemma else y * w


def rotary(x, pos, inv_freq):
    """x (n, heads, hd): rotate the first 2*len(inv_freq) dims, half-split (rotate_half)."""
    d = 2 * len(inv_freq)
    f = pos[:, None] * inv_freq[None, :]
    emb = np.concatenate([f, f], axis=-1)
    cos, sin = np.cos(emb)[:, None, :], np.sin(emb)[:, None, :]
    r, rest = x[..., :d], x[..., d:]
    half = np.concatenate([-r[..., d // 2:], r[..., :d // 2]], axis=-1)
    return np.concatenate([r * cos + half * sin, rest], axis=-1)


def inv_freqs(theta, dim, scaling):
    inv = 1.0 / theta ** (np.arange(0, dim, 2, dtype=np.float64) / dim)
    if not scaling:
        return inv
    if scaling["rope_type"] == "linear":
        return inv / scaling["factor"]
    assert scaling["rope_type"] == "llama3"
    fac, lo, hi, old = (scaling[k] for k in ("factor", "low_freq_factor", "high_freq_factor",
                                              "original_max_position_embeddings"))
    wl = 2 * np.pi / inv
    out = np.where(wl > old / lo, inv / fac, inv)
    s = (old / wl - lo) / (hi - lo)
    medium = ~(wl < old / hi) & ~(wl > old / lo)
    return np.where(medium, (1 - s) * out / fac + s * out, out)


def attend(q, k, v, scaling, softcap, window):
    """q (n, H, hd), k, v (n, KV, hd): causal softmax attention, optionally windowed."""
    n, H, _ = q.shape
    rep = H // k.shape[1]
    k, v = np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1)
    s = np.einsum("ihd,jhd->hij", q, k) * scaling
    if softcap:
        s = softcap * np.tanh(s / softcap)
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    mask = (j <= i) & ((i - j < window) if window else True)
    s = np.where(mask[None], s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    return np.einsum("hij,jhd->ihd", p, v).reshape(n, -1)


def hf_forward(d, ids):
    """Logits (n, V), float64, of Hugging Face directory d as transformers computes them."""
    c = json.loads((d / "config.json").read_text())
    t = {k: v.astype(np.float64) for k, v in read_checkpoint(d).items()}
    mt = c["model_type"]
    n = len(ids)
    pos = np.arange(n, dtype=np.float64)
    if mt == "gpt2":
        H, nh, eps = c["n_embd"], c["n_head"], c["layer_norm_epsilon"]
        ln = lambda x, p: gen_hf.layernorm(x, t[p + ".weight"], t[p + ".bias"], eps)
        conv = lambda x, p: x @ t[p + ".weight"] + t[p + ".bias"]  # Conv1D
        x = t["wte.weight"][ids] + t["wpe.weight"][np.arange(n)]
        for l in range(c["n_layer"]):
            h = f"h.{l}."
            q, k, v = np.split(conv(ln(x, h + "ln_1"), h + "attn.c_attn"), 3, axis=1)
            sh = lambda a: a.reshape(n, nh, H // nh)
            x = x + conv(attend(sh(q), sh(k), sh(v), (H // nh) ** -0.5, None, None), h + "attn.c_proj")
            x = x + conv(gen_hf.gelu_new(conv(ln(x, h + "ln_2"), h + "mlp.c_fc")), h + "mlp.c_proj")
        return ln(x, "ln_f") @ t["wte.weight"].T
    gemma = mt in ("gemma2", "gemma3_text")
    H, nh, nkv, eps = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["rms_norm_eps"]
    hd = c.get("head_dim") or H // nh
    norm = lambda x, name: rms(x, t[name], eps, gemma)
    lin = lambda x, p: x @ t[p + ".weight"].T + (t[p + ".bias"] if p + ".bias" in t else 0.0)
    rot_dim = int(hd * c.get("partial_rotary_factor", 1.0))
    inv_global = inv_freqs(c["rope_theta"], rot_dim, c.get("rope_scaling"))
    inv_local = inv_freqs(c.get("rope_local_base_freq", c["rope_theta"]), rot_dim, None)
    types = c.get("layer_types")
    if gemma and not types:
        pat = c["sliding_window_pattern"]
        types = ["sliding_attention" if (l + 1) % pat else "full_attention" for l in range(c["num_hidden_layers"])]
    x = t["model.embed_tokens.weight"][ids]
    if gemma:
        x = x * np.sqrt(H)
    for l in range(c["num_hidden_layers"]):
        p = f"model.layers.{l}."
        h = norm(x, p + "input_layernorm.weight")
        if mt == "phi3":
            q, k, v = np.split(lin(h, p + "self_attn.qkv_proj"), [nh * hd, nh * hd + nkv * hd], axis=1)
        else:
            q, k, v = (lin(h, p + f"self_attn.{s}_proj") for s in "qkv")
        q, k, v = q.reshape(n, nh, hd), k.reshape(n, nkv, hd), v.reshape(n, nkv, hd)
        if p + "self_attn.q_norm.weight" in t:
            q, k = norm(q, p + "self_attn.q_norm.weight"), norm(k, p + "self_attn.k_norm.weight")
        sliding = bool(types) and types[l] == "sliding_attention"
        inv = inv_local if mt == "gemma3_text" and sliding else inv_global
        q, k = rotary(q, pos, inv), rotary(k, pos, inv)
        scaling = c["query_pre_attn_scalar"] ** -0.5 if gemma else hd ** -0.5
        window = c["sliding_window"] if sliding else (c["sliding_window"] if mt == "phi3" else None)
        a = lin(attend(q, k, v, scaling, c.get("attn_logit_softcapping"), window), p + "self_attn.o_proj")
        if gemma:
            a = norm(a, p + "post_attention_layernorm.weight")
            x = x + a
            h = norm(x, p + "pre_feedforward_layernorm.weight")
        else:
            x = x + a
            h = norm(x, p + "post_attention_layernorm.weight")
        if mt == "phi3":
            gate, up = np.split(lin(h, p + "mlp.gate_up_proj"), 2, axis=1)
        else:
            gate, up = lin(h, p + "mlp.gate_proj"), lin(h, p + "mlp.up_proj")
        act = gen_hf.gelu_new(gate) if gemma else gate / (1 + np.exp(-gate))
        f = lin(act * up, p + "mlp.down_proj")
        if gemma:
            f = norm(f, p + "post_feedforward_layernorm.weight")
        x = x + f
    x = norm(x, "model.norm.weight")
    logits = x @ t.get("lm_head.weight", t["model.embed_tokens.weight"]).T
    if c.get("final_logit_softcapping"):
        cap = c["final_logit_softcapping"]
        logits = cap * np.tanh(logits / cap)
    return logits


def compare(ours, golden):
    """ours: logits of prompt + greedy[:-1]; golden: (prompt, logits, greedy) -> summary."""
    prompt, ref, greedy = golden
    d = np.abs(ours[:len(prompt)] - ref).max()
    rng = ref.max() - ref.min()
    agree = np.argmax(ours[len(prompt) - 1:], axis=1).tolist() == greedy
    return f"max|d| {d:.3g} ({d / rng:.3g} of the range {rng:.3g}), greedy ids {'match' if agree else 'DIFFER'}"


# --- main -----------------------------------------------------------------------------------

def bf16_gguf(out, path):
    """An F32 GGUF of qwen3 with its weights rounded to BF16 (for llama.cpp, in make.sh)."""
    orig = gen_gguf.weights
    gen_gguf.weights = lambda *a: {k: bf16_round(v) for k, v in orig(*a).items()}
    try:
        gen_gguf.write("qwen3", gen_gguf.SPECS["qwen3"], Path(path))
    finally:
        gen_gguf.weights = orig
    # the same weights as qwen3.gguf before rounding:
    a, b = ref_gguf.Model(str(out / "qwen3.gguf")), ref_gguf.Model(path)
    for k in a.t:
        assert np.array_equal(bf16_round(a.t[k].astype(np.float32)), b.t[k].astype(np.float32)), k


def compare_goldens(a, b):
    """Two golden files: logits over the prompt, and the greedy ids."""
    pa, la, ga = ref_gguf.read_golden(a)
    pb, lb, gb = ref_gguf.read_golden(b)
    assert pa == pb
    d = np.abs(la - lb).max()
    rng = lb.max() - lb.min()
    same = sum(x == y for x, y in zip(ga, gb))
    return f"max|d| {d:.3g} ({d / rng:.3g} of the range {rng:.3g}), greedy ids {same}/{len(gb)} equal"


def main():
    if sys.argv[1] == "--compare":
        print(f"{Path(sys.argv[2]).name} vs {Path(sys.argv[3]).name}: {compare_goldens(sys.argv[2], sys.argv[3])}")
        return
    out = Path(sys.argv[1])
    if sys.argv[2:3] == ["--bf16-gguf"]:
        bf16_gguf(out, sys.argv[3])
        return
    names = sys.argv[2:] or list(TWINS)
    for name in names:
        twin = TWINS[name]
        spec = gen_gguf.SPECS[twin["gguf"]]
        d, m, t = write_twin(out, name, twin)
        # 1. the converter's view of the directory is the GGUF (BF16: rounded)
        conv, c = convert(d, spec)
        check_metadata(m, c, spec)
        want = {k: (bf16_round(v) if twin.get("dtype") == "BF16" and k != "rope_freqs.weight" else v)
                for k, v in t.items()}
        assert sorted(conv) == sorted(want), (sorted(set(conv) ^ set(want)))
        for k in want:
            if k == "rope_freqs.weight":  # computed from config.json: float rounding only
                assert np.allclose(conv[k], want[k], rtol=1e-6, atol=0), (conv[k], want[k])
            else:
                assert conv[k].shape == want[k].shape and np.array_equal(conv[k], want[k]), (name, k)
        size = sum(f.stat().st_size for f in d.iterdir())
        head = f"{name + '/':15s} {size / 1e3:5.0f} kB, converter round trip exact"
        if "golden" in twin:
            # 3. its own goldens, one per prompt: transformers' pass over the BF16 files, 64 greedy ids
            m.t = {k: v.astype(np.float64) for k, v in conv.items()}  # ref_gguf.py on the converted tensors
            for i, text in enumerate(tinybpe.PROMPTS):
                prompt = tinybpe.prompt_ids(text)
                ids = list(prompt)
                for _ in range(64):
                    ids.append(int(np.argmax(hf_forward(d, ids)[-1])))
                logits = hf_forward(d, ids[:-1])
                gn = tinybpe.golden_name(twin["golden"], i)
                gen_hf.write_golden(out / gn, prompt, logits, ids[len(prompt):])
                r = ref_gguf.forward(m, ids[:-1])
                srt = np.sort(logits[len(prompt) - 1:], axis=1)
                f32 = tinybpe.golden_name(f"{twin['gguf']}_golden", i)
                print(f"{head}; wrote {gn} (transformers-style numpy, float64): greedy "
                      f"{len(set(ids[len(prompt):]))} distinct ids, min top-2 margin {(srt[:, -1] - srt[:, -2]).min():.3g}; "
                      f"ref_gguf.py on its converted tensors: max|d| {np.abs(r - logits).max():.3g}; "
                      f"vs {f32} (unrounded weights, llama.cpp): {compare_goldens(out / gn, out / f32)}")
            continue
        # 2. transformers' forward pass against the goldens of the GGUF twin
        stems = [f"{twin['gguf']}_golden"]
        if spec["arch"] in ("gemma2", "gemma3", "gpt2"):
            stems.append(f"{twin['gguf']}_exactgelu_golden")
        for i in range(len(tinybpe.PROMPTS)):
            for stem in stems:
                gn = tinybpe.golden_name(stem, i)
                g = ref_gguf.read_golden(out / gn)
                print(f"{head}; transformers-style numpy vs {gn}: {compare(hf_forward(d, g[0] + g[2][:-1]), g)}")


if __name__ == "__main__":
    main()
