#!/usr/bin/env bash
# Regenerates stories260K-c64.kld, the golden of TestLlamaCppBaseFile: the
# log-probabilities llama.cpp's llama-perplexity --kl-divergence-base
# writes for stories260K in F32 (hlm convert of ../shared/models/stories260K)
# on the first two windows of 64 tokens of the shared TinyStories text, with
# an F32 KV cache and no flash attention (llama.cpp's plain F32 path, the one
# hlm computes). It then prints llama.cpp's own comparison of that model
# with the file (--kl-divergence); the test's constants are its chunk line.
#   usage (from the repository root): score/testdata/make.sh
set -euo pipefail
root=$(pwd)
lc=$("$root/../shared/perf/llamacpp.sh")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
go run ./cmd/hlm convert --model ../shared/models/stories260K/stories260K.bin --out "$tmp/f32.gguf" --type f32
args=(-m "$tmp/f32.gguf" -c 64 --chunks 2 -ctk f32 -ctv f32 -fa off -t 1)
"$lc/llama-perplexity" "${args[@]}" -f ../shared/data/tinystories/TinyStories-valid-sample.txt \
  --kl-divergence-base score/testdata/stories260K-c64.kld >/dev/null 2>&1
"$lc/llama-perplexity" "${args[@]}" --kl-divergence-base score/testdata/stories260K-c64.kld --kl-divergence 2>/dev/null |
  grep -A2 '^chunk'
