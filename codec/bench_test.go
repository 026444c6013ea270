package codec

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Benchmarks at V = 32,000. Each reports µs/token (wall time per
// operation), cpu-µs/token (process CPU time per operation, including GC)
// and, where a payload is produced, bits/token. Two input shapes:
// "zipf" (heavy tail: Zipf 1.1 head over random ids; online k ≈ 7,750) and
// "peaked" (softmax of N(0, 2.5²) logits with three boosted tokens; online
// k ≈ 5,000).
//
//	go test ./codec -run '^$' -bench . -benchtime 2s

const benchV = 32000

func benchZipf() []float64   { return llmLike(rand.New(rand.NewPCG(1, 7)), benchV, 1.1) }
func benchPeaked() []float64 { return peaked(rand.New(rand.NewPCG(2, 7)), benchV) }

var shapes = []struct {
	name string
	x    func() []float64
}{{"zipf", benchZipf}, {"peaked", benchPeaked}}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measure runs f b.N times and reports per-op wall and CPU microseconds.
func measure(b *testing.B, f func()) {
	b.ReportAllocs()
	b.ResetTimer()
	c0, t0 := cpuTime(), time.Now()
	for i := 0; i < b.N; i++ {
		f()
	}
	wall, cpu := time.Since(t0), cpuTime()-c0
	b.StopTimer()
	b.ReportMetric(float64(wall.Nanoseconds())/1e3/float64(b.N), "µs/token")
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N), "cpu-µs/token")
}

// BenchmarkCalibration sums 32,000 float64 with one accumulator: a
// latency-bound loop of 32,000 dependent additions (about 13 µs at 2.5 GHz
// and 4 cycles each), to read the other numbers against the machine's
// state at the time.
func BenchmarkCalibration(b *testing.B) {
	x := benchZipf()
	var s float64
	measure(b, func() {
		t := 0.0
		for _, v := range x {
			t += v
		}
		s += t
	})
	_ = s
}

func BenchmarkTopKSelect30(b *testing.B) {
	x := benchZipf()
	measure(b, func() { topK(x, 30) })
}

func BenchmarkRankOrder(b *testing.B) {
	x := benchZipf()
	measure(b, func() { rankOrder(x) })
}

func BenchmarkOnlineK(b *testing.B) {
	for _, sh := range shapes {
		x := sh.x()
		d := int(topK(x, 1)[0])
		b.Run(sh.name, func(b *testing.B) {
			var k int
			measure(b, func() { k, _ = OnlineK(x, d, 0.5, DefaultEta, 0.1) })
			b.ReportMetric(float64(k), "k")
		})
	}
}

func BenchmarkTopKEncode30(b *testing.B) {
	x := benchZipf()
	c := TopK{K: 30, ProbBits: 8}
	var e Encoded
	measure(b, func() { e, _ = c.Encode(x, 12345) })
	b.ReportMetric(float64(e.Bits), "bits/token")
}

func BenchmarkTopKEncodeOnline(b *testing.B) {
	for _, sh := range shapes {
		x := sh.x()
		d := int(topK(x, 1)[0])
		c := TopK{ProbBits: 8, Theta: 0.1}
		b.Run(sh.name, func(b *testing.B) {
			var e Encoded
			measure(b, func() { e, _ = c.EncodeWithBeta(x, d, 0.5) })
			b.ReportMetric(float64(e.Bits), "bits/token")
			b.ReportMetric(float64(e.Support), "k")
		})
	}
}

func BenchmarkFullEncode8(b *testing.B) {
	x := benchZipf()
	for _, idx := range []bool{false, true} {
		c := Full{ProbBits: 8, IndexBits: idx}
		b.Run(c.Name(), func(b *testing.B) {
			var e Encoded
			measure(b, func() { e, _ = c.Encode(x, -1) })
			b.ReportMetric(float64(e.Bits), "bits/token")
		})
	}
}

// BenchmarkLatticeQuantizeIndex is Reznik quantization of a K-vector plus
// its lexicographic index: K = V is Q-S over the vocabulary, K = 64 the
// lattice part of K-SQS.
func BenchmarkLatticeQuantizeIndex(b *testing.B) {
	x := benchZipf()
	top := topK(x, 64)
	q64 := make([]float64, 64)
	for j, id := range top {
		q64[j] = x[id]
	}
	s := sum(q64)
	for j := range q64 {
		q64[j] /= s
	}
	flat := make([]float64, benchV)
	for i := range flat {
		flat[i] = 1.0 / benchV
	}
	for _, tc := range []struct {
		name string
		q    []float64
		l    int
	}{
		{"K=V/l=100", x, 100}, {"K=64/l=100", q64, 100},
		{"K=V/l=100/flat", flat, 100}, {"K=V/l=1000", x, 1000},
	} {
		b.Run(tc.name, func(b *testing.B) {
			sp, err := compositionSpace(tc.l, len(tc.q))
			if err != nil {
				b.Fatal(err)
			}
			measure(b, func() {
				cb := quantize(tc.q, tc.l)
				sp.rank(compositionToSubset(cb, tc.l))
			})
			b.ReportMetric(float64(sp.bits), "bits/token")
		})
	}
}

