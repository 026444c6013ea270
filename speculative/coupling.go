package speculative

import (
	"math"
)

// Coupled (drafter-invariant) speculative decoding with shared randomness
// (Daliri, Musco, Suresh 2024). Device and server share a seed; for every
// absolute position p and token i both derive the same uniform u(p, i) from
// a counter-based pseudo-random function — never from a sequential stream,
// which would fall out of step after the first rejection — and the same
// exponential E(p, i) = −ln(1 − u). Each side takes the "exponential race"
// winner argmin_i E(p, i)/π(i) over its own distribution π: the device over
// its draft distribution x, the server over the target y. The server's token
// is distributed exactly as y whatever the device did, and the device's
// matches it with probability Σ_i 1/Σ_k max(x_k/x_i, y_k/y_i) ≥
// (1 − TV)/(1 + TV), without sending any distribution.

// mix64 is the SplitMix64 finalizer (a bijection with full avalanche).
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// NoiseUniform is u(seed, pos, tok) ∈ (0, 1): a counter-based pseudo-random
// function of the shared seed, the absolute sequence position and the token
// id. It is a pure function — the same arguments give the same value on any
// machine — built from 53 bits of a hash (cellUniform).
func NoiseUniform(seed uint64, pos, tok int) float64 {
	return keyedUniform(noiseKey(seed), pos, tok)
}

// noiseKey is the per-seed part of NoiseUniform, computed once per race.
func noiseKey(seed uint64) uint64 { return mix64(seed ^ 0x6a09e667f3bcc909) }

func keyedUniform(key uint64, pos, tok int) float64 {
	h := mix64(key ^ mix64(uint64(pos)*0x9e3779b97f4a7c15^uint64(uint32(tok))))
	return cellUniform(h >> 11)
}

// cellUniform maps k < 2^53 to the midpoint (k + ½)/2^53 of its cell, so
// that u is never 0. Above ½ a float64 cannot hold the midpoint and it
// rounds to an even neighbour; the last cell's would round up to 1 (E = +∞,
// a token that could never win the race), so it is held at 1 − 2^-53.
// Every other value is the rounded midpoint.
func cellUniform(k uint64) float64 {
	return min((float64(k)+0.5)*(1.0/(1<<53)), 1-0x1p-53)
}

// NoiseExp is E(seed, pos, tok) = −ln(1 − u), an Exp(1) variate.
func NoiseExp(seed uint64, pos, tok int) float64 {
	return -math.Log1p(-NoiseUniform(seed, pos, tok))
}

// CoupledSample returns argmin_i E(seed, pos, i)/p_i over the tokens with
// p_i > 0 (filtered tokens never win), the lowest id on ties; −1 when p has
// no mass. For a fixed seed it is a deterministic function of p; over seeds
// it is an exact sample from p.
func CoupledSample(p []float64, seed uint64, pos int) int {
	tok, _ := raceWinner(p, seed, 0, pos)
	return tok
}

// RaceDist is the exact distribution of the winner of the exponential race
// over p (CoupledSample over seeds): P(v) = p_v / Σ_{u: p_u > 0} p_u. It is
// also the law of the server's token in VerifyCoupled and, whatever the set S
// of surviving drafts, in VerifyCoupledList: min_{k∈S} E_k(pos, i) is
// Exp(|S|) for every i, which scales every score alike and leaves the
// argmin's law unchanged. So a coupled position's output follows y by
// construction (the race lemma, Daliri, Musco, Suresh 2024); RaceDist is
// what the simulator's deviation of such a position is computed from. The
// result is a new slice; p with no positive entry gives all zeros.
func RaceDist(p []float64) []float64 {
	out := make([]float64, len(p))
	var s float64
	for _, v := range p {
		if v > 0 {
			s += v
		}
	}
	if !(s > 0) {
		return out
	}
	for i, v := range p {
		if v > 0 {
			out[i] = v / s
		}
	}
	return out
}

// CoupledAgreement is the probability that the races over x and y pick the
// same token: Σ_i 1/Σ_k max(x_k/x_i, y_k/y_i), over tokens with x_i, y_i > 0.
func CoupledAgreement(x, y []float64) float64 {
	var total float64
	for i := range x {
		if !(x[i] > 0 && y[i] > 0) {
			continue
		}
		var den float64
		for k := range x {
			den += math.Max(x[k]/x[i], y[k]/y[i])
		}
		total += 1 / den
	}
	return total
}

// VerifyCoupled verifies L drafts by coupling: at position start+l the server
// takes s_l = CoupledSample(ys[l], seed, start+l); it accepts while s_l equals
// the draft, commits s_l at the first mismatch and stops, and commits the
// bonus s_L when all L match. The committed tokens are exactly those of
// LLM-only decoding with CoupledSample, whatever the drafts. ys holds L+1
// distributions (panics otherwise: a programmer error).
func VerifyCoupled(ys [][]float64, drafts []int, seed uint64, start int) BlockResult {
	if len(ys) != len(drafts)+1 {
		panic("speculative: VerifyCoupled: want len(ys) == len(drafts)+1")
	}
	return VerifyCoupledAt(func(l int) []float64 { return ys[l] }, drafts, seed, start)
}

// VerifyCoupledAt is VerifyCoupled with the target distributions computed
// on demand, as VerifyBlockAt: y(l) in order, only up to the first
// mismatch. Same result as VerifyCoupled for the same distributions.
func VerifyCoupledAt(y func(l int) []float64, drafts []int, seed uint64, start int) BlockResult {
	return verifyCoupled(func(l int) int { return CoupledSample(y(l), seed, start+l) }, drafts)
}

// verifyCoupled is coupled verification with sample(l), the server's race
// at the l-th position of the block.
func verifyCoupled(sample func(l int) int, drafts []int) BlockResult {
	for l, d := range drafts {
		if s := sample(l); s != d {
			return BlockResult{Accepted: l, Token: s, Resampled: true}
		}
	}
	L := len(drafts)
	return BlockResult{Accepted: L, Token: sample(L)}
}
