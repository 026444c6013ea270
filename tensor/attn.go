package tensor

// Kernels of attention over a KV cache: rows of keys or values stored with a
// stride (one row per position).

// DotRows writes out[i] = Dot(x, m[i*stride:i*stride+len(x)]) for every
// i < len(out): the scores of a query against cached keys. Each is exactly
// Dot's value.
func DotRows(out, m []float32, stride int, x []float32) {
	n, cols := len(out), len(x)
	if n == 0 {
		return
	}
	if (n-1)*stride+cols > len(m) {
		panic("tensor: DotRows reads past the rows")
	}
	ks := rowKernels()
	if ks == nil || cols == 0 {
		for i := range out {
			out[i] = dotF32(x, m[i*stride:i*stride+cols])
		}
		return
	}
	R := ks.f32Rows[1]
	for i := 0; i < n; i += R {
		r := min(R, n-i)
		ks.f32[r][1](&m[i*stride], uintptr(4*stride), &x[0], 0, cols, &out[i], 0)
	}
}

// WeightedSum writes out[i] = Σ_t a[t]·v[t*stride+i] for every i < len(out):
// the attention-weighted sum of cached values. Each product and each partial
// sum is rounded to float32, in increasing t from zero.
func WeightedSum(out, a, v []float32, stride int) {
	clear(out)
	WeightedSumAdd(out, a, v, stride)
}

// rowKernels are the kernels that score a cache's rows: a level whose
// one-token tiles are one-row stream tiles for weight matrices
// (avx512-zen4, avx512-zen5) scores the many short rows of a KV cache with
// its multi-row tiles (the same bits).
func rowKernels() *kernelSet {
	ks := kernels()
	if ks != nil && ks.wide != nil {
		return ks.wide
	}
	return ks
}
