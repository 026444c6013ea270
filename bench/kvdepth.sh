#!/usr/bin/env bash
# Decode and verification blocks over a long KV cache, hlm next to
# llama.cpp in one run: tgN and ppP (P tokens in one pass, what a server's
# round verifies) after D positions already in the cache (`hlm bench -d`,
# llama-bench's -d), hlm
# with its float32 cache (its default), its half cache (@ctk=f16@ctv=f16)
# and its Q8_0 cache (@ctk=q8_0@ctv=q8_0), llama.cpp with its default F16
# cache and with its Q8_0 cache (-ctk q8_0 -ctv q8_0, which needs its flash
# attention, -fa 1); and the peak resident memory of each at the deepest
# depth.
#
# The files are those bench/families.sh writes (random weights at the real
# shapes); run it first for the shape. llama.cpp's tools come from
# ../shared/perf/llamacpp.sh.
#
#   usage (from the repository root):
#     bench/kvdepth.sh [shape-type …]     default: qwen3-0.6b-q8_0
#   environment:
#     DEPTHS=0,1024,2048   depths (comma-separated; the peak RSS at the last)
#     TG=32                decode tokens of each test
#     PP=8                 tokens of the block test (0: none)
#     ROUNDS=2             rounds; each runs every cache of CACHES in turn
#     CACHES="f16 f32 q8_0"  the caches: f16 is llama.cpp's default and hlm's
#                          half cache, f32 hlm's default, q8_0 both engines'
#                          Q8_0 cache
#     THREADS=2            threads of both engines
#     HLM_PERF_WORK        work directory (default /tmp/hlm-perf)
#
# Output: the date, CPU and commit, then per round and engine the t/s of
# each depth, then the peak RSS (`/usr/bin/time`'s maximum resident set
# size of one repetition of the deepest test, warm-up skipped).
set -euo pipefail
root=$(pwd)
perf=$(cd "$(dirname "$0")/../../shared/perf" && pwd)
work=${HLM_PERF_WORK:-/tmp/hlm-perf}
depths=${DEPTHS:-0,1024,2048} tg=${TG:-32} pp=${PP:-8} rounds=${ROUNDS:-2} threads=${THREADS:-2}
deepest=${depths##*,}
log() { echo "[$(date -u +%T)] $*" >&2; }
lc=$("$perf/llamacpp.sh")
[[ -x $lc/llama-bench ]] || { echo "kvdepth.sh: no llama-bench in $lc" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "kvdepth.sh: needs /usr/bin/time (Debian package time)" >&2; exit 2; }
log "building hlm"
go build -o "$work/hlm" ./cmd/hlm

echo "$(date -u +%FT%TZ) $(uptime | sed 's/.*load/load/')"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') ($(awk -F'\t*: ' '$1 == "cpu family" && !f {f = $2} $1 == "model" && !m {m = $2} END {print "family " f ", model " m}' /proc/cpuinfo)), $(nproc) cores; hlm $(git -C "$root" describe --always --dirty); llama.cpp $(cd "$lc/../.." && git log -1 --format=%h); $threads threads; hlm's kernel level: $("$work/hlm" bench -p 1 -n 0 -r 1 -t 1 2>/dev/null | sed -n 's/^kernels: //p')"

# rows prints "test t/s" for each row of a Markdown table of either tool.
rows() { awk -F'|' '/ (tg|pp)[0-9]/ {t = $(NF-2); v = $(NF-1); gsub(/^ +| +$/, "", t); gsub(/^ +| +$/, "", v); print "  " t ": " v}'; }

# The systems of each cache type, one a line: "label|engine|options"
# (llama-bench's flags, or hlm's spec suffix).
systems() {
  case $1 in
    f16) printf '%s\n' "llama.cpp (F16 cache)|lc|" "hlm @ctk=f16@ctv=f16|hlm|@ctk=f16@ctv=f16" ;;
    f32) printf '%s\n' "hlm (f32 cache)|hlm|" ;;
    q8_0) printf '%s\n' "llama.cpp -ctk q8_0 -ctv q8_0 -fa 1|lc|-ctk q8_0 -ctv q8_0 -fa 1" "hlm @ctk=q8_0@ctv=q8_0|hlm|@ctk=q8_0@ctv=q8_0" ;;
    *) echo "kvdepth.sh: unknown cache type $1 in CACHES (f16, f32, q8_0)" >&2; return 2 ;;
  esac
}
list=()
for c in ${CACHES:-f16 f32 q8_0}; do
  mapfile -t add < <(systems "$c") && [[ ${#add[@]} -gt 0 ]] || exit 2
  list+=("${add[@]}")
done

# bench_command SYSTEM FILE sets argv to one system's bench command on FILE.
bench_command() {
  local engine opts
  IFS='|' read -r _ engine opts <<<"$1"
  if [[ $engine == lc ]]; then
    # shellcheck disable=SC2206 # opts are flags without spaces
    argv=("$lc/llama-bench" -m "$2" $opts)
  else
    argv=("$work/hlm" bench -m "$2$opts")
  fi
}

for f in "${@:-qwen3-0.6b-q8_0}"; do
  g=$work/families/$f.gguf
  [[ -f $g ]] || { echo "kvdepth.sh: $g is missing: run bench/families.sh ${f%-*} first" >&2; exit 2; }
  echo
  echo "## $f: tg$tg and pp$pp at depths $depths"
  for ((r = 1; r <= rounds; r++)); do
    log "$f round $r"
    for sys in "${list[@]}"; do
      echo "round $r, ${sys%%|*}:"
      bench_command "$sys" "$g"
      "${argv[@]}" -t "$threads" -p "$pp" -n "$tg" -d "$depths" -r 3 2>/dev/null | rows
    done
  done
  echo "peak RSS, tg$tg @ d$deepest:"
  rss() { /usr/bin/time -f '%M' "$@" 2>&1 >/dev/null | tail -1; }
  for sys in "${list[@]}"; do
    bench_command "$sys" "$g"
    echo "  ${sys%%|*}: $(($(rss "${argv[@]}" -t "$threads" -p 0 -n "$tg" -d "$deepest" -r 1 --no-warmup) / 1024)) MiB"
  done
done
