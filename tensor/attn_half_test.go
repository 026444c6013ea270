package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// halves rounds v to halves (PutF16) and returns them with their exact
// float32 values.
func halves(v []float32) ([]uint16, []float32) {
	h := make([]uint16, len(v))
	PutF16(h, v)
	f := make([]float32, len(v))
	for i, x := range h {
		f[i] = F16ToF32(x)
	}
	return h, f
}

// TestAttentionKernelsF16: over rows of halves, DotRowsF16 gives the bits
// of an F16 matrix's row product, WeightedSumF16 those of WeightedSum over
// the same values widened to float32, and WeightedSumAddF16 continues it
// to the same bits, at every level, for head sizes around the vector
// widths and strides that are not.
func TestAttentionKernelsF16(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	for _, hs := range []int{1, 8, 15, 16, 24, 32, 48, 64, 96, 100, 128, 200, 256} {
		for _, n := range []int{0, 1, 7, 9, 33} {
			stride := hs + 5
			m, mf := halves(randVec(rng, n*stride+hs))
			x := randVec(rng, hs)
			a := randVec(rng, n)
			if n > 1 {
				a[1] = 0 // a zero weight and a negative zero value
				m[stride] = 0x8000
				mf[stride] = float32(math.Copysign(0, -1))
			}
			// The reference: each row as a one-row F16 matrix, and the
			// float32 sum over the widened values (WeightedSum's loop).
			wantScores := make([]float32, n)
			for i := range wantScores {
				row := make([]byte, 2*hs)
				for c := range hs {
					row[2*c], row[2*c+1] = byte(m[i*stride+c]), byte(m[i*stride+c]>>8)
				}
				wantScores[i] = dotF16(row, x)
			}
			wantSum := make([]float32, hs)
			for i := range wantSum {
				for j, at := range a {
					wantSum[i] += float32(at * mf[j*stride+i])
				}
			}
			for _, l := range levels() {
				atLevel(l, func() {
					scores := make([]float32, n)
					DotRowsF16(scores, m, stride, x)
					for i := range scores {
						if math.Float32bits(scores[i]) != math.Float32bits(wantScores[i]) {
							t.Fatalf("%s hs=%d n=%d: score %d = %g, want %g", levelNames[l], hs, n, i, scores[i], wantScores[i])
						}
					}
					sum := make([]float32, hs)
					WeightedSumF16(sum, a, m, stride)
					f32 := make([]float32, hs)
					WeightedSum(f32, a, mf, stride)
					for i := range sum {
						if math.Float32bits(sum[i]) != math.Float32bits(wantSum[i]) || math.Float32bits(f32[i]) != math.Float32bits(wantSum[i]) {
							t.Fatalf("%s hs=%d n=%d: sum %d = %g (float32 cache %g), want %g", levelNames[l], hs, n, i, sum[i], f32[i], wantSum[i])
						}
					}
					for k := 0; k <= n; k++ {
						got := make([]float32, hs)
						WeightedSumF16(got, a[:k], m, stride)
						for t := k; t < n; t += 2 {
							e := min(t+2, n)
							rows := append([]uint16(nil), m[t*stride:(e-1)*stride+hs]...)
							WeightedSumAddF16(got, a[t:e], rows, stride)
						}
						for i := range got {
							if math.Float32bits(got[i]) != math.Float32bits(wantSum[i]) {
								t.Fatalf("%s hs=%d n=%d split %d: sum %d = %g, want %g", levelNames[l], hs, n, k, i, got[i], wantSum[i])
							}
						}
					}
				})
			}
		}
	}
}

