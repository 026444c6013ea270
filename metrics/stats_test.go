package metrics

import (
	"math"
	"testing"
)

func TestStats(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		xs              []float64
		mean, std, ci95 float64
	}{
		{nil, nan, nan, nan},
		{[]float64{3}, 3, nan, nan},
		// t(0.975; 1) = 12.706205: 12.706205 · 1.414214 / √2.
		{[]float64{1, 3}, 2, math.Sqrt2, 12.706204736},
		// t(0.975; 4) = 2.776445, s = √2.5: 2.776445 · 1.581139 / √5.
		{[]float64{1, 2, 3, 4, 5}, 3, math.Sqrt(2.5), 2.776445105 * math.Sqrt(2.5) / math.Sqrt(5)},
		// s = √(32/7); t(0.975; 7) = 2.364624.
		{[]float64{2, 4, 4, 4, 5, 5, 7, 9}, 5, math.Sqrt(32. / 7), 2.364624252 * math.Sqrt(32./7) / math.Sqrt(8)},
	} {
		m, s := MeanStd(tc.xs)
		ci := CI95(tc.xs)
		if !same(m, tc.mean, 1e-12) || !same(Mean(tc.xs), tc.mean, 1e-12) || !same(s, tc.std, 1e-12) || !same(ci, tc.ci95, 1e-8) {
			t.Errorf("%v: mean %v std %v ci95 %v; want %v %v %v", tc.xs, m, s, ci, tc.mean, tc.std, tc.ci95)
		}
	}
	// n = 100: the t factor 1.984217 against the normal 1.959964.
	xs := make([]float64, 100)
	for i := range xs {
		xs[i] = float64(i % 2)
	}
	_, s := MeanStd(xs)
	if got, want := CI95(xs), 1.984216952*s/10; !same(got, want, 1e-8) {
		t.Errorf("CI95 of 100 values = %v, want %v", got, want)
	}

	sum := Summarize([]float64{1, nan, 2, 3, nan, 4, 5})
	if sum.N != 5 || sum.Skipped != 2 || sum.Mean != 3 || !same(sum.CI95, 2.776445105*math.Sqrt(2.5)/math.Sqrt(5), 1e-8) {
		t.Errorf("Summarize = %+v", sum)
	}
	if got, want := sum.String(), "3.0000 ± 1.9632 (n=5)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if s := Summarize([]float64{nan}); s.N != 0 || s.Skipped != 1 || !math.IsNaN(s.Mean) {
		t.Errorf("Summarize(NaN) = %+v", s)
	}
}

// same compares with an absolute tolerance, NaN equal to NaN.
func same(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= tol
}
