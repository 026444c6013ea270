package speculative

import (
	"math/rand/v2"

	"github.com/hlmproject/hlm/sampling"
)

// Verify runs one step of speculative sampling on the server (CU-HLM eq. 2–3;
// Q-S eq. 1–2). draft was drawn by the device; xhat is the draft
// distribution as the server knows it and y the target (LLM) distribution
// at the same position.
//
// The draft is accepted with probability min(1, y_d/x̂_d): always when
// y_d ≥ x̂_d, otherwise when u·x̂_d < y_d for one uniform u. On rejection the
// token is drawn from the residual norm((y − x̂)⁺) with one more uniform. If
// the residual is identically zero (only possible when y = x̂ up to
// rounding, in which case rejection itself has probability ≈ 0) the token is
// drawn from y instead; see Residual.
//
// The output token is distributed exactly as y when the draft was sampled
// from xhat itself (lossless); OutputDist gives its distribution when the
// draft was sampled from some other s (lossy methods). x̂_d = 0 with a draft
// that was nevertheless drawn means the acceptance ratio is +∞: the draft is
// accepted.
//
// A draft outside [0, V) is treated as a token the device could not have
// drawn: it is rejected and the token is sampled from y, so the output still
// follows y. y must have mass: with no positive entry there is nothing to
// follow, and the token is −1 (as sampling.Sample returns) unless the draft
// is accepted. Verify panics if len(xhat) != len(y) (a programmer error).
// It consumes zero, one or two draws from rng as described.
func Verify(xhat, y []float64, draft int, rng *rand.Rand) (token int, accepted bool) {
	if len(xhat) != len(y) {
		panic("speculative: Verify: len(xhat) != len(y)")
	}
	if draft < 0 || draft >= len(y) {
		return sampling.Sample(y, rng), false
	}
	if accept(xhat[draft], y[draft], rng) {
		return draft, true
	}
	return residualInverseCDF(y, xhat, rng.Float64()), false
}

// accept decides min(1, yd/xd) acceptance. It draws a uniform only when
// xd > yd; xd ≤ yd (including xd = 0) accepts outright.
func accept(xd, yd float64, rng *rand.Rand) bool {
	if !(xd > yd) {
		return true
	}
	return rng.Float64()*xd < yd
}

// AcceptRatio is the probability min(1, yv/xv) that Verify accepts a draft
// whose probability is xv under x̂ and yv under y, with the conventions of
// accept: 1 when xv ≤ yv, including xv = 0.
func AcceptRatio(xv, yv float64) float64 {
	if !(xv > yv) {
		return 1
	}
	if yv <= 0 {
		return 0
	}
	return yv / xv
}

// Residual writes the residual distribution norm((y − x̂)⁺) into dst and
// returns it (dst reused when cap(dst) ≥ len(y), as in sampling.Softmax).
// This is the distribution a rejected draft is replaced from (CU-HLM eq. 2,
// eq. 16 with x̂; Q-S eq. 2).
//
// When no entry of y exceeds the corresponding entry of x̂ the residual has
// zero mass. For two distributions that is only possible when y = x̂ (up to
// rounding), and then the probability of rejection, Σ_v x̂_v(1 − min(1,
// y_v/x̂_v)), is zero as well, so the choice cannot matter in exact
// arithmetic. Residual then returns a copy of y: after a rejection caused by
// rounding the token still follows the target. Entries that are NaN count as
// zero. Residual panics if len(xhat) != len(y).
func Residual(dst, y, xhat []float64) []float64 {
	if len(xhat) != len(y) {
		panic("speculative: Residual: len(xhat) != len(y)")
	}
	if cap(dst) >= len(y) {
		dst = dst[:len(y)]
	} else {
		dst = make([]float64, len(y))
	}
	mass := 0.0
	for i := range y {
		d := y[i] - xhat[i]
		if d > 0 {
			dst[i] = d
			mass += d
		} else {
			dst[i] = 0
		}
	}
	if !(mass > 0) {
		copy(dst, y)
		return dst
	}
	scale := 1 / mass
	for i := range dst {
		dst[i] *= scale
	}
	return dst
}

