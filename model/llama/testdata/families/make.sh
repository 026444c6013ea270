#!/usr/bin/env bash
# Regenerates every file of this directory (model/llama/testdata/families/) from
# nothing but llama.cpp's source tree and Debian's numpy:
#
#   *.gguf                     tiny random models of the GGUF families hlm runs (tools/gen_gguf.py)
#   *_golden.bin               their reference logits and greedy ids from llama.cpp (tools/golden.cpp)
#   *_exactgelu_golden.bin     the same for the GELU families, from llama.cpp built with exact tanh-GELU
#   opt_pre/ opt_post/ gpt_neo/  tiny random Hugging Face checkpoints (tools/gen_hf.py) and
#   opt_pre_golden.bin ...     their reference logits from the numpy forward passes in gen_hf.py
#   *_hf/                      Hugging Face twins of the GGUF models: the checkpoints llama.cpp's converter
#                              turns into those files (tools/hf_twins.py); they share the GGUF goldens
#   qwen3_bf16_golden.bin      the golden of the BF16 twin qwen3_hf_bf16/ (float64 numpy, hf_twins.py)
#   *_golden_p2.bin, *_p3.bin  every golden above again for the second and third prompt (tinybpe.PROMPTS)
#   CROSSCHECK.txt             llama.cpp against the independent numpy forward pass (tools/ref_gguf.py)
#
#   usage: model/llama/testdata/families/make.sh     (from anywhere; writes beside itself)
#
# llama.cpp: the tree that ../../../../../shared/perf/llamacpp.sh builds (node-llama-cpp@3.22.1's
# bundle, commit de3ff81 when these files were made), at ${HLM_PEERS:-~/.cache/hlm-peers}/llama.cpp.
# Build outputs go to ${HLM_PEERS:-~/.cache/hlm-peers}/families-build, never here.
#
# Time: about 2 minutes on 2 cores for everything once the two builds exist; the first run also
# builds golden against the stock static libraries (10 s) and a second copy of
# ggml with exact GELU (about 4 minutes on 2 cores); add the llama.cpp build itself
# (5-10 minutes) on a machine that has none. Idempotent: the same bytes every run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
peers=${HLM_PEERS:-$HOME/.cache/hlm-peers}
tree=$peers/llama.cpp
if [[ ! -x $tree/build/bin/llama-tokenize ]]; then
  "$here/../../../../../shared/perf/llamacpp.sh" >/dev/null
fi
[[ -f $tree/build/src/libllama.a ]] || { echo "make.sh: no static libllama.a under $tree/build (BUILD_SHARED_LIBS=OFF expected)" >&2; exit 1; }
work=$peers/families-build
mkdir -p "$work"
py() { PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=$tree/gguf-py:$here/tools /usr/bin/python3 "$@"; }

# 1. golden against llama.cpp's static libraries, exactly:
#    g++ -O2 -std=c++17 -I$tree/include -I$tree/ggml/include tools/golden.cpp \
#        $tree/build/src/libllama.a $tree/build/ggml/src/{libggml.a,libggml-cpu.a,libggml-base.a} \
#        -fopenmp -lpthread -ldl -lm -o golden
link() {  # link OUT GGML_LIB_DIR
  g++ -O2 -std=c++17 -I"$tree/include" -I"$tree/ggml/include" "$here/tools/golden.cpp" \
    "$tree/build/src/libllama.a" "$2/libggml.a" "$2/libggml-cpu.a" "$2/libggml-base.a" \
    -fopenmp -lpthread -ldl -lm -o "$1"
}
if [[ ! -x $work/golden || $here/tools/golden.cpp -nt $work/golden ]]; then
  link "$work/golden" "$tree/build/ggml/src"
fi

# 2. The same program over a copy of ggml whose CPU backend computes tanh-GELU exactly:
#    stock ggml rounds GELU's input to fp16 and reads an fp16 table (GGML_GELU_FP16 in
#    ggml/src/ggml-cpu/vec.h), which moves the logits of the GELU families by ~1e-3.
exact=$work/ggml-exactgelu
if [[ ! -f $exact/build/ggml/src/libggml-cpu.a ]]; then
  rm -rf "$exact" && mkdir -p "$exact"
  cp -r "$tree/ggml" "$exact/ggml"
  sed -i 's|^#define GGML_GELU_FP16$|// hlm families: exact tanh-GELU, no fp16 table|' "$exact/ggml/src/ggml-cpu/vec.h"
  if grep -q '^#define GGML_GELU_FP16$' "$exact/ggml/src/ggml-cpu/vec.h" ||
     ! grep -q '^// hlm families: exact tanh-GELU' "$exact/ggml/src/ggml-cpu/vec.h"; then
    echo "make.sh: could not switch off GGML_GELU_FP16 in ggml-cpu/vec.h" >&2; exit 1
  fi
  printf 'cmake_minimum_required(VERSION 3.14)\nproject(ggml_exactgelu C CXX)\nadd_subdirectory(ggml)\n' >"$exact/CMakeLists.txt"
  { cmake -S "$exact" -B "$exact/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DGGML_LLAMAFILE=ON -DBUILD_SHARED_LIBS=OFF &&
    cmake --build "$exact/build" -j"$(nproc)" --target ggml ggml-base ggml-cpu; } >"$exact/build.log" 2>&1 ||
    { echo "make.sh: exact-GELU ggml build failed, see $exact/build.log" >&2; exit 1; }
fi
if [[ ! -x $work/golden-exactgelu || $here/tools/golden.cpp -nt $work/golden-exactgelu ]]; then
  link "$work/golden-exactgelu" "$exact/build/ggml/src"
