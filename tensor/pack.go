package tensor

import (
	"encoding/binary"
	"unsafe"
)

// Packed Q8_0, Q4_0 and Q5_0 rows. At the AVX-512 level a Q8_0, Q4_0 or
// Q5_0 matrix keeps, next to its Data, a copy whose rows are interleaved
// 16 at a time (packRows): for group g (rows 16g…16g+15) and block b, a
// unit of 16·BlockBytes bytes holds the 16 rows' F16 scales (32 bytes),
// for Q5_0 then the 16 rows' qh (64 bytes), then for each 4-byte word k of
// a block's codes (8 for Q8_0, 4 for Q4_0 and Q5_0's qs) that word of each
// of the 16 rows (64 bytes). Word k of Q8_0 holds the codes of lane k of
// dotQuant's definition (act.go); word k of Q4_0 and Q5_0 holds in its low
// nibbles the codes (Q5_0: their low 4 bits) of lane k and in its high
// nibbles those of lane k+4. So the packed tiles compute lane l of 16 rows
// with one VPDPBUSD, and the 8 lanes of 16 rows are 8 registers
// (gen_kernels.go, packedAVX512). The rows
// past the last whole group are not packed: the row-major tiles compute
// them from Data.
//
// The copy is made behind the products (mover.go, moveToOwn): the
// first product at that level queues the matrix, one goroutine packs it
// a few groups at a time into memory of its own, and until a group is
// packed the products compute it with the row-major tiles from Data
// (runPacked), which give the same bits. A model so starts as fast as
// from its mapped file alone, instead of waiting on the first product
// for the packing of every matrix and the kernel's zeroing of the new
// pages (docs/BENCHMARKS.md, "Packing behind the products"). Once made,
// the copy is shared by every later product; Data stays as it was
// (writers, fingerprints and the other levels read it). A memory-mapped
// file's pages are only read to make it, and let go as soon as they are
// packed, a few hundred KiB at a time (SetDataRelease: they leave the
// resident set and are read back if Data is used again), so the copy
// replaces them in memory instead of doubling them, even while it is
// made; a matrix on the heap is held twice.
const packRows = 16

// packing enables the packed tiles (benchmarks compare with it off).
var packing = true

// copyLayout is the layout of a matrix's rows in memory of its own
// (Matrix.layout): how a level reads them decides, and the first product
// that reads them queues their copy in that layout (packedRows). A matrix
// keeps one copy: a level that reads another layout computes from Data
// (the tests run several levels on one matrix).
type copyLayout uint32

const (
	layoutNone    copyLayout = iota
	layoutBlocks             // Q8_0, Q4_0, Q5_0 rows interleaved 16 at a time (packBlockGroup)
	layoutKGroups            // Q4_K, Q6_K super-blocks of kPackRows rows interleaved (packKGroup)
	layoutRows               // Q4_K, Q6_K rows as they are, copied out of a mapped file (runCopiedK)
)

// copies reports whether m's rows are copied in layout l: the whole
// groups of a block layout, or all rows of a matrix whose Data is a
// mapped file's (SetDataRelease) not already in 2 MiB pages
// (SetDataMappedWhole) for layoutRows.
func (m *Matrix) copies(l copyLayout) bool {
	switch l {
	case layoutBlocks:
		return (m.Type == Q8_0 || m.Type == Q4_0 || m.Type == Q5_0) && m.Rows >= packRows
	case layoutKGroups:
		return (m.Type == Q4_K || m.Type == Q6_K) && m.Rows >= kPackRows
	case layoutRows:
		return (m.Type == Q4_K || m.Type == Q6_K) && m.Rows > 0 && m.release != nil && len(m.Data) >= copyMin && (m.whole == nil || !m.whole())
	}
	return false
}

