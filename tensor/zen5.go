//go:build amd64 && !purego

package tensor

// zen5Kernels is the avx512-zen5 level: avx512's tiles, with the products
// of one token computed one row per tile (avx512's own one-row tiles,
// which prefetch the next row as they read theirs) where avx512 computes
// four (Q4_K, Q6_K, F16, BF16) or eight (F32) rows at once. A thread then
// reads its rows as one sequential stream, as on the Zen 4 (zen4.go), but
// in 512-bit registers, which the Zen 5 (AMD family 26) runs at full
// width: there the Zen 4's stream tiles, 256-bit and without software
// prefetch, read Q4_K 9–36% slower than these.
//
// BenchmarkStreamTurns on the Zen 5 (2 vCPU, 2026-11-30, two runs of 15
// turns; docs/BENCHMARKS.md, "Single-token products on the Zen 5"), GB/s
// of weights read, one row against avx512's tiles, two threads / one:
//
//	Q4_K 3,072     51.7–67.9 / 36.9–37.4 against 46.9–63.6 / 32.7–33.8
//	Q6_K 8,192     51.6–53.2 / 39.5–41.2 against 41.5–43.9 / 29.6–29.8
//	Q6_K 14,336    46.2–46.8 / 33.5–37.1 against 42.6–43.1 / 26.2–30.5
//	F16 3,072      51.1–54.4 / 37.7–38.2 against 46.1–51.3 / 31.6–33.4
//	F32 2,048      53.3–54.2 / 40.2–40.7 against 53.9–54.5 / 35.2–35.6
//
// Q4_K rows of 14,336 (Llama-3.1-8B's FFN down-projection) are the one
// case where one thread reads faster four rows at a time (35.6–38.3
// against 33.4–35.5, the input re-read for each row), but two threads,
// what decode runs, read them as fast one row at a time (45.2–48.6
// against 43.9–46.9); the Zen 4's packed groups of eight rows (pack.go)
// measured no faster there, so the K-quant matrices stay row-major. As on
// the Zen 4, F32 rows longer than 2,048 and F16/BF16 rows longer than
// 4,096 elements keep avx512's tiles: one row at a time re-reads the
// token's input, which then no longer stays in L1 beside the streaming
// weights, for every row (a test build with one-row tiles at every width,
// 15 turns: F16 at 8,192 36.3 / 23.1 against avx512's 41.3 / 31.6, F32 at
// 8,192 44.3 / 32.0 against 47.7 / 33.6, at 4,096 within 4% either way).
// Q8_0's one-token products come from the packed rows at every AVX-512
// level and are the same here. The Q4_K and Q6_K matrices of copyMin
// bytes or more of a mapped file are read from a copy in memory of their
// own, made behind the products as the packed rows are (pack.go,
// layoutRows; copyMin says why). Blocks of several tokens keep avx512's
// tiles.
// The one-row K tiles prefetch into L1 (PREFETCHT0), as avx512's: a test
// build whose tiles prefetched into L2 (PREFETCHT1) read the same, within
// 1 GB/s at two threads and 0–1 GB/s slower at one, at 3,072, 8,192 and
// 14,336. Every tile computes the bits of every other (TestKQuantLevels,
// TestKernelLevelsAgree and the other level tests run this level too).
func zen5Kernels(k512 *kernelSet) *kernelSet {
	k := *k512
	k.kRows[1], k.kRowsNarrow[1] = 1, 1
	k.f32Rows[1], k.f16Rows[1] = 1, 1
	k.wide, k.streamF32Cols, k.streamF16Cols = k512, 2048, 4096
	k.kCopy = true
	return &k
}
