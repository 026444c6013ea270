package score

import (
	"math"
	"slices"
)

// Position is the comparison of a model's next-token distribution with a
// base model's at one position of a text, the quantities llama.cpp's
// llama-perplexity --kl-divergence accumulates (perplexity.cpp, the
// log_softmax that takes the base's log-probabilities).
type Position struct {
	KLD     float64 // KL(base ‖ model) = Σ_i p_base(i) ln(p_base(i)/p_model(i)), nats
	NLL     float64 // −ln p_model(token)
	NLLBase float64 // −ln p_base(token)
	Top     int     // the model's most likely token (the lowest id on ties)
	TopBase int     // the base's most likely token (the lowest id on ties)
}

// PDiff is p_model(token) − p_base(token), llama.cpp's Δp.
func (p Position) PDiff() float64 { return math.Exp(-p.NLL) - math.Exp(-p.NLLBase) }

// logSumExp returns ln Σ exp(logits[i]) in float64 (the maximum taken out
// first) and the index of the first largest logit.
func logSumExp(logits []float32) (lse float64, top int) {
	maxv := logits[0]
	for i, v := range logits {
		if v > maxv {
			maxv, top = v, i
		}
	}
	var z float64
	for _, v := range logits {
		z += math.Exp(float64(v) - float64(maxv))
	}
	return float64(maxv) + math.Log(z), top
}

// Compare compares two models' logits at one position whose next token is
// tok, exactly: both log-softmaxes in float64 over the whole vocabulary.
// Identical logits give KLD exactly 0. It panics if the lengths differ.
func Compare(base, model []float32, tok int) Position {
	if len(base) != len(model) {
		panic("score.Compare: vocabulary sizes differ")
	}
	lb, topB := logSumExp(base)
	lm, topM := logSumExp(model)
	var kl float64
	for i := range base {
		lpb := float64(base[i]) - lb
		if p := math.Exp(lpb); p > 0 {
			kl += p * (lpb - (float64(model[i]) - lm))
		}
	}
	return Position{
		KLD:     kl,
		NLL:     lm - float64(model[tok]),
		NLLBase: lb - float64(base[tok]),
		Top:     topM,
		TopBase: topB,
	}
}

// Row16 is one position's log-probabilities as llama-perplexity stores
// them in its --kl-divergence-base file (perplexity.cpp, the log_softmax
// that writes log_prob): log p(i) ≈ Scale·Q[i] + Min, Q[i] a 16-bit step
// over the 16 nats below the largest logit (tokens further below are at
// step 0, Min). One step is at most 16/65535 nats.
type Row16 struct {
	Scale float32  // nats per step: (max − max(min, max−16)) / 65535
	Min   float32  // the log-probability of step 0
	Q     []uint16 // one step count per token
}

// Cut16 is llama.cpp's floor: base tokens whose stored log-probability is
// at or below −16 nats are left out of the KL sum.
const Cut16 = -16

// LogProb is the stored log-probability of token i, rounded as llama.cpp
// rounds it (a float32 product, then a float32 sum).
func (r Row16) LogProb(i int) float32 {
	return float32(r.Scale*float32(r.Q[i])) + r.Min
}

// Encode16 stores logits as llama-perplexity --kl-divergence-base does:
// the largest and smallest logit (the smallest raised to 16 below the
// largest), Σ expf(l − max) in double, its logarithm in float, and each
// logit's step rounded to nearest, ties to even. dst is reused when it is
// long enough.
func Encode16(logits []float32, dst []uint16) Row16 {
	maxv, minv := logits[0], logits[0]
	for _, v := range logits[1:] {
		maxv = max(maxv, v)
		minv = min(minv, v)
	}
	minv = max(minv, maxv-16)
	var z float64
	for _, v := range logits {
		z += float64(float32(math.Exp(float64(v - maxv))))
	}
	lse := float32(math.Log(z))
	r := Row16{Scale: (maxv - minv) / 65535, Min: minv - maxv - lse}
	if cap(dst) < len(logits) {
		dst = make([]uint16, len(logits))
	}
	r.Q = dst[:len(logits)]
	clear(r.Q)
	if r.Scale != 0 {
		inv := 1 / r.Scale
		for i, v := range logits {
			if v > minv {
				r.Q[i] = uint16(min(math.RoundToEven(float64(inv*(v-minv))), 65535))
			}
		}
	}
	return r
}

