package uncertainty

import (
	"errors"
	"fmt"
	"math"
)

// ErrDegenerate is returned (wrapped) when the data cannot support the
// requested estimate: too few points, no spread in u, a non-positive slope.
var ErrDegenerate = errors.New("uncertainty: degenerate data")

// Beta returns the rejection probability of a draft, β = max(1 − y_d/x_d, 0)
// (U-HLM Sec. III-A; CU-HLM eq. 3): the probability that speculative
// sampling rejects a draft whose probability is x_d under the draft model
// and y_d under the target. β = 0 when x_d ≤ y_d (including x_d = 0).
func Beta(xd, yd float64) float64 {
	if !(xd > yd) {
		return 0
	}
	if yd <= 0 {
		return 1
	}
	return 1 - yd/xd
}

// Linear is the least-squares line β ≈ A·u + B of U-HLM eq. 5 / CU-HLM eq. 7
// with its goodness of fit.
type Linear struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
	// R2 is the coefficient of determination 1 − SS_res/SS_tot; 1 when
	// β is constant (the fit is then exact with A = 0: SS_res = SS_tot =
	// 0, and scikit-learn's convention applies).
	R2 float64 `json:"r2"`
	// MSE is the mean squared residual SS_res/n (the papers' MSE).
	MSE float64 `json:"mse"`
	N   int     `json:"n"`
}

// Predict returns A·u + B.
func (l Linear) Predict(u float64) float64 { return l.A*u + l.B }

// RiskProne is the risk-prone threshold (Δ − b)/a of U-HLM eq. 11 /
// CU-HLM eq. 12: skipping every token with u ≤ (Δ − b)/a skips exactly the
// tokens whose predicted rejection probability is below Δ = P(y_d < x_d).
func (l Linear) RiskProne(delta float64) float64 { return (delta - l.B) / l.A }

// RiskAverse is the risk-averse threshold −b/a of U-HLM eq. 14: skipping
// u ≤ −b/a skips only tokens predicted to be accepted for sure (β ≤ 0).
func (l Linear) RiskAverse() float64 { return -l.B / l.A }

// Fit fits β = a·u + b by ordinary least squares. It needs at least three
// finite points and some spread in u; it returns ErrInvalid for mismatched
// lengths or non-finite values and ErrDegenerate otherwise.
func Fit(u, beta []float64) (Linear, error) {
	if len(u) != len(beta) {
		return Linear{}, fmt.Errorf("%w: %d u values, %d β values", ErrInvalid, len(u), len(beta))
	}
	n := len(u)
	if n < 3 {
		return Linear{}, fmt.Errorf("%w: %d points, need at least 3", ErrDegenerate, n)
	}
	for i := range u {
		if !finite(u[i]) || !finite(beta[i]) {
			return Linear{}, fmt.Errorf("%w: point %d is (%v, %v)", ErrInvalid, i, u[i], beta[i])
		}
	}
	mu, mb, suu, sub, sbb := moments(u, beta)
	if !(suu > 0) {
		return Linear{}, fmt.Errorf("%w: all %d u values are equal", ErrDegenerate, n)
	}
	if constant(beta) {
		return Linear{A: 0, B: beta[0], R2: 1, MSE: 0, N: n}, nil
	}
	a := sub / suu
	b := mb - a*mu
	ssr := 0.0
	for i := range u {
		r := beta[i] - (a*u[i] + b)
		ssr += r * r
	}
	return Linear{A: a, B: b, R2: 1 - ssr/sbb, MSE: ssr / float64(n), N: n}, nil
}

// moments returns the means of x and y and the centered sums Σdx², Σdx·dy,
// Σdy², in two passes (stable for large n).
func moments(x, y []float64) (mx, my, sxx, sxy, syy float64) {
	mx, my = mean(x), mean(y)
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	return mx, my, sxx, sxy, syy
}

func constant(x []float64) bool {
	for _, v := range x {
		if v != x[0] {
			return false
		}
	}
	return true
}

