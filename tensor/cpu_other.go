//go:build !amd64 || purego

package tensor

const cpuLevel = levelPortable

func chunksF16(w []byte, x []float32, acc *[32]float32) int { return 0 }

func blockQ4K(qs []byte, x []float32, s *[16]float32, acc *[8]float32) bool   { return false }
func blockQ6K(blk []byte, x []float32, ds *[16]float32, acc *[8]float32) bool { return false }
