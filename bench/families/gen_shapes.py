"""Writes random-weight GGUF files at the real shapes of published models.

usage: PYTHONPATH=<llama.cpp>/gguf-py /usr/bin/python3 gen_shapes.py NAME OUT.gguf
       gen_shapes.py --list            the shape names, one a line
       gen_shapes.py --describe NAME   the shape as one line of text

Each shape below is the model's published config.json (Hugging Face), written
with its keys; the GGUF keys and tensors are what llama.cpp's converter
(convert_hf_to_gguf.py, conversion/*.py) writes for that config, as
model/llama/testdata/families/tools/gen_gguf.py does for the tiny models
(whose llama3 rope-factor formula is reused from there). The weights are
random, F16 for matrices and F32 for vectors (the converter's "f16" outtype):
every matrix normal with std 0.02 (the checkpoints' initializer_range), norm
weights normal around 1 with std 0.02 (Gemma: the stored 1+w). Each tensor
has its own seed (the shape's seed plus its index), so the bytes are the same
on every run; a tensor is drawn in chunks, so that an 8B file (16 GB) is
written with about 1 GB of memory.

The vocabulary is a real one of the same size, copied from llama.cpp's
models/ggml-vocab-*.gguf: qwen2 (151,936 tokens, as Qwen3), llama-bpe
(128,256, Llama-3.x), phi-3 (32,064, SentencePiece) and, for Gemma-3, the
262,144-token Gemma vocabulary of ggml-vocab-gemma-4.gguf (llama.cpp ships
no Gemma-3 one; Gemma-3's own is a SentencePiece model of the same size).
Only its size matters to the speed; it matters to hlm generate's and
llama-simple's tokenizer start-up and memory.
"""

import math
import os
import sys
from pathlib import Path

import numpy as np

import gguf

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "model/llama/testdata/families/tools"))
import gen_gguf  # noqa: E402  (llama3_factors)

# The config.json values of the published checkpoints (the keys that set the
# shape), and the vocabulary file each is given. Everything not listed is
# the transformers default the config leaves out (e.g. attention_bias false).
SHAPES = {
    # Qwen/Qwen3-0.6B: head_dim 128 != 1024/16, q/k RMSNorm, tied, no sliding
    # window (use_sliding_window false), no rope scaling.
    "qwen3-0.6b": dict(
        arch="qwen3", vocab="qwen2", seed=30006,
        config=dict(hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
                    num_attention_heads=16, num_key_value_heads=8, head_dim=128,
                    max_position_embeddings=40960, rope_theta=1000000.0, rope_scaling=None,
                    rms_norm_eps=1e-6, tie_word_embeddings=True, vocab_size=151936,
                    use_sliding_window=False, sliding_window=None, hidden_act="silu")),
    # meta-llama/Llama-3.2-1B: GQA 32/8, head_dim 64, llama3 rope scaling
    # factor 32 (rope_freqs.weight), tied.
    "llama3.2-1b": dict(
        arch="llama", vocab="llama-bpe", seed=32001,
        config=dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                    num_attention_heads=32, num_key_value_heads=8, head_dim=64,
                    max_position_embeddings=131072, rope_theta=500000.0,
                    rope_scaling=dict(rope_type="llama3", factor=32.0, low_freq_factor=1.0,
                                      high_freq_factor=4.0, original_max_position_embeddings=8192),
                    rms_norm_eps=1e-5, tie_word_embeddings=True, vocab_size=128256,
                    hidden_act="silu")),
    # google/gemma-3-1b-pt: 4 heads of 256 (q 1024 != hidden 1152), 1 KV head,
    # GeGLU (gelu_pytorch_tanh), q/k RMSNorm, pre and post norms, sliding window
    # 512 on 5 of every 6 layers (local rope base 1e4, global 1e6), no rope
    # scaling (the 1B; 4B+ scale the global layers linearly ×8), no soft-caps,
    # query_pre_attn_scalar 256 (= head_dim), tied, 262,144 tokens.
    "gemma3-1b": dict(
        arch="gemma3", vocab="gemma-4", seed=31001,
        config=dict(hidden_size=1152, intermediate_size=6912, num_hidden_layers=26,
                    num_attention_heads=4, num_key_value_heads=1, head_dim=256,
                    max_position_embeddings=32768, rope_theta=1000000.0,
                    rope_local_base_freq=10000.0, rope_scaling=None, rms_norm_eps=1e-6,
                    sliding_window=512, sliding_window_pattern=6, query_pre_attn_scalar=256,
                    attn_logit_softcapping=None, final_logit_softcapping=None,
                    tie_word_embeddings=True, vocab_size=262144,
                    hidden_activation="gelu_pytorch_tanh")),
    # microsoft/Phi-3-mini-4k-instruct: fused qkv and gate|up, MHA 32/32,
    # head 96, full rotary (rope dims 96), no rope scaling (the 4k model has
    # no LongRoPE factors), sliding_window 2047 (written; llama.cpp disables
    # Phi-3's window and so does hlm), untied, 32,064 tokens.
    "phi3-mini-4k": dict(
        arch="phi3", vocab="phi-3", seed=33801,
        config=dict(hidden_size=3072, intermediate_size=8192, num_hidden_layers=32,
                    num_attention_heads=32, num_key_value_heads=32,
                    max_position_embeddings=4096, original_max_position_embeddings=4096,
                    rope_theta=10000.0, rope_scaling=None, rms_norm_eps=1e-5,
                    sliding_window=2047, tie_word_embeddings=False, vocab_size=32064,
                    hidden_act="silu")),
    # meta-llama/Llama-3.1-8B: GQA 32/8, head 128, FFN 14336, llama3 rope
    # scaling factor 8, untied.
    "llama3.1-8b": dict(
        arch="llama", vocab="llama-bpe", seed=31008,
        config=dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                    num_attention_heads=32, num_key_value_heads=8,
                    max_position_embeddings=131072, rope_theta=500000.0,
                    rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0,
                                      high_freq_factor=4.0, original_max_position_embeddings=8192),
                    rms_norm_eps=1e-5, tie_word_embeddings=False, vocab_size=128256,
                    hidden_act="silu")),
}

