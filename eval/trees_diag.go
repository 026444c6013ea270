package eval

import (
	"fmt"
	"math"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/metrics"
)

// treeDiag is what the device measured of one tree configuration's trees
// at one point (hybrid.TreeReport summed over the prompts), and the row
// of the same runs.
type treeDiag struct {
	point treePoint
	cfg   treeCfg
	rep   hybrid.TreeReport
	row   Row
}

// treeDiagnose sums the tree reports of row's runs (a tree configuration
// at point g on every prompt; each run's Result.Tree is its device's
// hybrid.TreeReport).
func treeDiagnose(g treePoint, t treeCfg, row Row) (treeDiag, error) {
	d := treeDiag{point: g, cfg: t, row: row}
	for i, r := range row.Runs {
		if r.Tree == nil {
			return treeDiag{}, fmt.Errorf("diagnostics of %s at %s, prompt %d: the run has no tree report", t.label(), g, i)
		}
		d.rep.Add(*r.Tree)
	}
	return d, nil
}

// frac is a/b (NaN when b is 0).
func frac(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// ratioCol is a pooled rate of a run: Σ num / Σ den over a row's prompts.
type ratioCol func(r hybrid.Result) (num, den float64)

var (
	colTokensPerRound ratioCol = func(r hybrid.Result) (float64, float64) { return float64(len(r.Tokens)), float64(r.Uploads) }
	colTPS            ratioCol = func(r hybrid.Result) (float64, float64) { return float64(len(r.Tokens)), r.VirtualSeconds }
	colBitsPerRound   ratioCol = func(r hybrid.Result) (float64, float64) { return float64(r.UplinkBits), float64(r.Uploads) }
	colBitsPerToken   ratioCol = func(r hybrid.Result) (float64, float64) { return float64(r.UplinkBits), float64(len(r.Tokens)) }
	colPassesPerRound ratioCol = func(r hybrid.Result) (float64, float64) { return float64(r.Drafted), float64(r.Uploads) }
)

// split is a row's per-prompt numerators and denominators of f.
func split(r Row, f ratioCol) (num, den []float64) {
	for _, x := range r.Runs {
		n, d := f(x)
		num, den = append(num, n), append(den, d)
	}
	return num, den
}

// pooled is a row's pooled rate and the half-width of its 95% interval.
func pooled(r Row, f ratioCol) (v, h float64) {
	return metrics.RatioCI(split(r, f))
}

// influence are the per-prompt terms of the linearized pooled rate R of
// (num, den): (num_i − R·den_i)/mean(den), whose mean's standard error is
// R's.
func influence(num, den []float64) (r float64, z []float64) {
	var sn, sd float64
	for i := range num {
		sn, sd = sn+num[i], sd+den[i]
	}
	r = sn / sd
	m := sd / float64(len(den))
	for i := range num {
		z = append(z, (num[i]-r*den[i])/m)
	}
	return r, z
}

// pairedDiff is the difference of a's and b's pooled rates, run on the
// same prompts and seeds, and the half-width of its 95% interval (the
// linearization of the difference, prompt by prompt; Student's t).
func pairedDiff(a, b Row, f ratioCol) (d, h float64) {
	ra, za := influence(split(a, f))
	rb, zb := influence(split(b, f))
	z := make([]float64, len(za))
	for i := range za {
		z[i] = za[i] - zb[i]
	}
	return ra - rb, metrics.CI95(z)
}

// pairedRatio is a's pooled rate over b's, on the same prompts, and its
// 95% interval (that of the logarithm of the ratio, linearized).
func pairedRatio(a, b Row, f ratioCol) (ratio, lo, hi float64) {
	ra, za := influence(split(a, f))
	rb, zb := influence(split(b, f))
	z := make([]float64, len(za))
	for i := range za {
		z[i] = za[i]/ra - zb[i]/rb
	}
	h := metrics.CI95(z)
	ratio = ra / rb
	return ratio, ratio * math.Exp(-h), ratio * math.Exp(h)
}

// ratioCell formats a ratio with its interval: "1.23 [1.10, 1.37]".
func ratioCell(r, lo, hi float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return fmt.Sprintf("%.3g", r)
	}
	return fmt.Sprintf("%.3g [%.3g, %.3g]", r, lo, hi)
}
