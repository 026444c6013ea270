package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/hlmproject/hlm/codec"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/sampling"
	"github.com/hlmproject/hlm/spec"
	"github.com/hlmproject/hlm/uncertainty"
)

// CalibrationLog is what a calibration run records: one (u, x_d, y_d) per
// drafted token and a sample of full (x, y) pairs for offline top-k
// selection.
type CalibrationLog struct {
	Records []uncertainty.Record
	Pairs   []codec.Pair
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
	KOffline   int     `json:"k_offline"` // smallest k with mean U_TV(k) ≤ θ (0: not reachable)
	Pairs      int     `json:"pairs"`
}

// Collect runs lossless HLM (every draft verified, full distributions) over
// the prompts and logs, for every drafted token, the SLM's uncertainty u, the
// draft probability x_d and the target probability y_d — the data of U-HLM
// Fig. 5 / CU-HLM Fig. 2 — plus up to maxPairs (x, y) pairs.
func Collect(ctx context.Context, ms *Models, p hybrid.Params, prompts []string, maxPairs int, progress func(done, total int)) (*CalibrationLog, error) {
	log := &CalibrationLog{}
	perturb := uncertainty.Perturbation{M: p.M, ThetaMax: p.ThetaMax}
	if err := perturb.Validate(); err != nil {
		return nil, err
	}
	ctxLen := min(ms.LLM.Config().SeqLen, ms.SLM.Config().SeqLen)
	for i, prompt := range prompts {
		rng := rand.New(rand.NewPCG(p.Seed+uint64(i), 0x63616c6962))
		seq := ms.Tok.Encode(prompt, true, false)
		ss, ls := ms.SLM.NewSession(), ms.LLM.NewSession()
		sl, err := ss.Prefill(seq)
		if err != nil {
			return nil, err
		}
		ll, err := ls.Prefill(seq)
		if err != nil {
			return nil, err
		}
		for n := 0; n < p.MaxTokens && len(seq) < ctxLen-1; n++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			x := sampling.Softmax(nil, sl, p.Temperature)
			y := sampling.Softmax(nil, ll, p.Temperature)
			d := sampling.Sample(x, rng)
			u := perturb.Measure(sl, d, rng)
			log.Records = append(log.Records, uncertainty.Record{U: u, XD: x[d], YD: y[d]})
			if len(log.Pairs) < maxPairs {
				log.Pairs = append(log.Pairs, codec.Pair{X: x, Y: y})
			}
			tok, _ := spec.Verify(x, y, d, rng)
			if tok == ms.Tok.EOS() {
				break
			}
			seq = append(seq, tok)
			if sl, err = evalOne(ss, tok); err != nil {
				return nil, err
			}
			if ll, err = evalOne(ls, tok); err != nil {
				return nil, err
			}
		}
		if progress != nil {
			progress(i+1, len(prompts))
		}
	}
	if len(log.Records) == 0 {
		return nil, errors.New("calibration collected no tokens")
	}
	return log, nil
}

func evalOne(s model.Session, tok int) ([]float32, error) {
	rows, err := s.Eval([]int{tok})
	if err != nil {
		return nil, err
	}
	return rows[0], nil
}

// Analyze fits the linear model, derives the thresholds and the rejection
// risk (U-HLM Theorem 1) and the offline k* for tolerance theta (CU-HLM eq.
// 21; searched up to the vocabulary size).
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
	res := CalibrationResult{Calibration: cal, Degenerate: degenerate, Theta: theta, Pairs: len(log.Pairs)}
	if len(log.Pairs) > 0 {
		k, err := codec.OfflineK(log.Pairs, theta, len(log.Pairs[0].X))
		switch {
		case err == nil:
			res.KOffline = k
		case errors.Is(err, codec.ErrInfeasible):
			res.KOffline = 0
		default:
			return res, fmt.Errorf("offline k: %w", err)
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
