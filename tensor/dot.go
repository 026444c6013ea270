package tensor

import "encoding/binary"

// The dot kernels below compute Σ w[c]·x[c] for one stored row w. Each has a
// fixed summation order (eight float32 lanes, combined pairwise at the end),
// and the explicit float32 conversions forbid the compiler from fusing a
// multiply and an add into an FMA: the result depends only on the inputs, not
// on the build flags, the thread count or how many tokens share the product.

// Dot returns Σ a[i]·b[i] over len(a) elements (b must be at least as long).
func Dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		aa := a[i : i+8 : i+8]
		bb := b[i : i+8 : i+8]
		s0 += float32(aa[0] * bb[0])
		s1 += float32(aa[1] * bb[1])
		s2 += float32(aa[2] * bb[2])
		s3 += float32(aa[3] * bb[3])
		s4 += float32(aa[4] * bb[4])
		s5 += float32(aa[5] * bb[5])
		s6 += float32(aa[6] * bb[6])
		s7 += float32(aa[7] * bb[7])
	}
	for ; i < len(a); i++ {
		s0 += float32(a[i] * b[i])
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

func dotF16(w []byte, x []float32) float32 {
	n := len(w) / 2
	x = x[:n]
	tab := f16Table
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= n; i += 4 {
		ww := w[2*i : 2*i+8 : 2*i+8]
		xx := x[i : i+4 : i+4]
		s0 += float32(tab[binary.LittleEndian.Uint16(ww[0:])] * xx[0])
		s1 += float32(tab[binary.LittleEndian.Uint16(ww[2:])] * xx[1])
		s2 += float32(tab[binary.LittleEndian.Uint16(ww[4:])] * xx[2])
		s3 += float32(tab[binary.LittleEndian.Uint16(ww[6:])] * xx[3])
	}
	for ; i < n; i++ {
		s0 += float32(tab[binary.LittleEndian.Uint16(w[2*i:])] * x[i])
	}
	return (s0 + s1) + (s2 + s3)
}

func dotBF16(w []byte, x []float32) float32 {
	n := len(w) / 2
	x = x[:n]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= n; i += 4 {
		ww := w[2*i : 2*i+8 : 2*i+8]
		xx := x[i : i+4 : i+4]
		s0 += float32(BF16ToF32(binary.LittleEndian.Uint16(ww[0:])) * xx[0])
		s1 += float32(BF16ToF32(binary.LittleEndian.Uint16(ww[2:])) * xx[1])
		s2 += float32(BF16ToF32(binary.LittleEndian.Uint16(ww[4:])) * xx[2])
		s3 += float32(BF16ToF32(binary.LittleEndian.Uint16(ww[6:])) * xx[3])
	}
	for ; i < n; i++ {
		s0 += float32(BF16ToF32(binary.LittleEndian.Uint16(w[2*i:])) * x[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// dotQ8_0 sums, per block, d·Σ q[j]·x[j].
func dotQ8_0(w []byte, x []float32) float32 {
	const bb = 2 + QK
	nb := len(w) / bb
	x = x[:nb*QK]
	var sum float32
	for b := 0; b < nb; b++ {
		blk := w[b*bb : (b+1)*bb : (b+1)*bb]
		q := blk[2 : 2+QK : 2+QK]
		xx := x[b*QK : (b+1)*QK : (b+1)*QK]
		var s0, s1, s2, s3 float32
		for j := 0; j < QK; j += 4 {
			s0 += float32(float32(int8(q[j])) * xx[j])
			s1 += float32(float32(int8(q[j+1])) * xx[j+1])
			s2 += float32(float32(int8(q[j+2])) * xx[j+2])
			s3 += float32(float32(int8(q[j+3])) * xx[j+3])
		}
		sum += float32(f16Table[binary.LittleEndian.Uint16(blk)] * ((s0 + s1) + (s2 + s3)))
	}
	return sum
}

// dotQ4_0 sums, per block, d·Σ (q[j]−8)·x[j].
func dotQ4_0(w []byte, x []float32) float32 {
	const bb = 2 + QK/2
	nb := len(w) / bb
	x = x[:nb*QK]
	var sum float32
	for b := 0; b < nb; b++ {
		blk := w[b*bb : (b+1)*bb : (b+1)*bb]
		q := blk[2 : 2+QK/2 : 2+QK/2]
		lo := x[b*QK : b*QK+QK/2 : b*QK+QK/2]
		hi := x[b*QK+QK/2 : (b+1)*QK : (b+1)*QK]
		var s0, s1 float32
		for j := 0; j < QK/2; j++ {
			s0 += float32(float32(int(q[j]&0xf)-8) * lo[j])
			s1 += float32(float32(int(q[j]>>4)-8) * hi[j])
		}
		sum += float32(f16Table[binary.LittleEndian.Uint16(blk)] * (s0 + s1))
	}
	return sum
}

// RowDot returns Σ_c W[i,c]·x[c].
func (m *Matrix) RowDot(i int, x []float32) float32 {
	switch m.Type {
	case F32:
		return Dot(m.F32[i*m.Cols:(i+1)*m.Cols], x)
	case F16:
		return dotF16(m.row(i), x)
	case BF16:
		return dotBF16(m.row(i), x)
	case Q8_0:
		return dotQ8_0(m.row(i), x)
	case Q4_0:
		return dotQ4_0(m.row(i), x)
	}
	panic("tensor: RowDot of unknown dtype " + m.Type.String())
}

// RowDotRef is the reference for RowDot: the row dequantized, then summed in
// float64.
func (m *Matrix) RowDotRef(i int, x []float32) float64 {
	row := make([]float32, m.Cols)
	m.Row(row, i)
	var s float64
	for c, v := range row {
		s += float64(v) * float64(x[c])
	}
	return s
}
