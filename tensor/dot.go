package tensor

import "encoding/binary"

// The dot kernels below compute Σ w[c]·x[c] for one stored row w. Each has a
// fixed summation order, the same in the AVX2 assembly (amd64) and in the
// portable Go code: 32 float32 partial sums (element c goes to partial c mod
// 32, products rounded to float32 before each add, never fused into an FMA),
// combined pairwise at the end by reduce32. Q8_0 keeps 8 partials per lane as
// described at dotQ8_0. The result depends only on the inputs — not on the
// CPU, the build flags, the thread count or how many tokens share the product
// — which the server-side draft replica relies on.

// Dot returns Σ a[i]·b[i] over len(a) elements (b must be at least as long).
func Dot(a, b []float32) float32 {
	b = b[:len(a)]
	var acc [32]float32
	i := chunksF32(a, b, &acc)
	for ; i+32 <= len(a); i += 32 {
		aa := a[i : i+32 : i+32]
		bb := b[i : i+32 : i+32]
		for l := range acc {
			acc[l] += float32(aa[l] * bb[l])
		}
	}
	for l := 0; i+l < len(a); l++ {
		acc[l] += float32(a[i+l] * b[i+l])
	}
	return reduce32(&acc)
}

// reduce32 combines 32 partial sums in a fixed order.
func reduce32(acc *[32]float32) float32 {
	var v [8]float32
	for l := range v {
		v[l] = (acc[l] + acc[8+l]) + (acc[16+l] + acc[24+l])
	}
	return reduce8(&v)
}

// reduce8 combines 8 partial sums pairwise in a fixed order.
func reduce8(acc *[8]float32) float32 {
	return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
}

func dotF16(w []byte, x []float32) float32 {
	n := len(w) / 2
	x = x[:n]
	tab := f16Table
	var acc [32]float32
	i := chunksF16(w, x, &acc)
	for ; i+32 <= n; i += 32 {
		ww := w[2*i : 2*i+64 : 2*i+64]
		xx := x[i : i+32 : i+32]
		for l := range acc {
			acc[l] += float32(tab[binary.LittleEndian.Uint16(ww[2*l:])] * xx[l])
		}
	}
	for l := 0; i+l < n; l++ {
		acc[l] += float32(tab[binary.LittleEndian.Uint16(w[2*(i+l):])] * x[i+l])
	}
	return reduce32(&acc)
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

// dotQ8_0 sums, per block of 32 with scale d and lane l < 8,
// acc[l] += d·((q[l]x[l] + q[8+l]x[8+l]) + (q[16+l]x[16+l] + q[24+l]x[24+l])),
// then combines the 8 lanes pairwise.
func dotQ8_0(w []byte, x []float32) float32 {
	const bb = 2 + QK
	nb := len(w) / bb
	x = x[:nb*QK]
	var acc [8]float32
	for b := blocksQ8(w, x, &acc); b < nb; b++ {
		blk := w[b*bb : (b+1)*bb : (b+1)*bb]
		q := blk[2 : 2+QK : 2+QK]
		xx := x[b*QK : (b+1)*QK : (b+1)*QK]
		d := f16Table[binary.LittleEndian.Uint16(blk)]
		for l := range acc {
			p0 := float32(float32(int8(q[l])) * xx[l])
			p1 := float32(float32(int8(q[8+l])) * xx[8+l])
			p2 := float32(float32(int8(q[16+l])) * xx[16+l])
			p3 := float32(float32(int8(q[24+l])) * xx[24+l])
			acc[l] += float32(d * ((p0 + p1) + (p2 + p3)))
		}
	}
	return reduce8(&acc)
}

// dotQ4_0 sums like dotQ8_0, with q[j] = (low nibble of byte j) − 8 and
// q[16+j] = (high nibble of byte j) − 8 for j < 16 (the GGUF Q4_0 layout):
// per block and lane l < 8,
// acc[l] += d·((q[l]x[l] + q[8+l]x[8+l]) + (q[16+l]x[16+l] + q[24+l]x[24+l])),
// then the 8 lanes are combined pairwise.
func dotQ4_0(w []byte, x []float32) float32 {
	const bb = 2 + QK/2
	nb := len(w) / bb
	x = x[:nb*QK]
	var acc [8]float32
	for b := blocksQ4(w, x, &acc); b < nb; b++ {
		blk := w[b*bb : (b+1)*bb : (b+1)*bb]
		q := blk[2 : 2+QK/2 : 2+QK/2]
		xx := x[b*QK : (b+1)*QK : (b+1)*QK]
		d := f16Table[binary.LittleEndian.Uint16(blk)]
		for l := range acc {
			p0 := float32(float32(int(q[l]&0xf)-8) * xx[l])
			p1 := float32(float32(int(q[8+l]&0xf)-8) * xx[8+l])
			p2 := float32(float32(int(q[l]>>4)-8) * xx[16+l])
			p3 := float32(float32(int(q[8+l]>>4)-8) * xx[24+l])
			acc[l] += float32(d * ((p0 + p1) + (p2 + p3)))
		}
	}
	return reduce8(&acc)
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
	case Q4_K:
		return dotQ4K(m.row(i), x)
	case Q6_K:
		return dotQ6K(m.row(i), x)
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
