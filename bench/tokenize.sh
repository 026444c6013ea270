#!/usr/bin/env bash
# hlm tokenize next to llama.cpp's llama-tokenize on the same text and the
# same vocabularies, in one run: 10 MB of English and code (the first
# 10,000,000 bytes of ../shared/data's Alpaca, CREAK and StrategyQA files —
# English in JSON — followed by this repository's Go sources and Markdown;
# no text repeated), llama.cpp's own GGUF vocabularies (models/ggml-vocab-*
# in its source tree), both commands printing every id (llama-tokenize with
# --no-escape: by default it reads a "\n" in the text as a newline). Each
# engine runs RUNS times, alternating; the table has the median wall time,
# the median time of the same command on a 1-byte text (loading and
# start-up), the throughput of the difference, and whether the two printed
# identical ids.
#
#   usage (from the repository root):
#     bench/tokenize.sh [vocabularies…]       default: gpt-2 llama-bpe qwen2
#   environment:
#     RUNS=3            runs of each command
#     HLM_PERF_WORK     work directory (default /tmp/hlm-perf)
set -euo pipefail
shared=$(cd "$(dirname "$0")/../../shared" && pwd)
work=${HLM_PERF_WORK:-/tmp/hlm-perf}; mkdir -p "$work"
bin=$("$shared/perf/llamacpp.sh")
models=$(dirname "$(dirname "$bin")")/models
go build -o "$work/hlm" ./cmd/hlm
runs=${RUNS:-3}
vocabs=("$@"); [[ ${#vocabs[@]} -gt 0 ]] || vocabs=(gpt-2 llama-bpe qwen2)

text=$work/tokenize-10MB.txt
if [[ ! -f $text ]]; then
  # (head closes the pipe once it has its bytes: the writers' SIGPIPE is expected.)
  { cat "$shared/data/alpaca/alpaca_5000.json" "$shared/data/creak/train.json" "$shared/data/strategyqa/train.json"
    git ls-files '*.go' '*.md' | xargs cat; } 2>/dev/null | head -c 10000000 >"$text" || true
fi
printf 'x' >"$work/tokenize-1B.txt"
[[ $(wc -c <"$text") -eq 10000000 ]] || { echo "text is not 10,000,000 bytes" >&2; exit 1; }

# secs CMD...: wall seconds of one run, output to $work/out.
secs() { local s e; s=$(date +%s.%N); "$@" >"$work/out" 2>/dev/null; e=$(date +%s.%N); python3 -c "print($e-$s)"; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
lt() { "$bin/llama-tokenize" -m "$models/ggml-vocab-$1.gguf" -f "$2" --ids --log-disable --no-bos --no-escape --no-parse-special; }
hl() { "$work/hlm" tokenize --model "$models/ggml-vocab-$1.gguf" -f "$2" --ids --no-bos --no-parse-special; }

echo "$(date -u +%FT%TZ) $(uptime | sed 's/.*load/load/'); text: 10,000,000 bytes; $runs runs each"
echo "| vocabulary | engine | wall (s) | start-up (s) | MB/s without start-up | tokens | ids identical |"
echo "|---|---|---|---|---|---|---|"
for v in "${vocabs[@]}"; do
  lw=(); hw=(); l0=(); h0=()
  for ((i = 0; i < runs; i++)); do
    lw+=("$(secs lt "$v" "$text")"); cp "$work/out" "$work/lt.ids"
    hw+=("$(secs hl "$v" "$text")"); cp "$work/out" "$work/hl.ids"
    l0+=("$(secs lt "$v" "$work/tokenize-1B.txt")")
    h0+=("$(secs hl "$v" "$work/tokenize-1B.txt")")
  done
  same=no; cmp -s "$work/lt.ids" "$work/hl.ids" && same=yes
  n=$(tr -cd ',' <"$work/hl.ids" | wc -c); n=$((n + 1))
  for e in llama.cpp hlm; do
    if [[ $e == llama.cpp ]]; then w=$(median "${lw[@]}"); z=$(median "${l0[@]}"); else w=$(median "${hw[@]}"); z=$(median "${h0[@]}"); fi
    mbs=$(python3 -c "print(f'{10/max($w-$z,1e-9):.2f}')")
    printf '| %s | %s | %.2f | %.2f | %s | %s | %s |\n' "$v" "$e" "$w" "$z" "$mbs" "$n" "$same"
  done
done
