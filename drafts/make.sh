#!/usr/bin/env bash
# Trains the drafts hlm ships from their teachers in ../shared/models, bit for
# bit (the same bytes on any amd64 machine: training is deterministic, see
# docs/design.md). About 11 (stories260K) and 13 (TinyStories-656K) minutes on
# the 2-core development machine.
#
#   drafts/make.sh            write drafts/*.gguf and their learning curves docs/img/*-draft.curve.png
#   drafts/make.sh --check    train into a temporary directory and compare with the committed drafts
set -euo pipefail
cd "$(dirname "$0")/.."
models=${HLM_MODELS:-../shared/models}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/hlm" ./cmd/hlm

# stories260K (dim 64, 5 layers, vocabulary 512) -> a two-layer, 48-wide
# student (feed-forward 160): at most 1/3 of the teacher's multiply-adds at
# every position of its context (attention included); the embedding starts
# from the teacher's projected onto its top 48 singular directions, forward
# KL on teacher samples.
"$work/hlm" distill --teacher "$models/stories260K/stories260K.bin" --out "$work/stories260K-draft.gguf" \
  --init svd --layers 2 --dim 48 --heads 8 --kv-heads 4 --hidden 160 \
  --seq 128 --batch 32 --steps 4000 --lr 1e-2 --loss fkl --seed 1 --eval-every 200 --checkpoint-every 500

# TinyStories-656K (dim 128, 2 layers, vocabulary 2048) -> a one-layer, 64-wide
# student from random weights, stored as F16 (the F32 file is 0.9 MB).
"$work/hlm" distill --teacher "$models/tinystories-656k" --out "$work/tinystories656k-draft.gguf" --type f16 \
  --dim 64 --heads 8 --kv-heads 4 --hidden 320 --seq 128 --batch 32 --steps 3000 --lr 1e-2 --loss fkl --seed 1 --eval-every 200 --checkpoint-every 500

if [[ ${1:-} == --check ]]; then
  status=0
  for f in stories260K-draft.gguf tinystories656k-draft.gguf; do
    if cmp -s "$work/$f" "drafts/$f"; then echo "$f: identical"; else echo "$f: DIFFERS from drafts/$f"; status=1; fi
  done
  exit $status
fi
cp "$work/stories260K-draft.gguf" "$work/tinystories656k-draft.gguf" drafts/
cp "$work/stories260K-draft.curve.png" "$work/tinystories656k-draft.curve.png" docs/img/
sha256sum drafts/*.gguf
