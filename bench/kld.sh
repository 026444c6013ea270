#!/usr/bin/env bash
# Quantized numerics side by side: how far hlm's and llama.cpp's quantized
# models are from their own F32, on the two real small models of
# ../shared/models and the shared TinyStories text, with llama.cpp's
# statistics (llama-perplexity --kl-divergence) and hlm's (hlm nll --kl-base).
#
# For each model: hlm convert writes the F32 GGUF; llama.cpp's llama-quantize
# (../shared/perf/llamacpp.sh builds it) writes Q8_0, Q4_0 and Q4_K_M from it
# (rows that are not a multiple of 256, or of 32, fall back to other types:
# the "tensors" column says what each file holds). Both engines then run
# the same files on the same tokens and windows (llama-perplexity's: -c CTX,
# the second half of each window scored):
#
#   llama.cpp         llama-perplexity --kl-divergence-base (F32) then
#                     --kl-divergence (quantized), its defaults (F16 KV cache,
#                     flash attention on this CPU)
#   llama.cpp f32-attn  the same with -ctk f32 -ctv f32 -fa off: llama.cpp's
#                     plain F32 attention, as hlm computes it
#   hlm               hlm nll --model Q --kl-base F32: exact statistics
#                     (float64 log-softmaxes over the whole vocabulary)
#   hlm llama-stats   the same with --llama-numerics: the base stored in 16
#                     bits with a −16-nat floor, as llama.cpp stores it — the
#                     statistic llama.cpp's rows are
#   hlm llama-stats+inputs  and with --llama-inputs too: the quantized
#                     products' inputs quantized as llama.cpp does (float16
#                     block scales; hlm keeps float32), llama.cpp's numerics
#                     as far as hlm can reproduce them: to compare with the
#                     f32-attn rows
#   hlm vs llama.cpp  (F32 rows) hlm's F32 against llama.cpp's f32-attn F32
#                     base file (--kl-base-logits): the engines' agreement
#
# and hlm's own in-memory copies (F32@q8, F32@q4: hlm's mix, tied embedding
# included, rows not a multiple of 32 left F32). F32 rows compare a model
# with itself: the statistic's noise floor (llama.cpp's 16-bit storage).
# "PPL ratio" is PPL(Q)/PPL(F32) of each engine's own two runs, exactly
# (llama.cpp's printed ratio divides by a PPL(base) read from its 16-bit
# storage, where a token more than 16 nats below the top is capped: it
# reads low; hlm --llama-numerics reproduces that too).
#
#   usage (from the repository root): bench/kld.sh
#   environment:
#     TEXT=../shared/data/tinystories/TinyStories-valid-sample.txt
#     CTX=512          window (llama-perplexity -c; the models' context is 512)
#     TYPES="q8_0 q4_0 q4_k_m"
#     THREADS=$(nproc)
#     HLM_KLD_WORK=/tmp/hlm-kld   work directory (files are reused when present)
set -euo pipefail
root=$(pwd)
shared=$root/../shared
work=${HLM_KLD_WORK:-/tmp/hlm-kld}; mkdir -p "$work"
text0=${TEXT:-$shared/data/tinystories/TinyStories-valid-sample.txt}
ctx=${CTX:-512}
threads=${THREADS:-$(nproc)}
lc=$("$shared/perf/llamacpp.sh")
go build -o "$work/hlm" ./cmd/hlm
hlm=$work/hlm
# The shared text has CRLF line ends. TinyStories-656K's vocabulary has no
# '\r' and no byte tokens: llama.cpp's tokenizer aborts on it
# (std::out_of_range from unordered_map::at), where hlm and Hugging Face
# give <unk>. Both engines read the text without its CRs.
text=$work/text.txt
tr -d '\r' <"$text0" >"$text"
# sametokens MODEL BASEFILE: llama-perplexity's tokens (in its base file)
# are hlm's encoding of the text (BOS first when the tokenizer adds one),
# special tokens as text.
sametokens() {
  "$hlm" tokenize --model "$1" --ids --no-parse-special -f "$text" | python3 -c '
import json, struct, sys
ids = json.load(sys.stdin)
b = open(sys.argv[1], "rb").read()
n_ctx, n_vocab, n_chunk = struct.unpack("<Iii", b[8:20])
lc = list(struct.unpack(f"<{n_ctx*n_chunk}i", b[20:20+4*n_ctx*n_chunk]))
ok = ids[:len(lc)] == lc
print(f"{len(lc)} tokens of {len(ids)}: " + ("identical" if ok else "DIFFERENT"))
sys.exit(0 if ok else 1)' "$2"
}
rows=$work/rows.tsv; : >"$rows"
paired=$work/paired.tsv; : >"$paired"
log=$work/log.txt; : >"$log"

