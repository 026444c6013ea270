package tensor

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// BenchmarkReadBandwidth measures the machine's read bandwidth: a 512 MiB
// float32 array read once per iteration on Threads() threads by the fastest
// read this package has, the F32 product's tiles (8 rows at a time, each
// prefetching the next 8), viewed as rows of 4096 floats times a vector
// that stays in L1. This is the limit the decode step of a model too large
// for the caches runs into: tokens/s ≤ bandwidth ÷ bytes of weights read
// per token. BenchmarkStreamMatVec, run with it, says how close the
// products of the model's shapes come.
//
//	go test -run='^$' -bench='ReadBandwidth|StreamMatVec' -benchtime=8x ./tensor
func BenchmarkReadBandwidth(b *testing.B) {
	const cols, rows = 4096, 32 << 10 // 512 MiB
	a := make([]float32, rows*cols)
	for i := range a {
		a[i] = float32(i & 7)
	}
	m, _ := NewF32(rows, cols, a)
	ones := make([]float32, cols)
	for i := range ones {
		ones[i] = 1
	}
	sums := make([]float32, rows)
	b.SetBytes(4 * rows * cols)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		MatVec(sums, m, ones)
	}
	b.ReportMetric(float64(b.N)*4*rows*cols/b.Elapsed().Seconds()/1e9, "GB/s")
}

// BenchmarkStreamMatVec is the decode step's products far larger than the
// caches: ~128 MiB of weights in rows of 2048 (the real models' width) per
// type, times one token, at every kernel level this CPU runs (sub-benchmark
// TYPE/LEVEL), in GB/s of weights read, against BenchmarkReadBandwidth's
// limit. docs/BENCHMARKS.md ("Single-token products per kernel level") has what
// it measured on each CPU kind.
//
//	go test -run='^$' -bench='ReadBandwidth|StreamMatVec' -benchtime=8x ./tensor
func BenchmarkStreamMatVec(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const cols, size = 2048, 128 << 20
	for _, typ := range []DType{F32, F16, Q8_0, Q4_0, Q5_0, Q4_K, Q6_K} {
		rb, _ := typ.RowBytes(cols)
		rows := size / rb
		var m *Matrix
		switch typ {
		case Q4_K, Q6_K:
			m = randomKQuant(b, rng, typ, rows, cols/QKK)
		case Q5_0:
			m = randomQ5(b, rng, rows, cols/QK)
		default:
			f, _ := NewF32(rows, cols, randVec(rng, rows*cols))
			var err error
			if m, err = f.Convert(typ); err != nil {
				b.Fatal(err)
			}
		}
		x := randVec(rng, cols)
		out := make([]float32, rows)
		for _, l := range levels()[1:] {
			b.Run(typ.String()+"/"+levelNames[l], func(b *testing.B) {
				atLevel(l, func() {
					MatVec(out, m, x) // packs Q8_0 and Q4_0 where the level does
					WaitPacking()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						MatVec(out, m, x)
					}
				})
				b.ReportMetric(float64(b.N)*float64(rows*rb)/b.Elapsed().Seconds()/1e9, "GB/s")
			})
		}
	}
}

// BenchmarkStreamBlock is the 8-token block against the decode step for each
// product shape of stories110M (q/k/v/o, gate/up, down, classifier), F32,
// with ~256 MiB of distinct matrices so that every weight streams from
// memory, as in the model. The block and the step are taken in turns (the
// machine's load drifts over both alike); block/step is the ratio of their
// times. A ratio near 1 means the block's 8× arithmetic hides under the
// weights' transfer.
//
//	go test -run='^$' -bench=StreamBlock -benchtime=10x ./tensor
func BenchmarkStreamBlock(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, sh := range []struct {
		name       string
		rows, cols int
	}{{"attention-768x768", 768, 768}, {"gate-up-2048x768", 2048, 768}, {"down-768x2048", 768, 2048}, {"classifier-32000x768", 32000, 768}} {
		count := max(1, (256<<20)/(4*sh.rows*sh.cols))
		ms := make([]*Matrix, count)
		for i := range ms {
			ms[i], _ = NewF32(sh.rows, sh.cols, randVec(rng, sh.rows*sh.cols))
		}
		const n = 8
		x := randVec(rng, n*sh.cols)
		out := make([]float32, n*sh.rows)
		b.Run(sh.name, func(b *testing.B) {
			var step, block time.Duration
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				for _, m := range ms {
					MatMul(out, m, x, 1)
				}
				t1 := time.Now()
				for _, m := range ms {
					MatMul(out, m, x, n)
				}
				step, block = step+t1.Sub(t0), block+time.Since(t1)
			}
			b.ReportMetric(float64(block)/float64(step), "block/step")
			bytes := float64(b.N) * float64(count*4*sh.rows*sh.cols)
			b.ReportMetric(bytes/step.Seconds()/1e9, "step-GB/s")
		})
	}
}

