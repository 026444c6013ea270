package tensor

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// q8Scales are scales of Q8_0 blocks a quantizer makes rarely or never:
// ±0, the smallest and largest subnormal half, the smallest normal, the
// largest half, ±Inf and NaNs.
var q8Scales = []uint16{0, 0x8000, 0x0001, 0x03ff, 0x0400, 0x7bff, 0x7c00, 0xfc00, 0x7e00, 0x7d01}

// q8Rows quantizes n rows of hs values, stride bytes apart (the bytes
// between them random), with PutQ8_0, gives one block of every fifth row
// one of q8Scales, and returns them with their widened values
// (DequantizeRow), hs apart.
func q8Rows(rng *rand.Rand, n, hs, stride int) ([]byte, []float32) {
	rb := Q8_0Bytes(hs)
	m := make([]byte, max(0, (n-1)*stride+rb))
	for i := range m {
		m[i] = byte(rng.Uint32())
	}
	wide := make([]float32, n*hs)
	for i := range n {
		PutQ8_0(m[i*stride:i*stride+rb], randVec(rng, hs))
		if i%5 == 4 {
			b := (i / 5) % (hs / QK)
			binary.LittleEndian.PutUint16(m[i*stride+b*(2+QK):], q8Scales[(i/5)%len(q8Scales)])
		}
		DequantizeRow(wide[i*hs:(i+1)*hs], Q8_0, m[i*stride:i*stride+rb])
	}
	return m, wide
}

// TestAttentionKernelsQ8: over rows of Q8_0 blocks, DotRowsQ8_0 gives the
// bits of a Q8_0 matrix's row product (MatVec) at the same level and of
// the portable level's, WeightedSumQ8_0 those of WeightedSum over the rows
// widened by DequantizeRow, and WeightedSumAddQ8_0 continues it to the
// same bits, at every level, for head sizes of 1–8 blocks, strides that
// are not whole rows, sums longer than the Go path widens at a time, and
// blocks with the scales of q8Scales (infinite and NaN ones included).
func TestAttentionKernelsQ8(t *testing.T) {
	rng := rand.New(rand.NewPCG(91, 92))
	for _, hs := range []int{32, 64, 96, 128, 160, 256} {
		for _, n := range []int{0, 1, 7, 9, 33, 140} {
			stride := Q8_0Bytes(hs) + 7
			m, wide := q8Rows(rng, n, hs, stride)
			x := randVec(rng, hs)
			a := randVec(rng, n)
			if n > 1 {
				a[1] = 0
			}
			wantSum := make([]float32, hs)
			for i := range wantSum {
				for j, at := range a {
					wantSum[i] += float32(at * wide[j*hs+i])
				}
			}
			var portable []float32
			atLevel(levelPortable, func() {
				acts := quantizeActs(nil, x, Q8_0)
				portable = make([]float32, n)
				for i := range portable {
					portable[i] = dotQuant(Q8_0, m[i*stride:i*stride+Q8_0Bytes(hs)], acts)
				}
			})
			dense := make([]byte, 0, n*Q8_0Bytes(hs))
			for i := range n {
				dense = append(dense, m[i*stride:i*stride+Q8_0Bytes(hs)]...)
			}
			for _, l := range levels() {
				atLevel(l, func() {
					scores := make([]float32, n)
					DotRowsQ8_0(scores, m, stride, x)
					matVec := make([]float32, n)
					if n > 0 {
						w, err := NewRaw(Q8_0, n, hs, dense)
						if err != nil {
							t.Fatal(err)
						}
						MatVec(matVec, w, x)
					}
					for i := range scores {
						if !sameBitsOrNaN(scores[i], matVec[i]) || !sameBitsOrNaN(scores[i], portable[i]) {
							t.Fatalf("%s hs=%d n=%d: score %d = %g, MatVec %g, portable %g", levelNames[l], hs, n, i, scores[i], matVec[i], portable[i])
						}
					}
					sum := make([]float32, hs)
					WeightedSumQ8_0(sum, a, m, stride)
					for i := range sum {
						if !sameBitsOrNaN(sum[i], wantSum[i]) {
							t.Fatalf("%s hs=%d n=%d: sum %d = %g, want %g", levelNames[l], hs, n, i, sum[i], wantSum[i])
						}
					}
					for _, k := range []int{0, min(1, n), n / 2, n} {
						got := make([]float32, hs)
						WeightedSumQ8_0(got, a[:k], m, stride)
						for t := k; t < n; t += 3 {
							e := min(t+3, n)
							WeightedSumAddQ8_0(got, a[t:e], m[t*stride:], stride)
						}
						for i := range got {
							if !sameBitsOrNaN(got[i], wantSum[i]) {
								t.Fatalf("%s hs=%d n=%d split %d: sum %d = %g, want %g", levelNames[l], hs, n, k, i, got[i], wantSum[i])
							}
						}
					}
				})
			}
		}
	}
}

// TestAttentionKernelsQ8Bounds: rows past the slice, and columns that are
// not whole blocks, panic with the kernel's name instead of reading out of
// bounds.
func TestAttentionKernelsQ8Bounds(t *testing.T) {
	for name, f := range map[string]func(){
		"DotRowsQ8_0 past":            func() { DotRowsQ8_0(make([]float32, 2), make([]byte, 60), 34, make([]float32, 32)) },
		"DotRowsQ8_0 part block":      func() { DotRowsQ8_0(make([]float32, 1), make([]byte, 100), 34, make([]float32, 40)) },
		"WeightedSumQ8_0 past":        func() { WeightedSumQ8_0(make([]float32, 32), make([]float32, 2), make([]byte, 60), 34) },
		"WeightedSumAddQ8_0 part blk": func() { WeightedSumAddQ8_0(make([]float32, 20), make([]float32, 1), make([]byte, 100), 34) },
		"PutQ8_0 short":               func() { PutQ8_0(make([]byte, 33), make([]float32, 32)) },
	} {
		func() {
			defer func() {
				if r := recover(); r == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestAttentionKernelsQ8Allocs: a head of up to 512 values is scored and
// summed without allocating (the query's blocks and the widened rows are
// kept between calls).
func TestAttentionKernelsQ8Allocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(95, 96))
	const hs, n = 512, 100
	m, _ := q8Rows(rng, n, hs, Q8_0Bytes(hs))
	x, a := randVec(rng, hs), randVec(rng, n)
	at, out := make([]float32, n), make([]float32, hs)
	if allocs := testing.AllocsPerRun(20, func() {
		DotRowsQ8_0(at, m, Q8_0Bytes(hs), x)
		WeightedSumQ8_0(out, a, m, Q8_0Bytes(hs))
	}); allocs != 0 {
		t.Fatalf("%v allocations per head", allocs)
	}
}
