#!/usr/bin/env bash
# hlm's llama.cpp backend (model/llamacpp) next to llama.cpp itself and to
# hlm's own engine, side by side in one run, at the real shapes
# bench/families.sh writes (random weights), for docs/BENCHMARKS.md
# ("hlm serve on llama.cpp"):
#
#   1. The binding: `hlm bench` on the llama.cpp backend against
#      `llama-bench` linked to the same libllama, same file, same threads:
#      decode (tgN) and 8-token blocks (pp8), alternating. llama-bench
#      always repacks weights, so the backend runs with repack=on here; its
#      default (repack=off, for the determinism contract) is measured too.
#      llama-bench runs with -fa 0, the backend's default: its own (auto)
#      turns flash attention on where the library has the kernels, which
#      on the CPU made its pp8 1.45× the backend's — settings, not binding.
#   2. Server capacity: N simulated devices (blocks of L = 4 fixed random
#      drafts, so every round verifies 5 positions whatever is accepted)
#      against hlm serve's code on hlm's engine, on the llama.cpp backend,
#      the same batches run by llama.cpp alone (bench/llamacpp/rounds.cpp:
#      what the Go side adds), and, as the LLM-only reference,
#      `llama-server -np N` decoding for N clients; verified positions/s,
#      rounds/s, p50/p99 round latency, peak RSS; then the committed
#      tokens/s at acceptance 0.5/0.7/0.9 and the break-even acceptance
#      (go run ./bench/capacity report).
#
#   usage (from the repository root):
#     bench/llamacpp.sh [files…]   default: qwen3-0.6b-q8_0 llama3.2-1b-q4_k_m
#   environment:
#     THREADS=2  DEVICES="1 8 32"  DURATION=20s  ROUNDS=2 (part 1 alternations)
#     TG=64 (part 1 decode tokens)  CTX=512 (positions per session in part 2)
#     HLM_PERF_WORK=/tmp/hlm-perf (the files: $HLM_PERF_WORK/families, made by
#       FILES_ONLY=1 TYPES="q8_0 q4_k_m" bench/families.sh qwen3-0.6b llama3.2-1b)
#     PART=1|2   run one part only
#     POLL=0     llama-bench's and llama-server's --poll (their threads sleep
#                instead of spinning while they wait: on a machine shared with
#                other jobs the default spinning collapses, see
#                bench/sidebyside.sh; POLL=50 is llama.cpp's default)
#     OMP_WAIT_POLICY=PASSIVE  for every llama.cpp process here (llama-bench,
#                llama-server, rounds, hlm's backend: one libgomp): on a
#                machine shared with other jobs, OpenMP's spinning barriers
#                collapse too (a 5-token round of Qwen3-0.6B Q8_0, 2 threads,
#                load 6: 582 ms spinning, 245 ms passive, 208 ms on 1 thread);
#                set it empty to keep libgomp's default
# Output: progress on stderr; on stdout the date, load, CPU and commit, and
# Markdown tables. Builds what it needs: libllama with llama-bench and
# llama-server (internal/libllama/build.sh), hlm, bench/capacity, rounds.
set -euo pipefail
root=$(pwd)
work=${HLM_PERF_WORK:-/tmp/hlm-perf}
fam=$work/families
out=$work/llamacpp
mkdir -p "$out"
log() { echo "[$(date -u +%T)] $*" >&2; }
threads=${THREADS:-2}
devices=${DEVICES:-1 8 32}
dur=${DURATION:-20s}
rounds=${ROUNDS:-2}
tg=${TG:-64}
ctx=${CTX:-512}
poll=${POLL:-0}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY-PASSIVE}
files=("$@")
[[ ${#files[@]} -gt 0 ]] || files=(qwen3-0.6b-q8_0 llama3.2-1b-q4_k_m)

log "libllama with llama-bench and llama-server"
lib=$(LIBLLAMA_TARGETS="llama-bench llama-server" internal/libllama/build.sh)
bin=$(dirname "$lib")
export HLM_LLAMA_LIB=$lib
log "building hlm, bench/capacity and rounds"
go build -o "$out/hlm" ./cmd/hlm
go build -o "$out/capacity" ./bench/capacity
g++ -O2 -std=c++17 -I"$bin/include" bench/llamacpp/rounds.cpp -L"$bin" -lllama -lggml -lggml-base -Wl,-rpath,"$bin" -o "$out/rounds"

echo "# bench/llamacpp.sh — $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "- CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs) (family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2 | xargs), model $(grep -m1 '^model\s' /proc/cpuinfo | cut -d: -f2 | xargs)), $(nproc) cores; threads $threads"
echo "- load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- hlm $(git rev-parse --short HEAD) (kernel level $("$out/hlm" bench -p 1 -n 0 -r 1 -t 1 2>/dev/null | sed -n 's/^kernels: //p')); libllama $lib; llama-bench and llama-server with --poll $poll; OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-unset}"
echo

for f in "${files[@]}"; do
  [[ -f $fam/$f.gguf ]] || { echo "missing $fam/$f.gguf: FILES_ONLY=1 TYPES=\"q8_0 q4_k_m\" bench/families.sh makes it" >&2; exit 1; }
done

if [[ ${PART:-1} == 1 || -z ${PART:-} ]]; then
  echo "## The binding: hlm bench on the llama.cpp backend vs llama-bench (same libllama)"
  echo
  echo "| file | test | llama-bench t/s | hlm bench, llama.cpp backend, repack=on t/s | ratio | hlm bench, backend default (repack=off) t/s |"
  echo "|---|---|---:|---:|---:|---:|"
  for f in "${files[@]}"; do
    g=$fam/$f.gguf
    for test in "-p 0 -n $tg" "-p 8 -n 0"; do
      lb=() hb=() hd=()
      for r in $(seq "$rounds"); do
        log "$f $test round $r: llama-bench"
        lb+=("$("$bin/llama-bench" -m "$g" $test -fa 0 -t "$threads" --poll "$poll" -r 3 -o json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["avg_ts"])')")
        log "$f $test round $r: hlm bench (repack=on)"
        hb+=("$("$out/hlm" bench --model "$g@llama.cpp@repack=on@c=$ctx" $test -t "$threads" -r 3 -o json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["avg_ts"])')")
        log "$f $test round $r: hlm bench (repack=off)"
        hd+=("$("$out/hlm" bench --model "$g@llama.cpp@c=$ctx" $test -t "$threads" -r 3 -o json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["avg_ts"])')")
      done
      name=$([[ $test == "-p 0"* ]] && echo "tg$tg" || echo pp8)
      python3 - "$f" "$name" "${lb[*]}" "${hb[*]}" "${hd[*]}" <<'EOF'
import statistics, sys
f, name, lb, hb, hd = sys.argv[1], sys.argv[2], *[list(map(float, a.split())) for a in sys.argv[3:]]
m = lambda x: statistics.median(x)
fmt = lambda x: f"{m(x):.2f} ({', '.join(f'{v:.2f}' for v in x)})"
print(f"| {f} | {name} | {fmt(lb)} | {fmt(hb)} | {m(hb)/m(lb):.3f} | {fmt(hd)} |")
EOF
    done
  done
  echo
  echo "(medians over $rounds alternated rounds, each round's value in parentheses; each value is the mean of 3 repetitions)"
  echo
fi

if [[ ${PART:-2} == 2 || -z ${PART:-} ]]; then
  jsonl=$out/capacity.jsonl
  : >"$jsonl"
  for f in "${files[@]}"; do
    g=$fam/$f.gguf
    for n in $devices; do
      log "$f N=$n: hlm serve on hlm's engine"
      "$out/capacity" serve --llm "$g" --devices "$n" --duration "$dur" --threads "$threads" --ctx "$ctx" >>"$jsonl" || log "failed"
      log "$f N=$n: hlm serve on the llama.cpp backend"
      "$out/capacity" serve --llm "$g@llama.cpp@np=$n@c=$ctx@t=$threads" --devices "$n" --duration "$dur" --ctx "$ctx" >>"$jsonl" || log "failed"
      log "$f N=$n: the same batches by llama.cpp alone"
      "$out/rounds" "$g" "$n" 4 "${dur%s}" 32 "$threads" "$ctx" >>"$jsonl" || log "failed"
      log "$f N=$n: llama-server -np $n (LLM-only)"
      port=$((18000 + RANDOM % 1000))
      "$bin/llama-server" -m "$g" -np "$n" -c $((n * ctx)) -t "$threads" -tb "$threads" --poll "$poll" --host 127.0.0.1 --port "$port" --no-webui >"$out/llama-server.log" 2>&1 &
      pid=$!
      for _ in $(seq 600); do curl -fs "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break; sleep 0.2; done
      "$out/capacity" llama-server --url "http://127.0.0.1:$port" --devices "$n" --duration "$dur" --model "$f" --pid "$pid" --vocab-from "$g" >>"$jsonl" || log "llama-server run failed: $(tail -3 "$out/llama-server.log")"
      kill "$pid"; wait "$pid" 2>/dev/null || true
    done
  done
  echo "## Server capacity (threads $threads, $dur per row, sessions of $ctx positions)"
  "$out/capacity" report "$jsonl"
  echo
  echo "- load after: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
