package codec

import (
	"fmt"
	"math"
	"sync"

	"github.com/hlmproject/hlm/speculative"
)

// Choosing k for top-k (CU-HLM Sec. IV-C, IV-D).
//
// All functions rank tokens by descending x (ties by ascending id) and use
// the eq. 15 reconstruction of the unquantized x: the k largest entries are
// kept and the tail mass T_k is spread uniformly, x̂_i = T_k/(V−k) for i > k.
// Eq. 15 writes T_k = 1 − Σ_{i<=k} x_i; the curves here (UTV, UTVCurve,
// UBar, OfflineK) sum the tail itself, and OnlineK, which reads only the
// head, uses Σx − Σ_{i<=k} x_i: the same number up to rounding. The
// numerator shared by U_TV and Ū_TV is
//
//	N(k) = Σ_{i>k} |x_i − x̂_i|,
//
// the absolute deviation of the tail from its own mean, with N(V) = 0.
//
// N is non-increasing in k. Proof: let the tail at k be {M} ∪ R with M its
// largest element, n = |R|, μ the mean of R and m = (M + nμ)/(n+1) the mean
// of the whole tail. Then N(k+1) = Σ_R |r − μ| <= Σ_R |r − m| + n(m − μ), and
// n(m − μ) = n(M − μ)/(n+1) = M − m = |M − m|, so N(k+1) <= N(k). Hence U_TV
// and Ū_TV, which divide N by a k-independent denominator, are
// non-increasing in k, and "smallest k with U <= θ" is a threshold on k.
// TestTailDeviationMonotone checks it numerically.

// DefaultEta is the softplus temperature η of ℓ(z) = ln(1 + e^{ηz})/η
// (CU-HLM eq. 22). The paper does not state the value it used and calls
// the approximation error, at most ln 2/η, negligible. It is not at η = 1:
// ln 2 = 0.69 is as large as D_TV(x, y) itself, the quantity eq. 22
// approximates, and on the calibration tokens of both TinyStories pairs
// (early-exit drafts) the measured error Σ x_i ℓ(y_i/x_i − 1) − D_TV is
// 0.33–0.36, 38–53% of D_TV. At η = 10 the worst case ln 2/η = 0.069 is
// about a tenth of D_TV and the measured error is 0.001–0.003, 0.1–0.5% of
// it, which is what "negligible" asks for; η = 5 leaves up to 2%. With the
// trained drafts of drafts/ D_TV is smaller and the same absolute error is
// not negligible: on their calibration tokens the error at η = 10 is 0.032
// of D_TV 0.168 (19%) for stories260K and 0.013 of 0.339 (3.9%) for
// TinyStories-656K, 7.8% and 1.4% at η = 20 (`hlm eval paper cu-hlm`, η
// table); η stays 10 as the compromise with the online k. The price is
// the other approximation, Prop. 2's lower bound on the denominator:
// ℓ(−1) = ln(1 + e^{−η})/η vanishes as η grows, so Ū_TV rises and the
// online k with it, steeply. `hlm eval paper cu-hlm` sweeps η and reports
// the error of eq. 22 (SoftplusTV − TVD), the range and mean of k and the
// deviation at each value.
const DefaultEta = 10.0

// Pair is one logged round for offline k selection: the SLM distribution X
// and the LLM distribution Y over the same vocabulary.
type Pair struct {
	X, Y []float64
}

// Softplus returns ℓ(z) = ln(1 + e^{ηz})/η (CU-HLM eq. 22), computed without
// overflow as (max(ηz, 0) + log1p(e^{−|ηz|}))/η. eta must be > 0.
func Softplus(z, eta float64) float64 {
	t := eta * z
	return (math.Max(t, 0) + math.Log1p(math.Exp(-math.Abs(t)))) / eta
}

// SoftplusTV returns eq. 22's smooth approximation of D_TV(x, y),
// Σ_i x_i·ℓ(y_i/x_i − 1) over the tokens with x_i > 0 (the others add
// their y_i, as the exact (y_i − x_i)⁺ does). Its error SoftplusTV − TVD
// lies in [0, ln 2/η]: ℓ(z) − z⁺ ∈ (0, ln 2/η] and the x_i sum to 1.
func SoftplusTV(x, y []float64, eta float64) float64 {
	s := 0.0
	for i := range x {
		if x[i] > 0 {
			s += x[i] * Softplus(y[i]/x[i]-1, eta)
		} else {
			s += y[i]
		}
	}
	return s
}

