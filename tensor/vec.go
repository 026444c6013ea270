package tensor

import "math"

// MaxF32 returns the largest value of x, skipping NaN: −Inf when x is empty
// or holds only NaN and −Inf. Where x holds both zeros and they are the
// largest, which zero is returned is not specified (they compare equal).
// On amd64 the AVX2 and AVX-512 levels compare 32 or 64 values at a time.
func MaxF32(x []float32) float32 {
	m := float32(math.Inf(-1))
	i := maxChunks(x, &m)
	for _, z := range x[i:] {
		if z > m { // false for NaN
			m = z
		}
	}
	return m
}

// IndexF32 returns the first i with x[i] == v (−1 when there is none; NaN
// is equal to nothing, and the two zeros are equal). On amd64 the AVX2
// and AVX-512 levels compare 8 or 16 values at a time.
func IndexF32(x []float32, v float32) int {
	i := indexChunks(x, v)
	for ; i < len(x); i++ {
		if x[i] == v {
			return i
		}
	}
	return -1
}

// ScaleF64 multiplies every d[i] by s (one IEEE multiplication each: the
// same bits at every level). On amd64 the AVX2 and AVX-512 levels do 16 or
// 32 values at a time.
func ScaleF64(d []float64, s float64) {
	i := scaleChunks(d, s)
	for ; i < len(d); i++ {
		d[i] *= s
	}
}
