"""An independent numpy forward pass for the GGUF families, to cross-check llama.cpp.

usage: PYTHONPATH=<llama.cpp>/gguf-py /usr/bin/python3 ref_gguf.py MODEL.gguf GOLDEN.bin [--exact-gelu]

Reads the model file with gguf-py's reader (so it sees what llama.cpp sees, not
the generator's arrays), runs the whole sequence of GOLDEN.bin (prompt plus
greedy ids) through a plain float64 transformer written from the architecture
descriptions below, and prints the largest logit differences against the
llama.cpp golden, and whether the greedy ids agree.

What each family computes (as llama.cpp's graph in src/models/<arch>.cpp does):

  llama   RMSNorm; q,k,v; rotary "NORM" (pairs (2i, 2i+1)), with frequencies
          divided by rope_freqs.weight when present (llama3 scaling); softmax(q.k/sqrt(hd));
          SwiGLU FFN silu(gate)*up; final RMSNorm; output.weight or tied token_embd.
  qwen2   llama + q/k/v biases; rotary "NEOX" (pairs (i, i+n_rot/2)).
  qwen3   llama + per-head RMSNorm of q and k (attn_q_norm/attn_k_norm, eps of the
          model) before rotary; NEOX; head_dim from attention.key_length.
  gemma2  x = embd * sqrt(dim); RMSNorm with stored weight (already 1+w); NEOX;
          q *= 1/sqrt(head_dim) (llama.cpp's query_pre_attn_scalar, except 27B);
          scores soft-capped: cap*tanh(s/cap); sliding window on layers with
          il % 2 == 0 (pattern 2): key j visible from query i iff i-j < window;
          attention output RMSNorm'd (post_attention_norm) before the residual add;
          GeGLU gelu_tanh(gate)*up; FFN output RMSNorm'd (post_ffw_norm); final
          RMSNorm; tied output; logits soft-capped.
  gemma3  gemma2 without soft-capping + q/k RMSNorm per head; local layers
          (il % 6 < 5) use rope.freq_base_swa and scale 1, global layers
          rope.freq_base and the linear scaling (positions / factor).
  phi3    fused attn_qkv (Q|K|V rows), rotary on the first rope.dimension_count
          dims of each head only (NEOX within them), ffn_up = (gate|up) rows,
          silu(gate)*up.
  gpt2    x = embd + position_embd[pos]; LayerNorm (with bias); fused qkv + bias;
          no rotary; attention output bias; GELU MLP with biases; tied output.

GELU: llama.cpp's CPU backend does not compute tanh-GELU exactly; it rounds the
input to fp16 and looks up a table of fp16 results (ggml/src/ggml-cpu/vec.h,
GGML_GELU_FP16; |x| >= 10 handled separately). By default this script does the
same, to compare like with like; --exact-gelu uses the exact formula instead and
so measures how far llama.cpp's table moves the logits.
"""

import struct
import sys

import numpy as np

from gguf import GGUFReader


def read_golden(path):
    b = open(path, "rb").read()
    n, V = struct.unpack_from("<ii", b, 0)
    o = 8
    ids = np.frombuffer(b, "<i4", n, o).tolist()
    o += 4 * n
    logits = np.frombuffer(b, "<f4", n * V, o).reshape(n, V).astype(np.float64)
    o += 4 * n * V
    (g,) = struct.unpack_from("<i", b, o)
    greedy = np.frombuffer(b, "<i4", g, o + 4).tolist()
    return ids, logits, greedy


class Model:
    def __init__(self, path):
        r = GGUFReader(path)
        self.kv = {}
        for f in r.fields.values():
            if f.types and f.types[0].name != "ARRAY":
                self.kv[f.name] = f.contents()
        self.t = {}
        for t in r.tensors:
            shape = [int(x) for x in reversed(t.shape.tolist())]  # ne reversed = numpy (out, in)
            self.t[t.name] = np.array(t.data, dtype=np.float64).reshape(shape)
        self.arch = self.kv["general.architecture"]

    def k(self, key, default=None):
        return self.kv.get(f"{self.arch}.{key}", default)


def rmsnorm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def layernorm(x, w, b, eps):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def gelu_exact(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * x * (1 + 0.044715 * x * x)))


