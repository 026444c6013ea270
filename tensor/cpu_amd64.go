//go:build amd64 && !purego

package tensor

import "unsafe"

func cpuid(eax, ecx uint32) (a, b, c, d uint32)
func xgetbv0() (eax uint32)

//go:noescape
func dotF32x32(a, b *float32, n int, acc *[32]float32)

//go:noescape
func dotF16x32(w *uint16, x *float32, n int, acc *[32]float32)

//go:noescape
func dotQ8x8(w *byte, x *float32, nb int, acc *[8]float32)

//go:noescape
func dotQ4x8(w *byte, x *float32, nb int, acc *[8]float32)

//go:noescape
func dotQ6Kx8(blk *byte, x *float32, ds *[16]float32, acc *[8]float32)

//go:noescape
func dotQ4Kx8(qs *byte, x *float32, s *[16]float32, acc *[8]float32)

// hasAVX2 reports AVX2 and F16C with the OS saving YMM registers.
var hasAVX2 = func() bool {
	maxID, _, _, _ := cpuid(0, 0)
	if maxID < 7 {
		return false
	}
	_, _, c1, _ := cpuid(1, 0)
	const osxsave, avx, f16c = 1 << 27, 1 << 28, 1 << 29
	if c1&osxsave == 0 || c1&avx == 0 || c1&f16c == 0 {
		return false
	}
	if xgetbv0()&6 != 6 { // XMM and YMM state enabled
		return false
	}
	_, b7, _, _ := cpuid(7, 0)
	return b7&(1<<5) != 0
}()

func chunksF32(a, b []float32, acc *[32]float32) int {
	n := len(a) &^ 31
	if hasAVX2 && n > 0 {
		dotF32x32(&a[0], &b[0], n, acc)
		return n
	}
	return 0
}

func chunksF16(w []byte, x []float32, acc *[32]float32) int {
	n := (len(w) / 2) &^ 31
	if hasAVX2 && n > 0 {
		dotF16x32((*uint16)(unsafe.Pointer(&w[0])), &x[0], n, acc)
		return n
	}
	return 0
}

func blocksQ8(w []byte, x []float32, acc *[8]float32) int {
	nb := len(w) / (2 + QK)
	if hasAVX2 && nb > 0 {
		dotQ8x8(&w[0], &x[0], nb, acc)
		return nb
	}
	return 0
}

func blocksQ4(w []byte, x []float32, acc *[8]float32) int {
	nb := len(w) / (2 + QK/2)
	if hasAVX2 && nb > 0 {
		dotQ4x8(&w[0], &x[0], nb, acc)
		return nb
	}
	return 0
}

// blockQ4K adds one Q4_K super-block (codes qs, scales s as q4KScales
// writes them) to acc as dotQ4K spells out.
func blockQ4K(qs []byte, x []float32, s *[16]float32, acc *[8]float32) bool {
	if !hasAVX2 || len(qs) < QKK/2 || len(x) < QKK {
		return false
	}
	dotQ4Kx8(&qs[0], &x[0], s, acc)
	return true
}

// blockQ6K adds one Q6_K super-block (scales ds = d·scale) to acc as dotQ6K
// spells out.
func blockQ6K(blk []byte, x []float32, ds *[16]float32, acc *[8]float32) bool {
	if !hasAVX2 || len(blk) < q6KBytes || len(x) < QKK {
		return false
	}
	dotQ6Kx8(&blk[0], &x[0], ds, acc)
	return true
}