# row MODEL TYPE ENGINE KLD KLD_ERR MEDIAN P99 TOP TOP_ERR PPL_RATIO NOTE
row() { local IFS=$'\t'; echo "$*" >>"$rows"; }
# lcstat FILE: mean KLD, its error, median, 99%, same top, its error, PPL(Q)
# from llama-perplexity --kl-divergence's output.
lcstat() { awk '
  /^Mean    KLD:/ {k=$3; ke=$5} /^Median  KLD:/ {med=$3} /^99.0%   KLD:/ {p99=$3}
  /^Same top p:/ {top=$4; te=$6} /^Mean PPL\(Q\) / {ppl=$4}
  END {if (k=="") exit 1; print k, ke, med, p99, top/100, te/100, ppl}' "$1"; }
# hlmstat JSON: the same from hlm nll --json.
hlmstat() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))
print(s["kld"]["value"], s["kld"]["err"], s["kld_quantiles"]["median"], s["kld_quantiles"]["p99"],
      s["same_top"]["value"], s["same_top"]["err"], s["ppl"]["value"])' "$1"; }
ratio() { python3 -c "print(f'{float(\"$1\")/float(\"$2\"):.5f}')"; }
# mix FILE.log: the tensor types llama-quantize wrote, counted.
mix() { grep -o 'converting to [a-z0-9_]*' "$1" | awk '{print $3}' | sort | uniq -c | awk '{printf "%s%s×%s", (NR>1 ? " " : ""), $2, $1}'; }

