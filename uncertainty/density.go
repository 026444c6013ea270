package uncertainty

import (
	"fmt"
	"math"
	"slices"
)

// A Density is a probability density on the real line estimated from the
// logged uncertainties.
type Density interface {
	// PDF returns the density at u.
	PDF(u float64) float64
	// Breaks returns the sorted points where the density is not smooth
	// (bin edges of a histogram), nil for a smooth density. Integration
	// splits its interval there so that each piece is integrated exactly
	// or to the accuracy of a smooth integrand.
	Breaks() []float64
}

// KDE is a Gaussian kernel density estimate
//
//	f(u) = 1/(n·h) · Σ_k φ((u − u_k)/h),  φ the standard normal density.
//
// No boundary correction is applied: u lives in [0, 1] and some mass leaks
// outside, as in the estimate CU-HLM plots (Fig. 4b).
type KDE struct {
	// Bandwidth h.
	Bandwidth float64 `json:"bandwidth"`
	// The samples, compressed to distinct values with multiplicities
	// (temperature-perturbation u takes only M+1 values).
	Values  []float64 `json:"values"`
	Weights []float64 `json:"weights"` // multiplicity / n
}

// NewKDE builds a Gaussian KDE with Silverman's rule-of-thumb bandwidth
// (Silverman 1986, eq. 3.31)
//
//	h = 0.9 · min(σ̂, IQR/1.34) · n^(−1/5),
//
// with σ̂ the sample standard deviation and IQR the interquartile range
// (linear interpolation between order statistics). When IQR = 0 (more than
// half the samples equal, common for u) σ̂ alone is used. It returns
// ErrDegenerate for fewer than 2 samples or no spread, ErrInvalid for
// non-finite samples.
func NewKDE(samples []float64) (*KDE, error) {
	n := len(samples)
	if n < 2 {
		return nil, fmt.Errorf("%w: %d samples, need at least 2 for a bandwidth", ErrDegenerate, n)
	}
	for i, s := range samples {
		if !finite(s) {
			return nil, fmt.Errorf("%w: sample %d is %v", ErrInvalid, i, s)
		}
	}
	m := mean(samples)
	ss := 0.0
	for _, s := range samples {
		ss += (s - m) * (s - m)
	}
	sd := math.Sqrt(ss / float64(n-1))
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	iqr := quantile(sorted, 0.75) - quantile(sorted, 0.25)
	a := sd
	if iqr > 0 {
		a = min(sd, iqr/1.34)
	}
	h := 0.9 * a * math.Pow(float64(n), -0.2)
	if !(h > 0) {
		return nil, fmt.Errorf("%w: all %d samples are equal", ErrDegenerate, n)
	}
	return NewKDEBandwidth(samples, h)
}

