package uncertainty

import (
	"fmt"
	"math"
)

// Record is one logged token of a calibration run: its uncertainty and the
// draft token's probability under the draft model (x_d) and the target
// model (y_d). β = Beta(XD, YD).
type Record struct {
	U  float64 `json:"u"`
	XD float64 `json:"x_d"`
	YD float64 `json:"y_d"`
}

// Density estimators for Options.Density.
const (
	DensityKDE       = "kde"       // Gaussian KDE, Silverman bandwidth (CU-HLM Fig. 4b)
	DensityHistogram = "histogram" // bins centred on k/M (U-HLM Fig. 5)
)

// Options configures Calibrate. The zero value is KDE, M = 20, 2000
// Simpson subintervals.
type Options struct {
	// Density is DensityKDE (default) or DensityHistogram.
	Density string `json:"density"`
	// M is the number of temperatures u was measured with; it places the
	// histogram bins. Default 20.
	M int `json:"m"`
	// Intervals is the number of Simpson subintervals; default 2000.
	Intervals int `json:"intervals"`
	// FitOn is FitBins (default) to regress the mean β of each observed u
	// value (u takes the values k/M) on u, as the papers' curves do (U-HLM
	// Fig. 5 right, CU-HLM Fig. 2 and eq. 7 with R² 0.9774), or FitPoints to
	// regress every logged token.
	FitOn string `json:"fit_on"`
}

// Regression targets of Options.FitOn.
const (
	FitBins   = "bins"
	FitPoints = "points"
)

// BinnedMeans groups tokens by their uncertainty value (rounded to the
// nearest k/M) and returns each value with the mean β over its tokens, in
// increasing u, and the token count of each bin.
func BinnedMeans(u, beta []float64, m int) (uc, mean []float64, count []int) {
	sum := make([]float64, m+1)
	cnt := make([]int, m+1)
	for i := range u {
		k := int(math.Round(u[i] * float64(m)))
		k = min(max(k, 0), m)
		sum[k] += beta[i]
		cnt[k]++
	}
	for k := range sum {
		if cnt[k] > 0 {
			uc = append(uc, float64(k)/float64(m))
			mean = append(mean, sum[k]/float64(cnt[k]))
			count = append(count, cnt[k])
		}
	}
	return uc, mean, count
}

// Calibration is everything Theorem 1 of U-HLM / CU-HLM derives from a
// calibration log, in a form that encodes to JSON (every field finite).
type Calibration struct {
	FitOn string `json:"fit_on"` // FitBins or FitPoints
	N     int    `json:"n"`
	Fit   Linear `json:"fit"` // β = a·u + b (U-HLM eq. 5, CU-HLM eq. 7)
	// Delta is Δ = P(y_d < x_d).
	Delta float64 `json:"delta"`
	// RiskProne is u_th = (Δ − b)/a (U-HLM eq. 11, CU-HLM eq. 12).
	RiskProne float64 `json:"u_th_risk_prone"`
	// RiskAverse is −b/a (U-HLM eq. 14).
	RiskAverse float64 `json:"u_th_risk_averse"`

	// Density estimate of u used for R and its bound.
	Density   string  `json:"density"`
	Bandwidth float64 `json:"bandwidth,omitempty"` // KDE only
	Bins      int     `json:"bins,omitempty"`      // histogram only

	// Risk is R = ∫ (a·u + b) f(u) du over [−b/a, (Δ−b)/a] (U-HLM eq. 12).
	Risk float64 `json:"risk"`
	// RiskBound is the Hölder bound (U-HLM eq. 13, CU-HLM eq. 13),
	// LinearFactor · DensityFactor.
	RiskBound float64 `json:"risk_bound"`
	// LinearFactor is sqrt(∫(a·u + b)² du) = Δ^{3/2}/sqrt(3a).
	LinearFactor float64 `json:"linear_factor"`
	// DensityFactor is sqrt(∫ f² du) over the same interval.
	DensityFactor float64 `json:"density_factor"`
	// IntegrationError bounds the quadrature error of Risk and of ∫f²
	// (Richardson estimates, the larger of the two).
	IntegrationError float64 `json:"integration_error"`
	// EmpiricalRisk is the mean over the log of β·1(−b/a < u ≤ (Δ−b)/a).
	EmpiricalRisk float64 `json:"empirical_risk"`
}

// Calibrate fits the linear model, estimates Δ, derives both thresholds,
// estimates the density of u and evaluates the rejection risk, its Hölder
// bound and its empirical value. It fails with ErrDegenerate when the fit
// has a non-positive slope (the thresholds of Theorem 1 need a > 0).
func Calibrate(recs []Record, opt Options) (Calibration, error) {
	if opt.M <= 0 {
		opt.M = DefaultM
	}
	if opt.Density == "" {
		opt.Density = DensityKDE
	}
	if opt.FitOn == "" {
		opt.FitOn = FitBins
	}
	n := len(recs)
	u := make([]float64, n)
	beta := make([]float64, n)
	xd := make([]float64, n)
	yd := make([]float64, n)
	for i, r := range recs {
		if !finite(r.U) || !(r.XD >= 0) || !(r.YD >= 0) || !finite(r.XD) || !finite(r.YD) {
			return Calibration{}, fmt.Errorf("%w: record %d is %+v (want finite u and probabilities ≥ 0)", ErrInvalid, i, r)
		}
		u[i], xd[i], yd[i] = r.U, r.XD, r.YD
		beta[i] = Beta(r.XD, r.YD)
	}
	var fit Linear
	var err error
	switch opt.FitOn {
	case "", FitBins:
		uc, mb, _ := BinnedMeans(u, beta, opt.M)
		fit, err = Fit(uc, mb)
	case FitPoints:
		fit, err = Fit(u, beta)
	default:
		return Calibration{}, fmt.Errorf("%w: fit_on %q (want %q or %q)", ErrInvalid, opt.FitOn, FitBins, FitPoints)
	}
	if err != nil {
		return Calibration{}, err
	}
	if !(fit.A > 0) {
		return Calibration{}, fmt.Errorf("%w: slope a = %v, Theorem 1 needs a > 0", ErrDegenerate, fit.A)
	}
	delta, err := Delta(xd, yd)
	if err != nil {
		return Calibration{}, err
	}
	c := Calibration{
		FitOn:      opt.FitOn,
		N:          n,
		Fit:        fit,
		Delta:      delta,
		RiskProne:  fit.RiskProne(delta),
		RiskAverse: fit.RiskAverse(),
		Density:    opt.Density,
	}
	var f Density
	switch opt.Density {
	case DensityKDE:
		k, err := NewKDE(u)
		if err != nil {
			return Calibration{}, err
		}
		f, c.Bandwidth = k, k.Bandwidth
	case DensityHistogram:
		h, err := NewUncertaintyHistogram(u, opt.M)
		if err != nil {
			return Calibration{}, err
		}
		f, c.Bins = h, len(h.Density)
	default:
		return Calibration{}, fmt.Errorf("%w: density %q (want %q or %q)", ErrInvalid, opt.Density, DensityKDE, DensityHistogram)
	}
	var e1, e2 float64
	c.Risk, e1 = Risk(fit, delta, f, opt.Intervals)
	c.RiskBound, c.DensityFactor, e2 = RiskBound(fit, delta, f, opt.Intervals)
	c.LinearFactor = HolderLinearFactor(fit.A, delta)
	c.IntegrationError = max(e1, e2)
	c.EmpiricalRisk = EmpiricalRisk(u, beta, c.RiskAverse, c.RiskProne)
	return c, nil
}
