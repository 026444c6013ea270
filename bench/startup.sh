#!/usr/bin/env bash
# Start-up side by side: the wall-clock seconds and peak resident memory
# of loading a model, reading a prompt and generating 16 tokens, greedy,
# for llama.cpp's llama-simple and `hlm generate` on the same GGUF file.
# The engines alternate in each round, so each meets the same host; the
# table has each one's median over the rounds.
#
# The files are bench/families.sh's ($HLM_PERF_WORK/families/NAME-TYPE.gguf;
# make them with `FILES_ONLY=1 TYPES=… bench/families.sh NAMES`).
#
#   usage (from the repository root):
#     bench/startup.sh [shapes…]   default: qwen3-0.6b llama3.2-1b gemma3-1b phi3-mini-4k llama3.1-8b
#   environment:
#     TYPES="q8_0"     types
#     ROUNDS=3         rounds
#     THREADS=2        threads of both engines
#     HLM_PERF_WORK    work directory (default /tmp/hlm-perf)
#     BASE=COMMIT      also run hlm built from COMMIT on the row-major file
#                      in each round (a change measured side by side with
#                      what it changes): a column "base s", and the ratio
#                      of this tree's hlm to it
#
# The page cache matters more than anything here: a round that reads a
# file from disk takes seconds longer, so before the rounds each file is
# read once (cat > /dev/null), and the host's memory should hold the
# file of one shape (an 8B Q8_0: 8.5 GB) besides both engines' memory.
set -euo pipefail
root=$(pwd)
perf=$(cd "$(dirname "$0")/../../shared/perf" && pwd)
work=${HLM_PERF_WORK:-/tmp/hlm-perf}
fam=$work/families
log() { echo "[$(date -u +%T)] $*" >&2; }
lc=$("$perf/llamacpp.sh")
threads=${THREADS:-2}
rounds=${ROUNDS:-3}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "startup.sh: ROUNDS must be a positive whole number, not '$rounds'" >&2; exit 2; }
prompt="Once upon a time, there was a little model that was small."
shapes=${*:-qwen3-0.6b llama3.2-1b gemma3-1b phi3-mini-4k llama3.1-8b}
types=${TYPES:-q8_0}
py=/usr/bin/python3

log "building hlm"
go build -o "$work/hlm" ./cmd/hlm
base=${BASE:-}
if [[ -n $base ]]; then
  log "building hlm $base"
  src=$(mktemp -d)
  git -C "$root" archive "$base" | tar -x -C "$src"
  (cd "$src" && go build -buildvcs=false -o "$work/hlm-base" ./cmd/hlm)
  rm -rf "$src"
  base=$(git -C "$root" rev-parse --short "$base")
fi

# run NAME CMD…: appends "seconds MiB" of CMD to $fam/startup.NAME, or
# "- -" when it failed (its output in $fam/last.log).
run() {
  local name=$1
  shift
  if /usr/bin/time -f "%e %M" -o "$fam/time.log" "$@" >"$fam/last.log" 2>&1; then
    awk '{printf "%s %.0f\n", $1, $2/1024}' "$fam/time.log" >>"$fam/startup.$name"
  else
    log "$name failed: $(tail -2 "$fam/last.log")"
    echo "- -" >>"$fam/startup.$name"
  fi
}
# med COLUMN NAME: the median of column COLUMN of $fam/startup.NAME ("-"
# if any run failed).
med() {
  $py - "$1" "$fam/startup.$2" <<'EOF'
import sys, statistics
col, path = int(sys.argv[1]), sys.argv[2]
try:
    v = [float(l.split()[col]) for l in open(path) if l.strip()]
    m = statistics.median(v) if v else None
    print("-" if m is None else f"{m:.2f}" if col == 0 else f"{m:.0f}")
except (ValueError, OSError):
    print("-")
EOF
}
calc() { $py -c "print($1)" 2>/dev/null || echo -; }

echo "$(date -u +%FT%TZ) $(uptime | sed 's/.*load/load/')"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') ($(awk -F'\t*: ' '$1 == "cpu family" && !f {f = $2} $1 == "model" && !m {m = $2} END {print "family " f ", model " m}' /proc/cpuinfo)), $(nproc) cores; hlm $(git -C "$root" describe --always --dirty); llama.cpp $(cd "$lc/../.." && git log -1 --format=%h); $threads threads; hlm's kernel level: $("$work/hlm" bench -p 1 -n 0 -r 1 -t 1 2>/dev/null | sed -n 's/^kernels: //p'); $rounds rounds"
echo
if [[ -n $base ]]; then
  echo "| model | type | llama.cpp s | hlm s | hlm/llama.cpp | hlm $base s | hlm/hlm $base | llama.cpp MiB | hlm MiB | hlm $base MiB | rounds: llama.cpp / hlm / hlm $base s |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
else
  echo "| model | type | llama.cpp s | hlm s | hlm/llama.cpp | llama.cpp MiB | hlm MiB | rounds: llama.cpp / hlm s |"
  echo "|---|---|---|---|---|---|---|---|"
fi
for s in $shapes; do
  for t in $types; do
    g=$fam/$s-$t.gguf
    if [[ ! -s $g ]]; then
      log "$s $t: no $g (FILES_ONLY=1 TYPES=$t bench/families.sh $s makes it)"
      continue
    fi
    rm -f "$fam"/startup.{llama,hlm,base}
    log "$s $t: reading the file into the page cache"
    cat "$g" >/dev/null
    for ((r = 1; r <= rounds; r++)); do
      log "$s $t: round $r of $rounds"
      run llama "$lc/llama-simple" -m "$g" -n 16 "$prompt"
      run hlm "$work/hlm" generate --model "$g" --prompt "$prompt" --max-tokens 16 --temperature 0 --threads "$threads"
      if [[ -n $base ]]; then run base "$work/hlm-base" generate --model "$g" --prompt "$prompt" --max-tokens 16 --temperature 0 --threads "$threads"; fi
    done
    ls=$(med 0 llama) hs=$(med 0 hlm) lm=$(med 1 llama) hm=$(med 1 hlm)
    each=$(paste -d/ <(cut -d' ' -f1 "$fam/startup.llama") <(cut -d' ' -f1 "$fam/startup.hlm") \
      ${base:+<(cut -d' ' -f1 "$fam/startup.base")} | paste -sd' ' | sed 's| |, |g')
    if [[ -n $base ]]; then
      bs=$(med 0 base) bm=$(med 1 base)
      echo "| $s | $t | $ls | $hs | $(calc "f'{$hs/$ls:.2f}'") | $bs | $(calc "f'{$hs/$bs:.2f}'") | $lm | $hm | $bm | $each |"
    else
      echo "| $s | $t | $ls | $hs | $(calc "f'{$hs/$ls:.2f}'") | $lm | $hm | $each |"
    fi
  done
done
echo
echo "$(date -u +%FT%TZ) $(uptime | sed 's/.*load/load/')"