// packedRows returns m's rows in layout l once they are made, and
// otherwise nil and whether they are on their way (queued or being made
// behind the products: forMade and runCopiedK read those made so far); a
// matrix that is not copied in l (copies), or whose copy has another
// layout, has none. The first call queues their making (moveToOwn).
func (m *Matrix) packedRows(l copyLayout) (packed []byte, pending bool) {
	if !m.copies(l) {
		return nil, false
	}
	switch copyLayout(m.layout.Load()) {
	case l:
		if p := m.packed.Load(); p != nil {
			return *p, false
		}
		return nil, true
	case layoutNone:
		if m.layout.CompareAndSwap(uint32(layoutNone), uint32(l)) {
			moveToOwn(m)
			return nil, true
		}
		return m.packedRows(l) // queued by another product meanwhile
	}
	return nil, false
}

// copyMin is the least size of a matrix whose rows are copied as they are
// (layoutRows; a variable for the tests). avx512-zen5 reads the Q4_K and
// Q6_K rows of a mapped file from such a copy, in 2 MiB pages of its own
// (allocPacked), because the file's pages, held in 4 KiB pieces, decode
// slower (model/gguf maps files with MADV_HUGEPAGE, so pages it reads from
// disk come in 2 MiB folios and decode as fast as the copy; the copy is
// for pages already cached in small ones, e.g. read by another program,
// and costs start-up: docs/BENCHMARKS.md, "Huge pages for the mapped
// file"; a file found mapped whole, SetDataMappedWhole, is not copied):
// Phi-3-mini Q4_K_M 18.2–19.2 tokens/s against 12.0–16.3 (five rounds
// in three page-cache states, Zen 5, 2026-12-02; docs/BENCHMARKS.md,
// "Copied K-quant rows on the Zen 5"). Copies of
// every size cost the small shapes decode speed and memory (Qwen3-0.6B
// Q4_K_M: its matrices of 1–3 MiB on the Go heap, tg64 72–88 against
// 86–95, peak RSS 607 against 508 MB); from 8 MiB only its tied output
// head is copied, and it decodes as before (86–94 against 86–91).
var copyMin = 8 << 20

// hugeMin is the size from which allocPacked maps a packed copy with huge
// pages: one 2 MiB page. The kernel backs only the whole 2 MiB ranges
// inside a mapping with huge pages, the ends with 4 KiB ones, so a small
// copy wastes nothing. From 16 MiB (before 2026-11-29) Phi-3-mini's
// 10 MiB attention-output copies went to the Go heap, 4 KiB at a time:
// loading it took 420,000 page faults instead of 175,000, and its
// `hlm generate` of 16 tokens 9.1 / 1.7 / 1.8 / 1.6 s of system time
// against 2.7 / 1.1 / 1.2 / 1.3 (Llama-3.1-8B Q8_0: 15.8 / 11.6 / 9.5 /
// 9.4 s of wall time against 12.7 / 9.8 / 9.2 / 9.5; four alternated
// rounds on the Zen 4).
const hugeMin = 2 << 20

// Packed Q4_K and Q6_K rows. At avx512-zen4 a K-quant matrix whose rows
// are too long for one token's quantized input to stay in L1 beside the
// streaming weights (kNarrowBytes; the 14,336-wide down-projections of the
// 8B shapes) keeps its rows interleaved kPackRows at a time instead: for
// group g (rows kPackRows·g …) and super-block b, the super-blocks b of the
// group's rows one after another, unchanged. A group is then one
// sequential stream, and the one-token tile reads each block of the
// input once for the group's rows (row-major, a tile of several rows
// reads several streams, one row reads the input once per row: both
// slower, zen4.go); the tiles of several tokens are avx512's, stepping
// kPackRows super-blocks at a time and prefetching the next group
// (gen_kernels.go, kGroup). The rows past the last whole group are not
// packed, and the copy replaces the mapped pages as the packed Q8_0 rows'
// does (moveGroups).
const kPackRows = 8

// packedKTiles are a level's tiles of packed K-quant rows: k4[R][T] and
// k6[R][T] compute R ≤ kPackRows rows of one group (ldw: one super-block)
// for T tokens; rows[T] is the height taken for T tokens.
type packedKTiles struct {
	k4, k6 [kPackRows + 1][maxT + 1]kTileFn
	rows   [maxT + 1]int
}