// NewKDEBandwidth builds a Gaussian KDE with the given bandwidth h > 0.
func NewKDEBandwidth(samples []float64, h float64) (*KDE, error) {
	if len(samples) == 0 {
		return nil, fmt.Errorf("%w: no samples", ErrDegenerate)
	}
	if !(h > 0) || math.IsInf(h, 1) {
		return nil, fmt.Errorf("%w: bandwidth %v", ErrInvalid, h)
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	k := &KDE{Bandwidth: h}
	w := 1 / float64(len(sorted))
	for i, s := range sorted {
		if !finite(s) {
			return nil, fmt.Errorf("%w: sample %v", ErrInvalid, s)
		}
		if i > 0 && s == sorted[i-1] {
			k.Weights[len(k.Weights)-1] += w
			continue
		}
		k.Values = append(k.Values, s)
		k.Weights = append(k.Weights, w)
	}
	return k, nil
}

// PDF evaluates the estimate at u.
func (k *KDE) PDF(u float64) float64 {
	const invSqrt2Pi = 0.3989422804014327
	s := 0.0
	for i, v := range k.Values {
		t := (u - v) / k.Bandwidth
		if t > -40 && t < 40 {
			s += k.Weights[i] * math.Exp(-0.5*t*t)
		}
	}
	return s * invSqrt2Pi / k.Bandwidth
}

// Breaks returns nil: a KDE is smooth.
func (k *KDE) Breaks() []float64 { return nil }

// Histogram is a piecewise-constant density: Bins equal bins on [Lo, Hi],
// Density[i] = (count in bin i)/(n·width). Samples outside [Lo, Hi] count in
// n but in no bin, so the density integrates to the share inside.
type Histogram struct {
	Lo      float64   `json:"lo"`
	Hi      float64   `json:"hi"`
	Density []float64 `json:"density"`
}

// NewHistogram bins samples into bins equal bins on [lo, hi]; a sample equal
// to hi goes into the last bin.
func NewHistogram(samples []float64, lo, hi float64, bins int) (*Histogram, error) {
	if len(samples) == 0 {
		return nil, fmt.Errorf("%w: no samples", ErrDegenerate)
	}
	if bins < 1 || !(hi > lo) || !finite(lo) || !finite(hi) {
		return nil, fmt.Errorf("%w: histogram of %d bins on [%v, %v]", ErrInvalid, bins, lo, hi)
	}
	h := &Histogram{Lo: lo, Hi: hi, Density: make([]float64, bins)}
	width := (hi - lo) / float64(bins)
	unit := 1 / (float64(len(samples)) * width)
	for i, s := range samples {
		if !finite(s) {
			return nil, fmt.Errorf("%w: sample %d is %v", ErrInvalid, i, s)
		}
		if s < lo || s > hi {
			continue
		}
		j := min(int((s-lo)/width), bins-1)
		h.Density[j] += unit
	}
	return h, nil
}

// NewUncertaintyHistogram is the histogram U-HLM uses for f (Fig. 5, left):
// u = k/M takes M+1 values, and bin k is centred on k/M with width 1/M,
// covering [−1/(2M), 1 + 1/(2M)].
func NewUncertaintyHistogram(u []float64, m int) (*Histogram, error) {
	if m < 1 {
		return nil, fmt.Errorf("%w: M = %d", ErrInvalid, m)
	}
	half := 0.5 / float64(m)
	return NewHistogram(u, -half, 1+half, m+1)
}

// PDF returns the density of the bin containing u (0 outside [Lo, Hi]).
func (h *Histogram) PDF(u float64) float64 {
	if !(u >= h.Lo && u <= h.Hi) {
		return 0
	}
	n := len(h.Density)
	j := min(int((u-h.Lo)/(h.Hi-h.Lo)*float64(n)), n-1)
	return h.Density[j]
}

// Breaks returns the bin edges.
func (h *Histogram) Breaks() []float64 {
	n := len(h.Density)
	e := make([]float64, n+1)
	for i := range e {
		e[i] = h.Lo + (h.Hi-h.Lo)*float64(i)/float64(n)
	}
	return e
}

// quantile returns the q-quantile of sorted data by linear interpolation
// between order statistics (type 7, the default of R and NumPy).
func quantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	i := int(pos)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	f := pos - float64(i)
	return sorted[i] + f*(sorted[i+1]-sorted[i])
}

// DefaultIntervals is the default number of Simpson subintervals.
const DefaultIntervals = 2000

// integrate returns ∫_lo^hi g(u) du by the composite Simpson rule and an
// estimate of its error.
//
// The interval is cut at the breaks inside it (where g may jump or kink)
// and each piece gets a share of the n subintervals proportional to its
// length (at least 2, always even). On each piece Simpson's rule is exact
// for polynomials of degree ≤ 3 — so for a histogram, where g is (a·u+b)·c
// or c², the result is exact up to rounding — and its error for a smooth g
// is −(b−a)·h⁴·g⁽⁴⁾(ξ)/180. The returned error estimate is Richardson's
// |S_n − S_{n/2}|/15, the leading term of that error. If hi < lo the
// integral is taken with the opposite sign; n ≤ 0 means DefaultIntervals.
func integrate(g func(float64) float64, lo, hi float64, breaks []float64, n int) (value, errEst float64) {
	if n <= 0 {
		n = DefaultIntervals
	}
	sign := 1.0
	if hi < lo {
		lo, hi, sign = hi, lo, -1
	}
	if !(hi > lo) {
		return 0, 0
	}
	cuts := []float64{lo}
	for _, b := range breaks {
		if b > lo && b < hi {
			cuts = append(cuts, b)
		}
	}
	cuts = append(cuts, hi)
	var full, half float64
	for i := 0; i+1 < len(cuts); i++ {
		a, b := cuts[i], cuts[i+1]
		k := int(math.Ceil(float64(n) * (b - a) / (hi - lo)))
		k = max(4, (k+3)/4*4) // divisible by 4, so that k/2 is even too
		full += simpson(g, a, b, k)
		half += simpson(g, a, b, k/2)
	}
	return sign * full, math.Abs(full-half) / 15
}

// simpson is the composite Simpson rule with k (even) subintervals. The
// end points are evaluated 1e-12 of the piece inside it, so that a density
// that jumps at a break is read on the side of the piece (the error this
// adds for a smooth g is ~1e-12·|g'|·(b−a)).
func simpson(g func(float64) float64, a, b float64, k int) float64 {
	h := (b - a) / float64(k)
	eps := 1e-12 * (b - a)
	s := g(a+eps) + g(b-eps)
	for i := 1; i < k; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		s += w * g(a+float64(i)*h)
	}
	return s * h / 3
}
