package uncertainty

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/hlmproject/hlm/sampling"
)

// Defaults of the papers (U-HLM Sec. III-A, CU-HLM Sec. III-A): 20
// temperatures uniform in [0, 2].
const (
	DefaultM        = 20
	DefaultThetaMax = 2.0
)

// ErrInvalid is returned (wrapped) for impossible parameters.
var ErrInvalid = errors.New("uncertainty: invalid parameter")

// Perturbation configures temperature-perturbation uncertainty (U-HLM
// eq. 6–7, CU-HLM eq. 8–9): M temperatures θ_m uniform in [0, ThetaMax],
// one token d_m sampled from softmax(z/θ_m) for each, and
//
//	u = (1/M)·Σ_m 1(d_m ≠ d)
//
// for the draft d. θ_m = 0 means greedy: d_m = argmax z.
//
// Zero fields take the defaults (M = 20, ThetaMax = 2).
type Perturbation struct {
	M        int     `json:"m"`
	ThetaMax float64 `json:"theta_max"`
}

// maxM bounds M to keep a typo from turning one token into minutes of work.
const maxM = 1 << 16

// Validate reports whether p is usable: 0 ≤ M ≤ 65536 and ThetaMax finite
// and ≥ 0 (zeros select the defaults).
func (p Perturbation) Validate() error {
	if p.M < 0 || p.M > maxM {
		return fmt.Errorf("%w: M = %d (want 1…%d, or 0 for %d)", ErrInvalid, p.M, maxM, DefaultM)
	}
	if !(p.ThetaMax >= 0) || math.IsInf(p.ThetaMax, 1) {
		return fmt.Errorf("%w: ThetaMax = %v (want finite > 0, or 0 for %v)", ErrInvalid, p.ThetaMax, DefaultThetaMax)
	}
	return nil
}

// withDefaults fills zero fields; it also replaces invalid ones, so that
// Measure never panics on a configuration nobody validated.
func (p Perturbation) withDefaults() Perturbation {
	if p.M <= 0 || p.M > maxM {
		p.M = DefaultM
	}
	if !(p.ThetaMax > 0) || math.IsInf(p.ThetaMax, 1) {
		p.ThetaMax = DefaultThetaMax
	}
	return p
}

// Measure returns the uncertainty u ∈ {0, 1/M, …, 1} of draft under logits.
//
// It computes exactly what MeasureNaive computes — the same random
// variable, and for the same rng state the same value except with
// probability of order 1e-13 per sample (floating-point ties) — without M
// full softmax passes. For each m it draws θ_m = ThetaMax·rng.Float64() and
// U_m = rng.Float64(), and decides whether inverse-CDF sampling with U_m
// from softmax(z/θ_m) would return the draft, using bounds on the
// partition function from logits bucketed once; see the package
// documentation for the method.
//
// It consumes exactly 2M draws from rng, like MeasureNaive. A draft
// outside [0, len(logits)) cannot be matched by any sample: Measure returns
// 1 without consuming draws. Logits whose maximum or whose draft entry is
// not finite are handed to MeasureNaive (same result, same draws).
// An invalid configuration is replaced field by field by the defaults; call
// Validate to reject it instead.
func (p Perturbation) Measure(logits []float32, draft int, rng *rand.Rand) float64 {
	p = p.withDefaults()
	if draft < 0 || draft >= len(logits) {
		return 1
	}
	b := getBuckets()
	defer putBuckets(b)
	if !b.prepare(logits, draft, p.ThetaMax) {
		return p.MeasureNaive(logits, draft, rng)
	}
	diff := 0
	for range p.M {
		theta := rng.Float64() * p.ThetaMax
		u := rng.Float64()
		if !b.sampleIsDraft(theta, u) {
			diff++
		}
	}
	return float64(diff) / float64(p.M)
}

// MeasureNaive is the reference implementation of Measure: for each of the
// M temperatures a full softmax over the vocabulary and an inverse-CDF
// sample (sampling.Softmax, sampling.Sample). It costs M·V exponentials.
func (p Perturbation) MeasureNaive(logits []float32, draft int, rng *rand.Rand) float64 {
	p = p.withDefaults()
	if draft < 0 || draft >= len(logits) {
		return 1
	}
	dist := make([]float64, len(logits))
	diff := 0
	for range p.M {
		theta := rng.Float64() * p.ThetaMax
		dist = sampling.Softmax(dist, logits, theta)
		if sampling.Sample(dist, rng) != draft {
			diff++
		}
	}
	return float64(diff) / float64(p.M)
}

// DisagreeProb returns P(d_θ ≠ draft) = 1 − softmax(z/θ)_draft for one
// temperature θ (1(argmax z ≠ draft) for θ = 0), computed with a full
// softmax. Each term of u is a Bernoulli with this parameter at a random θ,
// so E[u] = (1/θmax)·∫₀^θmax DisagreeProb(z, d, θ) dθ.
func DisagreeProb(logits []float32, draft int, theta float64) float64 {
	if draft < 0 || draft >= len(logits) {
		return 1
	}
	return 1 - sampling.Softmax(nil, logits, theta)[draft]
}