// tailDeviation returns N(k) for k = 0..kMax (kMax <= len(s)) given s, the
// distribution in rank order. O(V): suffix sums, and a pointer j to the end
// of the run of tail entries at or above the tail mean m_k (m_k is
// non-increasing in k, so j only moves right). With T_k the tail sum,
// N(k) = 2(Σ_{i=k}^{j−1} s_i − (j−k)m_k): the deviations above the mean
// equal those below it.
func tailDeviation(s []float64, kMax int) []float64 {
	v := len(s)
	suf := make([]float64, v+1)
	for i := v - 1; i >= 0; i-- {
		suf[i] = suf[i+1] + s[i]
	}
	out := make([]float64, kMax+1)
	j := 0
	for k := 0; k <= kMax && k < v; k++ {
		m := suf[k] / float64(v-k)
		j = max(j, k)
		for j < v && s[j] >= m {
			j++
		}
		out[k] = max(0, 2*((suf[k]-suf[j])-float64(j-k)*m))
	}
	return out
}

// sorted returns x in rank order.
func sorted(x []float64, order []int32) []float64 {
	s := make([]float64, len(order))
	for i, id := range order {
		s[i] = x[id]
	}
	return s
}

// ratio returns n/d with 0/0 = 0 and n/0 = +Inf for n > 0.
func ratio(n, d float64) float64 {
	if n == 0 {
		return 0
	}
	if d == 0 {
		return math.Inf(1)
	}
	return n / d
}

// UTV returns the offline bound of CU-HLM eq. 20,
//
//	U_TV(k) = Σ_{i>k} |x_i − x̂_i| / D_TV(x, y),
//
// with x̂ from eq. 15 and ranks by descending x. It bounds the total variation
// between the true and the top-k resampling distributions (Proposition 1).
// When x = y the ratio is 0/0 (reported as 0) or n/0 (+Inf). UTV returns NaN
// if x or y is not a distribution, their lengths differ or k is outside
// [0, len(x)].
func UTV(x, y []float64, k int) float64 {
	if _, err := checkDist(x, -1); err != nil {
		return math.NaN()
	}
	if _, err := checkDist(y, -1); err != nil || len(y) != len(x) || k < 0 || k > len(x) {
		return math.NaN()
	}
	return ratio(tailDeviation(sorted(x, rankOrder(x)), k)[k], speculative.TV(x, y))
}

// UTVCurve returns U_TV(k) (eq. 20) for k = 0..kMax in O(V) after sorting.
func UTVCurve(x, y []float64, kMax int) ([]float64, error) {
	if _, err := checkDist(x, -1); err != nil {
		return nil, fmt.Errorf("x: %w", err)
	}
	if _, err := checkDist(y, -1); err != nil {
		return nil, fmt.Errorf("y: %w", err)
	}
	if len(y) != len(x) {
		return nil, fmt.Errorf("%w: len(x) = %d, len(y) = %d", ErrInput, len(x), len(y))
	}
	if kMax < 0 || kMax > len(x) {
		return nil, fmt.Errorf("%w: kMax %d outside [0, %d]", ErrParam, kMax, len(x))
	}
	n := tailDeviation(sorted(x, rankOrder(x)), kMax)
	d := speculative.TV(x, y)
	for k := range n {
		n[k] = ratio(n[k], d)
	}
	return n, nil
}

// OfflineK returns k* of CU-HLM eq. 21: the smallest k in [1, kMax] with
// mean_t U_TV(k, t) <= theta over the logged samples (OfflineCurve over
// the samples, then its K). Samples with x = y never resample and are left
// out of the mean. If no k <= kMax meets theta the error wraps
// ErrInfeasible.
func OfflineK(samples []Pair, theta float64, kMax int) (int, error) {
	if len(samples) == 0 {
		return 0, fmt.Errorf("%w: no samples", ErrParam)
	}
	c, err := NewOfflineCurve(kMax)
	if err != nil {
		return 0, err
	}
	for t, p := range samples {
		if err := c.Add(p.X, p.Y); err != nil {
			return 0, fmt.Errorf("sample %d: %w", t, err)
		}
	}
	return c.K(theta)
}

// OfflineCurve accumulates Σ_t U_TV(k, t) (eq. 20) for k = 0…KMax over a
// stream of (x, y) pairs, so that eq. 21's k* can be taken over every token
// of a calibration run without keeping the distributions. U_TV is
// non-increasing in k (see above), so the mean is too; K still scans the
// whole curve, so the answer does not depend on that claim.
type OfflineCurve struct {
	KMax int
	Sum  []float64 // Sum[k] = Σ_t U_TV(k, t) over the pairs used
	N    int       // pairs used (pairs with x = y are skipped: they never resample)
}

