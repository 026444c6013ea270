#!/usr/bin/env bash
# The llama.cpp backend on an NVIDIA GPU, unattended: what the CPU runs of
# bench/llamacpp.sh and model/llamacpp's tests measured, on the day a GPU
# machine is lent (the `device` tool, where it is available). NOT RUN YET:
# no GPU was available where it was written; every number it prints is new.
#
#   1. builds libllama with CUDA (LIBLLAMA_CUDA=1 internal/libllama/build.sh,
#      with llama-bench, llama-server, llama-quantize, ggml-rpc-server);
#   2. the determinism contract on the GPU: model/llamacpp's tests with the
#      CUDA library (their specs leave ngl at its default: every layer on the
#      GPU), so that what holds there is measured, not assumed — llama.cpp
#      does not promise batch invariance on CUDA (issue #20063);
#   3. makes the files if missing (bench/families/gen_shapes.py, then the
#      CUDA build's llama-quantize): Qwen3-0.6B Q8_0, Llama-3.2-1B Q4_K_M,
#      Llama-3.1-8B Q4_K_M (random weights, real shapes);
#   4. the binding: hlm bench (backend, ngl=99) vs llama-bench -ngl 99;
#   5. server capacity, all layers on the GPU: N = 1, 8, 32, 64 devices
#      against hlm serve on the llama.cpp backend (ngl=99), the same batches
#      by llama.cpp alone (rounds.cpp, ngl 99), and llama-server -np N
#      -ngl 99 as the LLM-only reference — the memory-bound case, where
#      verifying L+1 positions costs about what decoding one does and the
#      hybrid server should break even at a low acceptance;
#   6. two GPUs, when there are: layer and row split.
#
#   usage (from the repository root, on the GPU machine):
#     bench/gpu.sh                    writes everything under $OUT (default /tmp/hlm-gpu)
#   needs: nvidia-smi, the CUDA toolkit (nvcc), cmake, g++, Go ≥ 1.25,
#   python3 with numpy (gen_shapes.py), curl, and llama.cpp's source (the
#   build script clones node-llama-cpp@3.22.1's bundle with npm when it is
#   not in $HLM_PEERS/llama.cpp); a machine without network needs that tree
#   and the Go module cache carried over.
#   environment: DURATION=15s  DEVICES="1 8 32 64"  SHAPES="qwen3-0.6b llama3.2-1b llama3.1-8b"
set -euo pipefail
root=$(pwd)
out=${OUT:-/tmp/hlm-gpu}
mkdir -p "$out"
exec > >(tee "$out/report.md") 2> >(tee "$out/stderr.log" >&2)
log() { echo "[$(date -u +%T)] $*" >&2; }
command -v nvidia-smi >/dev/null || { echo "gpu.sh: no nvidia-smi: this script needs an NVIDIA GPU" >&2; exit 1; }
command -v nvcc >/dev/null || [[ -x /usr/local/cuda/bin/nvcc ]] || { echo "gpu.sh: no nvcc: install the CUDA toolkit" >&2; exit 1; }
export PATH=$PATH:/usr/local/cuda/bin
dur=${DURATION:-15s}
devices=${DEVICES:-1 8 32 64}
shapes=${SHAPES:-qwen3-0.6b llama3.2-1b llama3.1-8b}
threads=$(nproc)

echo "# bench/gpu.sh — $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | sed 's/^/- GPU: /'
echo "- CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores"
echo "- hlm $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo

log "1. libllama with CUDA (this takes a while: CUDA kernels for every quantization type)"
lib=$(LIBLLAMA_CUDA=1 LIBLLAMA_TARGETS="llama-bench llama-server llama-quantize ggml-rpc-server" internal/libllama/build.sh)
bin=$(dirname "$lib")
export HLM_LLAMA_LIB=$lib
go build -o "$out/hlm" ./cmd/hlm
go build -o "$out/capacity" ./bench/capacity
g++ -O2 -std=c++17 -I"$bin/include" bench/llamacpp/rounds.cpp -L"$bin" -lllama -lggml -lggml-base -Wl,-rpath,"$bin" -o "$out/rounds"
echo "- libllama: $lib"
echo

