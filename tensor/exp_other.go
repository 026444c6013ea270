//go:build !amd64 || purego

package tensor

func expChunks(dst []float64, x []float32, shift, scale float64, acc *[4]float64) int { return 0 }