// packKGroup packs one group of kPackRows rows of a K-quant matrix
// (super-blocks of bb bytes, rows of rb bytes) from src (row-major) into
// grp.
func packKGroup(grp, src []byte, bb, rb int) {
	nb := rb / bb
	for r := 0; r < kPackRows; r++ {
		row := src[r*rb:][:rb]
		for b := 0; b < nb; b++ {
			copy(grp[(b*kPackRows+r)*bb:][:bb], row[b*bb:][:bb])
		}
	}
}

// packGroup returns the rows of one group of m's copy in layout l and how
// one is made (packBlockGroup, packKGroup; layoutRows: a row, copied).
func (m *Matrix) packGroup(l copyLayout) (rows int, pack func(grp, src []byte)) {
	switch l {
	case layoutKGroups:
		bb, rb := m.Type.BlockBytes(), m.rowBytes
		return kPackRows, func(grp, src []byte) { packKGroup(grp, src, bb, rb) }
	case layoutRows:
		return 1, func(grp, src []byte) { copy(grp, src) }
	}
	nb := m.Cols / QK
	return packRows, func(grp, src []byte) { packBlockGroup(grp, src, m.Type, nb) }
}

// unpackKRow writes row r of rows packed by packKGroup (super-blocks of bb
// bytes, nb per row) in the row-major layout to dst, for the tests.
func unpackKRow(dst, packed []byte, bb, r, nb int) {
	g, i := r/kPackRows, r%kPackRows
	grp := packed[g*kPackRows*nb*bb:]
	for b := 0; b < nb; b++ {
		copy(dst[b*bb:][:bb], grp[(b*kPackRows+i)*bb:][:bb])
	}
}

// packBlockGroup packs one group of 16 rows of nb blocks of type t (Q8_0,
// Q4_0 or Q5_0) from src (row-major) into grp, one unit (the group's
// blocks b) after another.
func packBlockGroup(grp, src []byte, t DType, nb int) {
	bb := t.BlockBytes()
	unitBytes := packRows * bb
	rb := nb * bb
	le := binary.LittleEndian
	for b := 0; b < nb; b++ {
		unit := grp[b*unitBytes:][:unitBytes]
		for r := 0; r < packRows; r++ {
			blk := src[r*rb+bb*b:][:bb]
			le.PutUint16(unit[2*r:], le.Uint16(blk))
			switch t {
			case Q8_0:
				packWords8(unit[32+4*r:], blk[2:])
			case Q4_0:
				packWords4(unit[32+4*r:], blk[2:])
			default: // Q5_0: qh, then the words of qs
				le.PutUint32(unit[32+4*r:], le.Uint32(blk[2:]))
				packWords4(unit[96+4*r:], blk[6:])
			}
		}
	}
}

// packWords8 writes the eight 4-byte words of src (a Q8_0 block's codes)
// 64 bytes apart in dst: one row's words in a packed unit. Unrolled, with
// the bounds checked once: a loop over the words packed at 2.0–2.1 GB/s
// against 2.8–4.8 (BenchmarkPackBlocks).
func packWords8(dst, src []byte) {
	_, _ = dst[7*64+3], src[31]
	packWords4(dst, src)
	packWords4(dst[256:], src[16:])
}

// packWords4 is packWords8 for a Q4_0 block's four words.
func packWords4(dst, src []byte) {
	_, _ = dst[3*64+3], src[15]
	le := binary.LittleEndian
	le.PutUint32(dst[0:], le.Uint32(src[0:]))
	le.PutUint32(dst[64:], le.Uint32(src[4:]))
	le.PutUint32(dst[128:], le.Uint32(src[8:]))
	le.PutUint32(dst[192:], le.Uint32(src[12:]))
}

// releaseBytes is about how many bytes of Data moveGroups packs and lets
// go in one step (whole groups, at least one): the most of a matrix held
// twice while it is packed.
const releaseBytes = 256 << 10

