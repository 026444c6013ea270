package metrics

import (
	"encoding/json"
	"math"
	"math/rand/v2"
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

// TestRatioCI: with unit denominators the ratio CI is the mean's t
// interval; a hand-computed case pins the linearization; a simulated
// coverage check (seed 4, 4000 replications of 30 clusters) lands within
// 1.5 points of the nominal 95%.
func TestRatioCI(t *testing.T) {
	xs := []float64{2, 4, 4, 4, 5, 5, 7, 9}
	ones := []float64{1, 1, 1, 1, 1, 1, 1, 1}
	r, h := RatioCI(xs, ones)
	if !same(r, 5, 1e-12) || !same(h, CI95(xs), 1e-12) {
		t.Errorf("unit denominators: %v ± %v, want 5 ± %v", r, h, CI95(xs))
	}
	// num (1, 3, 2), den (1, 2, 2): R = 6/5; residuals −0.2, 0.6, −0.4;
	// Σe² = 0.56; SE = sqrt(0.56/6)/(5/3); t(0.975; 2) = 4.302653.
	r, h = RatioCI([]float64{1, 3, 2}, []float64{1, 2, 2})
	if want := 4.302652730 * math.Sqrt(0.56/6) / (5.0 / 3); !same(r, 1.2, 1e-12) || !same(h, want, 1e-8) {
		t.Errorf("hand case: %v ± %v, want 1.2 ± %v", r, h, want)
	}
	if _, h := RatioCI([]float64{1}, []float64{2}); !math.IsNaN(h) {
		t.Error("one unit: want NaN half-width")
	}
	if r, _ := RatioCI([]float64{1, 2}, []float64{0, 0}); !math.IsNaN(r) {
		t.Error("zero denominators: want NaN")
	}
	// Coverage: clusters of Poisson-ish sizes, successes binomial with p = 0.3.
	rng := rand.New(rand.NewPCG(4, 4))
	covered := 0
	const reps = 4000
	for range reps {
		num, den := make([]float64, 30), make([]float64, 30)
		for i := range num {
			n := 5 + rng.IntN(60)
			k := 0
			for range n {
				if rng.Float64() < 0.3 {
					k++
				}
			}
			num[i], den[i] = float64(k), float64(n)
		}
		r, h := RatioCI(num, den)
		if math.Abs(r-0.3) <= h {
			covered++
		}
	}
	if c := float64(covered) / reps; math.Abs(c-0.95) > 0.015 {
		t.Errorf("coverage %.3f, want 0.95 ± 0.015", c)
	}
}

// TestNoSpreadFromRounding: values equal but for the mean's rounding have
// no interval; values one part in 1e12 apart keep theirs.
func TestNoSpreadFromRounding(t *testing.T) {
	for _, tc := range []struct {
		name   string
		xs     []float64
		spread bool
	}{
		{"equal 0.1", []float64{0.1, 0.1, 0.1}, false},
		{"equal 0.7 × 7", []float64{0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7}, false},
		{"equal 1e-300", []float64{1e-300, 1e-300, 1e-300}, false},
		{"zeros", []float64{0, 0}, false},
		{"one ulp apart", []float64{0.1, math.Nextafter(0.1, 1), 0.1}, false},
		{"1e-12 apart", []float64{0.1, 0.1 + 1e-13, 0.1}, true},
		{"tiny but distinct", []float64{1e-18, 3e-18}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ones := make([]float64, len(tc.xs))
			for i := range ones {
				ones[i] = 1
			}
			_, s := MeanStd(tc.xs)
			_, h := RatioCI(tc.xs, ones)
			if (s > 0) != tc.spread || (CI95(tc.xs) > 0) != tc.spread || (h > 0) != tc.spread {
				t.Errorf("std %v, CI95 %v, ratio half-width %v; want spread %v", s, CI95(tc.xs), h, tc.spread)
			}
		})
	}
	// A ratio the same in every unit: 0.3 of 10, 20 and 70.
	if r, h := RatioCI([]float64{3, 6, 21}, []float64{10, 20, 70}); h != 0 || !same(r, 0.3, 1e-15) {
		t.Errorf("equal ratios: %v ± %v, want 0.3 ± 0", r, h)
	}
}

// TestSummaryJSON: a summary of one value (no spread, no interval: NaN)
// is written with nulls, not refused by encoding/json; defined values are
// written as they are.
func TestSummaryJSON(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want string
	}{
		{[]float64{0.5}, `{"n":1,"skipped":0,"mean":0.5,"std":null,"ci95":null}`},
		{nil, `{"n":0,"skipped":0,"mean":null,"std":null,"ci95":null}`},
	} {
		b, err := json.Marshal(Summarize(c.xs))
		if err != nil || string(b) != c.want {
			t.Errorf("%v: %s, %v; want %s", c.xs, b, err, c.want)
		}
	}
	s := Summarize([]float64{1, 3})
	b, err := json.Marshal(s)
	var back Summary
	if err == nil {
		err = json.Unmarshal(b, &back)
	}
	if err != nil || back != s {
		t.Errorf("%s, %v: want %+v back", b, err, s)
	}
}
