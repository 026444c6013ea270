// Package crossarch holds a test that runs hlm's determinism tests on
// another architecture than the host's: it cross-compiles the tests of the
// packages whose results must be bit-identical on every machine (tensor,
// with its kernel-level comparisons, and model/llama, with its pinned
// logits digests) for arm64 and runs them under QEMU's user-mode emulator
// (qemu-aarch64), on an emulated CPU with the dot product instructions and
// on one without (Cortex-A72). It has no code of its own.
package crossarch
