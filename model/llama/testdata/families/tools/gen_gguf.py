"""Writes the tiny random GGUF models of this directory, as llama.cpp's converter would.

usage: PYTHONPATH=<llama.cpp>/gguf-py /usr/bin/python3 gen_gguf.py OUTDIR

Each model is F32, a few hundred kB, with random weights from a fixed seed, and
carries exactly the metadata keys and tensor names that llama.cpp reads for its
architecture (src/models/<arch>.cpp, src/llama-arch.cpp) and that
convert_hf_to_gguf.py (conversion/*.py) writes. Conventions the converter
applies to Hugging Face weights are reproduced here as a converter would leave
them in the file:

  - Gemma 2/3 RMSNorm weights are stored as 1+w (conversion/gemma.py adds 1);
    here the stored value itself is drawn near 1.
  - llama3 rope scaling is not a metadata key but the tensor rope_freqs.weight
    (n_rot/2 frequency divisors), computed with the formula of
    conversion/llama.py generate_extra_tensors from the parameters in SPECS.
  - Llama's q/k rows are in llama.cpp's interleaved ("NORM") rotary layout,
    which is what the converter's permute() produces from HF's half-split
    layout; a random model is simply drawn in the file's layout.
  - phi3 keeps HF's fused qkv_proj (attn_qkv: Q rows, then K, then V) and
    gate_up_proj (ffn_up: gate rows, then up rows).
  - gpt2's Conv1D weights are transposed by the converter into the usual
    [out, in] layout, as here.

A weight matrix is a numpy array of shape (out, in); gguf-py reverses the shape,
so the file says ne = [in, out] as llama.cpp expects.
"""

import math
import sys
from pathlib import Path

import numpy as np

import gguf
import tinybpe

# Every model: dim 64, vocabulary 313 (tinybpe), F32. Per family, what differs.
# seed, std_* and *_mean set the random weights (see weights()); they were picked
# (from a handful of tries) so that greedy decoding wanders over many tokens with
# clear top-2 margins instead of repeating one token, which tied classifiers and
# Gemma's normalised residual stream tend to do with arbitrary weights.
SPECS = {
    # Llama-2 style: multi-head attention (no GQA), rope theta 1e4, untied classifier.
    "llama2": dict(arch="llama", n_layer=2, n_head=4, n_kv=4, head_dim=16, n_ff=160, ctx=256,
                   theta=10000.0, eps=1e-6, tied=False, seed=7002),
    # Llama-3.1 style: GQA 4/2, theta 5e5, llama3 rope scaling (factor 8), untied.
    "llama31": dict(arch="llama", n_layer=2, n_head=4, n_kv=2, head_dim=16, n_ff=192, ctx=256,
                    theta=500000.0, eps=1e-5, tied=False,
                    llama3=dict(factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                                original_max_position_embeddings=64), seed=1001),
    # Llama-3.2 style: as 3.1 but tied classifier and factor 32.
    "llama32": dict(arch="llama", n_layer=2, n_head=4, n_kv=2, head_dim=16, n_ff=192, ctx=256,
                    theta=500000.0, eps=1e-5, tied=True,
                    llama3=dict(factor=32.0, low_freq_factor=1.0, high_freq_factor=4.0,
                                original_max_position_embeddings=64),
                    seed=7001, std_out=0.4, std_embd=0.4),
    # Qwen2(.5): q/k/v biases, GQA, NEOX rotary, theta 1e6, tied (as Qwen2.5-0.5B).
    "qwen2": dict(arch="qwen2", n_layer=2, n_head=4, n_kv=2, head_dim=16, n_ff=160, ctx=256,
                  theta=1000000.0, eps=1e-6, tied=True, qkv_bias=True,
                  seed=7003, std_out=0.3, std_embd=0.4),
    # Qwen3: per-head RMSNorm of q and k before rotary; head_dim 32 != dim/heads
    # (as Qwen3-0.6B: hidden 1024, 16 heads of 128), so key_length is written.
    "qwen3": dict(arch="qwen3", n_layer=2, n_head=4, n_kv=2, head_dim=32, n_ff=128, ctx=256,
                  theta=1000000.0, eps=1e-6, tied=True, qk_norm=True, write_head_dim=True,
                  seed=7001, std_out=0.3, std_embd=0.5),
    # Gemma 2: GeGLU (tanh GELU), embeddings x sqrt(dim), 1+w norms, pre and post
    # norms, attention and final soft-capping, sliding window on even layers
    # (llama.cpp's default pattern 2: layers 0, 2 local, 1, 3 global).
    "gemma2": dict(arch="gemma2", n_layer=4, n_head=4, n_kv=2, head_dim=16, n_ff=96, ctx=256,
                   theta=10000.0, eps=1e-6, tied=True, gemma=True, write_head_dim=True,
                   window=6, attn_softcap=4.0, final_softcap=6.0,
                   seed=7001, std_embd=0.05, out_norm_mean=4.0),
    # Gemma 3: as Gemma 2 without soft-capping, plus per-head q/k RMSNorm (1+w), local
    # layers with their own rope base (1e4) and global layers with theta 1e6 and
    # linear rope scaling x8 (as Gemma-3-4B); 6 layers so that llama.cpp's default
    # pattern (5 local, 1 global; no pattern key, as the converter writes) has both
    # kinds; head_dim 24 with 4 heads != dim 64, one KV head (as Gemma-3-1B).
    "gemma3": dict(arch="gemma3", n_layer=6, n_head=4, n_kv=1, head_dim=24, n_ff=64, ctx=256,
                   theta=1000000.0, theta_swa=10000.0, linear_scale=8.0, eps=1e-6, tied=True,
                   gemma=True, qk_norm=True, write_head_dim=True, window=6,
                   seed=7002, std_embd=0.06, out_norm_mean=4.0, qk_norm_mean=2.0),
    # Phi-3 / Phi-4-mini: fused attn_qkv and ffn_up (gate|up), partial rotary
    # (rope dimension count 12 of head 16, as Phi-4-mini's 0.75), GQA, tied.
    "phi3": dict(arch="phi3", n_layer=2, n_head=4, n_kv=2, head_dim=16, n_ff=128, ctx=256,
                 theta=10000.0, eps=1e-5, tied=True, n_rot=12,
                 seed=7003, std_out=0.3, std_embd=0.4),
    # GPT-2: learned positions, LayerNorm with bias, fused qkv with bias, GELU MLP
    # (n_ff = 4*dim as the converter writes), biases everywhere, tied.
    "gpt2": dict(arch="gpt2", n_layer=2, n_head=4, n_kv=4, head_dim=16, n_ff=256, ctx=128,
                 eps=1e-5, tied=True, seed=7001, std_out=0.2, std_embd=0.3),
}

