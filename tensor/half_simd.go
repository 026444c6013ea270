//go:build (amd64 || arm64) && !purego

package tensor

import "unsafe"

// chunksHalf runs dot, an assembly kernel of dotF16's or dotBF16's whole
// 32-element chunks, when on, and returns how many elements it took.
func chunksHalf(on bool, dot func(*uint16, *float32, int, *[32]float32), w []byte, x []float32, acc *[32]float32) int {
	n := (len(w) / 2) &^ 31
	if !on || n == 0 {
		return 0
	}
	dot((*uint16)(unsafe.Pointer(&w[0])), &x[0], n, acc)
	return n
}
