"""Tiny random Hugging Face checkpoints of OPT and GPT-Neo, and their reference logits.

usage: /usr/bin/python3 gen_hf.py OUTDIR [NAME...]

llama.cpp does not run these two families, so the reference is the plain numpy
forward pass below, written from the definitions in transformers
(src/transformers/models/opt/modeling_opt.py and
src/transformers/models/gpt_neo/modeling_gpt_neo.py), not from hlm's Go code.
It reads the model back from the files written here (config.json and
model.safetensors, through read_safetensors), computes in float64, and writes
the golden in hlm's layout (see golden.cpp).

Each OUTDIR/NAME/ holds config.json (the keys of the real checkpoints' configs),
model.safetensors (F32, tensor names as transformers saves *ForCausalLM; the
tied lm_head.weight is left out, as save_pretrained does), vocab.json and
merges.txt (tinybpe's vocabulary, GPT-2 style) and tokenizer_config.json;
OUTDIR/NAME_golden.bin holds the golden of the first prompt of
tinybpe.PROMPTS, NAME_golden_p2.bin and NAME_golden_p3.bin those of the others.

OPT (modeling_opt.py), what the reference relies on:
  - OPTDecoder.forward: token embeddings (vocab x word_embed_proj_dim); if
    word_embed_proj_dim != hidden_size they go through project_in (Linear, no
    bias) to hidden_size; then learned positions are added.
  - OPTLearnedPositionalEmbedding: table of max_position_embeddings + 2 rows;
    position p (0-based, from cumsum(attention_mask) - 1 with no padding) reads
    row p + 2 (the "offset of 2").
  - OPTDecoderLayer.forward: residual + self_attn(LN(x)) and residual +
    fc2(relu(fc1(LN(x)))) when do_layer_norm_before (125m, 1.3b, ...); when false
    (350m), LayerNorm after each residual add: x = LN(x + attn(x)), then
    x = LN(x + fc2(relu(fc1(x)))). LayerNorms: self_attn_layer_norm and
    final_layer_norm of each layer, torch default eps 1e-5, with weight and bias.
  - OPTAttention: q = q_proj(x) * head_dim**-0.5 (scaled after the bias),
    k_proj, v_proj, out_proj all with bias (enable_bias), causal softmax.
  - OPTDecoder: a final LayerNorm (decoder.final_layer_norm) only when
    do_layer_norm_before and not _remove_final_layer_norm; then project_out
    (Linear, no bias, hidden -> word_embed_proj_dim) when the dims differ.
  - OPTForCausalLM: lm_head (vocab x word_embed_proj_dim, no bias), tied to
    embed_tokens.
  - activation_function "relu" (ACT2FN).

GPT-Neo (modeling_gpt_neo.py), what the reference relies on:
  - GPTNeoModel.forward: wte(ids) + wpe(positions 0..n-1) (no offset).
  - GPTNeoBlock: x + attn(ln_1(x)), then x + mlp(ln_2(x)); LayerNorm eps
    layer_norm_epsilon; final ln_f; lm_head tied to wte, no bias.
  - GPTNeoSelfAttention: q_proj, k_proj, v_proj WITHOUT bias, out_proj with
    bias; NO 1/sqrt(head_dim) scaling of q.k; scores computed in float32 (here
    float64); masked positions get -1e9 (exactly 0 after softmax here).
  - attention_layers: expanded from attention_types [[types, repeat], ...] as
    types repeated `repeat` times (GPTNeoConfig.expand_attention_types_params);
    layer i is "global" (causal) or "local": bias ^ tril(bias, -window_size),
    i.e. query i sees key j iff 0 <= i - j < window_size.
  - GPTNeoMLP: c_fc (Linear, with bias) -> act -> c_proj (Linear, with bias);
    inner size intermediate_size or 4*hidden_size; act "gelu_new" =
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
  - Linear weights are stored [out, in] (nn.Linear), unlike GPT-2's Conv1D.
"""

import json
import struct
import sys
from pathlib import Path

import numpy as np

import tinybpe

SPECS = {
    # OPT-125m style: LayerNorm before attention and FFN, final LayerNorm,
    # word_embed_proj_dim == hidden_size (no projections).
    "opt_pre": dict(model_type="opt", hidden=64, proj=64, n_layer=2, n_head=4, ffn=128, max_pos=128,
                    pre_norm=True, seed=24, std_embd=0.5, std_qk=0.2, std_out=0.3),
    # OPT-350m style: LayerNorm after each residual add, no final LayerNorm,
    # word_embed_proj_dim 32 != hidden 64, so project_in and project_out exist.
    "opt_post": dict(model_type="opt", hidden=64, proj=32, n_layer=2, n_head=4, ffn=128, max_pos=128,
                     pre_norm=False, seed=26, std_embd=0.5, std_qk=0.2, std_out=0.3),
    # GPT-Neo-125M style: global and local attention layers, window 6 < sequence;
    # attention_types with two items ([[g, l], 1] then [[g], 1]) to exercise the expansion.
    "gpt_neo": dict(model_type="gpt_neo", hidden=64, n_layer=3, n_head=4, max_pos=128, window=6,
                    attention_types=[[["global", "local"], 1], [["global"], 1]], seed=28, std_embd=0.3, std_qk=0.15,
                    std_out=0.2),
}


