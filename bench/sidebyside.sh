#!/usr/bin/env bash
# hlm bench next to llama.cpp's llama-bench on the same GGUF files, in one
# run: the files and the llama.cpp build of ../shared/perf (side-by-side.sh,
# llamacpp.sh), with a thread-count column, Q4_0 as well, and hlm's 8-token
# block with the logits of every position (vb8, what block verification
# computes; llama.cpp's pp8 computes the last position's only).
#
#   usage (from the repository root):
#     bench/sidebyside.sh [shapes…]            default: 15M 42M 110M; also 1.1B
#                                              (TinyLlama's shape: 8.8 GB of files)
#   environment:
#     THREADS="1 2"    thread counts
#     TYPES="f32 q8_0 q4_0 q4_k_m"   (also f16 and bf16; q4_k_m and bf16: written
#                      from the F32 file by llama.cpp's llama-quantize, as
#                      users get them (hlm convert writes no BF16); at 15M
#                      and 42M it falls back to Q5_0 for rows that are not
#                      multiples of 256; a type hlm does not read gives a note row)
#     POLL=0           passed to llama-bench --poll (its threads sleep instead
#                      of spinning while they wait: on a machine shared with
#                      other jobs its default spinning collapses; unset: default)
#     HLM_PERF_WORK    work directory (default /tmp/hlm-perf, as side-by-side.sh)
#
# The real shapes of published models (Qwen3-0.6B, Llama-3.2-1B, Gemma-3-1B,
# Phi-3-mini, Llama-3.1-8B: their architectures, vocabularies, rope scaling
# and windows), with peak resident memory: bench/families.sh.
set -euo pipefail
perf=$(cd "$(dirname "$0")/../../shared/perf" && pwd)
work=${HLM_PERF_WORK:-/tmp/hlm-perf}; mkdir -p "$work"
lc=$("$perf/llamacpp.sh")
go build -o "$work/hlm" ./cmd/hlm
(cd "$perf/gencheckpoint" && go build -o "$work/gencheckpoint" .)
tok=$perf/../models/llama2-tokenizer/tokenizer.bin
shape() { case $1 in
  15M) echo "-dim 288 -hidden 768 -layers 6 -heads 6 -kv 6 -seq 256";;
  42M) echo "-dim 512 -hidden 1376 -layers 8 -heads 8 -kv 8 -seq 1024";;
  110M) echo "-dim 768 -hidden 2048 -layers 12 -heads 12 -kv 12 -seq 1024";;
  1.1B) echo "-dim 2048 -hidden 5632 -layers 22 -heads 32 -kv 4 -seq 2048";; # TinyLlama-1.1B, the papers' draft (4.4 GB in F32)
  *) echo "unknown shape $1" >&2; exit 2;;
esac; }
poll=(); [[ -n ${POLL:-} ]] && poll=(--poll "$POLL")
# ts TEST: the mean t/s of the Markdown row for TEST (both tools print "| … | TEST | mean ± sd |").
ts() { awk -F'|' -v t="$1" 'NF>3 {x=$(NF-2); gsub(/ /,"",x); if (x==t) {y=$(NF-1); gsub(/ /,"",y); split(y,a,"±"); print a[1]}}'; }
ratio() { python3 -c "print(f'{float(\"$1\")/float(\"$2\"):.2f}')" 2>/dev/null || echo -; }
echo "$(date -u +%FT%TZ) $(uptime | sed 's/.*load/load/')"
printf '| shape | type | threads | llama.cpp tg128 | hlm tg128 | hlm/llama.cpp | llama.cpp pp8 | hlm pp8 | hlm/llama.cpp | hlm vb8 | hlm vb8 ÷ tg step |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|\n'
for s in ${@:-15M 42M 110M}; do
  [[ -f $work/rand$s.bin ]] || "$work/gencheckpoint" $(shape "$s") -vocab 32000 -seed 1 -o "$work/rand$s.bin" >/dev/null
  for t in ${TYPES:-f32 q8_0 q4_0 q4_k_m}; do
    g=$work/rand$s-$t.gguf
    if [[ $t == q4_k_m || $t == bf16 ]]; then
      f=$work/rand$s-f32.gguf
      [[ -f $f ]] || "$work/hlm" convert --model "$work/rand$s.bin" --tokenizer "$tok" --out "$f" --type f32 >/dev/null 2>&1
      [[ -s $g ]] || "$lc/llama-quantize" "$f" "$g" "${t^^}" >/dev/null 2>&1 || rm -f "$g"
      if [[ ! -s $g ]]; then
        rm -f "$g"
        printf '| %s | %s | | llama-quantize wrote no file | | | | | | | |\n' "$s" "$t"
        continue
      fi
      # Rows not a multiple of 256 fall back to other GGML types (Q5_0 at
      # 15M and 42M); one hlm does not read: say so and go on.
      if ! why=$("$work/hlm" bench -m "$g" -p 0 -n 1 -r 1 2>&1 >/dev/null); then
        printf '| %s | %s | | %s | | | | | | | |\n' "$s" "$t" "$(echo "$why" | tail -1 | sed 's/.*unsupported model: //; s/|/\\|/g')"
        continue
      fi
    fi
    [[ -f $g ]] || "$work/hlm" convert --model "$work/rand$s.bin" --tokenizer "$tok" --out "$g" --type "$t" >/dev/null 2>&1
    for th in ${THREADS:-1 2}; do
      ltg=$("$lc/llama-bench" -m "$g" -t "$th" "${poll[@]}" -p 0 -n 128 -r 3 2>/dev/null | ts tg128) || true
      lpp=$("$lc/llama-bench" -m "$g" -t "$th" "${poll[@]}" -p 8 -n 0 -r 5 2>/dev/null | ts pp8) || true
      htg=$("$work/hlm" bench -m "$g" -t "$th" -p 0 -n 128 -r 3 2>/dev/null | ts tg128)
      hpp=$("$work/hlm" bench -m "$g" -t "$th" -p 8 -n 0 -r 5 2>/dev/null | ts pp8)
      hvb=$("$work/hlm" bench -m "$g" -t "$th" -p 8 -n 0 -r 5 --all-logits 2>/dev/null | ts vb8)
      # a block of 8 costs 8/vb8 s, a decode step 1/tg128 s
      blk=$(python3 -c "print(f'{8/float(\"$hvb\")*float(\"$htg\"):.2f}')" 2>/dev/null || echo -)
      printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$s" "$t" "$th" \
        "${ltg:--}" "$htg" "$(ratio "$htg" "$ltg")" "${lpp:--}" "$hpp" "$(ratio "$hpp" "$lpp")" "$hvb" "$blk"
    done
  done
done
echo "$(date -u +%FT%TZ) $(uptime | sed 's/.*load/load/')"