# lckld OUT ARGS…: llama-perplexity --kl-divergence into OUT, run again
# (four times at most) when its output ends before the final statistics (seen
# once under heavy load, exit status 0: its logging thread not flushed).
lckld() {
  local out=$1 try; shift
  for try in 1 2 3 4 5; do
    "$lc/llama-perplexity" "$@" --kl-divergence >"$out" 2>>"$log"
    grep -q '^Same top p:' "$out" && return 0
    echo "llama-perplexity $*: no statistics (try $try)" | tee -a "$log" >&2
  done
  return 1
}
lcargs=(-c "$ctx" -t "$threads")
f32attn=(-ctk f32 -ctv f32 -fa off)
echo "$(date -u +%FT%TZ) $(uptime | sed 's/.*load/load/'); text $(basename "$text0") without CRs, windows of $ctx" >&2
for m in stories260K TinyStories-656K; do
  case $m in
    stories260K) spec=$shared/models/stories260K/stories260K.bin; tok=(--tokenizer "$shared/models/stories260K/tok512.bin");;
    TinyStories-656K) spec=$shared/models/tinystories-656k; tok=();;
  esac
  f32=$work/$m-f32.gguf
  [[ -s $f32 ]] || "$hlm" convert --model "$spec" "${tok[@]}" --out "$f32" --type f32 2>>"$log"
  # llama.cpp's F32 bases (default, f32-attn) and its F32 against them.
  for cfg in default f32attn; do
    extra=(); [[ $cfg == f32attn ]] && extra=("${f32attn[@]}")
    base=$work/$m-lc-$cfg.kld
    if [[ ! -s $base ]]; then
      "$lc/llama-perplexity" -m "$f32" -f "$text" "${lcargs[@]}" "${extra[@]}" --kl-divergence-base "$base.tmp" >>"$log" 2>&1
      mv "$base.tmp" "$base"
    fi
    lckld "$work/$m-f32-lc-$cfg.txt" -m "$f32" "${lcargs[@]}" "${extra[@]}" --kl-divergence-base "$base"
    read -r k ke med p99 top te ppl < <(lcstat "$work/$m-f32-lc-$cfg.txt")
    declare "lcppl_$cfg=$ppl"
    eng="llama.cpp"; [[ $cfg == f32attn ]] && eng="llama.cpp f32-attn"
    row "$m" f32 "$eng" "$k" "$ke" "$med" "$p99" "$top" "$te" 1 "its F32 against its own stored F32: the noise floor"
  done
  echo "$m: llama-perplexity's tokens and hlm's: $(sametokens "$f32" "$work/$m-lc-default.kld")" >&2
  # hlm's F32: against itself (exactly 0), its stored self, llama.cpp's F32.
  "$hlm" nll --model "$f32" --kl-base "$f32" --text "$text" --ctx "$ctx" --json >"$work/$m-f32-hlm.json" 2>>"$log"
  read -r k ke med p99 top te hppl < <(hlmstat "$work/$m-f32-hlm.json")
  row "$m" f32 hlm "$k" "$ke" "$med" "$p99" "$top" "$te" 1 ""
  "$hlm" nll --model "$f32" --kl-base "$f32" --text "$text" --ctx "$ctx" --llama-numerics --json >"$work/$m-f32-hlm-ls.json" 2>>"$log"
  read -r k ke med p99 top te ppl < <(hlmstat "$work/$m-f32-hlm-ls.json")
  row "$m" f32 "hlm llama-stats" "$k" "$ke" "$med" "$p99" "$top" "$te" 1 "its F32 against its own stored F32: the noise floor"
  "$hlm" nll --model "$f32" --kl-base-logits "$work/$m-lc-f32attn.kld" --json >"$work/$m-f32-hlm-vs-lc.json" 2>>"$log"
  read -r k ke med p99 top te ppl < <(hlmstat "$work/$m-f32-hlm-vs-lc.json")
  row "$m" f32 "hlm vs llama.cpp" "$k" "$ke" "$med" "$p99" "$top" "$te" "$(ratio "$ppl" "$lcppl_f32attn")" "hlm's F32 against llama.cpp's f32-attn F32"

  for t in ${TYPES:-q8_0 q4_0 q4_k_m}; do
    q=$work/$m-$t.gguf
    [[ -s $q ]] || "$lc/llama-quantize" "$f32" "$q" "${t^^}" >"$work/$m-$t.quantize.log" 2>&1
    note="tensors: $(mix "$work/$m-$t.quantize.log")"
    for cfg in default f32attn; do
      extra=(); [[ $cfg == f32attn ]] && extra=("${f32attn[@]}")
      lckld "$work/$m-$t-lc-$cfg.txt" -m "$q" "${lcargs[@]}" "${extra[@]}" --kl-divergence-base "$work/$m-lc-$cfg.kld"
      read -r k ke med p99 top te ppl < <(lcstat "$work/$m-$t-lc-$cfg.txt")
      eng="llama.cpp"; [[ $cfg == f32attn ]] && eng="llama.cpp f32-attn"
      base=lcppl_$cfg
      row "$m" "$t" "$eng" "$k" "$ke" "$med" "$p99" "$top" "$te" "$(ratio "$ppl" "${!base}")" "$note"
    done
    # Paired: hlm's run and llama.cpp's run of the file (its log-probabilities
    # saved with --kl-divergence-base), position by position against
    # llama.cpp's F32; and how far apart the two engines' runs are.
    if "$hlm" bench -m "$q" -p 0 -n 1 -r 1 >/dev/null 2>&1; then
      for cfg in default f32attn; do
        extra=(); [[ $cfg == f32attn ]] && extra=("${f32attn[@]}")
        lq=$work/$m-$t-lc-$cfg-logits.kld
        if [[ ! -s $lq ]]; then
          "$lc/llama-perplexity" -m "$q" -f "$text" "${lcargs[@]}" "${extra[@]}" --kl-divergence-base "$lq.tmp" >>"$log" 2>&1
          mv "$lq.tmp" "$lq"
        fi
        "$hlm" nll --model "$q" --kl-base-logits "$work/$m-lc-$cfg.kld" --kl-pair "$lq" --json >"$work/$m-$t-paired-$cfg.json" 2>>"$log"
        "$hlm" nll --model "$q" --kl-base-logits "$lq" --json >"$work/$m-$t-engines-$cfg.json" 2>>"$log"
        python3 -c 'import json, sys; p = json.load(open(sys.argv[1]))["paired"]; e = json.load(open(sys.argv[2]))
