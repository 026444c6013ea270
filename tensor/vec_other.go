//go:build !amd64 || purego

package tensor

func maxChunks(x []float32, m *float32) int  { return 0 }
func indexChunks(x []float32, v float32) int { return 0 }

func scaleChunks(d []float64, s float64) int { return 0 }
