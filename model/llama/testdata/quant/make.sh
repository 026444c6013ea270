#!/usr/bin/env bash
# Regenerates this directory (model/llama/testdata/quant/): tiny models of
# ../families quantized by llama.cpp's llama-quantize to Q4_K_M, and their
# reference logits from llama.cpp (the golden harness of ../families/make.sh):
#
#   NAME-q4_k_m.gguf     llama-quantize ../families/NAME.gguf Q4_K_M: rows of 64
#                        elements are no whole K-quant super-block, so its Q4_K
#                        tensors fall back to Q5_0 and its Q6_K ones to Q8_0
#   NAME-q4_k_m_golden.bin  llama.cpp's logits over BOS + "Once upon a time, there
#                        was a little model that was small." (the families' first
#                        prompt) and 64 greedy ids; gemma3's from the exact-GELU
#                        build (hlm computes GELU exactly)
#
# for NAME in llama2, qwen3 and gemma3. TestQuantizedGoldens reads them.
#
#   usage (from anywhere): model/llama/testdata/quant/make.sh
#
# Needs what ../families/make.sh needs (it is run first when the harness is
# missing). Idempotent: the same bytes every run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
peers=${HLM_PEERS:-$HOME/.cache/hlm-peers}
work=$peers/families-build
if [[ ! -x $work/golden || ! -x $work/golden-exactgelu ]]; then
  "$here/../families/make.sh"
fi
ids=311,289,292,259,295,44,298,297,259,302,306,256,104,272,297,309,46
for name in llama2 qwen3 gemma3; do
  out=$here/$name-q4_k_m.gguf
  "$peers/llama.cpp/build/bin/llama-quantize" "$here/../families/$name.gguf" "$out" Q4_K_M 1 >"$work/quant-$name.log" 2>&1 ||
    { echo "make.sh: llama-quantize $name failed, see $work/quant-$name.log" >&2; exit 1; }
  harness=$work/golden
  [[ $name == gemma3 ]] && harness=$work/golden-exactgelu
  "$harness" "$out" "$here/$name-q4_k_m_golden.bin" 64 "$ids" >"$work/quant-$name-golden.log" 2>&1 ||
    { echo "make.sh: golden $name failed, see $work/quant-$name-golden.log" >&2; exit 1; }
done
