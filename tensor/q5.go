package tensor

import (
	"encoding/binary"
)

// Q5_0 is GGML's 5-bit block format, which llama-quantize writes where a
// K-quant does not fit: a Q4_K tensor whose rows are not a multiple of 256
// elements (Gemma 3 1B's 1152, the tiny models' 64 or 128) falls back to
// Q5_0. A block of QK = 32 elements takes 22 bytes:
//
//	d  f16       the scale
//	qh [4]byte   bit j of the little-endian uint32 is bit 4 of code j
//	qs [16]byte  byte j: code j's low 4 bits in its low nibble, code j+16's
//	             in its high nibble
//
// and element j is d·(code_j − 16), code_j = (qs nibble) | (qh bit j)<<4 in
// 0…31, as GGML's dequantize_row_q5_0 computes it.
//
// Products follow Q8_0's and Q4_0's scheme (act.go): the inputs are
// quantized to 8 bits per block, the codes minus 16 times the input codes
// summed exactly in int32 per lane of 4, and per block
// acc[l] = fma32(float32(dw·dx), float32(p_l), acc[l]), then reduce8
// (dotQ5). That is GGML's ggml_vec_dot_q5_0_q8_0 up to the order of the
// float sums. The inputs are those of a Q8_0 product (offset 128), so a
// layer's Q5_0 and Q8_0 matrices share one quantization of their input;
// the tiles turn its corrections −128·Σqx into the −16·Σqx of Q5_0's codes
// by an exact shift (they are multiples of 128).
const q5Bytes = 2 + 4 + QK/2

// q5Code returns code j (0…31) of the Q5_0 block blk whose high bits are qh.
func q5Code(blk []byte, qh uint32, j int) int32 {
	var lo byte
	if j < QK/2 {
		lo = blk[6+j] & 0xf
	} else {
		lo = blk[6+j-QK/2] >> 4
	}
	return int32(lo) | int32(qh>>uint(j)&1)<<4
}

// dequantizeQ5_0 writes the len(dst)/QK blocks of src as float32.
func dequantizeQ5_0(dst []float32, src []byte) {
	for b := 0; b*QK < len(dst); b++ {
		blk := src[b*q5Bytes : (b+1)*q5Bytes : (b+1)*q5Bytes]
		d := F16ToF32(binary.LittleEndian.Uint16(blk))
		qh := binary.LittleEndian.Uint32(blk[2:])
		out := dst[b*QK : (b+1)*QK : (b+1)*QK]
		for j := range out {
			out[j] = float32(q5Code(blk, qh, j)-16) * d
		}
	}
}

// QuantizeQ5_0 appends the Q5_0 encoding of x (len a multiple of QK) to
// dst, as GGML's reference quantize_row_q5_0: d = m/−16 where m is the
// value of largest magnitude, code = min(31, int8(x/d + 16.5)).
func QuantizeQ5_0(dst []byte, x []float32) []byte {
	for b := 0; b+QK <= len(x); b += QK {
		blk := x[b : b+QK]
		m := signedMax(blk)
		d := m / -16
		id := float32(0)
		if d != 0 {
			id = 1 / d
		}
		var qh uint32
		var qs [QK / 2]byte
		for j := 0; j < QK/2; j++ {
			q0 := min(31, int8(float32(blk[j]*id)+16.5)) // rounded product, as in C
			q1 := min(31, int8(float32(blk[j+QK/2]*id)+16.5))
			qs[j] = byte(q0)&0xf | byte(q1)<<4
			qh |= uint32(byte(q0)>>4&1)<<j | uint32(byte(q1)>>4&1)<<(j+QK/2)
		}
		dst = binary.LittleEndian.AppendUint16(dst, F32ToF16(d))
		dst = binary.LittleEndian.AppendUint32(dst, qh)
		dst = append(dst, qs[:]...)
	}
	return dst
}

// dotQ5 is the portable integer dot product of one Q5_0 row w with inputs
// a quantized for Q8_0 (quantizeActs), in dotQuant's order: lane l of
// block b adds fma32(float32(dw·dx), p_bl, ·), p_bl = Σ_{j<4}
// (code − 16)·qx over elements 4l…4l+3.
func dotQ5(w []byte, a []actBlock) float32 {
	var acc [8]float32
	var qw [QK]int32
	for b := range a {
		blk := w[b*q5Bytes : (b+1)*q5Bytes : (b+1)*q5Bytes]
		qh := binary.LittleEndian.Uint32(blk[2:])
		for j := range qw {
			qw[j] = q5Code(blk, qh, j) - 16
		}
		accBlock(&acc, float32(f16Table[binary.LittleEndian.Uint16(blk)]*a[b].d), &qw, &a[b].q)
	}
	return reduce8(&acc)
}

// q5Set is one level's Q5_0 tiles (gen_kernels.go, quantAVX2 for Q5_0):
// tiles[R][T] computes out[t·ldo + r] = dotQ5(row r, token t) for R rows
// and T tokens, rows[T] is the height used for T tokens, maxT the most
// tokens a tile takes.
type q5Set struct {
	tiles [maxR + 1][maxT + 1]qTileFn
	rows  [maxT + 1]int
	maxT  int

	// Token-pair tiles (AVX-512; gen_kernels.go, quantPairAVX512) for
	// T = 2…pMaxT tokens over the Q8_0 inputs in pairs, as Q8_0's and
	// Q4_0's; pRows[T] are their heights, pRows[1] = rows[1] (one token
	// keeps tiles). pMaxT = 0: none.
	pairs [maxR + 1][maxT + 1]pairTileFn
	pRows [maxT + 1]int
	pMaxT int
}

// q5Sets holds the Q5_0 tiles per level (nil: dotQ5 in Go). The AVX-512
// levels run the AVX2 tiles for one token (the same bits) and their own
// token-pair tiles for more on the rows that are not packed: a matrix of
// 16 rows or more is packed there (pack.go) and takes kernelSet.q5packed,
// those tiles only for the rows past its last group of 16.
var q5Sets [numLevels]*q5Set
