#!/usr/bin/env bash
# hlm next to llama.cpp at the real shapes of five published models, with
# random weights, in one run: decode (tgN) and 8-token blocks (pp8) by
# `hlm bench` and llama.cpp's `llama-bench` on the same GGUF files,
# alternating, the peak resident memory of each engine generating 16 tokens
# from the same file, and the memory-bandwidth limit of decode.
#
# The shapes (bench/families/gen_shapes.py holds their config.json values;
# `gen_shapes.py --describe NAME` prints one):
#   qwen3-0.6b     qwen3   dim 1024, 28 layers, heads 16/8 of 128, FFN 3072, vocab 151936,
#                          ctx 40960, θ 1e6, q/k norms, tied
#   llama3.2-1b    llama   dim 2048, 16 layers, heads 32/8 of 64, FFN 8192, vocab 128256,
#                          ctx 131072, θ 5e5, llama3 rope ×32 (orig 8192), tied
#   gemma3-1b      gemma3  dim 1152, 26 layers, heads 4/1 of 256, FFN 6912 (GeGLU), vocab 262144,
#                          ctx 32768, θ 1e6 global / 1e4 local, window 512 on 5 of 6 layers,
#                          no rope scaling, q/k norms, pre+post norms, no soft-caps, tied
#   phi3-mini-4k   phi3    dim 3072, 32 layers, heads 32/32 of 96, FFN 8192 (fused), vocab 32064,
#                          ctx 4096, θ 1e4, no LongRoPE, sliding_window 2047 (both engines
#                          ignore it), untied
#   llama3.1-8b    llama   dim 4096, 32 layers, heads 32/8 of 128, FFN 14336, vocab 128256,
#                          ctx 131072, θ 5e5, llama3 rope ×8 (orig 8192), untied
# all with RMSNorm (eps 1e-6 Qwen3/Gemma-3, 1e-5 the others) and the
# vocabulary of llama.cpp's models/ggml-vocab-*.gguf of the same size.
#
# Files: gen_shapes.py writes NAME-f16.gguf (matrices F16, std 0.02; norms
# ~1), llama.cpp's llama-quantize makes NAME-q8_0.gguf and NAME-q4_k_m.gguf
# from it; the F16 file is kept (and measured) for the shapes of 1B or less
# and deleted once quantized for the others. Files already made are not
# made again (resumable). Everything lives in $HLM_PERF_WORK/families.
#
#   usage (from the repository root):
#     bench/families.sh [shapes…]     default: all five, the 8B last
#   environment:
#     TYPES="q8_0 q4_k_m"   types to measure (default: f16 q8_0 q4_k_m for
#                           the ≤1B shapes, q8_0 q4_k_m for the others)
#     THREADS=2             threads of both engines
#     TG                    decode tokens (default: 128 for ≤1B, 32 for the others)
#     POLL=0                llama-bench --poll (see bench/sidebyside.sh)
#     ROUNDS=1              rounds of the speed tests: each round runs
#                           llama.cpp's tg, hlm's tg, llama.cpp's pp8,
#                           hlm's pp8, so the two engines alternate; the
#                           table shows each engine's median over the
#                           rounds, and the rounds' values and per-round
#                           ratios follow it (this machine's neighbours
#                           move a single run by 10–40%)
#     FILES_ONLY=1          make the files, measure nothing
#     KEEP_F16=1            keep the F16 files of the larger shapes
#     PROFILE=1             after each row where hlm falls short of the
#                           targets, `hlm bench --cpuprofile` of the short
#                           test and `go tool pprof -top` of it (stderr, and
#                           $work/families/prof/)
#     HLM_PERF_WORK         work directory (default /tmp/hlm-perf)
#     ISA=avx2              stand in for an AVX2-only CPU (a Zen 3) on an
#                           AVX-512 host: hlm at its avx2 level
#                           (HLM_KERNELS=avx2) against llama-bench and
#                           llama-simple built without AVX-512
#                           (-DGGML_NATIVE=OFF -DGGML_AVX2=ON …; built once,
#                           ~5 min, in $HLM_PERF_WORK/llama.cpp-avx2). Both
#                           engines run the instructions an AVX2 CPU has, on
#                           this host's cores, caches and memory: the
#                           compute-bound blocks (pp8) stand for the AVX2
#                           kind's; the decode ratios follow this host's
#                           bandwidth, not the other kind's
#
# Output: progress on stderr; on stdout the date, load, CPU and commit, a
# Markdown table, with ROUNDS > 1 each round's values, and the read
# bandwidth measured before each shape (the benchmark of docs/BENCHMARKS.md
# "Memory bandwidth").
#
# Targets (the verdict column): decode ≥ 1.05× and pp8 ≥ 1.5× llama.cpp's
# t/s, peak RSS ≤ 1.05× llama.cpp's (since 2026-11-29; 1.0 and 1.1 before).
#
# Peak RSS: `/usr/bin/time -v`'s maximum resident set size of
#   hlm generate --model F --prompt P --max-tokens 16 --temperature 0 --threads T
#   llama-simple -m F -n 16 P        (greedy; n_ctx = prompt + 16 tokens)
# both memory-map the file, so the weights' pages count once each. Their
# wall-clock times are the start-up table after the main one: loading,
# which for hlm includes packing the matrices its kernel level reads
# packed (tensor/pack.go: at the AVX-512 levels every Q8_0 and Q4_0
# matrix, at avx512-zen4 also the K-quant ones of rows of 11,008 or
# more; behind the first products since 2026-12-02), the prompt and 16
# tokens.
set -euo pipefail
root=$(pwd)
perf=$(cd "$(dirname "$0")/../../shared/perf" && pwd)
work=${HLM_PERF_WORK:-/tmp/hlm-perf}
fam=$work/families
mkdir -p "$fam"
log() { echo "[$(date -u +%T)] $*" >&2; }
lc=$("$perf/llamacpp.sh")
export PYTHONPATH=$lc/../../gguf-py
# lb: the llama-bench and llama-simple measured (lc keeps llama-quantize).
lb=$lc isa=native
case ${ISA:-} in
  "") ;;
  avx2)
    grep -qw avx2 /proc/cpuinfo || { echo "families.sh: ISA=avx2 needs a CPU with AVX2" >&2; exit 2; }
    lb=$work/llama.cpp-avx2/bin isa="avx2 (stand-in: hlm HLM_KERNELS=avx2, llama.cpp without AVX-512)"
    if [[ ! -x $lb/llama-bench || ! -x $lb/llama-simple ]]; then
      log "building llama-bench and llama-simple for AVX2 only in $work/llama.cpp-avx2 (once, ~5 min)"
      { cmake -S "$lc/../.." -B "$work/llama.cpp-avx2" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF \
          -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=OFF \
          -DLLAMA_CURL=OFF -DBUILD_SHARED_LIBS=OFF &&
        cmake --build "$work/llama.cpp-avx2" -j"$(nproc)" --target llama-bench llama-simple; } >"$work/llama.cpp-avx2.log" 2>&1 ||
        { echo "families.sh: the AVX2 llama.cpp build failed; last lines of $work/llama.cpp-avx2.log:" >&2; tail -n 20 "$work/llama.cpp-avx2.log" >&2; exit 1; }
    fi
    export HLM_KERNELS=avx2
    ;;
  *) echo "families.sh: ISA must be empty (this CPU's own instructions) or avx2, not '$ISA'" >&2; exit 2 ;;