log "2. the determinism contract on the GPU"
echo "## Determinism on the GPU (model/llamacpp's tests, every layer on the GPU)"
echo
echo '```'
go test -count=1 -v -run 'TestDeterminism|TestFamilies|TestMoreSessionsThanSlots' ./model/llamacpp 2>&1 | grep -E '^(=== RUN|--- |\s+\S+_test\.go:|ok|FAIL|PASS)' || true
echo '```'
echo
log "   and hlm serve end to end (losslessness, every method)"
echo '```'
go test -count=1 -run 'TestLlamaCpp' ./cloud 2>&1 | tail -20 || true
echo '```'
echo

log "3. files"
work=$out/families
mkdir -p "$work"
gen=$root/bench/families/gen_shapes.py
files=()
for s in $shapes; do
  for t in q8_0 q4_k_m; do
    [[ $s == llama3.1-8b && $t == q8_0 ]] && continue
    g=$work/$s-$t.gguf
    if [[ ! -f $g ]]; then
      f16=$work/$s-f16.gguf
      [[ -f $f16 ]] || { log "   writing $f16"; PYTHONPATH=$bin/../../src/gguf-py python3 "$gen" "$s" "$f16" >&2; }
      log "   llama-quantize $s $t"
      "$bin/llama-quantize" "$f16" "$g" "${t^^}" "$threads" >"$work/$s-$t.quantize.log" 2>&1
    fi
    files+=("$g")
  done
done
rm -f "$work"/*-f16.gguf

log "4. the binding"
echo "## The binding on the GPU: hlm bench (llama.cpp backend, ngl=99) vs llama-bench -ngl 99"
echo
echo "| file | test | llama-bench t/s | hlm bench t/s | ratio |"
echo "|---|---|---:|---:|---:|"
for g in "${files[@]}"; do
  for test in "-p 0 -n 128" "-p 8 -n 0" "-p 512 -n 0"; do
    a=$("$bin/llama-bench" -m "$g" $test -ngl 99 -r 3 -o json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["avg_ts"])')
    b=$("$out/hlm" bench --model "$g@llama.cpp@ngl=99@repack=on@c=1024" $test -r 3 -o json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["avg_ts"])')
    python3 -c "import sys; a,b=float('$a'),float('$b'); print(f'| $(basename "$g") | ${test// /} | {a:.1f} | {b:.1f} | {b/a:.3f} |')"
  done
done
echo

log "5. server capacity, every layer on the GPU"
jsonl=$out/capacity.jsonl
: >"$jsonl"
for g in "${files[@]}"; do
  for n in $devices; do
    log "   $(basename "$g") N=$n"
    "$out/capacity" serve --llm "$g@llama.cpp@ngl=99@np=$n@c=512@ub=$((n * 5 > 512 ? n * 5 : 512))" --devices "$n" --duration "$dur" --ctx 512 >>"$jsonl" || true
    "$out/rounds" "$g" "$n" 4 "${dur%s}" 32 "$threads" 512 >>"$jsonl" || true
    port=$((18000 + RANDOM % 1000))
    "$bin/llama-server" -m "$g" -ngl 99 -np "$n" -c $((n * 512)) --host 127.0.0.1 --port "$port" --no-webui >"$out/llama-server.log" 2>&1 &
    pid=$!
    for _ in $(seq 1200); do curl -fs "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break; sleep 0.25; done
    "$out/capacity" llama-server --url "http://127.0.0.1:$port" --devices "$n" --duration "$dur" --model "$(basename "$g" .gguf)" --pid "$pid" --vocab-from "$g" >>"$jsonl" || true
    kill "$pid"; wait "$pid" 2>/dev/null || true
  done
done
echo "## Server capacity on the GPU"
"$out/capacity" report "$jsonl"
echo

gpus=$(nvidia-smi -L | wc -l)
if ((gpus >= 2)); then
  log "6. two GPUs"
  echo "## Several GPUs (hlm bench, llama.cpp backend)"
  echo
  for g in "${files[@]}"; do
    for sm in layer row; do
      echo "- $(basename "$g") sm=$sm: $("$out/hlm" bench --model "$g@llama.cpp@ngl=99@sm=$sm@ts=1,1@c=1024" -p 8 -n 128 -r 3 2>/dev/null | grep -E '^\|.*(pp8|tg128)' | tr '\n' ' ')"
    done
  done
fi
log "done: $out/report.md"
