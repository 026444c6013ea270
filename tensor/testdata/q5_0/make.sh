#!/usr/bin/env bash
# Regenerates the Q5_0 goldens of this directory (tensor/testdata/q5_0/) from
# llama.cpp's gguf-py (quants.py, Q5_0: the numpy port of GGML's
# quantize_row_q5_0_ref and dequantize_row_q5_0) and llama-quantize:
#
#   ggufpy_source.f32    64 blocks of float32 inputs: seeded normals, then hard
#                        cases (zeros, ± the largest magnitude, integral x/d, an fp16-subnormal
#                        scale, one non-zero element, a huge range)
#   ggufpy.q5_0          gguf-py's Q5_0 quantization of them (22 bytes a block)
#   ggufpy.f32           gguf-py's dequantization of those blocks
#   llamaquantize.q5_0   the 64 rows × 2 blocks of blk.0.attn_q.weight that
#                        llama-quantize writes as Q5_0 when it makes Q4_K_M of
#                        stories260K (rows of 64: its Q4_K falls back to Q5_0)
#   llamaquantize.f32    gguf-py's dequantization of those blocks
#
# All little-endian. TestQ5_0Golden (q5_test.go) holds hlm's DequantizeRow to
# the .f32 files and its QuantizeQ5_0 to ggufpy.q5_0, bit for bit.
#
#   usage (from anywhere): tensor/testdata/q5_0/make.sh
#
# Needs Debian's python3-numpy, llama.cpp's tree at ${HLM_PEERS:-~/.cache/hlm-peers}/llama.cpp
# (../../../../shared/perf/llamacpp.sh builds it; commit de3ff81 when these files were
# made) and ../../../../shared/models/stories260K. Idempotent: the same bytes every run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
tree=${HLM_PEERS:-$HOME/.cache/hlm-peers}/llama.cpp
[[ -x $tree/build/bin/llama-quantize ]] || "$root/../shared/perf/llamacpp.sh" >/dev/null
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go run ./cmd/hlm convert --model ../shared/models/stories260K/stories260K.bin \
  --tokenizer ../shared/models/stories260K/tok512.bin --type f32 --out "$tmp/f32.gguf") >/dev/null
"$tree/build/bin/llama-quantize" "$tmp/f32.gguf" "$tmp/q4km.gguf" Q4_K_M 1 >"$tmp/quantize.log" 2>&1
PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=$tree/gguf-py /usr/bin/python3 - "$here" "$tmp/q4km.gguf" <<'PY'
import sys
import numpy as np
from gguf import GGUFReader, GGMLQuantizationType as T
from gguf.quants import quantize, dequantize

out, model = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(20261127)
x = rng.standard_normal((64, 32)).astype(np.float32)
x[48] = 0                                            # all zeros
x[49] = np.linspace(-1, 1, 32, dtype=np.float32)     # ± the largest magnitude: code 31 clamps
x[50] = np.float32(-2) * np.arange(32, dtype=np.float32) / 16 + 1  # max negative
x[51] = (np.arange(32, dtype=np.float32) - 16) / 16  # x/d integral: x/d + 16.5 lands on k + 0.5
x[52] *= np.float32(1e-6)                            # d subnormal in fp16
x[53] = 0; x[53][7] = 3.5                            # one non-zero element
x[54] *= np.float32(6e4)                             # d near fp16's largest
x[55] = np.float32(1) / np.arange(1, 33, dtype=np.float32)
x.astype("<f4").tofile(f"{out}/ggufpy_source.f32")
q = quantize(x.reshape(-1), T.Q5_0)
q.tofile(f"{out}/ggufpy.q5_0")
dequantize(q, T.Q5_0).astype("<f4").tofile(f"{out}/ggufpy.f32")

t = next(t for t in GGUFReader(model).tensors if t.name == "blk.0.attn_q.weight")
assert t.tensor_type == T.Q5_0, t.tensor_type
blocks = np.asarray(t.data).reshape(-1).view(np.uint8)[: 64 * 2 * 22]
blocks.tofile(f"{out}/llamaquantize.q5_0")
dequantize(blocks, T.Q5_0).astype("<f4").tofile(f"{out}/llamaquantize.f32")
PY