fi

# 3. Models, goldens: for each prompt of tinybpe.PROMPTS (BOS + its tokens), the logits over
#    the prompt and 64 greedy ids, in NAME_golden.bin, NAME_golden_p2.bin, NAME_golden_p3.bin.
families="llama2 llama31 llama32 qwen2 qwen3 gemma2 gemma3 phi3 gpt2"
gelu_families="gemma2 gemma3 gpt2"
n_prompts=$(py -c 'import tinybpe; print(len(tinybpe.PROMPTS))')
name() { py -c "import tinybpe; print(tinybpe.golden_name('$1', $2))"; }  # name STEM PROMPT_INDEX
rm -f "$work"/*.log  # the warnings counted in CROSSCHECK.txt are this run's
py "$here/tools/gen_gguf.py" "$here" >/dev/null
for ((p = 0; p < n_prompts; p++)); do
  ids=$(py -c "import tinybpe; print(','.join(map(str, tinybpe.prompt_ids(tinybpe.PROMPTS[$p]))))")
  # llama.cpp's own tokenizer must give the same ids (-p verbatim: --no-escape).
  tok=$("$tree/build/bin/llama-tokenize" -m "$here/llama2.gguf" --ids --log-disable --no-escape \
        -p "$(py -c "import tinybpe; print(tinybpe.PROMPTS[$p])")" 2>/dev/null | tail -n 1 | tr -d '[] ')
  [[ $tok == "$ids" ]] || { echo "make.sh: llama.cpp tokenizes prompt $((p + 1)) as $tok, tinybpe as $ids" >&2; exit 1; }
  for f in $families; do
    "$work/golden" "$here/$f.gguf" "$here/$(name "${f}_golden" $p)" 64 "$ids" 2>"$work/$f.$p.log" ||
      { echo "make.sh: golden $f, prompt $((p + 1)) failed, see $work/$f.$p.log" >&2; exit 1; }
  done
  for f in $gelu_families; do
    "$work/golden-exactgelu" "$here/$f.gguf" "$here/$(name "${f}_exactgelu_golden" $p)" 64 "$ids" 2>"$work/$f.exact.$p.log" ||
      { echo "make.sh: exact-GELU golden $f, prompt $((p + 1)) failed, see $work/$f.exact.$p.log" >&2; exit 1; }
  done
done
py "$here/tools/gen_hf.py" "$here" >"$work/hf.log"
# Hugging Face twins of the GGUF files just written; the BF16 twin's goldens are checked by
# llama.cpp on an F32 GGUF of the same BF16-rounded weights (kept in $work, not here).
py "$here/tools/hf_twins.py" "$here" >"$work/twins.log"
py "$here/tools/hf_twins.py" "$here" --bf16-gguf "$work/qwen3_bf16.gguf"
for ((p = 0; p < n_prompts; p++)); do
  ids=$(py -c "import tinybpe; print(','.join(map(str, tinybpe.prompt_ids(tinybpe.PROMPTS[$p]))))")
  "$work/golden" "$work/qwen3_bf16.gguf" "$work/$(name qwen3_bf16_llamacpp_golden $p)" 64 "$ids" 2>"$work/qwen3_bf16.$p.log" ||
    { echo "make.sh: golden of the BF16-rounded qwen3, prompt $((p + 1)) failed, see $work/qwen3_bf16.$p.log" >&2; exit 1; }
done

# 4. Cross-check llama.cpp against the numpy forward pass; the table is committed.
{
  echo "# llama.cpp (tools/golden.cpp) against tools/ref_gguf.py, float64 numpy, same model files."
  echo "# Logits of the prompt positions (prompt 1: 17 tokens, _p2: 64, _p3: 3); greedy ids teacher-forced over the 64 golden ids."
  echo "# 'vs numpy' emulates ggml's fp16 GELU table (only gemma2, gemma3, gpt2 use GELU); 'exact GELU' computes tanh-GELU. Made by make.sh."
  for ((p = 0; p < n_prompts; p++)); do
    for f in $families; do py "$here/tools/ref_gguf.py" "$here/$f.gguf" "$here/$(name "${f}_golden" $p)"; done
    for f in $gelu_families; do
      py "$here/tools/ref_gguf.py" "$here/$f.gguf" "$here/$(name "${f}_golden" $p)" --exact-gelu
      py "$here/tools/ref_gguf.py" "$here/$f.gguf" "$here/$(name "${f}_exactgelu_golden" $p)" --exact-gelu
    done
  done
  echo "# Hugging Face families: goldens from tools/gen_hf.py (float64 numpy; llama.cpp does not run them)."
  cat "$work/hf.log"
  echo "# Hugging Face twins (tools/hf_twins.py): the converter's view of each directory is its GGUF bit for bit;"
  echo "# transformers' forward pass (float64 numpy) over the directory against the goldens of the GGUF."
  cat "$work/twins.log"
  echo "# llama.cpp on an F32 GGUF of qwen3's weights rounded to BF16, against the BF16 twin's numpy goldens:"
  for ((p = 0; p < n_prompts; p++)); do
    py "$here/tools/hf_twins.py" --compare "$work/$(name qwen3_bf16_llamacpp_golden $p)" "$here/$(name qwen3_bf16_golden $p)"
  done
  echo "# llama.cpp warnings while loading: $(grep -hi 'warn' "$work"/*.log | sort -u | wc -l)"
} | sed "s|$here/||g" >"$here/CROSSCHECK.txt"
cat "$here/CROSSCHECK.txt"