// Compare16 compares a model's logits with a base stored as llama.cpp
// stores it, the way llama-perplexity --kl-divergence does: the base's
// log-probabilities, its NLL and its top token are the stored ones (so
// the base's NLL is at most 16 nats plus ln Σ exp, and tokens a step
// apart at the top tie), and tokens at or below Cut16 add nothing to the
// KL sum. The model's side is computed in float64 (llama.cpp: float with
// a double sum), a difference of rounding only.
func Compare16(base Row16, model []float32, tok int) Position {
	if len(base.Q) != len(model) {
		panic("score.Compare16: vocabulary sizes differ")
	}
	lm, topM := logSumExp(model)
	var kl float64
	topB, best := 0, base.LogProb(0)
	for i := range model {
		lpb := base.LogProb(i)
		if lpb > best {
			topB, best = i, lpb
		}
		if lpb > Cut16 {
			p := float32(math.Exp(float64(lpb)))
			kl += float64(p) * (float64(lpb) - (float64(model[i]) - lm))
		}
	}
	return Position{
		KLD:     kl,
		NLL:     lm - float64(model[tok]),
		NLLBase: -float64(base.LogProb(tok)),
		Top:     topM,
		TopBase: topB,
	}
}

// KLD accumulates positions into llama-perplexity --kl-divergence's
// statistics. Sums run in the order positions are added, so the same
// positions in the same order give the same bits. The zero value is
// empty and ready to use.
type KLD struct {
	n                                   int
	sumNLL, sumNLL2                     float64
	sumNLLBase, sumNLLBase2, sumNLLBoth float64
	sumKLD, sumKLD2                     float64
	sumPDiff, sumPDiff2, sumPDiff4      float64
	sameTop                             int
	klds, pdiffs                        []float64
}

// Add accumulates one position.
func (k *KLD) Add(p Position) {
	k.n++
	k.sumNLL += p.NLL
	k.sumNLL2 += p.NLL * p.NLL
	k.sumNLLBase += p.NLLBase
	k.sumNLLBase2 += p.NLLBase * p.NLLBase
	k.sumNLLBoth += p.NLL * p.NLLBase
	k.sumKLD += p.KLD
	k.sumKLD2 += p.KLD * p.KLD
	d := p.PDiff()
	k.sumPDiff += d
	k.sumPDiff2 += d * d
	k.sumPDiff4 += d * d * d * d
	if p.Top == p.TopBase {
		k.sameTop++
	}
	k.klds = append(k.klds, p.KLD)
	k.pdiffs = append(k.pdiffs, d)
}

// Merge adds o's positions after k's (as llama.cpp merges its threads').
func (k *KLD) Merge(o *KLD) {
	k.n += o.n
	k.sumNLL += o.sumNLL
	k.sumNLL2 += o.sumNLL2
	k.sumNLLBase += o.sumNLLBase
	k.sumNLLBase2 += o.sumNLLBase2
	k.sumNLLBoth += o.sumNLLBoth
	k.sumKLD += o.sumKLD
	k.sumKLD2 += o.sumKLD2
	k.sumPDiff += o.sumPDiff
	k.sumPDiff2 += o.sumPDiff2
	k.sumPDiff4 += o.sumPDiff4
	k.sameTop += o.sameTop
	k.klds = append(k.klds, o.klds...)
	k.pdiffs = append(k.pdiffs, o.pdiffs...)
}

// Len is the number of positions accumulated.
func (k *KLD) Len() int { return k.n }

// Estimate is a mean (or a quantity derived from means) and its standard
// error.
type Estimate struct {
	Value float64 `json:"value"`
	Err   float64 `json:"err"`
}