// NewOfflineCurve returns an empty curve for k up to kMax ≥ 1.
func NewOfflineCurve(kMax int) (*OfflineCurve, error) {
	if kMax < 1 || kMax > MaxVocab {
		return nil, fmt.Errorf("%w: kMax %d outside [1, %d]", ErrParam, kMax, MaxVocab)
	}
	return &OfflineCurve{KMax: kMax, Sum: make([]float64, kMax+1)}, nil
}

// Add adds U_TV(·, t) of one pair. O(V) after the rank sort.
func (c *OfflineCurve) Add(x, y []float64) error {
	if len(x) < c.KMax {
		return fmt.Errorf("%w: vocabulary %d < kMax %d", ErrParam, len(x), c.KMax)
	}
	if _, err := checkDist(x, -1); err != nil {
		return fmt.Errorf("x: %w", err)
	}
	if _, err := checkDist(y, -1); err != nil || len(y) != len(x) {
		return fmt.Errorf("%w: y is not a distribution over %d tokens (%v)", ErrInput, len(x), err)
	}
	c.AddSorted(RankSorted(x), speculative.TV(x, y))
	return nil
}

// AddSorted is Add for x already in rank order (RankSorted) and its
// D_TV(x, y) = tv.
func (c *OfflineCurve) AddSorted(sorted []float64, tv float64) {
	if tv == 0 {
		return
	}
	n := tailDeviation(sorted, c.KMax)
	for k := 1; k <= c.KMax; k++ {
		c.Sum[k] += n[k] / tv
	}
	c.N++
}

// Merge adds the pairs of o (same KMax).
func (c *OfflineCurve) Merge(o *OfflineCurve) {
	for k := range c.Sum {
		c.Sum[k] += o.Sum[k]
	}
	c.N += o.N
}

// Mean is mean_t U_TV(k, t) (NaN before any pair).
func (c *OfflineCurve) Mean(k int) float64 {
	if c.N == 0 || k < 0 || k > c.KMax {
		return math.NaN()
	}
	return c.Sum[k] / float64(c.N)
}

// K is eq. 21's k*: the smallest k in [1, KMax] with Mean(k) <= theta (1
// when every pair had x = y). If none qualifies the error wraps
// ErrInfeasible.
func (c *OfflineCurve) K(theta float64) (int, error) {
	if !(theta >= 0) || math.IsInf(theta, 1) {
		return 0, fmt.Errorf("%w: theta %v", ErrParam, theta)
	}
	if c.N == 0 {
		return 1, nil
	}
	for k := 1; k <= c.KMax; k++ {
		if c.Mean(k) <= theta {
			return k, nil
		}
	}
	return 0, fmt.Errorf("%w: mean U_TV(%d) = %v > theta %v", ErrInfeasible, c.KMax, c.Mean(c.KMax), theta)
}

// RankSorted returns the entries of x in rank order (descending, ties by
// id), the order every top-k function uses.
func RankSorted(x []float64) []float64 { return sorted(x, rankOrder(x)) }

// onlineDenominator is (1 − x_d)ℓ(−1) + x_d ℓ(−β), the device-side lower
// bound of Σ_i x_i ℓ(y_i/x_i − 1) (CU-HLM eq. 23, Appendix B). Without a
// draft (draft = −1) x_d = 0: every term is then bounded by ℓ(−1).
func onlineDenominator(x []float64, draft int, beta, eta float64) float64 {
	xd := 0.0
	if draft >= 0 {
		xd = x[draft]
	}
	return (1-xd)*Softplus(-1, eta) + xd*Softplus(-beta, eta)
}

// checkOnline validates the inputs of online k and returns β clipped to
// [0, 1] and Σx.
func checkOnline(x []float64, draft int, beta, eta float64) (float64, float64, error) {
	total, err := checkDist(x, draft)
	if err != nil {
		return 0, 0, err
	}
	if math.IsNaN(beta) {
		return 0, 0, fmt.Errorf("%w: beta is NaN", ErrParam)
	}
	if !(eta > 0) || math.IsInf(eta, 1) {
		return 0, 0, fmt.Errorf("%w: eta %v, want finite > 0", ErrParam, eta)
	}
	return min(max(beta, 0), 1), total, nil
}