// BenchmarkKTileCompute is the compute rate of each level's one-row,
// one-token Q4_K and Q6_K tile — the decode step's — on 32 super-blocks
// that stay in L1, in GB/s of weights and millions of super-blocks per
// second: the rate a thread cannot exceed however fast memory is, which
// BenchmarkStreamMatVec's streaming rate approaches when one thread's
// memory stream is faster than its arithmetic.
//
//	go test -run='^$' -bench=KTileCompute -benchtime=200000x ./tensor
func BenchmarkKTileCompute(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const nb = 32
	acts := quantizeActsK(nil, randVec(rng, nb*QKK))
	out := make([]float32, 1)
	for _, typ := range []DType{Q4_K, Q6_K} {
		m := randomKQuant(b, rng, typ, 1, nb)
		for _, l := range levels()[1:] {
			ks := kernelSets[l]
			if ks == nil || ks.kRows[1] == 0 {
				continue
			}
			tile := ks.k4[1][1]
			if typ == Q6_K {
				tile = ks.k6[1][1]
			}
			b.Run(typ.String()+"/"+levelNames[l], func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					tile(&m.Data[0], 0, &acts[0], 0, nb, &out[0], 4)
				}
				s := b.Elapsed().Seconds()
				b.ReportMetric(float64(b.N*nb)/s/1e6, "Msb/s")
				b.ReportMetric(float64(b.N*len(m.Data))/s/1e9, "GB/s")
			})
		}
	}
}

// BenchmarkStreamWideK is BenchmarkStreamMatVec's single-token product for
// Q4_K and Q6_K rows of 4,096 and 14,336 elements (the 8B shapes' widths:
// the second's quantized input, 21 KiB, no longer stays in L1 beside the
// streaming weights), ~256 MiB each, at the default level; where the
// level packs the wide rows (pack.go, packKGroup) also row-major ("unpacked"),
// and for Q4_K row-major with one row at a time ("unpacked/rows=1") where
// the level reads the wide rows several at once (k4WideRows).
//
//	go test -run='^$' -bench=StreamWideK -benchtime=6x ./tensor
func BenchmarkStreamWideK(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, cols := range []int{4096, 14336} {
		for _, typ := range []DType{Q4_K, Q6_K} {
			rb, _ := typ.RowBytes(cols)
			rows := (256 << 20) / rb
			m := randomKQuant(b, rng, typ, rows, cols/QKK)
			x := randVec(rng, cols)
			out := make([]float32, rows)
			run := func(b *testing.B) {
				MatVec(out, m, x)
				WaitPacking()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					MatVec(out, m, x)
				}
				b.ReportMetric(float64(b.N)*float64(rows*rb)/b.Elapsed().Seconds()/1e9, "GB/s")
			}
			name := fmt.Sprintf("%v/%d", typ, cols)
			b.Run(name, run)
			ks := kernelSets[level]
			if ks != nil && ks.kPacked != nil && m.packed.Load() != nil {
				b.Run(name+"/unpacked", func(b *testing.B) {
					packing = false
					defer func() { packing = true }()
					run(b)
				})
			}
			if ks != nil && typ == Q4_K && ks.k4WideRows[1] > 1 {
				b.Run(name+"/unpacked/rows=1", func(b *testing.B) {
					old := ks.k4WideRows[1]
					ks.k4WideRows[1] = 1
					packing = false
					defer func() { ks.k4WideRows[1], packing = old, true }()
					run(b)
				})
			}
		}
	}
}

// BenchmarkStreamTurns is BenchmarkStreamMatVec with the kernel levels
// taken in turns: each iteration runs one token's product over ~128 MiB of
// rows once at every level this CPU runs, so that the machine's load,
// which drifts by more than the levels differ on a shared host, drifts
// over all of them alike. Sub-benchmarks TYPE/COLS (the real models'
// widths: 3,072 is Phi-3-mini's and Qwen3's hidden size, 8,192 Phi-3-mini's
// FFN, 14,336 Llama-3.1-8B's); the metrics are each level's median GB/s of
// weights read over the turns (LEVEL-GB/s). Run with -benchtime=Nx for N
// turns:
//
//	go test -run='^$' -bench=StreamTurns -benchtime=15x ./tensor
//	GOMAXPROCS=1 go test -run='^$' -bench=StreamTurns -benchtime=15x ./tensor
func BenchmarkStreamTurns(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, sh := range []struct {
		typ  DType
		cols []int
	}{
		{Q4_K, []int{3072, 8192, 14336}},
		{Q6_K, []int{3072, 8192, 14336}},
		{Q8_0, []int{3072}},
		{F16, []int{3072, 4096, 8192}},
		{F32, []int{2048, 4096}},
	} {
		for _, cols := range sh.cols {
			rb, _ := sh.typ.RowBytes(cols)
			rows := (128 << 20) / rb
			var m *Matrix
			switch sh.typ {
			case Q4_K, Q6_K:
				m = randomKQuant(b, rng, sh.typ, rows, cols/QKK)
			default:
				f, _ := NewF32(rows, cols, randVec(rng, rows*cols))
				var err error
				if m, err = f.Convert(sh.typ); err != nil {
					b.Fatal(err)
				}
			}
			x := randVec(rng, cols)
			out := make([]float32, rows)
			ls := levels()[1:]
			b.Run(fmt.Sprintf("%v/%d", sh.typ, cols), func(b *testing.B) {
				for _, l := range ls {
					atLevel(l, func() { MatVec(out, m, x); WaitPacking() }) // packs where the level does
				}
				rates := make([][]float64, len(ls))
				for i := 0; i < b.N; i++ {
					for j, l := range ls {
						atLevel(l, func() {
							t0 := time.Now()
							MatVec(out, m, x)
							rates[j] = append(rates[j], float64(rows*rb)/time.Since(t0).Seconds()/1e9)
						})
					}
				}
				for j, l := range ls {
					slices.Sort(rates[j])
					b.ReportMetric(rates[j][len(rates[j])/2], levelNames[l]+"-GB/s")
				}
			})
		}
	}
}