STD = 0.02       # every matrix
NORM_STD = 0.02  # norm weights: 1 + NORM_STD·N(0,1)
CHUNK = 1 << 24  # elements drawn at a time


def head_dim(c):
    return c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]


def describe(name):
    s = SHAPES[name]
    c = s["config"]
    parts = [f"{name}: {s['arch']}", f"dim {c['hidden_size']}", f"layers {c['num_hidden_layers']}",
             f"heads {c['num_attention_heads']}/{c['num_key_value_heads']} of {head_dim(c)}",
             f"FFN {c['intermediate_size']}", f"vocab {c['vocab_size']}",
             f"ctx {c['max_position_embeddings']}", f"rope θ {c['rope_theta']:g}"]
    if c.get("rope_scaling"):
        r = c["rope_scaling"]
        parts.append(f"{r['rope_type']} ×{r['factor']:g} (orig {r['original_max_position_embeddings']})")
    if c.get("rope_local_base_freq"):
        parts.append(f"local θ {c['rope_local_base_freq']:g}")
    if c.get("sliding_window") and s["arch"] == "gemma3":
        parts.append(f"window {c['sliding_window']} on 5 of {c['sliding_window_pattern']} layers")
    elif c.get("sliding_window"):
        parts.append(f"sliding_window {c['sliding_window']} (disabled by both engines)")
    parts.append(f"rms eps {c['rms_norm_eps']:g}")
    parts.append("tied" if c["tie_word_embeddings"] else "untied")
    return ", ".join(parts)


