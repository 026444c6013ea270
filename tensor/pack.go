package tensor

import "encoding/binary"

// Packed Q4_0 rows. At the AVX-512 level a Q4_0 matrix keeps, next to its
// Data, a copy whose rows are interleaved 16 at a time (q4PackRows): for
// group g (rows 16g…16g+15) and block b, a unit of q4PackBlock bytes holds
// the 16 rows' F16 scales, then for k = 0…3 the k-th 4-byte word of the
// codes of each of the 16 rows. The low nibbles of word k are the codes of
// lane k of dotQuant's definition (act.go) and its high nibbles those of
// lane k+4, so the packed tiles compute lane l of 16 rows with one
// instruction (gen_kernels.go, q4PackedAVX512). The rows past the last
// whole group are not packed: the row-major tiles compute them from Data.
//
// The copy is made on the first product at that level (it costs one pass
// over the matrix) and shared by every later product; Data stays as it
// was (writers, fingerprints and the other levels read it). A memory-
// mapped file's pages are only read to make it.
const (
	q4PackRows  = 16
	q4PackBlock = q4PackRows * 18 // bytes of one block of 16 rows
)

// q4Packing enables the packed tiles (benchmarks compare with it off).
var q4Packing = true

// packedQ4 returns m's packed rows (nil when m has fewer than q4PackRows
// rows), making them on first use. Concurrent first uses may each pack;
// one copy wins and the others are dropped.
func (m *Matrix) packedQ4() []byte {
	if p := m.q4packed.Load(); p != nil {
		return *p
	}
	if m.Type != Q4_0 || m.Rows < q4PackRows {
		return nil
	}
	p := packQ4(m.Data, m.Rows, m.Cols)
	m.q4packed.CompareAndSwap(nil, &p)
	return *m.q4packed.Load()
}

// packQ4 packs the whole groups of 16 rows of a rows × cols Q4_0 matrix
// (on the worker threads: a group's units depend on its rows alone).
func packQ4(data []byte, rows, cols int) []byte {
	nb := cols / QK
	rb := nb * 18
	groups := rows / q4PackRows
	out := make([]byte, groups*q4PackRows*rb)
	le := binary.LittleEndian
	ParallelFor(groups, len(out), func(lo, hi int) {
		for g := lo; g < hi; g++ {
			for r := 0; r < q4PackRows; r++ {
				row := data[(g*q4PackRows+r)*rb:][:rb]
				for b := 0; b < nb; b++ {
					blk := row[18*b:][:18]
					unit := out[(g*nb+b)*q4PackBlock:][:q4PackBlock]
					le.PutUint16(unit[2*r:], le.Uint16(blk))
					for k := 0; k < 4; k++ {
						le.PutUint32(unit[32+64*k+4*r:], le.Uint32(blk[2+4*k:]))
					}
				}
			}
		}
	})
	return out
}

// unpackQ4Row writes row r of packed rows (nb blocks per row) in Q4_0's
// row-major layout to dst (nb·18 bytes): packQ4 undone, for the tests.
func unpackQ4Row(dst, packed []byte, r, nb int) {
	g, i := r/q4PackRows, r%q4PackRows
	for b := 0; b < nb; b++ {
		unit := packed[(g*nb+b)*q4PackBlock:][:q4PackBlock]
		blk := dst[b*18:][:18]
		binary.LittleEndian.PutUint16(blk, binary.LittleEndian.Uint16(unit[2*i:]))
		for k := 0; k < 4; k++ {
			copy(blk[2+4*k:][:4], unit[32+64*k+4*i:][:4])
		}
	}
}

// productQ4Packed computes the rows of the whole groups from the packed
// copy and the rest with tail (nil when every row is in a group). Row
// ranges are widened to whole groups the same way in every call: a
// range [lo, hi) computes the groups that start in [⌈lo⌉, ⌈hi⌉) (⌈⌉ to a
// multiple of 16), so the ranges the threads take still cover each
// group once.
func productQ4Packed(out []float32, packed []byte, w *Matrix, acts []actBlock, n int, ks *kernelSet, ldx, ldo uintptr, tail product) product {
	rows, nb := w.Rows, w.Cols/QK
	packedRows := rows / q4PackRows * q4PackRows
	ldg := uintptr(nb * q4PackBlock) // from one group to the next
	up := func(r int) int { return min(packedRows, (r+q4PackRows-1)/q4PackRows*q4PackRows) }
	return func(lo, hi int) {
		for r := up(lo); r < up(hi); r += q4PackRows {
			w := &packed[r/q4PackRows*int(ldg)]
			t := 0
			for ; t+2 <= n; t += 2 {
				ks.q4packed[2](w, ldg, &acts[t*nb], ldx, nb, &out[t*rows+r], ldo)
			}
			if t < n {
				ks.q4packed[1](w, ldg, &acts[t*nb], ldx, nb, &out[t*rows+r], ldo)
			}
		}
		if tail != nil && hi > packedRows {
			tail(max(lo, packedRows), hi)
		}
	}
}
