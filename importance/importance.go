package importance

import "math"

// Threshold returns θ_imp = max(A) − γ·std(A) (U+I eq. 6), with the
// population standard deviation. NaN weights are ignored. It returns NaN
// for a row with no (non-NaN) weight.
func Threshold(a []float32, gamma float64) float64 {
	n := 0
	mx := math.Inf(-1)
	sum := 0.0
	for _, w := range a {
		if w != w {
			continue
		}
		v := float64(w)
		n++
		sum += v
		mx = max(mx, v)
	}
	if n == 0 {
		return math.NaN()
	}
	mean := sum / float64(n)
	ss := 0.0
	for _, w := range a {
		if w != w {
			continue
		}
		d := float64(w) - mean
		ss += d * d
	}
	return mx - gamma*math.Sqrt(ss/float64(n))
}

// Important reports whether at least k weights of the row lie strictly
// above Threshold(a, gamma) (U+I Sec. III-C; the importance half of eq. 7).
// Rows with fewer than k weights are not important; k < 1 is treated as 1.
func Important(a []float32, k int, gamma float64) bool {
	k = max(k, 1)
	if len(a) < k {
		return false
	}
	th := Threshold(a, gamma)
	if math.IsNaN(th) {
		return false
	}
	return CountAbove(a, th) >= k
}

// ImportantMatrix is U+I Sec. III-C read literally: rows are every query's
// attention row of the causal matrix A(t) (row j over positions 0…j), the
// last one the draft's; the token is important when the k-th largest of
// all entries exceeds θ_imp of the draft's row. See the package
// documentation for why hlm does not use this reading.
func ImportantMatrix(rows [][]float32, k int, gamma float64) bool {
	k = max(k, 1)
	if len(rows) == 0 {
		return false
	}
	th := Threshold(rows[len(rows)-1], gamma)
	if math.IsNaN(th) {
		return false
	}
	n := 0
	for _, r := range rows {
		n += CountAbove(r, th)
	}
	return n >= k
}

// CountAbove returns the number of weights strictly above th.
func CountAbove(a []float32, th float64) int {
	c := 0
	for _, w := range a {
		if float64(w) > th {
			c++
		}
	}
	return c
}