// unpackRow writes row r of rows packed by packBlockGroup (type t, nb blocks
// per row) in the row-major layout to dst: packing undone, for the tests.
func unpackRow(dst, packed []byte, t DType, r, nb int) {
	bb := t.BlockBytes()
	unitBytes := packRows * bb
	g, i := r/packRows, r%packRows
	for b := 0; b < nb; b++ {
		unit := packed[(g*nb+b)*unitBytes:][:unitBytes]
		blk := dst[b*bb:][:bb]
		copy(blk[:2], unit[2*i:])
		words := unit[32:] // the words of codes, after Q5_0's qh
		if t == Q5_0 {
			copy(blk[2:6], unit[32+4*i:])
			words, blk = unit[96:], blk[4:]
		}
		for k := 0; k < (len(blk)-2)/4; k++ {
			copy(blk[2+4*k:][:4], words[64*k+4*i:][:4])
		}
	}
}

// runPackedK computes rows [lo, hi) of a Q4_K or Q6_K product: those of
// the whole groups from the packed copy (packKGroup), each group for every
// token group of kMaxT before the next (its rows stay in L1 or L2), the
// rest with the row-major tiles. Ranges widen to whole groups as
// runPacked's do.
func (p *product) runPackedK(lo, hi int) {
	w, acts, out, n, kp := p.w, p.actsK, p.out, p.n, p.kPacked
	rows, nb, bb := w.Rows, w.Cols/QKK, w.Type.BlockBytes()
	tiles := &kp.k4
	if w.Type == Q6_K {
		tiles = &kp.k6
	}
	ldx, ldo := uintptr(nb)*unsafe.Sizeof(actBlockK{}), uintptr(4*rows)
	groupT := p.ks.kMaxT
	p.forMade(lo, hi, kPackRows, func(r int, grp []byte) {
		for t := 0; t < n; t += groupT {
			T := min(groupT, n-t)
			R := kp.rows[T]
			for i := 0; i < kPackRows; i += R {
				tiles[min(R, kPackRows-i)][T](&grp[i*bb], uintptr(bb), &acts[t*nb], ldx, nb, &out[t*rows+r+i], ldo)
			}
		}
	})
}

// runCopiedK computes rows [lo, hi) of a Q4_K or Q6_K product whose rows
// are copied out of a mapped file (layoutRows) with the row-major tiles:
// the rows copied so far from the copy, the others from Data, a step of
// the move (releaseBytes) at a time, reading how far it has come again
// after each, as forMade does. Both give the same bits.
func (p *product) runCopiedK(lo, hi int) {
	rb := p.w.rowBytes
	run := max(1, releaseBytes/rb)
	for lo < hi {
		copied, made := p.groupsMade(1)
		if lo < made {
			e := min(hi, made)
			p.kTilesAt(copied[lo*rb:], lo, e)
			lo = e
			continue
		}
		e := min(hi, lo+run)
		p.kTilesAt(p.w.Data[lo*rb:], lo, e)
		lo = e
	}
}

// forMade calls group(r, grp) for the first row r of each whole group of
// size rows that starts in [⌈lo⌉, ⌈hi⌉), as forGroups does, with grp the
// group's packed rows. While they are made behind the products
// (moveToOwn), a group made so far is read from them, one not made yet
// with the row-major tiles from Data, in runs of groups of about one step
// of the move at a time. How far the move has come is read again at each
// group past it, so that a product the move overtakes reads the new rows
// rather than the pages the move has let go (which would be read back
// from the page cache, page by page). Every tile computes the same bits, so which
// of them a group takes does not change any result.
func (p *product) forMade(lo, hi, size int, group func(r int, grp []byte)) {
	w := p.w
	ldg := size * w.rowBytes
	run := max(1, releaseBytes/ldg) * size // rows of row-major groups at a time
	packed, split := p.groupsMade(size)
	pending, end := -1, 0 // the row-major groups not computed yet: [pending, end)
	flush := func() {
		if pending >= 0 {
			p.tiles(pending, end)
			pending = -1
		}
	}
	p.forGroups(lo, hi, size, func(r int) {
		if r >= split {
			packed, split = p.groupsMade(size)
		}
		if r >= split {
			if pending < 0 {
				pending = r
			}
			if end = r + size; end-pending >= run {
				flush()
			}
			return
		}
		flush()
		group(r, packed[r/size*ldg:])
	})
	flush()
}

