package codec

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestBucketK compares bucketK with firstK over the full rank order on
// many shapes, including the awkward ones: uniform (one bucket holds the
// whole vocabulary), many exact ties, zeros, values below 2^-254 (the
// catch-all bucket) and a two-level distribution whose tail mean sits on a
// bucket edge. The two sum in different orders, so k may differ only where
// N(k)/den is within 1e-9 (relative) of θ; the ids must be the first k of
// the rank order exactly.
func TestBucketK(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	shapes := []func(v int) []float64{
		func(v int) []float64 { return randomDist(r, v) },
		func(v int) []float64 { return peaked(r, v) },
		func(v int) []float64 { return llmLike(r, v, 1.1) },
		func(v int) []float64 { return softmaxLogits(r, v, 0.5+4*r.Float64()) },
		func(v int) []float64 { // uniform
			x := make([]float64, v)
			for i := range x {
				x[i] = 1 / float64(v)
			}
			return x
		},
		func(v int) []float64 { // few distinct values, many ties, some zeros
			x := make([]float64, v)
			for i := range x {
				x[i] = float64([]int{0, 1, 1, 2, 4, 4, 4, 9}[r.IntN(8)])
			}
			x[r.IntN(v)] = 5
			return normalized(x)
		},
		func(v int) []float64 { // subnormal-scale tail
			x := randomDist(r, v)
			for i := range x {
				if r.IntN(3) == 0 {
					x[i] = math.SmallestNonzeroFloat64 * float64(1+r.IntN(1000))
				}
			}
			return normalized(x)
		},
		func(v int) []float64 { // two levels a factor 2 apart: bucket edges
			x := make([]float64, v)
			for i := range x {
				x[i] = float64(1 + r.IntN(2))
			}
			return normalized(x)
		},
	}
	diff := 0
	for it := 0; it < 600; it++ {
		v := logUniformInt(r, 1, 40000)
		x := shapes[it%len(shapes)](v)
		d := r.IntN(v)
		beta, eta := r.Float64(), []float64{0.5, 1, 3}[r.IntN(3)]
		theta := []float64{0, 1e-6, 0.01, 0.1, 0.3, 2}[r.IntN(6)]
		den := onlineDenominator(x, d, beta, eta)
		total := sum4(x)
		k, top := bucketK(x, total, den, theta)
		full := rankOrder(x)
		want := firstK(x, full, total, 0, den, theta)
		if k < 1 || k > v || !slices.Equal(top, full[:k]) {
			t.Fatalf("it %d V=%d θ=%v: k = %d (full sort %d), ids differ from the rank order", it, v, theta, k, want)
		}
		if k == want {
			continue
		}
		if theta > 0 { // at θ = 0 the answer is where N first rounds to 0
			diff++
		}
		s := sorted(x, full)
		nk := tailDeviation(s, v)
		lo, hi := min(k, want), max(k, want)
		// every k between the two answers must be a rounding tie with θ
		for j := lo; j < hi; j++ {
			if r := nk[j] / den; math.Abs(r-theta) > 1e-9*math.Max(theta, 1e-300) && r > 1e-12 {
				t.Fatalf("it %d V=%d θ=%v: bucketK k = %d, full sort %d; N(%d)/den = %v is not a tie", it, v, theta, k, want, j, r)
			}
		}
	}
	if diff > 10 {
		t.Fatalf("%d of 600 answers (θ > 0) differ from the full sort by rounding; expected a few at most", diff)
	}
}

func normalized(x []float64) []float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	for i := range x {
		x[i] /= s
	}
	return x
}

// TestBucketMax: every value lies at or below the bound of its bucket, and
// the bound is tight (the next float64 up is in an earlier bucket).
func TestBucketMax(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 64))
	for i := 0; i < 100000; i++ {
		v := math.Exp(-800 * r.Float64()) // 1 down to ~1e-347 (0 after underflow)
		if i%1000 == 0 {
			v = []float64{0, 1, math.SmallestNonzeroFloat64, 0x1p-254, 0x1p-255}[i/1000%5]
		}
		b := int(radixKey(v) >> bucketShift)
		m := bucketMax(b)
		if !(v <= m) {
			t.Fatalf("v = %v in bucket %d above its bound %v", v, b, m)
		}
		if up := math.Nextafter(m, 2); b > 0 && int(radixKey(up)>>bucketShift) == b {
			t.Fatalf("bound %v of bucket %d is not tight", m, b)
		}
	}
}
