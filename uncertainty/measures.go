package uncertainty

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/hlmproject/hlm/sampling"
)

// The other two uncertainty measures of U-HLM Sec. III-A (Fig. 3) and
// CU-HLM Sec. III-A (Fig. 2). Both sample M tokens from perturbed versions
// of the small model and report, like temperature perturbation, the share
// that differs from the draft:
//
//	u = (1/M)·Σ_m 1(d_m ≠ d)   (Disagreement)
//
//   - MC dropout: M forward passes with dropout probabilities p_m uniform
//     in [0, PMax] (the papers: M = 20, PMax = 0.1), one token sampled per
//     pass (Gal & Ghahramani 2016). It costs M extra forward passes of the
//     draft position (plus one to restore its cache without dropout).
//   - Prompt perturbation: M paraphrases of the prompt (WordNet synonym
//     substitution, package wordnet), each followed by the response so far
//     in its own session, one token sampled per paraphrase. It costs M
//     extra sessions, each advanced by one token per step, and M prefills.
//
// Temperature perturbation needs no extra pass: every sample comes from
// the one logit vector (Perturbation).

// Disagreement is u = (1/M)·Σ_m 1(samples[m] ≠ draft): the share of
// perturbed samples that differ from the draft (U-HLM eq. 7 for any
// perturbation). It is NaN for no samples.
func Disagreement(samples []int, draft int) float64 {
	if len(samples) == 0 {
		return math.NaN()
	}
	n := 0
	for _, s := range samples {
		if s != draft {
			n++
		}
	}
	return float64(n) / float64(len(samples))
}

// DropoutSession is a model session that can evaluate with dropout
// (model/llama's Session).
type DropoutSession interface {
	Eval(tokens []int) ([][]float32, error)
	Truncate(n int) error
	Len() int
	SetDropout(p float64, rng *rand.Rand)
}

// MCDropout configures Monte-Carlo dropout uncertainty: M passes with
// dropout probabilities uniform in [0, PMax]. Zero fields take the papers'
// values (M = 20, PMax = 0.1).
type MCDropout struct {
	M    int     `json:"m"`
	PMax float64 `json:"p_max"`
}

// Defaults of MC dropout (U-HLM Sec. III-A, CU-HLM Sec. III-A).
const (
	DefaultDropoutM    = 20
	DefaultDropoutPMax = 0.1
)

func (d MCDropout) withDefaults() MCDropout {
	if d.M <= 0 {
		d.M = DefaultDropoutM
	}
	if !(d.PMax > 0) {
		d.PMax = DefaultDropoutPMax
	}
	return d
}

// Samples is M with the default applied.
func (d MCDropout) Samples() int { return d.withDefaults().M }

// Validate requires 0 ≤ M ≤ 65536 and 0 ≤ PMax < 1 (zeros: defaults).
func (d MCDropout) Validate() error {
	if d.M < 0 || d.M > maxM || !(d.PMax >= 0 && d.PMax < 1) {
		return fmt.Errorf("%w: MC dropout M = %d, p_max = %v (want M in 0…%d, 0 ≤ p_max < 1)", ErrInvalid, d.M, d.PMax, maxM)
	}
	return nil
}

// Measure returns the MC-dropout uncertainty of draft at the session's
// last position: s holds the context through last (its final token), and
// the draft was sampled from the logits after it at temperature temp. For
// each m it draws p_m = PMax·U from rng, re-evaluates last with dropout p_m
// (masks from rng) and samples a token from the perturbed logits at temp
// (sampling.Softmax, sampling.Sample). Afterwards last is evaluated once
// more without dropout, so the cache is exactly as before; those logits
// are returned too (equal to the ones the draft came from). It costs M + 1
// single-token passes.
func (d MCDropout) Measure(s DropoutSession, last, draft int, temp float64, rng *rand.Rand) (u float64, restored []float32, err error) {
	d = d.withDefaults()
	n := s.Len()
	if n < 1 {
		return 0, nil, fmt.Errorf("%w: MC dropout needs a non-empty context", ErrInvalid)
	}
	samples := make([]int, d.M)
	var dist []float64
	defer s.SetDropout(0, nil)
	for m := range samples {
		if err := s.Truncate(n - 1); err != nil {
			return 0, nil, err
		}
		s.SetDropout(d.PMax*rng.Float64(), rng)
		rows, err := s.Eval([]int{last})
		if err != nil {
			return 0, nil, err
		}
		dist = sampling.Softmax(dist, rows[0], temp)
		samples[m] = sampling.Sample(dist, rng)
	}
	s.SetDropout(0, nil)
	if err := s.Truncate(n - 1); err != nil {
		return 0, nil, err
	}
	rows, err := s.Eval([]int{last})
	if err != nil {
		return 0, nil, err
	}
	return Disagreement(samples, draft), rows[0], nil
}

// Correlation is Pearson's correlation coefficient of x and y (NaN when
// either is constant or they have fewer than two points). U-HLM Fig. 3 and
// CU-HLM Fig. 2 report it between each uncertainty measure and β.
func Correlation(x, y []float64) float64 {
	if len(x) != len(y) || len(x) < 2 {
		return math.NaN()
	}
	_, _, sxx, sxy, syy := moments(x, y)
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}
