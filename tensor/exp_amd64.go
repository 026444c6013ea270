//go:build amd64 && !purego

package tensor

//go:noescape
func expShifted4(dst *float64, x *float32, n int, shift, scale float64, acc *[4]float64, coef *[12]float64)

// expChunks runs the AVX2 kernel over the largest multiple of 4 and returns
// how many elements it did (0 without AVX2).
func expChunks(dst []float64, x []float32, shift, scale float64, acc *[4]float64) int {
	n := len(x) &^ 3
	if !hasAVX2() || n == 0 {
		return 0
	}
	expShifted4(&dst[0], &x[0], n, shift, scale, acc, &expCoef)
	return n
}
