package tensor

import (
	"encoding/binary"
	"math"
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

// quantizeQ8Ref is QuantizeQ8_0 in Go, over float64 (math.Abs,
// math.Round): the reference of TestQuantizeQ8_0Bits.
func quantizeQ8Ref(dst []byte, x []float32) []byte {
	for b := 0; b+QK <= len(x); b += QK {
		blk := x[b : b+QK]
		var amax float32
		for _, v := range blk {
			if a := float32(math.Abs(float64(v))); a > amax {
				amax = a
			}
		}
		d := amax / 127
		id := float32(0)
		if d != 0 {
			id = 1 / d
		}
		dst = binary.LittleEndian.AppendUint16(dst, F32ToF16(d))
		for _, v := range blk {
			dst = append(dst, byte(int8(float32(math.Round(float64(v*id))))))
		}
	}
	return dst
}

// TestQuantizeQ8_0Bits: at every level QuantizeQ8_0 gives quantizeQ8Ref's
// bytes for a hundred thousand random blocks of every magnitude, blocks
// whose products fall on and next to halves, and blocks with zeros,
// subnormals (whose scale overflows 1/d), infinities and NaNs.
func TestQuantizeQ8_0Bits(t *testing.T) {
	rng := rand.New(rand.NewPCG(97, 98))
	var x []float32
	for range 100000 {
		scale := float32(math.Ldexp(1, rng.IntN(60)-30))
		for range QK {
			x = append(x, float32(rng.NormFloat64())*scale)
		}
	}
	// Halves: with amax 127, d = 1 and the products are the values.
	for _, v := range []float32{0.5, 1.5, 2.5, -0.5, -2.5, 126.5, 0.49999997, 0.50000006, -0.49999997, 1.4999999, -126.49999} {
		blk := make([]float32, QK)
		blk[0], blk[1] = 127, v
		x = append(x, blk...)
	}
	for _, special := range []float32{0, float32(math.Copysign(0, -1)), 1e-45, 1e-40, -3e-39, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())} {
		blk := make([]float32, QK)
		for j := range blk {
			blk[j] = float32(rng.NormFloat64()) * 1e-41
		}
		blk[3] = special
		x = append(x, blk...)
	}
	for j := range QK { // a NaN in every lane, among ordinary values
		blk := make([]float32, QK)
		for i := range blk {
			blk[i] = float32(rng.NormFloat64())
		}
		blk[j] = float32(math.NaN())
		x = append(x, blk...)
	}
	want := quantizeQ8Ref(nil, x)
	for _, l := range levels() {
		atLevel(l, func() {
			for _, dst := range [][]byte{nil, make([]byte, 3, 3+len(want))} { // Go's appends; the kernels' room
				got := QuantizeQ8_0(dst, x)[len(dst):]
				for i := range want {
					if got[i] != want[i] {
						b := i / (2 + QK)
						t.Fatalf("%s: block %d byte %d: %#02x, want %#02x (values %v)", levelNames[l], b, i%(2+QK), got[i], want[i], x[b*QK:(b+1)*QK])
					}
				}
			}
		})
	}
}

// BenchmarkCachePut stores one row of 1024 values (a KV head group of a
// position) into a cache of halves and of Q8_0 blocks.
func BenchmarkCachePut(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	x := randVec(rng, 1024)
	h, q := make([]uint16, len(x)), make([]byte, Q8_0Bytes(len(x)))
	b.Run("f16", func(b *testing.B) {
		for b.Loop() {
			PutF16(h, x)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/value")
	})
	b.Run("q8_0", func(b *testing.B) {
		for b.Loop() {
			PutQ8_0(q, x)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/value")
	})
}
