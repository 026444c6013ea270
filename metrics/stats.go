package metrics

import (
	"encoding/json"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Mean is the arithmetic mean of xs; NaN when xs is empty.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// MeanStd is the mean and the sample standard deviation (denominator n−1,
// computed in two passes) of xs. The standard deviation is NaN for fewer
// than two values, and 0 when every value lies within rounding of the
// mean (see belowRounding).
func MeanStd(xs []float64) (mean, std float64) {
	mean = Mean(xs)
	if len(xs) < 2 {
		return mean, math.NaN()
	}
	var ss, big float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
		big = max(big, math.Abs(x))
	}
	if belowRounding(ss, len(xs), big) {
		return mean, 0
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

// belowRounding reports whether a sum of n squared deviations ss is no
// more than the rounding of values of magnitude up to big: every deviation
// within 4 units in the last place. Equal values then have no spread, where
// the mean's own rounding would give them one of 1e-17 of their size (an
// interval of "0.3 ± 6e-18").
func belowRounding(ss float64, n int, big float64) bool {
	r := 4 * 0x1p-52 * big
	return ss <= float64(n)*r*r
}

// CI95 is the half-width of the two-sided 95% confidence interval of the
// mean of xs under Student's t distribution: t(0.975; n−1)·s/√n, where s is
// the sample standard deviation. (For n = 100 the t factor is 1.984 against
// the normal 1.960.) It is NaN for fewer than two values.
func CI95(xs []float64) float64 {
	_, std := MeanStd(xs)
	return tHalfWidth(std, len(xs))
}

func tHalfWidth(std float64, n int) float64 {
	return T95(n) * std / math.Sqrt(float64(n))
}

// T95 is the factor of the 95% interval of a mean of n values,
// t(0.975; n−1): 12.71 at n = 2, 4.30 at 3, 2.26 at 10. NaN for n < 2.
func T95(n int) float64 {
	if n < 2 {
		return math.NaN()
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.975)
}

// Summary describes a sample of per-example values, NaNs left out.
type Summary struct {
	N       int     `json:"n"`       // values used
	Skipped int     `json:"skipped"` // NaN values left out
	Mean    float64 `json:"mean"`
	Std     float64 `json:"std"`  // sample standard deviation
	CI95    float64 `json:"ci95"` // half-width of the 95% t interval of the mean
}

// Summarize is the mean, standard deviation and 95% confidence half-width
// (see CI95) of the non-NaN values of xs; NaN values (for instance Cosine
// of two texts without a known word) are counted in Skipped.
func Summarize(xs []float64) Summary {
	kept := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			kept = append(kept, x)
		}
	}
	s := Summary{N: len(kept), Skipped: len(xs) - len(kept)}
	s.Mean, s.Std = MeanStd(kept)
	s.CI95 = tHalfWidth(s.Std, s.N)
	return s
}

// MarshalJSON writes a value that is not defined — the mean of nothing,
// the spread and interval of fewer than two values (NaN) — as null, which
// JSON has, rather than failing ("json: unsupported value: NaN").
func (s Summary) MarshalJSON() ([]byte, error) {
	type plain Summary // without this method
	return json.Marshal(struct {
		plain
		Mean *float64 `json:"mean"`
		Std  *float64 `json:"std"`
		CI95 *float64 `json:"ci95"`
	}{plain(s), Finite(s.Mean), Finite(s.Std), Finite(s.CI95)})
}

// Finite is &x, or nil when x is NaN or infinite: a JSON field that is
// null where the value is not defined.
func Finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// String is "mean ± ci95 (n=N)" with four decimals.
func (s Summary) String() string {
	return fmt.Sprintf("%.4f ± %.4f (n=%d)", s.Mean, s.CI95, s.N)
}

// RatioCI is a ratio of sums R = Σ num_i / Σ den_i over n independent
// units (prompts) and the half-width of its 95% confidence interval by the
// linearization (delta) method with units as clusters:
//
//	SE(R) = sqrt(Σ_i (num_i − R·den_i)² / (n(n−1))) / mean(den),
//
// times t(0.975; n−1). Pooled rates — uploads per round, bits per token,
// tokens per second — are such ratios; with den_i = 1 it is the mean and
// CI95 of num. The half-width is NaN for fewer than two units or a zero
// mean denominator; R is NaN when Σ den = 0. NaN units are left out.
func RatioCI(num, den []float64) (ratio, half float64) {
	var sn, sd float64
	n := 0
	for i := range num {
		if math.IsNaN(num[i]) || math.IsNaN(den[i]) {
			continue
		}
		sn += num[i]
		sd += den[i]
		n++
	}
	if sd == 0 {
		return math.NaN(), math.NaN()
	}
	ratio = sn / sd
	if n < 2 {
		return ratio, math.NaN()
	}
	var ss, big float64
	for i := range num {
		if math.IsNaN(num[i]) || math.IsNaN(den[i]) {
			continue
		}
		e := num[i] - ratio*den[i]
		ss += e * e
		big = max(big, math.Abs(num[i]), math.Abs(ratio*den[i]))
	}
	if belowRounding(ss, n, big) {
		return ratio, 0
	}
	se := math.Sqrt(ss/float64(n*(n-1))) / (sd / float64(n))
	return ratio, tHalfWidth(se*math.Sqrt(float64(n)), n)
}
