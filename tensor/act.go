package tensor

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// Integer dot products for Q8_0 and Q4_0 weights. The matrix products
// quantize their float32 inputs ("activations") to 8 bits per block of 32,
// as llama.cpp does for these types, and multiply integers:
//
//	x[32b+j] ≈ dx_b·qx[32b+j],  dx_b = max_j |x[32b+j]| / 127,
//	qx = round-half-even(x·(1/dx_b)) clamped to ±127,
//
// and for a weight row with block scales dw_b and codes qw (Q4_0 codes are
// the nibble minus 8), in 8 lanes l:
//
//	p_bl   = Σ_{j<4} qw[32b+4l+j]·qx[32b+4l+j]     (exact in int32)
//	s_b    = float32(dw_b·dx_b)                     (one rounding)
//	acc[l] = fma32(s_b, float32(p_bl), acc[l])      (b in increasing order)
//
// then reduce8. The integer sums are exact on every CPU and the float steps
// are one fixed order, so the vector kernels (VPDPBUSD, or VPMADDUBSW with
// VPMADDWD) and the Go code give the same bits.
//
// Numerics: the inputs lose precision to 8 bits (a relative error of at most
// 1/254 of each block's largest magnitude), on top of the weights' own
// quantization. The model tests keep the Q8_0 next-token distributions
// within the total-variation tolerance of F32 that the Q8_0 weights alone
// were held to (model/llama TestConvertToGGUF).

// actBlock is one block of 32 quantized inputs as the kernels read it
// (72 bytes: codes at 0, corrections at 32, scale at 64).
type actBlock struct {
	q    [QK]int8 // codes, |q| ≤ 127
	corr [8]int32 // −off·Σ of each 4-code group: off 128 (Q8_0) or 8 (Q4_0)
	d    float32  // scale dx
	_    [4]byte
}

// The VNNI kernels multiply unsigned by signed bytes: they feed Q8_0 codes
// as qw+128 and Q4_0 codes as the raw nibble qw+8, and start each lane from
// corr = −off·Σ qx so that the sums are Σ qw·qx exactly.
func actOffset(t DType) int32 {
	if t == Q4_0 {
		return 8
	}
	return 128
}

// quantizeActs quantizes x (a whole number of blocks) for products with
// weights of type t, reusing dst's storage.
func quantizeActs(dst []actBlock, x []float32, t DType) []actBlock {
	nb := len(x) / QK
	if cap(dst) < nb {
		dst = make([]actBlock, nb)
	}
	dst = dst[:nb]
	off := actOffset(t)
	if llamaInputs.Load() { // llamainputs.go
		for b := range dst {
			quantizeBlockLlama(&dst[b], x[b*QK:(b+1)*QK:(b+1)*QK], off)
		}
		return dst
	}
	if ks := kernels(); ks != nil && ks.quant != nil && nb > 0 {
		ks.quant(&dst[0], &x[0], nb, off)
		return dst
	}
	for b := range dst {
		quantizeBlock(&dst[b], x[b*QK:(b+1)*QK:(b+1)*QK], off)
	}
	return dst
}

func quantizeBlock(a *actBlock, x []float32, off int32) {
	var amax float32
	for _, v := range x {
		if m := math.Float32frombits(math.Float32bits(v) &^ (1 << 31)); m > amax {
			amax = m // NaN never compares greater: ignored
		}
	}
	d := amax / 127
	id := float32(0)
	if d != 0 {
		id = 1 / d
	}
	for j, v := range x {
		a.q[j] = int8(max(-127, min(127, cvtRound(float32(v*id)))))
	}
	for l := range a.corr {
		s := int32(a.q[4*l]) + int32(a.q[4*l+1]) + int32(a.q[4*l+2]) + int32(a.q[4*l+3])
		a.corr[l] = -off * s
	}
	a.d = d
}

// cvtRound converts like CVTPS2DQ under the default rounding mode: to the
// nearest integer, ties to even; NaN and values out of int32 range give
// math.MinInt32.
func cvtRound(v float32) int32 {
	if !(v >= -2147483648 && v < 2147483648) {
		return math.MinInt32
	}
	return int32(math.RoundToEven(float64(v)))
}