// residualInverseCDF samples from norm((y − x̂)⁺) with the uniform u without
// materializing the residual: one pass for its mass, one blocked pass to
// find the token (as in sampling.InverseCDF). A zero residual falls back to
// y with the same u.
func residualInverseCDF(y, xhat []float64, u float64) int {
	const chunk = 64
	mass := residualMass(y, xhat)
	if !(mass > 0) {
		return sampling.InverseCDF(y, u)
	}
	r := u * mass
	cum := 0.0
	for lo := 0; lo < len(y); lo += chunk {
		hi := min(lo+chunk, len(y))
		s := residualMass(y[lo:hi], xhat[lo:hi])
		if !(s > 0) {
			continue
		}
		if r >= cum+s {
			cum += s
			continue
		}
		last := -1
		for i := lo; i < hi; i++ {
			if d := y[i] - xhat[i]; d > 0 {
				cum += d
				last = i
				if r < cum {
					return i
				}
			}
		}
		return last // rounding: the block sum and the running sum disagree
	}
	for i := len(y) - 1; i >= 0; i-- { // rounding: r at the very end
		if y[i]-xhat[i] > 0 {
			return i
		}
	}
	return -1 // unreachable: mass > 0
}

// residualMass returns Σ (y − x̂)⁺ with four accumulators.
func residualMass(y, xhat []float64) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(y); i += 4 {
		if d := y[i] - xhat[i]; d > 0 {
			s0 += d
		}
		if d := y[i+1] - xhat[i+1]; d > 0 {
			s1 += d
		}
		if d := y[i+2] - xhat[i+2]; d > 0 {
			s2 += d
		}
		if d := y[i+3] - xhat[i+3]; d > 0 {
			s3 += d
		}
	}
	for ; i < len(y); i++ {
		if d := y[i] - xhat[i]; d > 0 {
			s0 += d
		}
	}
	return (s0 + s1) + (s2 + s3)
}

// BlockResult is the outcome of verifying a block of L drafts.
//
// The server commits drafts[:Accepted] followed by Token, so every round
// commits Accepted+1 tokens (Q-S eq. 3).
type BlockResult struct {
	// Accepted is the number of leading drafts accepted, 0 ≤ Accepted ≤ L.
	Accepted int `json:"accepted"`
	// Token is the token appended after the accepted drafts: drawn from the
	// residual at position Accepted when a draft was rejected, or the bonus
	// token drawn from y_{L+1} when all L drafts were accepted.
	Token int `json:"token"`
	// Resampled reports that drafts[Accepted] was rejected (Token came from
	// a residual) rather than all drafts being accepted (Token is the bonus).
	Resampled bool `json:"resampled"`
}

// Committed returns the tokens the round commits: drafts[:Accepted] then
// Token, appended to dst.
func (r BlockResult) Committed(dst []int, drafts []int) []int {
	dst = append(dst, drafts[:r.Accepted]...)
	return append(dst, r.Token)
}

// VerifyBlock verifies L drafts produced autoregressively by the device
// against the L+1 target distributions of one LLM pass (Q-S eq. 1–3; the
// "Speculative Decoding" paragraph of SQS): ys[l] is the target
// distribution after the prefix and drafts[:l], xhats[l] the server's view
// of the draft distribution drafts[l] was drawn from.
//
// Positions are checked in order with the rule of Verify. At the first
// rejection the token is drawn from the residual norm((ys[l] − xhats[l])⁺)
// and verification stops: later drafts were conditioned on a token that is
// not committed. If all L drafts are accepted the bonus token is drawn from
// ys[L]. L = 0 is allowed (a plain LLM step).
//
// A draft outside [0, V) is rejected and replaced by a sample from ys[l],
// as in Verify. VerifyBlock panics if len(ys) != len(drafts)+1,
// len(xhats) != len(drafts), or the distributions differ in length
// (programmer errors).
func VerifyBlock(xhats, ys [][]float64, drafts []int, rng *rand.Rand) BlockResult {
	if len(xhats) != len(drafts) || len(ys) != len(drafts)+1 {
		panic("speculative: VerifyBlock: want len(xhats) == len(drafts) and len(ys) == len(drafts)+1")
	}
	return VerifyBlockAt(xhats, func(l int) []float64 { return ys[l] }, drafts, rng)
}

// VerifyBlockAt is VerifyBlock with the target distributions computed on
// demand: y(l) is called for l = 0, 1, … in order, and only up to the
// first rejection (or L, when every draft is accepted). A caller that
// computes each distribution from the LLM's logits when asked skips the
// positions after a rejection — on a GPU the distributions over the
// vocabulary cost more than the LLM pass. The result, and the draws from
// rng, are VerifyBlock's for the same distributions.
func VerifyBlockAt(xhats [][]float64, y func(l int) []float64, drafts []int, rng *rand.Rand) BlockResult {
	L := len(drafts)
	if len(xhats) != L {
		panic("speculative: VerifyBlockAt: want len(xhats) == len(drafts)")
	}
	for l, d := range drafts {
		if tok, ok := Verify(xhats[l], y(l), d, rng); !ok {
			return BlockResult{Accepted: l, Token: tok, Resampled: true}
		}
	}
	return BlockResult{Accepted: L, Token: sampling.Sample(y(L), rng)}
}