# --- safetensors ----------------------------------------------------------------
# File layout: u64 little-endian header size N, N bytes of JSON header
# {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}
# (offsets relative to the end of the header), then the tensor bytes.

def write_safetensors(path, tensors, metadata=None):
    header = {"__metadata__": metadata or {"format": "pt"}}
    offset = 0
    blobs = []
    for name, arr in tensors.items():
        arr = np.ascontiguousarray(arr, dtype="<f4")
        header[name] = {"dtype": "F32", "shape": list(arr.shape), "data_offsets": [offset, offset + arr.nbytes]}
        offset += arr.nbytes
        blobs.append(arr.tobytes())
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)  # pad the header to 8 bytes, as the safetensors library does
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    b = open(path, "rb").read()
    (n,) = struct.unpack_from("<Q", b, 0)
    header = json.loads(b[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32"
        s, e = info["data_offsets"]
        out[name] = np.frombuffer(b, "<f4", (e - s) // 4, 8 + n + s).reshape(info["shape"]).astype(np.float64)
    return out


# --- checkpoints ------------------------------------------------------------------

def opt_checkpoint(spec, n_vocab, bos, eos):
    rng = np.random.default_rng(spec["seed"])
    normal = lambda shape, std, mean=0.0: (mean + std * rng.standard_normal(shape)).astype(np.float32)
    H, P, F = spec["hidden"], spec["proj"], spec["ffn"]
    p = "model.decoder."
    w = {p + "embed_tokens.weight": normal((n_vocab, P), spec["std_embd"]),
         p + "embed_positions.weight": normal((spec["max_pos"] + 2, H), 0.3)}
    if P != H:
        w[p + "project_in.weight"] = normal((H, P), 1.0 / np.sqrt(P) * 2)
        w[p + "project_out.weight"] = normal((P, H), 1.0 / np.sqrt(H) * 2)
    for l in range(spec["n_layer"]):
        b = f"{p}layers.{l}."
        for proj, std in (("q", spec["std_qk"]), ("k", spec["std_qk"]), ("v", 0.15), ("out", spec["std_out"])):
            w[b + f"self_attn.{proj}_proj.weight"] = normal((H, H), std)
            w[b + f"self_attn.{proj}_proj.bias"] = normal((H,), 0.1)
        w[b + "self_attn_layer_norm.weight"] = normal((H,), 0.1, 1.0)
        w[b + "self_attn_layer_norm.bias"] = normal((H,), 0.1)
        w[b + "fc1.weight"] = normal((F, H), 0.15)
        w[b + "fc1.bias"] = normal((F,), 0.1)
        w[b + "fc2.weight"] = normal((H, F), spec["std_out"])
        w[b + "fc2.bias"] = normal((H,), 0.1)
        w[b + "final_layer_norm.weight"] = normal((H,), 0.1, 1.0)
        w[b + "final_layer_norm.bias"] = normal((H,), 0.1)
    if spec["pre_norm"]:
        w[p + "final_layer_norm.weight"] = normal((H,), 0.1, 1.0)
        w[p + "final_layer_norm.bias"] = normal((H,), 0.1)
    config = {
        "_remove_final_layer_norm": False,
        "activation_dropout": 0.0,
        "activation_function": "relu",
        "architectures": ["OPTForCausalLM"],
        "attention_dropout": 0.0,
        "bos_token_id": bos,
        "do_layer_norm_before": spec["pre_norm"],
        "dropout": 0.1,
        "enable_bias": True,
        "eos_token_id": eos,
        "ffn_dim": F,
        "hidden_size": H,
        "init_std": 0.02,
        "layer_norm_elementwise_affine": True,
        "layerdrop": 0.0,
        "max_position_embeddings": spec["max_pos"],
        "model_type": "opt",
        "num_attention_heads": spec["n_head"],
        "num_hidden_layers": spec["n_layer"],
        "pad_token_id": eos,
        "prefix": tinybpe.EOS,
        "tie_word_embeddings": True,
        "torch_dtype": "float32",
        "use_cache": True,
        "vocab_size": n_vocab,
        "word_embed_proj_dim": P,
    }
    return config, w


def gpt_neo_checkpoint(spec, n_vocab, bos, eos):
    rng = np.random.default_rng(spec["seed"])
    normal = lambda shape, std, mean=0.0: (mean + std * rng.standard_normal(shape)).astype(np.float32)
    H = spec["hidden"]
    F = 4 * H
    layers = [t for types, rep in spec["attention_types"] for _ in range(rep) for t in types]
    assert len(layers) == spec["n_layer"]
    p = "transformer."
    w = {p + "wte.weight": normal((n_vocab, H), spec["std_embd"]),
         p + "wpe.weight": normal((spec["max_pos"], H), 0.3)}
    for l in range(spec["n_layer"]):
        b = f"{p}h.{l}."
        w[b + "ln_1.weight"] = normal((H,), 0.1, 1.0)
        w[b + "ln_1.bias"] = normal((H,), 0.1)
        for proj, std in (("q", spec["std_qk"]), ("k", spec["std_qk"]), ("v", 0.15)):
            w[b + f"attn.attention.{proj}_proj.weight"] = normal((H, H), std)
        w[b + "attn.attention.out_proj.weight"] = normal((H, H), spec["std_out"])
        w[b + "attn.attention.out_proj.bias"] = normal((H,), 0.1)
        w[b + "ln_2.weight"] = normal((H,), 0.1, 1.0)
        w[b + "ln_2.bias"] = normal((H,), 0.1)
        w[b + "mlp.c_fc.weight"] = normal((F, H), 0.15)
        w[b + "mlp.c_fc.bias"] = normal((F,), 0.1)
        w[b + "mlp.c_proj.weight"] = normal((H, F), spec["std_out"])
        w[b + "mlp.c_proj.bias"] = normal((H,), 0.1)
    w[p + "ln_f.weight"] = normal((H,), 0.1, 1.0)
    w[p + "ln_f.bias"] = normal((H,), 0.1)
    config = {
        "activation_function": "gelu_new",
        "architectures": ["GPTNeoForCausalLM"],
        "attention_dropout": 0,
        "attention_layers": layers,
        "attention_types": spec["attention_types"],
        "bos_token_id": bos,
        "embed_dropout": 0,
        "eos_token_id": eos,
        "hidden_size": H,
        "initializer_range": 0.02,
        "intermediate_size": None,
        "layer_norm_epsilon": 1e-05,
        "max_position_embeddings": spec["max_pos"],
        "model_type": "gpt_neo",
        "num_heads": spec["n_head"],
        "num_layers": spec["n_layer"],
        "resid_dropout": 0,
        "tie_word_embeddings": True,
        "torch_dtype": "float32",
        "use_cache": True,
        "vocab_size": n_vocab,
        "window_size": spec["window"],
    }
    return config, w


def write_dir(name, spec, out):
    tokens, merges, bos, eos = tinybpe.vocabulary()
    make = opt_checkpoint if spec["model_type"] == "opt" else gpt_neo_checkpoint
    config, w = make(spec, len(tokens), bos, eos)
    d = out / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    write_safetensors(d / "model.safetensors", w)
    (d / "vocab.json").write_text(json.dumps({t: i for i, t in enumerate(tokens)}, ensure_ascii=False) + "\n")
    (d / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n")
    (d / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "GPT2Tokenizer",
        "add_bos_token": spec["model_type"] == "opt",  # OPT's tokenizer prepends BOS; GPT-Neo's does not
        "bos_token": tinybpe.BOS,
        "eos_token": tinybpe.EOS,
        "unk_token": tinybpe.EOS,
        "model_max_length": spec["max_pos"],
    }, indent=2) + "\n")
    return d


# --- reference forward passes -------------------------------------------------------

def layernorm(x, w, b, eps):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def attention(q, k, v, n_head, mask):
    """q, k, v: (n, H); mask: (n, n) bool, True where query i may see key j."""
    n, H = q.shape
    hd = H // n_head
    q, k, v = (a.reshape(n, n_head, hd) for a in (q, k, v))
    s = np.einsum("ihd,jhd->hij", q, k)
    s = np.where(mask[None], s, -np.inf)
    s -= s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(axis=-1, keepdims=True)
    return np.einsum("hij,jhd->ihd", p, v).reshape(n, H)


def causal(n, window=None):
    i = np.arange(n)[:, None]
    j = np.arange(n)[None, :]
    m = j <= i
    if window is not None:
        m &= (i - j) < window
    return m


def opt_forward(d, ids):
    c = json.loads((d / "config.json").read_text())
    t = read_safetensors(d / "model.safetensors")
    p = "model.decoder."
    eps = 1e-5  # nn.LayerNorm default; OPT passes no eps
    n, H, nh = len(ids), c["hidden_size"], c["num_attention_heads"]
    lin = lambda x, name: x @ t[name + ".weight"].T + (t[name + ".bias"] if name + ".bias" in t else 0)
    ln = lambda x, name: layernorm(x, t[name + ".weight"], t[name + ".bias"], eps)
    x = t[p + "embed_tokens.weight"][ids]
    if c["word_embed_proj_dim"] != H:
        x = x @ t[p + "project_in.weight"].T
    x = x + t[p + "embed_positions.weight"][np.arange(n) + 2]
    pre = c["do_layer_norm_before"]
    mask = causal(n)
    for l in range(c["num_hidden_layers"]):
        b = f"{p}layers.{l}."
        h = ln(x, b + "self_attn_layer_norm") if pre else x
        q = lin(h, b + "self_attn.q_proj") * (H // nh) ** -0.5
        a = attention(q, lin(h, b + "self_attn.k_proj"), lin(h, b + "self_attn.v_proj"), nh, mask)
        x = x + lin(a, b + "self_attn.out_proj")
        if not pre:
            x = ln(x, b + "self_attn_layer_norm")
        h = ln(x, b + "final_layer_norm") if pre else x
        x = x + lin(np.maximum(lin(h, b + "fc1"), 0.0), b + "fc2")
        if not pre:
            x = ln(x, b + "final_layer_norm")
    if pre and not c.get("_remove_final_layer_norm", False):
        x = ln(x, p + "final_layer_norm")
    if c["word_embed_proj_dim"] != H:
        x = x @ t[p + "project_out.weight"].T
    return x @ t[p + "embed_tokens.weight"].T  # lm_head tied to embed_tokens


def gelu_new(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


def gpt_neo_forward(d, ids):
    c = json.loads((d / "config.json").read_text())
    t = read_safetensors(d / "model.safetensors")
    p = "transformer."
    eps = c["layer_norm_epsilon"]
    n, nh = len(ids), c["num_heads"]
    lin = lambda x, name: x @ t[name + ".weight"].T + (t[name + ".bias"] if name + ".bias" in t else 0)
    ln = lambda x, name: layernorm(x, t[name + ".weight"], t[name + ".bias"], eps)
    layers = [ty for types, rep in c["attention_types"] for _ in range(rep) for ty in types]
    assert c["activation_function"] == "gelu_new"
    x = t[p + "wte.weight"][ids] + t[p + "wpe.weight"][np.arange(n)]
    for l in range(c["num_layers"]):
        b = f"{p}h.{l}."
        h = ln(x, b + "ln_1")
        mask = causal(n, c["window_size"] if layers[l] == "local" else None)
        a = attention(lin(h, b + "attn.attention.q_proj"), lin(h, b + "attn.attention.k_proj"),
                      lin(h, b + "attn.attention.v_proj"), nh, mask)  # no 1/sqrt(head_dim)
        x = x + lin(a, b + "attn.attention.out_proj")
        h = ln(x, b + "ln_2")
        x = x + lin(gelu_new(lin(h, b + "mlp.c_fc")), b + "mlp.c_proj")
    x = ln(x, p + "ln_f")
    return x @ t[p + "wte.weight"].T  # lm_head tied to wte


def golden(d, model_type, prompt, n_greedy):
    forward = opt_forward if model_type == "opt" else gpt_neo_forward
    ids = list(prompt)
    for _ in range(n_greedy):
        ids.append(int(np.argmax(forward(d, ids)[-1])))
    logits = forward(d, ids[:-1])
    return logits, ids[len(prompt):]


def write_golden(path, prompt, logits, greedy):
    n, V = len(prompt), logits.shape[1]
    with open(path, "wb") as f:
        f.write(struct.pack("<ii", n, V))
        f.write(np.asarray(prompt, dtype="<i4").tobytes())
        f.write(np.asarray(logits[:n], dtype="<f4").tobytes())
        f.write(struct.pack("<i", len(greedy)))
        f.write(np.asarray(greedy, dtype="<i4").tobytes())


def main():
    out = Path(sys.argv[1])
    names = sys.argv[2:] or list(SPECS)
    for name in names:
        spec = SPECS[name]
        d = write_dir(name, spec, out)
        for i, text in enumerate(tinybpe.PROMPTS):
            prompt = tinybpe.prompt_ids(text)
            logits, greedy = golden(d, spec["model_type"], prompt, 64)
            path = out / tinybpe.golden_name(f"{name}_golden", i)
            write_golden(path, prompt, logits, greedy)
            # the margin along the greedy path: the last prompt row and the continuation's rows
            s = np.sort(logits[len(prompt) - 1:], axis=1)
            print(f"{path.name:22s} {len(prompt):2d} prompt ids, greedy {len(set(greedy))} distinct ids, "
                  f"min top-2 margin {(s[:, -1] - s[:, -2]).min():.3g}, logit std {logits.std():.2f}")


if __name__ == "__main__":
    main()
