//go:build amd64 && !purego

package tensor

// streamTiles are tiles of one row and one token without software
// prefetch (gen_kernels.go's noPrefetch; the NP in their names): a
// thread computing a decode step's rows with them reads its rows as one
// sequential stream, which the hardware prefetcher follows, instead of
// several rows at once plus the prefetches of the next tile's rows.
// Each has the bits of the other tiles of its type.
type streamTiles struct {
	f32                f32TileFn
	f16, bf16          f16TileFn
	k4, k6             kTileFn
	q8packed, q4packed qTileFn // 16 packed rows (pack.go), one token
}

// zen4Kernels is the avx512-zen4 level: avx512's tiles with the stream
// tiles for single tokens. On Zen 4 (AMD family 25 with AVX-512, whose
// 512-bit instructions run as two 256-bit halves) the decode step's
// products read memory faster so, 2 threads streaming ~128 MiB of 2048-wide
// rows (BenchmarkStreamMatVec, three runs): Q6_K 37–43 GB/s with the
// stream tiles against 25–31 with avx512's four-row tiles, Q4_K 36–40
// against 30–37, Q8_0 42–55 against 37–45 (docs/BENCHMARKS.md,
// "Single-token products per kernel level"). F32 rows longer than
// 2,048 and F16/BF16 rows longer than 4,096 elements keep avx512's
// tiles, which read those faster (F32 at 4,096: 38–55 GB/s against 35–36;
// F16 at 8,192: 26–31 against 24–25: a one-row tile then re-reads an
// input that no longer stays in L1 for every row). Blocks of several
// tokens keep avx512's tiles, which compute more per byte read.
func zen4Kernels(k512 *kernelSet, st *streamTiles) *kernelSet {
	k := *k512
	k.f32Rows[1], k.f32[1][1] = 1, st.f32
	k.f16Rows[1], k.f16[1][1], k.bf16[1][1] = 1, st.f16, st.bf16
	k.kRows[1], k.kRowsNarrow[1], k.k4[1][1], k.k6[1][1] = 1, 1, st.k4, st.k6
	k.q8packed[1], k.q4packed[1] = st.q8packed, st.q4packed
	k.wide, k.streamF32Cols, k.streamF16Cols = k512, 2048, 4096
	return &k
}