DIM = 64


def llama3_factors(spec):
    """rope_freqs.weight: the converter's llama3 frequency divisors (conversion/llama.py)."""
    p = spec["llama3"]
    dim = spec["head_dim"]
    factors = []
    low_wavelen = p["original_max_position_embeddings"] / p["low_freq_factor"]
    high_wavelen = p["original_max_position_embeddings"] / p["high_freq_factor"]
    for i in range(0, dim, 2):
        freq = 1.0 / (spec["theta"] ** (i / dim))
        wavelen = 2 * math.pi / freq
        if wavelen < high_wavelen:
            factors.append(1.0)
        elif wavelen > low_wavelen:
            factors.append(p["factor"])
        else:
            smooth = (p["original_max_position_embeddings"] / wavelen - p["low_freq_factor"]) / (
                p["high_freq_factor"] - p["low_freq_factor"])
            factors.append(1.0 / ((1 - smooth) / p["factor"] + smooth))
    return np.array(factors, dtype=np.float32)


def weights(name, spec, n_vocab):
    """name -> float32 array, in GGUF tensor names, drawn from the family's seed."""
    rng = np.random.default_rng(spec["seed"])

    def normal(shape, std, mean=0.0):
        return (mean + std * rng.standard_normal(shape)).astype(np.float32)

    hd, nh, nkv, ff = spec["head_dim"], spec["n_head"], spec["n_kv"], spec["n_ff"]
    q_dim, kv_dim = nh * hd, nkv * hd
    gemma = spec.get("gemma", False)
    gpt2 = spec["arch"] == "gpt2"
    # Norm weights near 1 (Gemma: the stored 1+w); projections scaled so that
    # attention scores are O(1-3) and each block adds O(0.5) to the residual.
    norm = lambda n: normal((n,), 0.1, 1.0)
    w = {}
    # Gemma multiplies embeddings by sqrt(dim) = 8, so draw them smaller.
    w["token_embd.weight"] = normal((n_vocab, DIM), spec.get("std_embd", 0.12 if gemma else 0.7))
    if gpt2:
        w["position_embd.weight"] = normal((spec["ctx"], DIM), 0.3)
    for l in range(spec["n_layer"]):
        b = f"blk.{l}."
        w[b + "attn_norm.weight"] = norm(DIM)
        if gpt2:
            w[b + "attn_norm.bias"] = normal((DIM,), 0.1)
        wq = normal((q_dim, DIM), spec.get("std_qk", 0.2))
        wk = normal((kv_dim, DIM), spec.get("std_qk", 0.2))
        wv = normal((kv_dim, DIM), 0.15)
        if spec["arch"] in ("phi3", "gpt2"):
            w[b + "attn_qkv.weight"] = np.concatenate([wq, wk, wv])
            if gpt2:
                w[b + "attn_qkv.bias"] = normal((q_dim + 2 * kv_dim,), 0.1)
        else:
            w[b + "attn_q.weight"], w[b + "attn_k.weight"], w[b + "attn_v.weight"] = wq, wk, wv
        if spec.get("qkv_bias"):
            w[b + "attn_q.bias"] = normal((q_dim,), 0.3)
            w[b + "attn_k.bias"] = normal((kv_dim,), 0.3)
            w[b + "attn_v.bias"] = normal((kv_dim,), 0.1)
        if spec.get("qk_norm"):
            w[b + "attn_q_norm.weight"] = normal((hd,), 0.1, spec.get("qk_norm_mean", 1.0))
            w[b + "attn_k_norm.weight"] = normal((hd,), 0.1, spec.get("qk_norm_mean", 1.0))
        w[b + "attn_output.weight"] = normal((DIM, q_dim), spec.get("std_out", 0.08))
        if gpt2:
            w[b + "attn_output.bias"] = normal((DIM,), 0.05)
        if gemma:
            w[b + "post_attention_norm.weight"] = norm(DIM)
        w[b + "ffn_norm.weight"] = norm(DIM)
        if gpt2:
            w[b + "ffn_norm.bias"] = normal((DIM,), 0.1)
            w[b + "ffn_up.weight"] = normal((ff, DIM), 0.15)
            w[b + "ffn_up.bias"] = normal((ff,), 0.1)
        elif spec["arch"] == "phi3":
            w[b + "ffn_up.weight"] = normal((2 * ff, DIM), 0.15)  # gate rows, then up rows
        else:
            w[b + "ffn_gate.weight"] = normal((ff, DIM), 0.15)
            w[b + "ffn_up.weight"] = normal((ff, DIM), 0.15)
        w[b + "ffn_down.weight"] = normal((DIM, ff), spec.get("std_out", 0.08))
        if gpt2:
            w[b + "ffn_down.bias"] = normal((DIM,), 0.05)
        if gemma:
            w[b + "post_ffw_norm.weight"] = norm(DIM)
    w["output_norm.weight"] = normal((DIM,), 0.1, spec.get("out_norm_mean", 1.0))
    if gpt2:
        w["output_norm.bias"] = normal((DIM,), 0.1)
    if not spec["tied"]:
        w["output.weight"] = normal((n_vocab, DIM), 0.5)
    if "llama3" in spec:
        w["rope_freqs.weight"] = llama3_factors(spec)
    return w


