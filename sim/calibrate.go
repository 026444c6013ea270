package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/hlmproject/hlm/codec"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/speculative"
	"github.com/hlmproject/hlm/uncertainty"
)

// CalibrationLog is what a calibration run records: one (u, x_d, y_d) per
// drafted token, the offline-k curve and the mean rank profile of x over
// every token, and a seeded sample of full distribution pairs for the
// figures that need them.
type CalibrationLog struct {
	Records []uncertainty.Record
	// Pairs is a uniform sample (reservoir, seeded) of the logged tokens'
	// distributions, at most the maxPairs given to Collect.
	Pairs []Pair
	// Halves are Σ_t U_TV(k, t) (CU-HLM eq. 20) over every token, split by
	// prompt parity (even, odd) so that the stability of k* can be checked.
	Halves [2]*codec.OfflineCurve
	// RankSum[r] is Σ_t of the (r+1)-th largest draft probability (CU-HLM
	// Fig. 5: divide by len(Records) for the mean per rank).
	RankSum []float64
}

// Pair is one logged token's draft and target distributions, the draft and
// its uncertainty.
type Pair struct {
	X, Y  []float64
	Draft int
	U     float64
}

// CalibrationResult is `hlm calibrate`'s output: the fit and thresholds of
// U-HLM Theorem 1 and the offline k* of CU-HLM eq. 21.
type CalibrationResult struct {
	uncertainty.Calibration
	// Degenerate is set when the fitted slope is not positive: uncertainty
	// does not predict rejection for this pair, and Theorem 1's thresholds,
	// risk and bound are undefined (left zero).
	Degenerate bool    `json:"degenerate"`
	Theta      float64 `json:"theta"`
	KOffline   int     `json:"k_offline"` // smallest k with mean U_TV(k) ≤ θ over every logged token (0: not reachable)
	// KHalves is k* on each half of the prompts (even, odd): close values
	// mean k* is stable.
	KHalves [2]int `json:"k_offline_halves"`
	Pairs   int    `json:"pairs"` // tokens the k* curve averages over
}

// Collect runs lossless HLM — the ordinary rounds of method hlm, as `hlm
// sim --method hlm` runs them with the same parameters and seeds — over
// the prompts and observes them: for every drafted token it logs the
// SLM's uncertainty u (measured on a random stream of its own, so the
// drafts are those of the run without it), the draft probability x_d and
// the target probability y_d — the data of U-HLM Fig. 5 / CU-HLM Fig. 2 —
// the offline k curve and rank profile over every token, and a sample of
// up to maxPairs (x, y) pairs. p's method is replaced by hlm with 32-bit
// probabilities (the draft is drawn from, and verified against, the SLM's
// distribution up to float32 rounding); its sampling settings
// (temperature, top-k, top-p) are the run's.
func Collect(ctx context.Context, ms *Models, p hybrid.Params, prompts []string, maxPairs int, progress func(done, total int)) (*CalibrationLog, error) {
	p.Method, p.ProbBits = hybrid.HLM, 32 // the full distributions, as the papers calibrate
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := (uncertainty.Perturbation{M: p.M, ThetaMax: p.ThetaMax}).Validate(); err != nil {
		return nil, err
	}
	vocab := ms.LLM.Config().Vocab
	log := &CalibrationLog{RankSum: make([]float64, vocab)}
	for h := range log.Halves {
		c, err := codec.NewOfflineCurve(vocab)
		if err != nil {
			return nil, err
		}
		log.Halves[h] = c
	}
	pick := rand.New(rand.NewPCG(p.Seed, 0x7061697273)) // reservoir sampling of the pairs
	seen := 0
	_, err := hybrid.RunPrompts(ctx, p, len(prompts), func(ctx context.Context, i int, p hybrid.Params) (hybrid.Result, error) {
		observe := func(r hybrid.DraftRecord) {
			x, y, d := r.X, r.Y, r.Token
			log.Records = append(log.Records, uncertainty.Record{U: r.U, XD: x[d], YD: y[d]})
			sorted := codec.RankSorted(x)
			for k, v := range sorted {
				log.RankSum[k] += v
			}
			log.Halves[i%2].AddSorted(sorted, speculative.TV(x, y))
			if pr := (Pair{X: x, Y: y, Draft: d, U: r.U}); len(log.Pairs) < maxPairs {
				log.Pairs = append(log.Pairs, pr)
			} else if j := pick.IntN(seen + 1); j < maxPairs {
				log.Pairs[j] = pr
			}
			seen++
		}
		p.FitPrompt = true // dataset prompts may be longer than a small model's context
		return ms.Simulate(ctx, p, prompts[i], hybrid.SessionConfig{OnDraft: observe, MeasureUncertainty: true})
	}, progress)
	if err == nil {
		err = ctx.Err() // an interrupted run ends without an error of its own
	}
	if err != nil {
		return nil, err
	}
	if len(log.Records) == 0 {
		return nil, errors.New("calibration collected no tokens")
	}
	return log, nil
}

// Analyze fits the linear model, derives the thresholds and the rejection
// risk (U-HLM Theorem 1) and the offline k* for tolerance theta (CU-HLM eq.
// 21, over every logged token; searched up to the vocabulary size, on both
// halves of the prompts too).
func Analyze(log *CalibrationLog, theta float64, opt uncertainty.Options) (CalibrationResult, error) {
	cal, err := uncertainty.Calibrate(log.Records, opt)
	degenerate := errors.Is(err, uncertainty.ErrDegenerate)
	if degenerate {
		// Report what can be measured: the fit and Δ.
		cal, err = fitOnly(log.Records, opt)
	}
	if err != nil {
		return CalibrationResult{}, err
	}
	res := CalibrationResult{Calibration: cal, Degenerate: degenerate, Theta: theta}
	if log.Halves[0] == nil {
		return res, nil
	}
	all := *log.Halves[0]
	all.Sum = slices.Clone(all.Sum)
	all.Merge(log.Halves[1])
	res.Pairs = all.N
	for i, c := range []*codec.OfflineCurve{&all, log.Halves[0], log.Halves[1]} {
		k, err := c.K(theta)
		switch {
		case err == nil:
		case errors.Is(err, codec.ErrInfeasible):
			k = 0
		default:
			return res, fmt.Errorf("offline k: %w", err)
		}
		if i == 0 {
			res.KOffline = k
		} else {
			res.KHalves[i-1] = k
		}
	}
	return res, nil
}

// fitOnly is the part of a calibration that exists without a positive slope.
func fitOnly(recs []uncertainty.Record, opt uncertainty.Options) (uncertainty.Calibration, error) {
	u := make([]float64, len(recs))
	beta := make([]float64, len(recs))
	xd := make([]float64, len(recs))
	yd := make([]float64, len(recs))
	for i, r := range recs {
		u[i], beta[i], xd[i], yd[i] = r.U, uncertainty.Beta(r.XD, r.YD), r.XD, r.YD
	}
	c := uncertainty.Calibration{FitOn: opt.FitOn, N: len(recs)}
	if c.FitOn == "" {
		c.FitOn = uncertainty.FitBins
	}
	var err error
	if c.FitOn == uncertainty.FitBins {
		m := opt.M
		if m <= 0 {
			m = uncertainty.DefaultM
		}
		uc, mb, _ := uncertainty.BinnedMeans(u, beta, m)
		c.Fit, err = uncertainty.Fit(uc, mb)
	} else {
		c.Fit, err = uncertainty.Fit(u, beta)
	}
	if err != nil {
		return c, err
	}
	c.Delta, err = uncertainty.Delta(xd, yd)
	return c, err
}
