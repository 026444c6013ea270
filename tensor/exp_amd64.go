//go:build amd64 && !purego

package tensor

//go:noescape
func expShifted4(dst *float64, x *float32, n int, shift, scale float64, acc *[4]float64, coef *[12]float64)

//go:noescape
func expShifted8(dst *float64, x *float32, n int, shift, scale float64, acc *[4]float64, coef *[12]float64)

// expChunks runs the vector kernels over the largest multiple of 4 (the
// AVX-512 one over the multiple of 8 first) and returns how many elements
// they did (0 without AVX2).
func expChunks(dst []float64, x []float32, shift, scale float64, acc *[4]float64) int {
	n := len(x) &^ 3
	if !hasAVX2() || n == 0 {
		return 0
	}
	i := 0
	if level == levelAVX512 {
		if i = len(x) &^ 7; i > 0 {
			expShifted8(&dst[0], &x[0], i, shift, scale, acc, &expCoef)
		}
	}
	if i < n {
		expShifted4(&dst[i], &x[i], n-i, shift, scale, acc, &expCoef)
	}
	return n
}
