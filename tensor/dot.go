package tensor

import "encoding/binary"

// The dot kernels below compute Σ w[c]·x[c] for one stored row w against
// float32 inputs x. Each has a fixed summation order, the same in the
// assembly (amd64) and in the portable Go code:
//
//   - F32 (dotF32, fma.go): 16 float32 partial sums, element c into partial
//     c mod 16 with one fused multiply-add, combined by reduce16.
//   - F16 and BF16: 32 partial sums, element c into partial c mod 32,
//     products rounded to float32 before each add, combined by reduce32.
//   - Q8_0 and Q4_0: the inputs are quantized to 8 bits per block of 32
//     and multiplied in exact integers; each block adds fma(dw·dx, Σ, acc)
//     into one of 8 lanes per row (act.go, dotQuant).
//
// The result depends only on the inputs — not on the CPU, the build flags,
// the thread count or how many tokens share the product — which the
// server-side draft replica relies on.

// Dot returns Σ a[i]·b[i] over len(a) elements (b must be at least as long),
// in the F32 order of dotF32.
func Dot(a, b []float32) float32 {
	var out [1]float32
	DotRows(out[:], b[:len(a)], 0, a) // the same order: fma is commutative
	return out[0]
}

// reduce32 combines 32 partial sums in a fixed order.
func reduce32(acc *[32]float32) float32 {
	var v [8]float32
	for l := range v {
		v[l] = (acc[l] + acc[8+l]) + (acc[16+l] + acc[24+l])
	}
	return reduce8(&v)
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

// dotBF16 is dotF16's order with bfloat16 weights.
func dotBF16(w []byte, x []float32) float32 {
	n := len(w) / 2
	x = x[:n]
	var acc [32]float32
	i := chunksBF16(w, x, &acc)
	for ; i+32 <= n; i += 32 {
		ww := w[2*i : 2*i+64 : 2*i+64]
		xx := x[i : i+32 : i+32]
		for l := range acc {
			acc[l] += float32(BF16ToF32(binary.LittleEndian.Uint16(ww[2*l:])) * xx[l])
		}
	}
	for l := 0; i+l < n; l++ {
		acc[l] += float32(BF16ToF32(binary.LittleEndian.Uint16(w[2*(i+l):])) * x[i+l])
	}
	return reduce32(&acc)
}

// RowDot returns Σ_c W[i,c]·x[c], exactly as MatVec computes it (for Q8_0,
// Q4_0, Q5_0 and the K-quants that is against x quantized to 8 bits, see act.go
// and kquant_int.go).
func (m *Matrix) RowDot(i int, x []float32) float32 {
	switch m.Type {
	case F32:
		return Dot(m.F32[i*m.Cols:(i+1)*m.Cols], x)
	case F16:
		return dotF16(m.row(i), x)
	case BF16:
		return dotBF16(m.row(i), x)
	case Q8_0, Q4_0:
		a := quantizeActs(nil, x[:m.Cols], m.Type)
		return dotQuant(m.Type, m.row(i), a)
	case Q5_0:
		return dotQ5(m.row(i), quantizeActs(nil, x[:m.Cols], Q8_0))
	case Q4_K:
		return dotQ4KInt(m.row(i), quantizeActsK(nil, x[:m.Cols]))
	case Q6_K:
		return dotQ6KInt(m.row(i), quantizeActsK(nil, x[:m.Cols]))
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
