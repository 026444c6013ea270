package tensor

import "encoding/binary"

// K-quants (GGML's Q4_K and Q6_K), the storage of most Llama GGUFs in the
// wild (Q4_K_M mixes both). A super-block holds QKK = 256 elements.
//
// Q4_K, 144 bytes: d f16 · dmin f16 · scales [12]byte · qs [128]byte.
// Eight sub-blocks of 32 elements; sub-block j has a 6-bit scale sc_j and a
// 6-bit min m_j packed in scales (getScaleMinK4); element value
// d·sc_j·q − dmin·m_j with q a 4-bit code: elements 64i…64i+31 are the low
// nibbles of qs[32i…32i+31], elements 64i+32…64i+63 their high nibbles.
//
// Q6_K, 210 bytes: ql [128]byte · qh [64]byte · scales [16]int8 · d f16.
// Sixteen sub-blocks of 16 elements with an int8 scale each; a 6-bit code
// is 4 low bits from ql and 2 high bits from qh, value d·scale·(code − 32),
// laid out in two halves of 128 elements as dequantizeQ6K spells out.
//
// The layouts follow GGML's reference dequantize_row_q4_K/q6_K exactly.

// QKK is the number of elements in a K-quant super-block.
const QKK = 256

const (
	q4KBytes = 2 + 2 + 12 + QKK/2
	q6KBytes = QKK/2 + QKK/4 + QKK/16 + 2
)

// getScaleMinK4 unpacks the 6-bit scale and min of sub-block j.
func getScaleMinK4(j int, q []byte) (sc, m byte) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return (q[j+4] & 0xF) | ((q[j-4] >> 6) << 4), (q[j+4] >> 4) | ((q[j] >> 6) << 4)
}

// dequantizeQ4K writes the 256 elements of one Q4_K super-block.
func dequantizeQ4K(y []float32, blk []byte) {
	var s [16]float32
	q4KScales(blk, &s)
	q := blk[16 : 16+QKK/2]
	y = y[:QKK]
	var lo, hi [16]float32 // the 16 values of each sub-block's 4-bit codes
	for i, is := 0, 0; i < QKK; i, is = i+64, is+2 {
		d1, m1 := s[is], s[8+is]
		d2, m2 := s[is+1], s[8+is+1]
		for c := range lo {
			lo[c] = float32(d1*float32(c)) - m1
			hi[c] = float32(d2*float32(c)) - m2
		}
		qq := q[i/2 : i/2+32 : i/2+32]
		yl := y[i : i+32 : i+32]
		yh := y[i+32 : i+64 : i+64]
		for l, b := range qq {
			yl[l] = lo[b&0xF]
			yh[l] = hi[b>>4]
		}
	}
}

// dequantizeQ6K writes the 256 elements of one Q6_K super-block.
func dequantizeQ6K(y []float32, blk []byte) {
	ql := blk[0:128]
	qh := blk[128:192]
	y = y[:QKK]
	var ds [16]float32 // d × the scale of each 16-element sub-block
	q6KScales(blk, &ds)
	for n := 0; n < 2; n++ {
		l0, h0, y0 := ql[64*n:64*n+64], qh[32*n:32*n+32], y[128*n:128*n+128]
		for l := 0; l < 32; l++ {
			is := 8*n + l/16
			q1 := (l0[l] & 0xF) | ((h0[l]>>0)&3)<<4
			q2 := (l0[l+32] & 0xF) | ((h0[l]>>2)&3)<<4
			q3 := (l0[l] >> 4) | ((h0[l]>>4)&3)<<4
			q4 := (l0[l+32] >> 4) | ((h0[l]>>6)&3)<<4
			y0[l] = ds[is] * q6Value[q1]
			y0[l+32] = ds[is+2] * q6Value[q2]
			y0[l+64] = ds[is+4] * q6Value[q3]
			y0[l+96] = ds[is+6] * q6Value[q4]
		}
	}
}

// q6Value maps a 6-bit Q6_K code to its signed value code − 32.
var q6Value = func() (t [64]float32) {
	for i := range t {
		t[i] = float32(i - 32)
	}
	return
}()

// q4KScales writes d·sc_j to s[j] and dmin·m_j to s[8+j] for the eight
// sub-blocks of a Q4_K super-block.
func q4KScales(blk []byte, s *[16]float32) {
	d := F16ToF32(binary.LittleEndian.Uint16(blk[0:]))
	dmin := F16ToF32(binary.LittleEndian.Uint16(blk[2:]))
	scales := blk[4:16:16]
	for j := 0; j < 8; j++ {
		sc, m := getScaleMinK4(j, scales)
		s[j], s[8+j] = d*float32(sc), dmin*float32(m)
	}
}

// q6KScales writes d·scale_j for the sixteen sub-blocks of a Q6_K
// super-block.
func q6KScales(blk []byte, ds *[16]float32) {
	d := F16ToF32(binary.LittleEndian.Uint16(blk[208:]))
	for i := range ds {
		ds[i] = d * float32(int8(blk[192+i]))
	}
}