func BenchmarkLatticeEncode(b *testing.B) {
	x := benchZipf()
	c := Lattice{L: 100}
	var e Encoded
	measure(b, func() { e, _ = c.Encode(x, -1) })
	b.ReportMetric(float64(e.Bits), "bits/token")
}

func BenchmarkLatticeDecode(b *testing.B) {
	x := benchZipf()
	for _, l := range []int{100, 1000} {
		c := Lattice{L: l}
		e, err := c.Encode(x, -1)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.Name(), func(b *testing.B) {
			measure(b, func() { c.Decode(e.Payload, benchV) })
			b.ReportMetric(float64(e.Bits), "bits/token")
		})
	}
}

func BenchmarkSubsetIndex(b *testing.B) {
	x := benchZipf()
	for _, k := range []int{64, 1000} {
		top := topK(x, k)
		c := make([]int, k)
		for i, id := range top {
			c[i] = int(id)
		}
		slices.Sort(c)
		sp, err := newSubsetSpace(benchV, k)
		if err != nil {
			b.Fatal(err)
		}
		r := sp.rank(c)
		b.Run("encode/K="+strconv.Itoa(k), func(b *testing.B) {
			measure(b, func() { sp.rank(c) })
			b.ReportMetric(float64(sp.bits), "bits/token")
		})
		b.Run("decode/K="+strconv.Itoa(k), func(b *testing.B) {
			measure(b, func() { sp.unrank(r) })
			b.ReportMetric(float64(sp.bits), "bits/token")
		})
	}
}

func BenchmarkKSQSEncode(b *testing.B) {
	x := benchZipf()
	for _, k := range []int{64, 1000} {
		c := KSQS{K: k, L: 100}
		b.Run(c.Name(), func(b *testing.B) {
			var e Encoded
			measure(b, func() { e, _ = c.Encode(x, -1) })
			b.ReportMetric(float64(e.Bits), "bits/token")
		})
	}
}

// BenchmarkCSQSEncode runs support selection, quantization, both indices
// and the threshold update on a stream of 16 distributions at ℓ = 100 and
// η = 0.001, from a threshold settled over 3,000 earlier tokens: at the
// SQS Sec. 4's α = 0.0005 and at α = 0.05, on the zipf/peaked shapes ("t1") and
// on the same shapes sharpened to temperature 0.5 (p² renormalized, "t0.5").
func BenchmarkCSQSEncode(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 9))
	dists := make([][]float64, 16)
	for i := range dists {
		if i%2 == 0 {
			dists[i] = llmLike(r, benchV, 0.9+0.4*r.Float64())
		} else {
			dists[i] = peaked(r, benchV)
		}
	}
	sharp := make([][]float64, len(dists))
	for i, d := range dists {
		sharp[i] = make([]float64, len(d))
		s := 0.0
		for j, p := range d {
			sharp[i][j] = p * p
			s += p * p
		}
		normalizePositive(sharp[i], s)
	}
	for _, tc := range []struct {
		name  string
		alpha float64
		dists [][]float64
	}{
		{"t1/alpha=0.0005", DefaultConformalAlpha, dists}, {"t1/alpha=0.05", 0.05, dists},
		{"t0.5/alpha=0.0005", DefaultConformalAlpha, sharp}, {"t0.5/alpha=0.05", 0.05, sharp},
	} {
		dists, alpha := tc.dists, tc.alpha
		b.Run(tc.name, func(b *testing.B) {
			c := NewCSQS()
			c.Alpha = alpha
			c.Beta = 1e-4
			for i := 0; i < 3000; i++ {
				_, dropped := c.Conformal.Support(dists[i%len(dists)])
				c.Observe(dropped)
			}
			i, bitsSum, kSum := 0, 0, 0
			measure(b, func() {
				e, err := c.Encode(dists[i%len(dists)], -1)
				if err != nil {
					b.Fatal(err)
				}
				bitsSum += e.Bits
				kSum += e.Support
				i++
			})
			b.ReportMetric(float64(bitsSum)/float64(i), "bits/token")
			b.ReportMetric(float64(kSum)/float64(i), "K")
		})
	}
}
