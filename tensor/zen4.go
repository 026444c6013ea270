//go:build amd64 && !purego

package tensor

// streamTiles are tiles of one row and one token without software
// prefetch (gen_kernels.go's noPrefetch; the NP in their names): a
// thread computing a decode step's rows with them reads its rows as one
// sequential stream, which the hardware prefetcher follows, instead of
// several rows at once plus the prefetches of the next tile's rows.
// Each has the bits of the other tiles of its type. The Q4_K and Q6_K ones
// (gen_kernels.go, k4Stream and k6Stream) work in 256-bit registers, which
// this core runs at twice the rate of 512-bit ones, with fewer
// instructions than avx512's one-row tiles: on 32 super-blocks in L1
// (BenchmarkKTileCompute) Q4_K 26.5–27.4 GB/s against 20.5–22.8, Q6_K
// 34.3 against 30.1, which is what one thread's decode step, bound by
// these tiles' arithmetic more than by its memory stream, gains.
type streamTiles struct {
	f32                f32TileFn
	f16, bf16          f16TileFn
	k4                 [streamKRows + 1]kTileFn // 2…streamKRows Q4_K rows at once
	k4seq, k6seq       [maxR + 1]kTileFn        // 1…maxR rows one after another
	q8packed, q4packed qTileFn                  // 16 packed rows (pack.go), one token
	q5packed           qTileFn                  // the same for Q5_0
	kPacked            packedKTiles             // packed K rows (pack.go, packKGroup)
}

// zen4NarrowK is avx512-zen4's limit for the one-row K tiles of several
// tokens (kernelSet.kNarrow; avx512 keeps kNarrowBytes, 16 KiB): up to 48
// KiB of inputs the one-row tiles, whose accumulators all stay in
// registers, compute a block faster than the two-row tiles that read each
// input once for two rows, though this core's L1 holds 32 KiB. `hlm bench
// -p P -n 0 -t 2`, Q4_K_M, alternated, three or four rounds, 2026-11-29:
//
//	Llama-3.2-1B pp8 (24 KiB)   130.5–133.3 tokens/s against 122.2–124.1 (16 KiB)
//	Llama-3.2-1B pp6 (18 KiB)   122.1–122.8 against 109.3–113.8 (16 KiB)
//	Phi-3-mini pp6 (27 KiB)     36.8–37.4 against 34.6–35.5 (24 KiB)
//	Phi-3-mini pp7 (31.5 KiB)   38.0–38.7 against 36.4–36.9 (24 KiB)
//	Phi-3-mini pp8 (36 KiB)     37.4–37.8 against 36.2–36.8 (16 KiB)
//	Llama-3.1-8B pp8 (48 KiB)   19.4–19.7 against 19.5–19.8 (32 KiB)
//
// Wider inputs keep the two-row tiles: Gemma-3-1B's rows of 6,912 (81 KiB
// at pp8) measured 123–129 tokens/s with one-row tiles against 128–133.
const zen4NarrowK = 48 << 10

// zen4Kernels is the avx512-zen4 level: avx512's tiles with the stream
// tiles for single tokens. On Zen 4 (AMD family 25 with AVX-512, whose
// 512-bit instructions run as two 256-bit halves) the decode step's
// products read memory faster so, 2 threads streaming ~128 MiB of 2048-wide
// rows (BenchmarkStreamMatVec, three runs): Q6_K 34.6–39.0 GB/s with the
// stream tiles against 22.6–24.1 with avx512's four-row tiles, Q4_K
// 34.9–35.8 against 32.4–32.6, Q8_0 29.9–34.2 against 27.9–31.7, and at
// one thread Q4_K 19.5–20.3 against 12.9–18.0, Q6_K 24.8–25.8 against
// 12.5–12.6 (docs/BENCHMARKS.md, "Single-token products per kernel
// level"; the earlier runs in its history). F32 rows longer than
// 2,048 and F16/BF16 rows longer than 4,096 elements keep avx512's
// tiles, which read those faster (F32 at 4,096: 38–55 GB/s against 35–36;
// F16 at 8,192: 26–31 against 24–25: a one-row tile then re-reads an
// input that no longer stays in L1 for every row). K-quant matrices whose
// one-token input exceeds kNarrowBytes (rows of 11,008 elements or more:
// the FFN down-projections of the 7B and 8B shapes) are packed in groups
// of eight rows (pack.go, packKGroup; the copy replaces the mapped rows): a
// group is one sequential stream, and its one-token tile reads each block
// of the input once for the eight rows, where row-major rows re-read the
// whole input (21 KiB at 14,336) for every row or every four while the
// weights stream through L1. BenchmarkStreamWideK, 14,336-wide rows, two
// threads, 15:07 UTC: Q4_K 32.3–33.3 GB/s packed against 23.9–25.8
// row-major (four-row groups: 27.9–28.2), Q6_K 42.1–45.8 against
// 24.0–24.5; narrower rows gain nothing from it (4,096 and 8,192 wide:
// the same within the spread, and blocks of eight tokens 8% slower), so
// they stay row-major. Row-major wide Q4_K rows (fewer than eight rows,
// a group's remainder) take the stream tiles of four rows. The other K
// rows take the one-row tiles up to eight rows a call, one row after another
// (gen_kernels.go, streamTile: each row still one stream, the constants and
// the call paid once per eight rows): Phi-3-mini Q4_K_M at one thread
// 9.6 / 10.0 / 9.8 tokens/s against 9.5 / 9.2 / 9.2 calling per row
// (alternated, 13:57 UTC). Several rows at once are slower there: four
// rows read 2,048-wide ones at 6–16 GB/s against one row's 20–38.
// Blocks of several tokens keep avx512's tiles, which compute more per
// byte read, with the one-row K tiles up to zen4NarrowK of inputs.
func zen4Kernels(k512 *kernelSet, st *streamTiles) *kernelSet {
	k := *k512
	k.f32Rows[1], k.f32[1][1] = 1, st.f32
	k.f16Rows[1], k.f16[1][1], k.bf16[1][1] = 1, st.f16, st.bf16
	k.kRows[1], k.kRowsNarrow[1] = maxR, maxR
	for R := 1; R <= maxR; R++ {
		k.k4[R][1], k.k6[R][1] = st.k4seq[R], st.k6seq[R]
	}
	k.kNarrow = zen4NarrowK
	k.k4Wide, k.k4WideRows = k.k4, k.kRows
	k.k4WideRows[1] = streamKRows
	for R := 2; R <= streamKRows; R++ {
		k.k4Wide[R][1] = st.k4[R]
	}
	k.q8packed[1], k.q4packed[1], k.q5packed[1] = st.q8packed, st.q4packed, st.q5packed
	k.kPacked = &st.kPacked
	k.wide, k.streamF32Cols, k.streamF16Cols = k512, 2048, 4096
	return &k
}
