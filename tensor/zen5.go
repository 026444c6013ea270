//go:build amd64 && !purego

package tensor

// zen5Kernels is the avx512-zen5 level: avx512's tiles, with the products
// of one token computed one row per tile (avx512's own one-row tiles,
// which prefetch the next row as they read theirs) where avx512 computes
// four (Q4_K, Q6_K, F16, BF16) or eight (F32) rows at once. A thread then
// reads its rows as one sequential stream, as on the Zen 4 (zen4.go), but
// in 512-bit registers, which the Zen 5 (AMD family 26) runs at full
// width: there the Zen 4's stream tiles, 256-bit and without software
// prefetch, stream no faster than avx512's four-row tiles.
//
// Measured on the Zen 5 (2 vCPU, 2026-11-30), ~256 MiB of rows through
// one token's product, the kernel sets taken in turns 11–25 times (the
// machine's load drifts over all alike), median GB/s of weights read,
// two threads / one thread:
//
//	Q4_K 3,072 wide   68.2 / 35.9 one row against 59.2 / 31.0 four rows
//	Q6_K 3,072        73.5 / 36.4 against 61.8 / 30.2
//	Q4_K 8,192        65.5 / 37.2 against 62.2 / 32.9
//	Q6_K 8,192        74.2 / 36.2 against 54.9 / 28.4
//	Q4_K 14,336       39.5 / 34.0 against 35.3 / 32.9
//	Q6_K 14,336       39.6 / 29.2 against 35.3 / 24.4
//	F16 3,072         46.3 / 36.8 against 43.0 / 32.1
//	BF16 3,072        40.1 / 35.4 against 38.6 / 31.5
//	F32 2,048         47.1 / 38.4 one row against 47.0 / 35.3 eight rows
//
// (the machine's bandwidth moved between the runs: compare within a
// line). The Zen 4's stream tiles measured 45.0 / 24.0 (Q4_K 3,072) and
// 58.9 / 30.1 (Q6_K 3,072) in the same turns, and avx2's one-row tiles
// 55.0 / 27.9 and 60.7 / 31.1. Rows of 14,336 K-quants gained nothing
// from the Zen 4's packed groups of eight rows (Q4_K 35.6 / 26.2), so the
// K-quant matrices stay row-major. As on the Zen 4, one row at a time
// re-reads the token's input for every row, which no longer stays in L1
// beside the streaming weights for F32 rows longer than 2,048 or F16/BF16
// rows longer than 4,096 elements (F16 8,192: 36.3 / 23.1 one row against
// 41.3 / 31.6; F32 8,192: 44.3 / 32.0 against 47.7 / 33.6): those keep
// avx512's tiles; at 4,096 the two measured the same within their spread
// (F16: 32.1–42.9 one row against 38.5–41.1 at two threads, 35.1 against
// 32.1 at one; F32: 44.9 / 35.0 against 46.5 / 33.2). Q8_0's one-token
// products measured the same at one, two, four and eight rows and keep
// avx512's. Blocks of several tokens keep avx512's tiles. The one-row K
// tiles prefetch into L1 (PREFETCHT0), as avx512's: a test build whose
// tiles prefetched into L2 (PREFETCHT1) read the same, within 1 GB/s at
// two threads and 0–1 GB/s slower at one, at 3,072, 8,192 and 14,336
// (15 turns each). Every tile computes the bits of every other
// (TestKQuantLevels, TestTileShapes and the other level tests run this
// level too).
func zen5Kernels(k512 *kernelSet) *kernelSet {
	k := *k512
	k.kRows[1], k.kRowsNarrow[1] = 1, 1
	k.f32Rows[1], k.f16Rows[1] = 1, 1
	k.wide, k.streamF32Cols, k.streamF16Cols = k512, 2048, 4096
	return &k
}
