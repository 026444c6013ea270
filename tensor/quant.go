package tensor

import (
	"encoding/binary"
	"math"
)

// QuantizeQ8_0 appends the Q8_0 encoding of x (len a multiple of QK) to dst:
// per block of 32 values, d = max|x|/127 stored as float16 and q = round(x/d)
// as int8, as GGML's reference quantize_row_q8_0 does.
func QuantizeQ8_0(dst []byte, x []float32) []byte {
	nb := len(x) / QK
	if n := len(dst); cap(dst)-n >= nb*(2+QK) && nb > 0 {
		dst = dst[:n+nb*(2+QK)]
		done := quantizeQ8Chunks(dst[n:], x[:nb*QK]) // in assembly at the AVX-512 levels
		x, dst = x[done*QK:], dst[:n+done*(2+QK)]
	}
	for b := 0; b+QK <= len(x); b += QK {
		blk := x[b : b+QK]
		var amax float32
		for _, v := range blk {
			if a := float32(math.Abs(float64(v))); a > amax {
				amax = a
			}
		}
		d := amax / 127
		id := float32(0)
		if d != 0 {
			id = 1 / d
		}
		dst = binary.LittleEndian.AppendUint16(dst, F32ToF16(d))
		for _, v := range blk {
			dst = append(dst, byte(int8(roundHalfAway(v*id))))
		}
	}
	return dst
}

// signedMax is the value of largest magnitude in blk (the first of equal
// magnitudes), GGML's reference quantizers' max.
func signedMax(blk []float32) float32 {
	var amax, m float32
	for _, v := range blk {
		if a := float32(math.Abs(float64(v))); a > amax {
			amax, m = a, v
		}
	}
	return m
}

// QuantizeQ4_0 appends the Q4_0 encoding of x (len a multiple of QK) to dst, as
// GGML's reference quantize_row_q4_0: d = m/-8 where m is the value of largest
// magnitude, q = clamp(x/d + 8.5) in 4 bits; element j in the low nibble of
// byte j, element j+16 in its high nibble.
func QuantizeQ4_0(dst []byte, x []float32) []byte {
	for b := 0; b+QK <= len(x); b += QK {
		blk := x[b : b+QK]
		m := signedMax(blk)
		d := m / -8
		id := float32(0)
		if d != 0 {
			id = 1 / d
		}
		dst = binary.LittleEndian.AppendUint16(dst, F32ToF16(d))
		for j := 0; j < QK/2; j++ {
			q0 := min(15, int8(blk[j]*id+8.5))
			q1 := min(15, int8(blk[j+QK/2]*id+8.5))
			dst = append(dst, byte(q0)|byte(q1)<<4)
		}
	}
	return dst
}

func roundHalfAway(v float32) float32 { return float32(math.Round(float64(v))) }

// DequantizeRow writes the n = len(dst) elements stored in src (one row in
// type t) to dst as float32.
func DequantizeRow(dst []float32, t DType, src []byte) {
	switch t {
	case F32:
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
	case F16:
		for i := range dst {
			dst[i] = F16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	case BF16:
		for i := range dst {
			dst[i] = BF16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	case Q8_0:
		for b := 0; b*QK < len(dst); b++ {
			blk := src[b*(2+QK) : (b+1)*(2+QK)]
			d := F16ToF32(binary.LittleEndian.Uint16(blk))
			out := dst[b*QK : (b+1)*QK]
			for j := range out {
				out[j] = float32(int8(blk[2+j])) * d
			}
		}
	case Q4_0:
		for b := 0; b*QK < len(dst); b++ {
			blk := src[b*(2+QK/2) : (b+1)*(2+QK/2)]
			d := F16ToF32(binary.LittleEndian.Uint16(blk))
			out := dst[b*QK : (b+1)*QK]
			for j := 0; j < QK/2; j++ {
				q := blk[2+j]
				out[j] = float32(int(q&0xf)-8) * d
				out[j+QK/2] = float32(int(q>>4)-8) * d
			}
		}
	case Q5_0:
		dequantizeQ5_0(dst, src)
	case Q4_K:
		for b := 0; b*QKK < len(dst); b++ {
			dequantizeQ4K(dst[b*QKK:], src[b*q4KBytes:])
		}
	case Q6_K:
		for b := 0; b*QKK < len(dst); b++ {
			dequantizeQ6K(dst[b*QKK:], src[b*q6KBytes:])
		}
	default:
		panic("tensor: DequantizeRow of unknown dtype " + t.String())
	}
}
