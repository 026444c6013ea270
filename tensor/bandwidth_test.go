package tensor

import (
	"testing"
)

// BenchmarkReadBandwidth measures the machine's read bandwidth: a 512 MiB
// float32 array summed by the F32 dot kernel (Dot(a, a) reads each cache
// line once) on Threads() threads, in chunks of 64 KiB claimed from the
// worker pool. This is the limit the decode step of a model too large for
// the caches runs into: tokens/s ≤ bandwidth ÷ bytes of weights read per
// token.
//
//	go test -run='^$' -bench=ReadBandwidth -benchtime=20x ./tensor
func BenchmarkReadBandwidth(b *testing.B) {
	const n = 128 << 20 // floats
	a := make([]float32, n)
	for i := range a {
		a[i] = float32(i & 7)
	}
	const chunk = 16 << 10
	sums := make([]float32, n/chunk)
	b.SetBytes(4 * n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ParallelFor(n/chunk, n, func(lo, hi int) {
			for c := lo; c < hi; c++ {
				s := a[c*chunk : (c+1)*chunk]
				sums[c] = Dot(s, s)
			}
		})
	}
	b.ReportMetric(float64(b.N)*4*n/b.Elapsed().Seconds()/1e9, "GB/s")
}
