#!/usr/bin/env bash
# Regenerates gpt2-nobos-c64.kld, the golden of TestNLLLlamaPerplexityNoBOS
# (cmd/hlm/nll_test.go): the log-probabilities llama.cpp's llama-perplexity
# --kl-divergence-base writes for a tiny GPT-2 whose tokenizer adds no BOS
# (the committed model/llama/testdata/families/gpt2_hf with add_bos_token
# false, written as GGUF by hlm convert: GPT-2's own tokenizer setting) on
# nll-text.txt, in windows of 64 tokens, with an F32 KV cache and no flash
# attention. llama-perplexity keeps each window's first token (it puts BOS
# there only when the vocabulary adds BOS); the test checks that hlm nll
# does the same. It then prints llama.cpp's comparison of that model with
# the file (--kl-divergence): its noise floor.
#   usage (from the repository root): cmd/hlm/testdata/make.sh
set -euo pipefail
root=$(pwd)
lc=$("$root/../shared/perf/llamacpp.sh")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cp -r model/llama/testdata/families/gpt2_hf "$tmp/gpt2"
sed -i 's/"add_bos_token": true/"add_bos_token": false/' "$tmp/gpt2/tokenizer_config.json"
grep -q '"add_bos_token": false' "$tmp/gpt2/tokenizer_config.json"
go run ./cmd/hlm convert --model "$tmp/gpt2" --out "$tmp/gpt2.gguf" --type f32
args=(-m "$tmp/gpt2.gguf" -c 64 -b 64 -ctk f32 -ctv f32 -fa off -t 1)
"$lc/llama-perplexity" "${args[@]}" -f cmd/hlm/testdata/nll-text.txt \
  --kl-divergence-base cmd/hlm/testdata/gpt2-nobos-c64.kld >/dev/null 2>&1
"$lc/llama-perplexity" "${args[@]}" --kl-divergence-base cmd/hlm/testdata/gpt2-nobos-c64.kld --kl-divergence 2>/dev/null |
  grep -E -A2 '^chunk|Mean +KLD|Same top'