def gelu_ggml(x):
    """ggml CPU's tanh-GELU: f16(gelu(f16(x))) for -10 < x < 10 (GGML_GELU_FP16)."""
    x16 = x.astype(np.float16).astype(np.float32)
    y = gelu_exact(x16.astype(np.float64)).astype(np.float32).astype(np.float16).astype(np.float64)
    return np.where(x <= -10, 0.0, np.where(x >= 10, x, y))


def silu(x):
    return x / (1 + np.exp(-x))


def rope(x, pos, n_rot, base, scale, factors, neox):
    """x: (n, heads, hd). Rotates the first n_rot dims of each head."""
    half = n_rot // 2
    i = np.arange(half)
    theta = pos[:, None] * scale * base ** (-2.0 * i / n_rot)  # (n, half)
    if factors is not None:
        theta = theta / factors[None, :]
    c, s = np.cos(theta)[:, None, :], np.sin(theta)[:, None, :]
    out = x.copy()
    if neox:
        a, b = x[..., :half], x[..., half:n_rot]
        out[..., :half] = a * c - b * s
        out[..., half:n_rot] = a * s + b * c
    else:
        a, b = x[..., 0:n_rot:2], x[..., 1:n_rot:2]
        out[..., 0:n_rot:2] = a * c - b * s
        out[..., 1:n_rot:2] = a * s + b * c
    return out