// Delta returns Δ = P(y_d < x_d), estimated as the share of logged tokens
// whose target probability is below their draft probability (U-HLM
// Sec. IV-A, CU-HLM Theorem 1): the probability that a draft is not
// accepted outright.
func Delta(xd, yd []float64) (float64, error) {
	if len(xd) != len(yd) {
		return 0, fmt.Errorf("%w: %d x_d values, %d y_d values", ErrInvalid, len(xd), len(yd))
	}
	if len(xd) == 0 {
		return 0, fmt.Errorf("%w: no tokens", ErrDegenerate)
	}
	k := 0
	for i := range xd {
		if !finite(xd[i]) || !finite(yd[i]) {
			return 0, fmt.Errorf("%w: token %d has (x_d, y_d) = (%v, %v)", ErrInvalid, i, xd[i], yd[i])
		}
		if yd[i] < xd[i] {
			k++
		}
	}
	return float64(k) / float64(len(xd)), nil
}

// HolderLinearFactor is the first factor of the Hölder bound (U-HLM eq. 13,
// CU-HLM eq. 13) in closed form:
//
//	sqrt(∫_{−b/a}^{(Δ−b)/a} (a·u + b)² du) = sqrt(Δ³/(3a)) = Δ^{3/2}/sqrt(3a),
//
// since a·u + b runs from 0 to Δ over the interval. It does not depend on
// b. a must be positive.
func HolderLinearFactor(a, delta float64) float64 {
	return math.Pow(delta, 1.5) / math.Sqrt(3*a)
}

// Risk is the rejection risk of risk-prone skipping (U-HLM eq. 12, CU-HLM
// Theorem 1) for a density f of u:
//
//	R = ∫_{−b/a}^{(Δ−b)/a} (a·u + b)·f(u) du,
//
// the expected rejection probability of the tokens that risk-prone skipping
// skips and risk-averse skipping would not. It also returns an estimate of
// the integration error; see integrate.
func Risk(l Linear, delta float64, f Density, intervals int) (r, errEst float64) {
	lo, hi := l.RiskAverse(), l.RiskProne(delta)
	return integrate(func(u float64) float64 { return l.Predict(u) * f.PDF(u) }, lo, hi, f.Breaks(), intervals)
}

// RiskBound is the Hölder (Cauchy–Schwarz) bound on Risk of U-HLM eq. 13 /
// CU-HLM eq. 13:
//
//	R ≤ sqrt(∫ (a·u + b)² du) · sqrt(∫ f(u)² du) = Δ^{3/2}/sqrt(3a) · sqrt(∫ f²),
//
// both integrals over [−b/a, (Δ−b)/a]. It returns the bound, the second
// factor sqrt(∫ f²) and the integration error estimate of ∫ f².
func RiskBound(l Linear, delta float64, f Density, intervals int) (bound, densityFactor, errEst float64) {
	lo, hi := l.RiskAverse(), l.RiskProne(delta)
	i2, e := integrate(func(u float64) float64 { p := f.PDF(u); return p * p }, lo, hi, f.Breaks(), intervals)
	densityFactor = math.Sqrt(max(i2, 0))
	return HolderLinearFactor(l.A, delta) * densityFactor, densityFactor, e
}

// EmpiricalRisk is the measured counterpart of Risk: the mean over all
// logged tokens of β·1(lo < u ≤ hi), with lo = −b/a and hi = (Δ−b)/a the
// two thresholds (U-HLM Sec. IV-A reports R = 2.24·10⁻³ measured this way).
// It panics if len(u) != len(beta).
func EmpiricalRisk(u, beta []float64, lo, hi float64) float64 {
	if len(u) != len(beta) {
		panic("uncertainty: EmpiricalRisk: len(u) != len(beta)")
	}
	if len(u) == 0 {
		return 0
	}
	s := 0.0
	for i := range u {
		if u[i] > lo && u[i] <= hi {
			s += beta[i]
		}
	}
	return s / float64(len(u))
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}
