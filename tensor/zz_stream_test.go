package tensor

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func BenchmarkStreamGEMM(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const rows, cols = 32768, 2048
	base, _ := NewF32(rows, cols, randVec(rng, rows*cols))
	for _, n := range []int{1, 4, 8} {
		x := randVec(rng, n*cols)
		out := make([]float32, n*rows)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				MatMul(out, base, x, n)
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/op")
		})
	}
}