print("\t".join(map(str, [sys.argv[3], sys.argv[4], sys.argv[5], p["kld"], p["other_kld"], p["diff"]["value"], p["diff"]["err"],
      p["top_only"], p["other_top_only"], p["positions"], e["kld"]["value"], e["same_top"]["value"]])))' \
          "$work/$m-$t-paired-$cfg.json" "$work/$m-$t-engines-$cfg.json" "$m" "$t" "$cfg" >>"$paired"
      done
    fi
    for v in "hlm" "hlm llama-stats:--llama-numerics" "hlm llama-stats+inputs:--llama-numerics --llama-inputs"; do
      eng=${v%%:*} flags=; [[ $v == *:* ]] && flags=${v#*:}
      out=$work/$m-$t-${eng// /-}.json
      if ! "$hlm" nll --model "$q" --kl-base "$f32" --text "$text" --ctx "$ctx" $flags --json >"$out" 2>"$out.err"; then
        why=$(tail -1 "$out.err" | sed 's/.*unsupported model: //')
        row "$m" "$t" "$eng" - - - - - - - "refused: $why"
        continue
      fi
      read -r k ke med p99 top te ppl < <(hlmstat "$out")
      row "$m" "$t" "$eng" "$k" "$ke" "$med" "$p99" "$top" "$te" "$(ratio "$ppl" "$hppl")" "$note"
    done
  done
  for v in q8 q4; do
    for ls in "" --llama-numerics; do
      out=$work/$m-at$v-hlm$ls.json
      "$hlm" nll --model "$f32@$v" --kl-base "$f32" --text "$text" --ctx "$ctx" $ls --json >"$out" 2>>"$log"
      read -r k ke med p99 top te ppl < <(hlmstat "$out")
      row "$m" "@$v" "hlm${ls:+ llama-stats}" "$k" "$ke" "$med" "$p99" "$top" "$te" "$(ratio "$ppl" "$hppl")" "hlm's own in-memory copy"
    done
  done
done

# The table; then, per model × type, hlm against llama.cpp like with like:
# llama.cpp's printed statistics next to hlm --llama-numerics, and the
# paired comparison on the same positions.
python3 - "$rows" "$paired" "$work" <<'EOF'
import sys, json, os
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
print("| model | type | engine | mean KLD | median KLD | 99% KLD | same top-1 | PPL(Q)/PPL(F32) | notes |")
print("|---|---|---|---|---|---|---|---|---|")
for m, t, e, k, ke, med, p99, top, te, pr, note in rows:
    if k == "-":
        print(f"| {m} | {t} | {e} | – | – | – | – | – | {note} |")
        continue
    print(f"| {m} | {t} | {e} | {float(k):.6f} ± {float(ke):.6f} | {float(med):.6f} | {float(p99):.6f} | "
          f"{100*float(top):.3f} ± {100*float(te):.3f} % | {pr} | {note} |")
pos = {m: json.load(open(os.path.join(sys.argv[3], f"{m}-f32-hlm.json")))["positions"]
       for m in dict.fromkeys(r[0] for r in rows)}
print("\npositions scored:", ", ".join(f"{m} {n}" for m, n in pos.items()), "\n")
get = {(r[0], r[1], r[2]): r for r in rows}
print("| model | type | llama.cpp | mean KLD: hlm, llama.cpp | same top-1: hlm, llama.cpp | "
      "paired KLD difference hlm − llama.cpp | top-1 only hlm / only llama.cpp | KL(llama.cpp's run ‖ hlm's) | verdict | "
      "hlm with llama.cpp's inputs: mean KLD, same top-1 |")
print("|---|---|---|---|---|---|---|---|---|---|")
for l in open(sys.argv[2]):
    m, t, cfg, hk, lk, d, de, ho, lo, n, ek, et = l.rstrip("\n").split("\t")
    le = "llama.cpp" if cfg == "default" else "llama.cpp f32-attn"
    h, r = get[(m, t, "hlm llama-stats")], get[(m, t, le)]
    kh, kl, th, tl = float(h[3]), float(r[3]), float(h[7]), float(r[7])
    d, de = float(d), float(de)
    le_ok, top_ok = round(kh, 6) <= round(kl, 6), th >= tl
    v = f"KLD {'≤' if le_ok else '>'}, top-1 {'≥' if top_ok else '<'}"
    if not (le_ok and top_ok):
        v += f" (paired KLD difference {d/de:+.1f} σ)"
    li = get.get((m, t, "hlm llama-stats+inputs"))
    lis = f"{float(li[3]):.6f}, {100*float(li[7]):.3f}%" if li and li[3] != "-" else "–"
    print(f"| {m} | {t} | {le} | {kh:.6f}, {kl:.6f} | {100*th:.3f}%, {100*tl:.3f}% | {d:+.7f} ± {de:.7f} | {ho} / {lo} | "
          f"{float(ek):.6f} (top-1 {100*float(et):.2f}%) | {v} | {lis} |")
for (m, t, e), r in get.items():
    if e == "hlm" and r[3] == "-":
        print(f"| {m} | {t} | | – | – | – | – | – | hlm refuses the file: {r[10].removeprefix('refused: ')} |")
EOF
echo "$(date -u +%FT%TZ) $(uptime | sed 's/.*load/load/')" >&2
