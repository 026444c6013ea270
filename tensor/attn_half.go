package tensor

import "unsafe"

// Kernels of attention over a KV cache held in half precision (IEEE 754
// binary16, as llama.cpp's default F16 cache), each value widened to
// float32 exactly before it is used: the scores as an F16 matrix's row
// products (MatVec) compute them, the weighted sums in WeightedSum's order,
// so they equal WeightedSum over the widened values.

// PutF16 stores src into dst as halves, rounded to nearest even: the bits
// of F32ToF16, at every kernel level (VCVTPS2PH at the AVX levels).
func PutF16(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i := putF16Chunks(dst, src); i < len(src); i++ {
		dst[i] = F32ToF16(src[i])
	}
}

// halfBytes is the little-endian byte view of h that the assembly kernels
// read (they exist only on little-endian machines).
func halfBytes(h []uint16) []byte {
	if len(h) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&h[0])), 2*len(h))
}

// dotHalf is dotF16 over a row of halves: the same order, so its value is
// dotF16's of the row's bytes.
func dotHalf(w []uint16, x []float32) float32 {
	n := len(w)
	x = x[:n]
	tab := f16Table
	var acc [32]float32
	i := chunksF16(halfBytes(w), x, &acc)
	for ; i+32 <= n; i += 32 {
		ww := w[i : i+32 : i+32]
		xx := x[i : i+32 : i+32]
		for l := range acc {
			acc[l] += float32(tab[ww[l]] * xx[l])
		}
	}
	for l := 0; i+l < n; l++ {
		acc[l] += float32(tab[w[i+l]] * x[i+l])
	}
	return reduce32(&acc)
}

// DotRowsF16 is DotRows over rows of halves: out[i] is the dot product of
// x with m[i*stride:i*stride+len(x)], with the bits an F16 matrix's row
// product (MatVec) gives.
func DotRowsF16(out []float32, m []uint16, stride int, x []float32) {
	n, cols := len(out), len(x)
	if n == 0 {
		return
	}
	if (n-1)*stride+cols > len(m) {
		panic("tensor: DotRowsF16 reads past the rows")
	}
	ks := rowKernels()
	if ks == nil || cols == 0 || ks.f16Rows[1] == 0 || ks.f16Whole && cols%32 != 0 {
		for i := range out {
			out[i] = dotHalf(m[i*stride:i*stride+cols], x)
		}
		return
	}
	R := ks.f16Rows[1]
	for i := 0; i < n; i += R {
		r := min(R, n-i)
		ks.f16[r][1](&halfBytes(m[i*stride:])[0], uintptr(2*stride), &x[0], 0, cols, &out[i], 0)
	}
}

// WeightedSumF16 is WeightedSum over rows of halves: out[i] =
// Σ_t a[t]·v[t*stride+i], each product and each partial sum rounded to
// float32, in increasing t from zero.
func WeightedSumF16(out, a []float32, v []uint16, stride int) {
	clear(out)
	WeightedSumAddF16(out, a, v, stride)
}

// WeightedSumAddF16 is WeightedSumAdd over rows of halves: it continues a
// WeightedSumF16 from out's values, with the bits of one sum over all the
// rows.
func WeightedSumAddF16(out, a []float32, v []uint16, stride int) {
	cols := len(out)
	if len(a) == 0 {
		return
	}
	if (len(a)-1)*stride+cols > len(v) {
		panic("tensor: WeightedSumAddF16 reads past the rows")
	}
	c := 0
	if ks := kernels(); ks != nil && ks.wsumF16[1] != nil {
		w := ks.wsumWidth
		for c+w <= cols {
			k := min(4, (cols-c)/w)
			ks.wsumF16[k](&out[c], &a[0], &v[c], uintptr(2*stride), len(a))
			c += k * w
		}
	}
	if c == cols {
		return
	}
	tab := f16Table
	for t, at := range a {
		row := v[t*stride+c : t*stride+cols]
		for i, h := range row {
			out[c+i] += float32(at * tab[h]) // rounded before the add: never fused
		}
	}
}