// Quantiles of a per-position quantity, interpolated linearly between
// order statistics (llama.cpp's percentile): q at position q·(n−1) of the
// sorted values; the median is the middle value or the mean of the two.
type Quantiles struct {
	Min    float64 `json:"min"`
	P0_1   float64 `json:"p0.1"`
	P1     float64 `json:"p1"`
	P5     float64 `json:"p5"`
	P10    float64 `json:"p10"`
	P25    float64 `json:"p25"`
	Median float64 `json:"median"`
	P75    float64 `json:"p75"`
	P90    float64 `json:"p90"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
	P99_9  float64 `json:"p99.9"`
	Max    float64 `json:"max"`
}

// KLDSummary is what llama-perplexity --kl-divergence prints at the end,
// every quantity computed as it computes it.
type KLDSummary struct {
	Positions int `json:"positions"`

	MeanNLL     Estimate `json:"mean_nll"`      // ln PPL(Q), nats/token
	MeanNLLBase Estimate `json:"mean_nll_base"` // ln PPL(base)
	PPL         Estimate `json:"ppl"`           // PPL(Q)
	PPLBase     Estimate `json:"ppl_base"`      // PPL(base)
	// LogPPLCorrelation is the correlation of the two mean NLLs'
	// estimates, Cov / (σ_Q σ_base) with Cov = cov(NLL, NLL_base)/(n−1).
	LogPPLCorrelation float64  `json:"log_ppl_correlation"`
	LogPPLRatio       Estimate `json:"log_ppl_ratio"` // ln(PPL(Q)/PPL(base))
	PPLRatio          Estimate `json:"ppl_ratio"`     // PPL(Q)/PPL(base)
	PPLDiff           Estimate `json:"ppl_diff"`      // PPL(Q) − PPL(base)

	KLD          Estimate  `json:"kld"` // mean KL(base ‖ Q), nats
	KLDQuantiles Quantiles `json:"kld_quantiles"`

	PDiff          Estimate  `json:"p_diff"`     // mean p_Q(token) − p_base(token)
	PDiffRMS       Estimate  `json:"p_diff_rms"` // √(mean Δp²)
	PDiffQuantiles Quantiles `json:"p_diff_quantiles"`

	// SameTop is the fraction of positions whose most likely tokens
	// agree, with the binomial standard error √(p(1−p)/(n−1)).
	SameTop Estimate `json:"same_top"`
}

// meanAndUncertainty is llama.cpp's: the mean, and the standard error
// √((mean of x² − mean²)/(n−1)), taken as 0 when n ≤ 10 or the variance
// is not positive.
func meanAndUncertainty(sum, sum2 float64, n int) Estimate {
	if n < 1 {
		return Estimate{}
	}
	f := sum / float64(n)
	df := sum2/float64(n) - f*f
	if df > 0 && n > 10 {
		df = math.Sqrt(df / float64(n-1))
	} else {
		df = 0
	}
	return Estimate{f, df}
}

// covariance is llama.cpp's covariance of two means (0 when n < 10).
func covariance(suma, sumb, sumab float64, n int) float64 {
	if n < 10 {
		return 0
	}
	c := sumab/float64(n) - (suma/float64(n))*(sumb/float64(n))
	return c / float64(n-1)
}

// percentile is llama.cpp's: linear interpolation at fraction·(n−1) of
// sorted values.
func percentile(sorted []float64, fraction float64) float64 {
	if fraction <= 0 {
		return sorted[0]
	}
	if fraction >= 1 {
		return sorted[len(sorted)-1]
	}
	p := fraction * float64(len(sorted)-1)
	ip := int(p)
	p -= float64(ip)
	return (1-p)*sorted[ip] + p*sorted[min(ip+1, len(sorted)-1)]
}

func quantiles(values []float64) Quantiles {
	if len(values) == 0 {
		return Quantiles{}
	}
	s := slices.Clone(values)
	slices.Sort(s)
	n := len(s)
	median := s[n/2]
	if n%2 == 0 {
		median = (s[n/2] + s[n/2-1]) / 2
	}
	return Quantiles{
		Min: s[0], P0_1: percentile(s, 0.001), P1: percentile(s, 0.01), P5: percentile(s, 0.05),
		P10: percentile(s, 0.10), P25: percentile(s, 0.25), Median: median, P75: percentile(s, 0.75),
		P90: percentile(s, 0.90), P95: percentile(s, 0.95), P99: percentile(s, 0.99), P99_9: percentile(s, 0.999),
		Max: s[n-1],
	}
}

// Summary computes the statistics of the positions added so far.
func (k *KLD) Summary() KLDSummary {
	s := KLDSummary{Positions: k.n}
	if k.n == 0 {
		return s
	}
	lq := meanAndUncertainty(k.sumNLL, k.sumNLL2, k.n)
	lb := meanAndUncertainty(k.sumNLLBase, k.sumNLLBase2, k.n)
	cov := covariance(k.sumNLL, k.sumNLLBase, k.sumNLLBoth, k.n)
	s.MeanNLL, s.MeanNLLBase = lq, lb
	s.PPL = Estimate{math.Exp(lq.Value), math.Exp(lq.Value) * lq.Err}
	s.PPLBase = Estimate{math.Exp(lb.Value), math.Exp(lb.Value) * lb.Err}
	if lq.Err > 0 && lb.Err > 0 {
		s.LogPPLCorrelation = cov / (lq.Err * lb.Err)
	}
	s.LogPPLRatio = Estimate{lq.Value - lb.Value, math.Sqrt(max(lq.Err*lq.Err+lb.Err*lb.Err-2*cov, 0))}
	s.PPLRatio = Estimate{math.Exp(s.LogPPLRatio.Value), math.Exp(s.LogPPLRatio.Value) * s.LogPPLRatio.Err}
	pplCov := s.PPL.Value * s.PPLBase.Value * cov
	s.PPLDiff = Estimate{s.PPL.Value - s.PPLBase.Value,
		math.Sqrt(max(s.PPL.Err*s.PPL.Err+s.PPLBase.Err*s.PPLBase.Err-2*pplCov, 0))}

	s.KLD = meanAndUncertainty(k.sumKLD, k.sumKLD2, k.n)
	s.KLDQuantiles = quantiles(k.klds)

	s.PDiff = meanAndUncertainty(k.sumPDiff, k.sumPDiff2, k.n)
	mse := meanAndUncertainty(k.sumPDiff2, k.sumPDiff4, k.n)
	if rms := math.Sqrt(mse.Value); rms > 0 {
		s.PDiffRMS = Estimate{rms, 0.5 / rms * mse.Err}
	}
	s.PDiffQuantiles = quantiles(k.pdiffs)

	p := float64(k.sameTop) / float64(k.n)
	s.SameTop.Value = p
	if k.n > 1 {
		s.SameTop.Err = math.Sqrt(p * (1 - p) / float64(k.n-1))
	}
	return s
}