// accBlock adds one block to dotQuant's lanes: lane l gets
// fma32(s, p_l, ·) with p_l = Σ_{j<4} qw[4l+j]·q[4l+j], exact in int32.
func accBlock(acc *[8]float32, s float32, qw *[QK]int32, q *[QK]int8) {
	for l := range acc {
		p := qw[4*l]*int32(q[4*l]) + qw[4*l+1]*int32(q[4*l+1]) +
			qw[4*l+2]*int32(q[4*l+2]) + qw[4*l+3]*int32(q[4*l+3])
		acc[l] = fma32(s, float32(p), acc[l])
	}
}

// dotQuant is the portable integer dot product of one Q8_0 or Q4_0 row w
// with quantized inputs a, in the order described at the top of this file.
func dotQuant(t DType, w []byte, a []actBlock) float32 {
	var acc [8]float32
	var qw [QK]int32
	bb := t.BlockBytes()
	for b := blocksQuant(t, w, a, &acc); b < len(a); b++ { // in assembly where it exists (arm64)
		blk := w[b*bb : (b+1)*bb : (b+1)*bb]
		if t == Q8_0 {
			for j := range qw {
				qw[j] = int32(int8(blk[2+j]))
			}
		} else {
			for j := 0; j < QK/2; j++ {
				qw[j] = int32(blk[2+j]&0xf) - 8
				qw[j+QK/2] = int32(blk[2+j]>>4) - 8
			}
		}
		accBlock(&acc, float32(f16Table[binary.LittleEndian.Uint16(blk)]*a[b].d), &qw, &a[b].q)
	}
	return reduce8(&acc)
}

// actPair is block b of two tokens t and t+1 laid out for the AVX-512
// token-pair tiles (192 bytes): each 64-byte row holds token t's values in
// its low 32 bytes and token t+1's in its high 32 bytes, so that one ZMM
// load gives both tokens' operands as two 256-bit halves, each exactly the
// operand the one-token tiles load into a YMM register: the codes, the
// corrections, and the scale dx broadcast to the 8 lanes. The pair tiles
// compute dotQuant for each half (gen_kernels.go, quantPairAVX512).
type actPair struct {
	q    [2][QK]int8
	corr [2][8]int32
	d    [2][8]float32
}

// pairActs lays out the quantized inputs acts of n tokens (nb blocks each)
// in token pairs, block-major: pair p of block b at dst[b·⌈n/2⌉ + p], so a
// tile reads the pairs of its tokens contiguously and steps ⌈n/2⌉ pairs a
// block. An odd n's last pair has zeros for its high half (the tiles do not
// store that half's outputs).
func pairActs(dst []actPair, acts []actBlock, n, nb int) {
	np := (n + 1) / 2
	for b := 0; b < nb; b++ {
		for p := 0; p < np; p++ {
			d := &dst[b*np+p]
			for h := 0; h < 2; h++ {
				t := 2*p + h
				if t >= n {
					d.q[h], d.corr[h], d.d[h] = [QK]int8{}, [8]int32{}, [8]float32{}
					continue
				}
				a := &acts[t*nb+b]
				d.q[h], d.corr[h] = a.q, a.corr
				for l := range d.d[h] {
					d.d[h][l] = a.d
				}
			}
		}
	}
}

// pairBuf holds a 64-byte aligned []actPair (each of its rows one cache
// line).
type pairBuf struct {
	raw []byte
	p   []actPair
}

// resize makes b.p n pairs long, reusing b's storage.
func (b *pairBuf) resize(n int) []actPair {
	b.p = aligned64[actPair](&b.raw, n)
	return b.p
}

// aligned64 returns n values of T starting on a 64-byte boundary inside
// *raw, which it grows when too small (to hold them and the alignment).
// T must hold no pointers: raw is only bytes to the garbage collector.
func aligned64[T any](raw *[]byte, n int) []T {
	var zero T
	size := uintptr(n)*unsafe.Sizeof(zero) + 63
	if uintptr(cap(*raw)) < size {
		*raw = make([]byte, size)
	}
	*raw = (*raw)[:cap(*raw)]
	off := -uintptr(unsafe.Pointer(unsafe.SliceData(*raw))) & 63
	return unsafe.Slice((*T)(unsafe.Pointer(&(*raw)[off])), n)
}