// UBar returns Ū_TV(k) of CU-HLM eq. 23,
//
//	Ū_TV(k) = Σ_{i>k} |x_i − x̂_i| / ((1 − x_d)ℓ(−1) + x_d ℓ(−β)),
//
// computable on the device: x_d = x[draft] (0 for draft = −1), β the
// predicted rejection probability of the draft (a·u + b, clipped here to
// [0, 1]), η the softplus temperature (DefaultEta). UBar returns NaN on
// invalid input.
func UBar(x []float64, draft, k int, beta, eta float64) float64 {
	beta, _, err := checkOnline(x, draft, beta, eta)
	if err != nil || k < 0 || k > len(x) {
		return math.NaN()
	}
	return tailDeviation(sorted(x, rankOrder(x)), k)[k] / onlineDenominator(x, draft, beta, eta)
}

// OnlineK returns k*(t) of CU-HLM eq. 24: the smallest k in [1, V] with
// Ū_TV(k) <= theta (k = V always qualifies). It is non-decreasing in beta.
func OnlineK(x []float64, draft int, beta, eta, theta float64) (int, error) {
	k, _, err := onlineK(x, draft, beta, eta, theta)
	return k, err
}

// onlineK also returns the top k token ids in rank order.
//
// It sorts only what it needs. With a threshold τ, let H be the tokens with
// x >= τ, in rank order. For k < |H| the tail mean is
// m_k = (Σx − Σ_{i<k} s_i)/(V−k); while m_k >= τ no token outside H lies
// above the mean, so N(k) = 2 Σ_{i in H[k:]} (x_i − m_k)^+ needs H alone.
// One cheap attempt uses τ = 1/(2V) when few tokens reach it (peaked
// distributions); otherwise, or if m_k falls below τ first, bucketK finds
// k sorting only the head and a few buckets (kbucket.go). The result is the
// smallest k with Ū_TV(k) <= θ up to rounding in the last bits of N.
func onlineK(x []float64, draft int, beta, eta, theta float64) (int, []int32, error) {
	beta, total, err := checkOnline(x, draft, beta, eta)
	if err != nil {
		return 0, nil, err
	}
	if !(theta >= 0) || math.IsInf(theta, 1) {
		return 0, nil, fmt.Errorf("%w: theta %v", ErrParam, theta)
	}
	v := len(x)
	den := onlineDenominator(x, draft, beta, eta)
	tau := 0.5 / float64(v)
	idsp := idPool.Get().(*[]int32)
	defer idPool.Put(idsp)
	ids, few := (*idsp)[:0], true
	for i, p := range x {
		if p >= tau {
			if 8*(len(ids)+1) > v {
				few = false
				break
			}
			ids = append(ids, int32(i))
		}
	}
	*idsp = ids
	if few {
		order := rankOrderOf(x, ids)
		if k := firstK(x, order, total, tau, den, theta); k > 0 {
			return k, order[:k], nil
		}
	}
	k, top := bucketK(x, total, den, theta)
	return k, top, nil
}

var (
	floatPool = sync.Pool{New: func() any { return new([]float64) }}
	idPool    = sync.Pool{New: func() any { return new([]int32) }}
)

// firstK scans k = 1, 2, … over the sorted head `order` (all tokens with
// x >= tau; total = Σx) and returns the first k with N(k)/den <= theta, or
// 0 if the tail mean drops below tau first. With the whole vocabulary
// (tau = 0) it returns V if no smaller k qualifies (N(V) = 0). Tail sums
// are total minus prefix sums, so only the sorted prefix up to the last
// token above the mean is ever read.
func firstK(x []float64, order []int32, total, tau, den, theta float64) int {
	h, v := len(order), len(x)
	bufp := floatPool.Get().(*[]float64)
	defer floatPool.Put(bufp)
	if cap(*bufp) < h+1 {
		*bufp = make([]float64, h+1)
	}
	pre := (*bufp)[:h+1] // pre[i] = Σ_{t<i} s_t, filled on demand
	pre[0] = 0
	filled := 0
	s := func(i int) float64 { return x[order[i]] }
	fill := func(i int) {
		for ; filled < i; filled++ {
			pre[filled+1] = pre[filled] + s(filled)
		}
	}
	j := 0
	for k := 1; k < h; k++ {
		fill(k)
		m := (total - pre[k]) / float64(v-k)
		if tau > 0 && m < tau {
			return 0
		}
		j = max(j, k)
		for j < h && s(j) >= m {
			j++
		}
		fill(j)
		if n := max(0, 2*((pre[j]-pre[k])-float64(j-k)*m)); n/den <= theta {
			return k
		}
	}
	if h == v && tau == 0 {
		return v
	}
	return 0
}