// groupsMade returns the packed rows p reads and the first row of the
// groups of size rows not in them (w.Rows when all are): while packed
// rows are made behind the products (moveToOwn), those made so far.
func (p *product) groupsMade(size int) (packed []byte, split int) {
	w := p.w
	packed, split = p.packed, w.Rows
	if packed != nil {
		return packed, split
	}
	// own before packed: the mover stores the finished copy as packed
	// before it clears own.
	if o := w.own.Load(); o != nil {
		return *o, int(w.ownUpTo.Load()) / (size * w.rowBytes) * size
	}
	if q := w.packed.Load(); q != nil {
		return *q, split // made since prepare
	}
	return nil, 0 // queued behind other matrices
}

// forGroups calls group(r) for the first row r of each whole group of
// size rows that starts in [⌈lo⌉, ⌈hi⌉) (⌈⌉ to a multiple of size), so
// the ranges the threads take cover each group once, and computes the
// rows of [lo, hi) past the last whole group with the row-major tiles.
func (p *product) forGroups(lo, hi, size int, group func(r int)) {
	rows := p.w.Rows
	whole := rows / size * size
	up := func(r int) int { return min(whole, (r+size-1)/size*size) }
	for r := up(lo); r < up(hi); r += size {
		group(r)
	}
	if whole < rows && hi > whole {
		p.tiles(max(lo, whole), hi)
	}
}

// packedTiles are the level's tiles of packed rows of p's type.
func (p *product) packedTiles() *[3]qTileFn { return p.ks.packedFor(p.w.Type) }

// readsPacked reports whether products at ks's level read matrices of
// type t (Q8_0, Q4_0 or Q5_0; Q5_0 where the level has its tiles, q5.go)
// from packed rows.
func (ks *kernelSet) readsPacked(t DType) bool {
	return packing && ks.packedFor(t)[1] != nil
}

// packedFor are ks's tiles of packed rows of type t (Q8_0, Q4_0 or Q5_0).
func (ks *kernelSet) packedFor(t DType) *[3]qTileFn {
	switch t {
	case Q4_0:
		return &ks.q4packed
	case Q5_0:
		return &ks.q5packed
	}
	return &ks.q8packed
}

// runPacked computes rows [lo, hi) of p: those of the whole groups from
// the packed rows, the rest with the row-major tiles. Row ranges are
// widened to whole groups the same way in every call: a range [lo, hi)
// computes the groups that start in [⌈lo⌉, ⌈hi⌉) (⌈⌉ to a multiple of
// 16), so the ranges the threads take still cover each group once. Tokens
// run in pairs over a group (its rows stay in L1 or L2 between pairs), the
// last of an odd count alone. While the packed rows are made behind the
// products, the groups not made yet are read as forMade says.
func (p *product) runPacked(lo, hi int) {
	w, acts, out, n, tiles := p.w, p.acts, p.out, p.n, p.packedTiles()
	rows, nb := w.Rows, w.Cols/QK
	ldg := uintptr(packRows * w.rowBytes) // from one group to the next
	ldx, ldo := uintptr(nb)*unsafe.Sizeof(actBlock{}), uintptr(4*rows)
	p.forMade(lo, hi, packRows, func(r int, g []byte) {
		grp := &g[0]
		t := 0
		for ; t+2 <= n; t += 2 {
			tiles[2](grp, ldg, &acts[t*nb], ldx, nb, &out[t*rows+r], ldo)
		}
		if t < n {
			tiles[1](grp, ldg, &acts[t*nb], ldx, nb, &out[t*rows+r], ldo)
		}
	})
}