def tensors(s):
    """(name, numpy shape (out, in) or (n,), kind) in the converter's order; kind is
    "mat", "norm" or "rope_freqs"."""
    c, arch = s["config"], s["arch"]
    d, L, ff = c["hidden_size"], c["num_hidden_layers"], c["intermediate_size"]
    hd, nh, nkv = head_dim(c), c["num_attention_heads"], c["num_key_value_heads"]
    q, kv, V = nh * hd, nkv * hd, c["vocab_size"]
    t = [("token_embd.weight", (V, d), "mat")]
    if arch == "llama" and c.get("rope_scaling"):
        t.append(("rope_freqs.weight", (hd // 2,), "rope_freqs"))
    for l in range(L):
        b = f"blk.{l}."
        t.append((b + "attn_norm.weight", (d,), "norm"))
        if arch == "phi3":
            t.append((b + "attn_qkv.weight", (q + 2 * kv, d), "mat"))
        else:
            t += [(b + "attn_q.weight", (q, d), "mat"), (b + "attn_k.weight", (kv, d), "mat"),
                  (b + "attn_v.weight", (kv, d), "mat")]
        if arch in ("qwen3", "gemma3"):
            t += [(b + "attn_q_norm.weight", (hd,), "norm"), (b + "attn_k_norm.weight", (hd,), "norm")]
        t.append((b + "attn_output.weight", (d, q), "mat"))
        if arch == "gemma3":
            t.append((b + "post_attention_norm.weight", (d,), "norm"))
        t.append((b + "ffn_norm.weight", (d,), "norm"))
        if arch == "phi3":
            t.append((b + "ffn_up.weight", (2 * ff, d), "mat"))  # gate rows, then up rows
        else:
            t += [(b + "ffn_gate.weight", (ff, d), "mat"), (b + "ffn_up.weight", (ff, d), "mat")]
        t.append((b + "ffn_down.weight", (d, ff), "mat"))
        if arch == "gemma3":
            t.append((b + "post_ffw_norm.weight", (d,), "norm"))
    t.append(("output_norm.weight", (d,), "norm"))
    if not c["tie_word_embeddings"]:
        t.append(("output.weight", (V, d), "mat"))
    return t


def draw(kind, shape, seed, s):
    rng = np.random.default_rng(seed)
    if kind == "rope_freqs":
        c = s["config"]
        r = c["rope_scaling"]
        return gen_gguf.llama3_factors(dict(head_dim=head_dim(c), theta=c["rope_theta"], llama3=r))
    n = math.prod(shape)
    if kind == "norm":
        return (1.0 + NORM_STD * rng.standard_normal(n, dtype=np.float32)).astype(np.float32)
    out = np.empty(n, dtype=np.float16)
    for i in range(0, n, CHUNK):
        m = min(CHUNK, n - i)
        x = rng.standard_normal(m, dtype=np.float32)
        x *= STD
        out[i:i + m] = x
    return out.reshape(shape)


def copy_vocab(gw, vocab):
    """Every tokenizer.* key of llama.cpp's models/ggml-vocab-VOCAB.gguf, byte for byte."""
    src = Path(os.environ.get("LLAMA_CPP", Path(gguf.__file__).resolve().parents[2])) / f"models/ggml-vocab-{vocab}.gguf"
    r = gguf.GGUFReader(str(src))
    for k, f in r.fields.items():
        if not k.startswith("tokenizer."):
            continue
        vt = f.types[0]
        if vt == gguf.GGUFValueType.ARRAY:
            sub = f.types[-1]
            if sub == gguf.GGUFValueType.STRING:
                val = [bytes(f.parts[i]) for i in f.data]
            else:
                val = list(f.contents())
            gw.add_key_value(k, val, vt, sub_type=sub)
        elif vt == gguf.GGUFValueType.STRING:
            gw.add_key_value(k, bytes(f.parts[f.data[0]]), vt)
        else:
            gw.add_key_value(k, f.contents(), vt)


def write(name, path):
    s = SHAPES[name]
    c, arch = s["config"], s["arch"]
    hd = head_dim(c)
    gw = gguf.GGUFWriter(str(path), arch)
    gw.add_name(f"hlm random {name} shape")  # no "phi3" in the name: see gen_gguf.py
    gw.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    # conversion/base.py TextModel.set_gguf_parameters
    gw.add_block_count(c["num_hidden_layers"])
    gw.add_context_length(c["max_position_embeddings"])
    gw.add_embedding_length(c["hidden_size"])
    gw.add_feed_forward_length(c["intermediate_size"])
    gw.add_head_count(c["num_attention_heads"])
    gw.add_head_count_kv(c["num_key_value_heads"])
    gw.add_rope_freq_base(c["rope_theta"])
    if c.get("rope_local_base_freq"):
        gw.add_rope_freq_base_swa(c["rope_local_base_freq"])
    gw.add_layer_norm_rms_eps(c["rms_norm_eps"])
    if "head_dim" in c:
        gw.add_key_length(hd)
        gw.add_value_length(hd)
    # the families' own keys
    if arch == "llama":  # conversion/llama.py
        gw.add_vocab_size(c["vocab_size"])
        gw.add_rope_dimension_count(hd)
    if arch == "phi3":  # conversion/phi.py Phi3MiniModel
        gw.add_rope_scaling_orig_ctx_len(c["original_max_position_embeddings"])
        gw.add_rope_dimension_count(hd)  # partial_rotary_factor 1.0
        gw.add_sliding_window(c["sliding_window"] or 0)
    if arch == "gemma3":  # conversion/gemma.py Gemma3Model (pattern 6: no pattern key)
        gw.add_sliding_window(c["sliding_window"])
    copy_vocab(gw, s["vocab"])

    ts = tensors(s)
    for tname, shape, kind in ts:
        dt = np.float16 if kind == "mat" else np.float32
        gw.add_tensor_info(tname, shape, np.dtype(dt), math.prod(shape) * np.dtype(dt).itemsize)
    gw.write_header_to_file()
    gw.write_kv_data_to_file()
    gw.write_ti_data_to_file()
    total = sum(math.prod(sh) for _, sh, _ in ts)
    done, shown = 0, 0
    for i, (tname, shape, kind) in enumerate(ts):
        gw.write_tensor_data(draw(kind, shape, s["seed"] * 100003 + i, s))
        done += math.prod(shape)
        if done * 10 // total > shown:
            shown = done * 10 // total
            print(f"  {name}: {done / total:4.0%} of {total / 1e9:.2f}B parameters", file=sys.stderr)
    gw.close()


def main():
    if sys.argv[1:2] == ["--list"]:
        print("\n".join(SHAPES))
    elif sys.argv[1:2] == ["--describe"]:
        print(describe(sys.argv[2]))
    elif len(sys.argv) == 3 and sys.argv[1] in SHAPES:
        tmp = sys.argv[2] + ".part"
        write(sys.argv[1], tmp)
        os.replace(tmp, sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
