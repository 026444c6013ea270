package speculative

import "math"

// OutputDist returns the exact distribution of the token Verify commits
// when the draft is sampled from s and verified against x̂ with target y:
//
//	P(v) = s_v·a_v + (Σ_i s_i(1 − a_i))·r_v,  a_v = min(1, y_v/x̂_v),
//	r = norm((y − x̂)⁺)   (r = y when the residual is zero, as in Residual),
//
// where a_v = 1 when x̂_v = 0 (a draft the server thinks impossible is
// accepted: the ratio is +∞). The first term is "v drafted and accepted",
// the second "some draft rejected, v resampled" (CU-HLM eq. 3).
//
//   - s = x̂ = x: P = y, the losslessness of speculative sampling (CU-HLM
//     eq. 3, U-HLM eq. 9).
//   - s = x̂ = q̂ for any q̂: P = y, the Q-S guarantee (Q-S Prop. 1): sample
//     from what you send.
//   - s = x ≠ x̂ (sample, then compress: S-Q, top-k with uniform residual):
//     P ≠ y in general. TV(OutputDist(x, x̂, y), y) is the price.
//
// OutputDist panics if the three slices differ in length.
func OutputDist(s, xhat, y []float64) []float64 {
	checkLen("OutputDist", s, xhat, y)
	out := Residual(nil, y, xhat)
	rej := 0.0
	for i := range s {
		rej += s[i] * (1 - AcceptRatio(xhat[i], y[i]))
	}
	for i := range out {
		out[i] = s[i]*AcceptRatio(xhat[i], y[i]) + rej*out[i]
	}
	return out
}

// AcceptProb returns the probability that a draft sampled from s is accepted
// when verified against x̂ with target y: Σ_v s_v·min(1, y_v/x̂_v) (with the
// x̂_v = 0 convention of OutputDist). For s = x̂ = x it equals 1 − TV(x, y)
// (Leviathan et al., Cor. 3.6). It panics if the slices differ in length.
func AcceptProb(s, xhat, y []float64) float64 {
	checkLen("AcceptProb", s, xhat, y)
	a := 0.0
	for i := range s {
		a += s[i] * AcceptRatio(xhat[i], y[i])
	}
	return a
}

// Bias is the bias of CU-HLM eq. 17: the L1 distance between the output
// distribution of hybrid inference with a compressed upload and the target,
//
//	Bias = Σ_v | x_v(1 − β_v) + (Σ_i x_i β_i)·q_v − y_v |,
//	β_v = (1 − y_v/x_v)⁺,  q = norm((y − x̂)⁺)  (CU-HLM eq. 16).
//
// Acceptance uses the device's own x (CU-HLM always sends the draft's
// probability, Sec. IV-B) and only the resampling distribution is built
// from the reconstruction x̂. Because the uncompressed terms satisfy eq. 3
// exactly, Bias = TV(x, y)·‖p − q‖₁ with p = norm((y − x)⁺); it is zero when
// x̂ = x and at most 2·TV(x, y). Note that Bias is an L1 distance, twice a
// total variation distance. β_v = 0 when x_v = 0. q falls back to y when the
// residual is zero, as in Residual. Bias panics if the slices differ in
// length.
func Bias(x, xhat, y []float64) float64 {
	checkLen("Bias", x, xhat, y)
	q := Residual(nil, y, xhat)
	rej := 0.0
	for i := range x {
		rej += x[i] * (1 - AcceptRatio(x[i], y[i]))
	}
	b := 0.0
	for v := range x {
		b += math.Abs(x[v]*AcceptRatio(x[v], y[v]) + rej*q[v] - y[v])
	}
	return b
}

// TV returns the total variation distance ½·Σ|p_i − q_i| (CU-HLM eq. 18).
// It panics if the slices differ in length.
func TV(p, q []float64) float64 {
	if len(p) != len(q) {
		panic("speculative: TV: slices differ in length")
	}
	d := 0.0
	for i := range p {
		d += math.Abs(p[i] - q[i])
	}
	return d / 2
}

// ExpectedTokens is Q-S g(x) (Sec. IV-C): the expected number of tokens a
// block round commits when the l-th draft is accepted with probability
// alpha[l] (given that the earlier ones were),
//
//	g = Σ_{l=1}^{L} l·(Π_{j<l} α_j)(1 − α_l) + (L+1)·Π_{j≤L} α_j,
//
// counting the accepted drafts plus the resampled or bonus token, so
// 1 ≤ g ≤ L+1. With α_l = α for all l it is (1 − α^{L+1})/(1 − α)
// (Leviathan et al., eq. 1). For drafts sampled from x̂_l, α_l is
// AcceptProb(x̂_l, x̂_l, y_l) averaged over the drafted prefixes; for given
// drafts d_l it is min(1, y_l(d_l)/x̂_l(d_l)).
func ExpectedTokens(alpha []float64) float64 {
	return 1 + ExpectedAccepted(alpha)
}

// ExpectedAccepted is the expected number of accepted drafts in a block,
// Σ_{l=1}^{L} Π_{j≤l} α_j = ExpectedTokens(alpha) − 1.
func ExpectedAccepted(alpha []float64) float64 {
	e, prod := 0.0, 1.0
	for _, a := range alpha {
		prod *= a
		e += prod
	}
	return e
}

func checkLen(fn string, s, xhat, y []float64) {
	if len(s) != len(xhat) || len(xhat) != len(y) {
		panic("speculative: " + fn + ": distributions differ in length")
	}
}