esac
py=/usr/bin/python3
gen=$root/bench/families/gen_shapes.py
threads=${THREADS:-2}
rounds=${ROUNDS:-1}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "families.sh: ROUNDS must be a positive whole number, not '$rounds'" >&2; exit 2; }
rounds_log=()
poll=(); [[ -n ${POLL:-} ]] && poll=(--poll "$POLL")
prompt="Once upon a time, there was a little model that was small."
shapes=${*:-qwen3-0.6b llama3.2-1b gemma3-1b phi3-mini-4k llama3.1-8b}
small() { case $1 in qwen3-0.6b | llama3.2-1b | gemma3-1b) return 0;; *) return 1;; esac; }
types_of() { if [[ -n ${TYPES:-} ]]; then echo "$TYPES"; elif small "$1"; then echo "f16 q8_0 q4_k_m"; else echo "q8_0 q4_k_m"; fi; }

# files NAME: make the files of NAME that are missing.
files() {
  local s=$1 f16=$fam/$1-f16.gguf t g need=()
  for t in $(types_of "$s"); do [[ -s $fam/$s-$t.gguf ]] || need+=("$t"); done
  [[ ${#need[@]} -eq 0 ]] && return 0
  if [[ ! -s $f16 ]]; then
    log "$s: writing $f16 ($($py "$gen" --describe "$s"))"
    df -h "$fam" | tail -1 >&2
    $py "$gen" "$s" "$f16"
  fi
  for t in "${need[@]}"; do
    [[ $t == f16 ]] && continue
    g=$fam/$s-$t.gguf
    log "$s: llama-quantize $t"
    "$lc/llama-quantize" "$f16" "$g.part" "${t^^}" "$threads" >"$fam/$s-$t.quantize.log" 2>&1 ||
      { log "$s: llama-quantize $t failed: $(tail -3 "$fam/$s-$t.quantize.log")"; rm -f "$g.part"; continue; }
    mv "$g.part" "$g"
  done
  if ! small "$s" && [[ -z ${KEEP_F16:-} && " $(types_of "$s") " != *" f16 "* ]]; then
    log "$s: deleting $f16"
    rm -f "$f16"
  fi
}

# ts TEST: the mean t/s of the Markdown row for TEST (both tools print "| … | TEST | mean ± sd |").
ts() { awk -F'|' -v t="$1" 'NF>3 {x=$(NF-2); gsub(/ /,"",x); if (x==t) {y=$(NF-1); gsub(/ /,"",y); split(y,a,"±"); print a[1]}}'; }
# median V…: the median of the values, empty when one is missing (a failed run).
median() {
  local v
  for v in "$@"; do [[ -n $v ]] || return 0; done
  [[ $# -gt 0 ]] && calc "f'{__import__(\"statistics\").median([$(IFS=,; echo "$*")]):.2f}'"
}
# ratios "H…" "L…": the per-round ratios H_i/L_i and their median, e.g.
# "1.12/1.10/1.04 (median 1.10)": alternated rounds pair the two engines
# minutes apart, so their ratios are steadier than the medians' ratio when
# the host drifts through a run.
ratios() {
  calc "(lambda h, l: '/'.join(f'{a/b:.2f}' for a, b in zip(h, l)) + f' (median {__import__(\"statistics\").median([a/b for a, b in zip(h, l)]):.2f})')([$(echo $1 | tr ' ' ,)], [$(echo $2 | tr ' ' ,)])"
}
# calc EXPR: a Python expression of numbers, or "-" when one is missing.
calc() { $py -c "print($1)" 2>/dev/null || echo -; }
# rss CMD…: peak resident MiB of CMD (its output in $fam/last.log), or
# "fail"; its wall-clock seconds go to $fam/wall ("-" when it failed).
rss() {
  if /usr/bin/time -v -o "$fam/time.log" "$@" >"$fam/last.log" 2>&1; then
    awk '/Elapsed \(wall clock\)/ {n = split($NF, a, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + a[i]; printf "%.2f", s}' "$fam/time.log" >"$fam/wall"
    awk '/Maximum resident set size/ {printf "%.0f", $NF/1024}' "$fam/time.log"
  else
    echo - >"$fam/wall"
    echo fail
  fi
}
# weight bytes one decode step reads: every tensor but an untied token_embd (one row of it is read).
step_bytes() {
  $py - "$1" <<'EOF'
import sys, gguf
r = gguf.GGUFReader(sys.argv[1])
names = {t.name for t in r.tensors}
print(sum(int(t.n_bytes) for t in r.tensors if not (t.name == "token_embd.weight" and "output.weight" in names)))
EOF
}
bandwidth() { # the host's, at the fastest level (not ISA's)
  env -u HLM_KERNELS "$work/tensor.test" -test.run='^$' -test.bench='^BenchmarkReadBandwidth$' -test.benchtime=8x 2>/dev/null |
    awk '/GB\/s/ {for (i=1;i<=NF;i++) if ($i=="GB/s") print $(i-1)}' | tail -1
}
verdict() { # tg ratio, pp ratio, rss ratio
  $py - "$@" <<'EOF'
import sys
names, lim = ("tg", "pp8", "RSS"), (lambda x: x >= 1.05, lambda x: x >= 1.5, lambda x: x <= 1.05)
out = []
for n, f, v in zip(names, lim, sys.argv[1:]):
    try:
        out.append(n + (" ✓" if f(float(v)) else " ✗"))
    except ValueError:
        out.append(n + " ?")
print(", ".join(out))
EOF
}

log "building hlm and the bandwidth benchmark"
go build -o "$work/hlm" ./cmd/hlm
go test -c -o "$work/tensor.test" ./tensor

for s in $shapes; do files "$s"; done
[[ -n ${FILES_ONLY:-} ]] && { ls -la "$fam" >&2; exit 0; }

start=$(date +%s)
echo "$(date -u +%FT%TZ) $(uptime | sed 's/.*load/load/')"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') ($(awk -F'\t*: ' '$1 == "cpu family" && !f {f = $2} $1 == "model" && !m {m = $2} END {print "family " f ", model " m}' /proc/cpuinfo)), $(nproc) cores; hlm $(git -C "$root" describe --always --dirty); llama.cpp $(cd "$lc/../.." && git log -1 --format=%h); $threads threads; instructions: $isa; hlm's kernel level: $("$work/hlm" bench -p 1 -n 0 -r 1 -t 1 2>/dev/null | sed -n 's/^kernels: //p')"
echo
printf '| model | type | GiB | GB read per token | llama.cpp tg | hlm tg | hlm/llama.cpp | llama.cpp pp8 | hlm pp8 | hlm/llama.cpp | llama.cpp peak RSS MiB | hlm peak RSS MiB | hlm/llama.cpp | read GB/s | llama.cpp tg × bytes | hlm tg × bytes | targets (tg ≥ 1.05, pp8 ≥ 1.5, RSS ≤ 1.05) |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n'
bws=() walls=()
for s in $shapes; do
  tg=${TG:-$(small "$s" && echo 128 || echo 32)}
  log "$s: read bandwidth"
  bw=$(bandwidth); bws+=("$s $bw $(date -u +%T) $(uptime | sed 's/.*load average: //')")
  for t in $(types_of "$s"); do
    g=$fam/$s-$t.gguf
    if [[ ! -s $g ]]; then
      printf '| %s | %s | | no file (llama-quantize failed: see %s) |||||||||||||||\n' "$s" "$t" "$s-$t.quantize.log"
      continue
    fi
    gib=$(calc "f'{$(stat -c %s "$g")/2**30:.2f}'")
    sb=$(step_bytes "$g")
    ltgs=() htgs=() lpps=() hpps=()
    : >"$fam/lerr.log"; : >"$fam/herr.log"
    for ((round = 1; round <= rounds; round++)); do
      of=""; ((rounds > 1)) && of=" (round $round of $rounds)"
      log "$s $t: tg$tg llama.cpp$of"
      ltgs+=("$("$lb/llama-bench" -m "$g" -t "$threads" "${poll[@]}" -p 0 -n "$tg" -r 3 2>>"$fam/lerr.log" | ts "tg$tg")") || true
      log "$s $t: tg$tg hlm$of"
      htgs+=("$("$work/hlm" bench -m "$g" -t "$threads" -p 0 -n "$tg" -r 3 2>>"$fam/herr.log" | ts "tg$tg")") || true
      log "$s $t: pp8 llama.cpp$of"
      lpps+=("$("$lb/llama-bench" -m "$g" -t "$threads" "${poll[@]}" -p 8 -n 0 -r 5 2>>"$fam/lerr.log" | ts pp8)") || true
      log "$s $t: pp8 hlm$of"
      hpps+=("$("$work/hlm" bench -m "$g" -t "$threads" -p 8 -n 0 -r 5 2>>"$fam/herr.log" | ts pp8)") || true
    done
    ltg=$(median "${ltgs[@]}") htg=$(median "${htgs[@]}") lpp=$(median "${lpps[@]}") hpp=$(median "${hpps[@]}")
    ((rounds > 1)) && rounds_log+=("$s $t, tg$tg llama.cpp ${ltgs[*]}, hlm ${htgs[*]}, ratios $(ratios "${htgs[*]}" "${ltgs[*]}"); pp8 llama.cpp ${lpps[*]}, hlm ${hpps[*]}, ratios $(ratios "${hpps[*]}" "${lpps[*]}")")
    log "$s $t: peak RSS llama-simple"
    lrss=$(rss "$lb/llama-simple" -m "$g" -n 16 "$prompt")
    [[ $lrss == fail ]] && log "llama-simple failed: $(tail -3 "$fam/last.log")"
    lwall=$(cat "$fam/wall")
    log "$s $t: peak RSS hlm generate"
    hrss=$(rss "$work/hlm" generate --model "$g" --prompt "$prompt" --max-tokens 16 --temperature 0 --threads "$threads")
    [[ $hrss == fail ]] && log "hlm generate failed: $(tail -3 "$fam/last.log")"
    hwall=$(cat "$fam/wall")
    walls+=("| $s | $t | $lwall | $hwall | $(calc "f'{$hwall/$lwall:.2f}'") |")
    if [[ -z $htg || -z $hpp ]]; then
      why=$(grep -v '^\s*$' "$fam/herr.log" | tail -1 | sed 's/|/\\|/g')
      log "$s $t: hlm bench failed: $why"
      htg=${htg:-"hlm: $why"}
    fi
    [[ -z $ltg || -z $lpp ]] && log "$s $t: llama-bench failed: $(tail -3 "$fam/lerr.log")"
    rtg=$(calc "f'{$htg/$ltg:.2f}'"); rpp=$(calc "f'{$hpp/$lpp:.2f}'"); rrss=$(calc "f'{$hrss/$lrss:.2f}'")
    # decode t/s × bytes read per token, in GB/s and as a share of the read bandwidth
    lbw=$(calc "f'{$ltg*$sb/1e9:.1f} GB/s ({$ltg*$sb/1e9/$bw:.0%})'")
    hbw=$(calc "f'{$htg*$sb/1e9:.1f} GB/s ({$htg*$sb/1e9/$bw:.0%})'")
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
      "$s" "$t" "$gib" "$(calc "f'{$sb/1e9:.2f}'")" "${ltg:--}" "$htg" "$rtg" "${lpp:--}" "${hpp:--}" "$rpp" \
      "$lrss" "$hrss" "$rrss" "$bw" "$lbw" "$hbw" "$(verdict "$rtg" "$rpp" "$rrss")"
    if [[ -n ${PROFILE:-} ]]; then
      mkdir -p "$fam/prof"
      for test in tg pp; do
        r=$rtg lim=1.05 args=(-p 0 -n "$tg" -r 2); [[ $test == pp ]] && { r=$rpp lim=1.5 args=(-p 8 -n 0 -r 20); }
        if [[ $(calc "int(float('$r') < $lim)") == 1 ]]; then
          p=$fam/prof/$s-$t-$test
          log "$s $t: profiling hlm $test"
          "$work/hlm" bench -m "$g" -t "$threads" "${args[@]}" --cpuprofile "$p.pprof" >/dev/null 2>&1 &&
            go tool pprof -top -nodecount=25 "$work/hlm" "$p.pprof" 2>/dev/null >"$p.txt" && sed "s|^|$s $t $test: |" "$p.txt" >&2
        fi
      done
    fi
  done
done
if ((rounds > 1)); then
  echo
  echo "Rounds (t/s in the order run; the table has the medians):"
  for r in "${rounds_log[@]}"; do echo "- $r"; done
fi
echo
echo "Start-up: the wall-clock seconds of the peak-RSS runs (load the file, read the prompt, generate 16 tokens; one run each; bench/startup.sh measures it over alternated rounds):"
echo
echo "| model | type | llama.cpp s | hlm s | hlm/llama.cpp |"
echo "|---|---|---|---|---|"
for w in "${walls[@]}"; do echo "$w"; done
echo
echo "Read bandwidth (go test -bench=ReadBandwidth -benchtime=8x ./tensor, 2 threads), before each shape:"
for b in "${bws[@]}"; do set -- $b; echo "- $1: $2 GB/s at $3 (load ${*:4})"; done
echo
echo "$(date -u +%FT%TZ) $(uptime | sed 's/.*load/load/'); $(( ($(date +%s) - start) / 60 )) min"