// TestPutF16: at every level PutF16 gives F32ToF16's bits — for ±0,
// ties, the largest half and the first value past it, subnormals and the
// boundaries around them, infinities, quiet and signalling NaNs with
// payloads, and a million random bit patterns — in whole chunks and in the
// tail after them.
func TestPutF16(t *testing.T) {
	bits := []uint32{
		0, 0x80000000, 0x3f800000, 0x477fe000, 0x477ff000, 0x477fefff, // ±0, 1, 65504, 65520 (→ Inf), just below
		0x3f801000, 0x3f803000, 0x3f800fff, // ties to even either way, below a tie
		0x33800000, 0x33000000, 0x33000001, 0x387fc000, 0x38800000, 0x387fe000, // subnormal halves and their edges
		0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0x7fa00000, 0xff812345, 0x7fffffff, // Inf, NaNs
	}
	rng := rand.New(rand.NewPCG(81, 82))
	for range 1 << 20 {
		bits = append(bits, rng.Uint32())
	}
	bits = append(bits, 0x7f802000, 0x00000001, 0x80000001) // a tail: not a whole chunk
	src := make([]float32, len(bits))
	for i, b := range bits {
		src[i] = math.Float32frombits(b)
	}
	for _, l := range levels() {
		atLevel(l, func() {
			dst := make([]uint16, len(src))
			PutF16(dst, src)
			for i, f := range src {
				if want := F32ToF16(f); dst[i] != want {
					t.Fatalf("%s: PutF16(%#08x) = %#04x, want %#04x", levelNames[l], bits[i], dst[i], want)
				}
			}
		})
	}
	// F32ToF16 itself: a NaN keeps the top of its payload, quieted.
	for _, c := range []struct {
		in   uint32
		want uint16
	}{{0x7fc00000, 0x7e00}, {0x7f800001, 0x7e00}, {0x7fa00000, 0x7f00}, {0xff812345, 0xfe09}, {0x7f800000, 0x7c00}, {0x477ff000, 0x7c00}} {
		if got := F32ToF16(math.Float32frombits(c.in)); got != c.want {
			t.Errorf("F32ToF16(%#08x) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
}

// TestAttentionKernelsF16Bounds: a row past the slice panics with the
// kernel's name instead of reading out of bounds.
func TestAttentionKernelsF16Bounds(t *testing.T) {
	for name, f := range map[string]func(){
		"DotRowsF16":        func() { DotRowsF16(make([]float32, 2), make([]uint16, 10), 8, make([]float32, 4)) },
		"WeightedSumF16":    func() { WeightedSumF16(make([]float32, 4), make([]float32, 2), make([]uint16, 10), 8) },
		"WeightedSumAddF16": func() { WeightedSumAddF16(make([]float32, 4), make([]float32, 2), make([]uint16, 10), 8) },
	} {
		func() {
			defer func() {
				if r := recover(); r == nil {
					t.Errorf("%s read past its rows without a panic", name)
				}
			}()
			f()
		}()
	}
}

// BenchmarkAttentionCache compares the attention of one head (size 128)
// over a cache of 1024 positions of 1024 values held in float32, in halves
// and in Q8_0 blocks: the scores and the weighted sum, apart and together.
func BenchmarkAttentionCache(b *testing.B) {
	const hs, kvDim, n = 128, 1024, 1024
	rng := rand.New(rand.NewPCG(1, 2))
	vals := randVec(rng, n*kvDim)
	h, _ := halves(vals)
	q8, _ := q8Rows(rng, n, kvDim, Q8_0Bytes(kvDim))
	q := randVec(rng, hs)
	at := make([]float32, n)
	out := make([]float32, hs)
	for _, c := range []struct {
		name      string
		dot, wsum func()
	}{
		{"f32", func() { DotRows(at, vals, kvDim, q) }, func() { WeightedSum(out, at, vals, kvDim) }},
		{"f16", func() { DotRowsF16(at, h, kvDim, q) }, func() { WeightedSumF16(out, at, h, kvDim) }},
		{"q8_0", func() { DotRowsQ8_0(at, q8, Q8_0Bytes(kvDim), q) }, func() { WeightedSumQ8_0(out, at, q8, Q8_0Bytes(kvDim)) }},
	} {
		for _, part := range []struct {
			name string
			run  func()
		}{{"scores", c.dot}, {"sum", c.wsum}, {"both", func() { c.dot(); c.wsum() }}} {
			b.Run(c.name+"/"+part.name, func(b *testing.B) {
				for b.Loop() {
					part.run()
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/op")
			})
		}
	}
}