def forward(m, ids, exact_gelu=False):
    """Logits (n, V) for every position of ids, float64."""
    t, arch = m.t, m.arch
    gelu = gelu_exact if exact_gelu else gelu_ggml
    n = len(ids)
    pos = np.arange(n, dtype=np.float64)
    dim = int(m.k("embedding_length"))
    n_layer = int(m.k("block_count"))
    nh = int(m.k("attention.head_count"))
    nkv = int(m.k("attention.head_count_kv", nh))
    hd = int(m.k("attention.key_length", dim // nh))
    n_rot = int(m.k("rope.dimension_count", hd))
    base = float(m.k("rope.freq_base", 10000.0))
    scale = 1.0 / float(m.k("rope.scaling.factor", 1.0)) if m.k("rope.scaling.type") == "linear" else 1.0
    gemma = arch in ("gemma2", "gemma3")
    gpt2 = arch == "gpt2"
    neox = arch != "llama"
    eps = float(m.k("attention.layer_norm_epsilon" if gpt2 else "attention.layer_norm_rms_epsilon"))
    window = int(m.k("attention.sliding_window", 0))
    attn_cap = float(m.k("attn_logit_softcapping", 50.0)) if arch == "gemma2" else None
    final_cap = {"gemma2": float(m.k("final_logit_softcapping", 30.0)),
                 "gemma3": m.k("final_logit_softcapping")}.get(arch)
    factors = t.get("rope_freqs.weight")

    def norm(x, name):
        if gpt2:
            return layernorm(x, t[name + ".weight"], t[name + ".bias"], eps)
        return rmsnorm(x, t[name + ".weight"], eps)

    x = t["token_embd.weight"][ids]
    if gemma:
        x = x * np.float32(np.sqrt(np.float32(dim)))  # ggml_scale(sqrtf(n_embd))
    if gpt2:
        x = x + t["position_embd.weight"][np.arange(n)]

    for l in range(n_layer):
        b = f"blk.{l}."
        is_swa = (arch == "gemma2" and l % 2 == 0) or (arch == "gemma3" and window > 0 and l % 6 < 5)
        h = norm(x, b + "attn_norm")
        if b + "attn_qkv.weight" in t:
            qkv = h @ t[b + "attn_qkv.weight"].T
            if b + "attn_qkv.bias" in t:
                qkv = qkv + t[b + "attn_qkv.bias"]
            q, k_, v = np.split(qkv, [nh * hd, nh * hd + nkv * hd], axis=1)
        else:
            q = h @ t[b + "attn_q.weight"].T
            k_ = h @ t[b + "attn_k.weight"].T
            v = h @ t[b + "attn_v.weight"].T
            for name, arr in (("attn_q", "q"), ("attn_k", "k"), ("attn_v", "v")):
                if b + name + ".bias" in t:
                    if arr == "q":
                        q = q + t[b + name + ".bias"]
                    elif arr == "k":
                        k_ = k_ + t[b + name + ".bias"]
                    else:
                        v = v + t[b + name + ".bias"]
        q = q.reshape(n, nh, hd)
        k_ = k_.reshape(n, nkv, hd)
        v = v.reshape(n, nkv, hd)
        if b + "attn_q_norm.weight" in t:
            q = rmsnorm(q, t[b + "attn_q_norm.weight"], eps)
            k_ = rmsnorm(k_, t[b + "attn_k_norm.weight"], eps)
        if not gpt2:
            lb, ls = base, scale
            if arch == "gemma3" and is_swa:
                lb, ls = float(m.k("rope.freq_base_swa", 10000.0)), 1.0
            q = rope(q, pos, n_rot, lb, ls, factors, neox)
            k_ = rope(k_, pos, n_rot, lb, ls, factors, neox)
        kq_scale = 1.0 / np.sqrt(hd)
        rep = nh // nkv
        k_ = np.repeat(k_, rep, axis=1)  # query head j uses KV head j // rep
        v = np.repeat(v, rep, axis=1)
        s = np.einsum("ihd,jhd->hij", q, k_) * kq_scale
        if attn_cap is not None:
            s = attn_cap * np.tanh(s / attn_cap)
        i_ = np.arange(n)[:, None]
        j_ = np.arange(n)[None, :]
        mask = j_ <= i_
        if is_swa:
            mask &= (i_ - j_) < window
        s = np.where(mask[None], s, -np.inf)
        s = s - s.max(axis=-1, keepdims=True)
        p = np.exp(s)
        p /= p.sum(axis=-1, keepdims=True)
        o = np.einsum("hij,jhd->ihd", p, v).reshape(n, nh * hd)
        o = o @ t[b + "attn_output.weight"].T
        if b + "attn_output.bias" in t:
            o = o + t[b + "attn_output.bias"]
        if gemma:
            o = rmsnorm(o, t[b + "post_attention_norm.weight"], eps)
        x = x + o
        h = norm(x, b + "ffn_norm")
        if gpt2:
            f = gelu(h @ t[b + "ffn_up.weight"].T + t[b + "ffn_up.bias"])
        elif arch == "phi3":
            gu = h @ t[b + "ffn_up.weight"].T
            gate, up = np.split(gu, 2, axis=1)
            f = silu(gate) * up
        else:
            gate = h @ t[b + "ffn_gate.weight"].T
            up = h @ t[b + "ffn_up.weight"].T
            f = (gelu(gate) if gemma else silu(gate)) * up
        f = f @ t[b + "ffn_down.weight"].T
        if b + "ffn_down.bias" in t:
            f = f + t[b + "ffn_down.bias"]
        if gemma:
            f = rmsnorm(f, t[b + "post_ffw_norm.weight"], eps)
        x = x + f

    h = norm(x, "output_norm")
    out = t.get("output.weight", t["token_embd.weight"])
    logits = h @ out.T
    if final_cap:
        logits = final_cap * np.tanh(logits / final_cap)
    return logits


def greedy(m, prompt, g, exact_gelu=False):
    ids = list(prompt)
    for _ in range(g):
        ids.append(int(np.argmax(forward(m, ids, exact_gelu)[-1])))
    return ids[len(prompt):]


def compare(model_path, golden_path, exact_gelu=False):
    m = Model(model_path)
    prompt, ref, ref_greedy = read_golden(golden_path)
    seq = prompt + ref_greedy[:-1]  # every token whose logits the golden saw
    ours = forward(m, seq, exact_gelu)
    d = np.abs(ours[: len(prompt)] - ref)
    rel = d.max() / np.abs(ref).max()
    # the greedy ids, teacher-forced: argmax after each position of the continuation
    ours_greedy = np.argmax(ours[len(prompt) - 1:], axis=1).tolist()
    srt = np.sort(ours[len(prompt) - 1:], axis=1)
    margin = float((srt[:, -1] - srt[:, -2]).min())
    return dict(max_abs=float(d.max()), max_rel=float(rel), max_logit=float(np.abs(ref).max()),
                greedy_match=ours_greedy == ref_greedy, margin=margin)


if __name__ == "__main__":
    exact = "--exact-gelu" in sys.argv
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    r = compare(args[0], args[1], exact)
    name = args[1].rsplit("/", 1)[-1]
    print(f"{name:28s} vs numpy{' exact GELU' if exact else '           '}: max|d| {r['max_abs']:.3g} "
          f"(max|logit| {r['max_logit']:.3g}, rel {r['max_rel']:.3g}), "
          f"greedy ids {'match' if r['greedy_match'] else 'DIFFER'}, min top-2 margin {r['margin']:.3g}")