def write(name, spec, path):
    tokens, merges, bos, eos = tinybpe.vocabulary()
    arch = spec["arch"]
    gw = gguf.GGUFWriter(str(path), arch)
    # general.name must not contain "phi3" or "phi-3": llama.cpp's vocabulary loader
    # then sets attributes on "<s>", "</s>", "<unk>", which this vocabulary lacks,
    # and fails (src/llama-vocab.cpp, "Handle per token attributes").
    gw.add_name("hlm tiny random " + ("phi" if arch == "phi3" else name))
    gw.add_file_type(gguf.LlamaFileType.ALL_F32)
    gw.add_block_count(spec["n_layer"])
    gw.add_context_length(spec["ctx"])
    gw.add_embedding_length(DIM)
    gw.add_feed_forward_length(spec["n_ff"])
    gw.add_head_count(spec["n_head"])
    if arch != "gpt2":  # the gpt2 converter writes no head_count_kv
        gw.add_head_count_kv(spec["n_kv"])
    if arch == "gpt2":
        gw.add_layer_norm_eps(spec["eps"])
    else:
        gw.add_layer_norm_rms_eps(spec["eps"])
    if arch not in ("gpt2", "gemma2"):  # the gemma2 converter writes no rope keys (llama.cpp: 1e4)
        gw.add_rope_freq_base(spec["theta"])
    if spec.get("write_head_dim"):
        gw.add_key_length(spec["head_dim"])
        gw.add_value_length(spec["head_dim"])
    if arch == "llama":
        gw.add_vocab_size(len(tokens))
        gw.add_rope_dimension_count(spec["head_dim"])
    if arch == "phi3":
        gw.add_rope_dimension_count(spec["n_rot"])
        gw.add_rope_scaling_orig_ctx_len(spec["ctx"])
        gw.add_sliding_window(0)  # the converter's "no window" (Phi-4), see conversion/phi.py
    if arch == "gemma2":
        gw.add_attn_logit_softcapping(spec["attn_softcap"])
        gw.add_final_logit_softcapping(spec["final_softcap"])
        gw.add_sliding_window(spec["window"])
    if arch == "gemma3":
        gw.add_sliding_window(spec["window"])
        gw.add_rope_freq_base_swa(spec["theta_swa"])
        gw.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        gw.add_rope_scaling_factor(spec["linear_scale"])

    gw.add_tokenizer_model("gpt2")
    gw.add_tokenizer_pre("gpt-2")
    gw.add_token_list(tokens)
    types = [gguf.TokenType.NORMAL] * len(tokens)
    types[bos] = types[eos] = gguf.TokenType.CONTROL
    gw.add_token_types(types)
    gw.add_token_merges(merges)
    gw.add_bos_token_id(bos)
    gw.add_eos_token_id(eos)
    gw.add_add_bos_token(True)

    for tname, arr in weights(name, spec, len(tokens)).items():
        gw.add_tensor(tname, arr)
    gw.write_header_to_file()
    gw.write_kv_data_to_file()
    gw.write_tensors_to_file()
    gw.close()


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    names = sys.argv[2:] or list(SPECS)
    for name in names:
        write(name, SPECS[name], out / f"{name}.gguf")
        print(f"wrote {out / (name + '.gguf')}")


if __name__ == "__main__":
    main()
