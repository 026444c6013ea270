//go:build amd64 && !purego

package tensor

// maxF32x64 and maxF32x32 (vec_amd64.s, AVX-512 and AVX2) keep in acc
// the running maxima of x[0:n] (n a multiple of 64 or 32) in 64 or 32
// lanes (maxF32x32 leaves acc[32:] as it is), each lane as MaxF32's loop
// would (VMAXPS with the new value first keeps the old one on NaN and on
// equality).
//
//go:noescape
func maxF32x64(x *float32, n int, acc *[64]float32)

//go:noescape
func maxF32x32(x *float32, n int, acc *[64]float32)

// indexF32x16 and indexF32x8 return the start of the first group of 16 or
// 8 values of x[0:n] (n a multiple of it) that holds v, or n.
//
//go:noescape
func indexF32x16(x *float32, n int, v float32) int

//go:noescape
func indexF32x8(x *float32, n int, v float32) int

// scaleF64x32 and scaleF64x16 multiply d[0:n] (n a multiple of 32 or 16)
// by s.
//
//go:noescape
func scaleF64x32(d *float64, n int, s float64)

//go:noescape
func scaleF64x16(d *float64, n int, s float64)

// scaleChunks scales the largest multiple of the vector loop's width and
// returns how many values it covered.
func scaleChunks(d []float64, s float64) int {
	switch {
	case hasAVX512():
		if n := len(d) &^ 31; n > 0 {
			scaleF64x32(&d[0], n, s)
			return n
		}
	case hasAVX2():
		if n := len(d) &^ 15; n > 0 {
			scaleF64x16(&d[0], n, s)
			return n
		}
	}
	return 0
}

// maxChunks folds the largest multiple of the vector loop's width into *m
// and returns how many values it covered. (The kernels are called
// directly, not through a func value: through one, acc would escape and
// allocate.)
func maxChunks(x []float32, m *float32) int {
	var acc [64]float32
	for i := range acc {
		acc[i] = *m
	}
	var n int
	switch {
	case hasAVX512():
		if n = len(x) &^ 63; n > 0 {
			maxF32x64(&x[0], n, &acc)
		}
	case hasAVX2():
		if n = len(x) &^ 31; n > 0 {
			maxF32x32(&x[0], n, &acc)
		}
	}
	for _, a := range acc {
		if a > *m {
			*m = a
		}
	}
	return n
}

// indexChunks returns the start of the first vector group of x that holds
// v, or the end of the groups: IndexF32 scans on from there.
func indexChunks(x []float32, v float32) int {
	switch {
	case hasAVX512():
		if n := len(x) &^ 15; n > 0 {
			return indexF32x16(&x[0], n, v)
		}
	case hasAVX2():
		if n := len(x) &^ 7; n > 0 {
			return indexF32x8(&x[0], n, v)
		}
	}
	return 0
}
