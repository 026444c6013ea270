//go:build !amd64 || purego

package tensor

const cpuLevel = levelPortable

func chunksF16(w []byte, x []float32, acc *[32]float32) int { return 0 }

func chunksBF16(w []byte, x []float32, acc *[32]float32) int { return 0 }
