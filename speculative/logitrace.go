package speculative

import (
	"math"

	"github.com/hlmproject/hlm/sampling"
	"github.com/hlmproject/hlm/tensor"
)

// The exponential race from the logits. The race's winner
// argmin_i E_i/p_i does not change when every p_i is multiplied by the
// same constant, so over a softmax it can be run on the unnormalised
// weights w_i = e^((z_i − z_max)/T): no normalising sum, and so no
// exponential of every token. A token can win only where
// u_i ≤ E_i < s·w_i (s the best score so far), and w_i < 2^(n_i+1) for the
// n_i = round(log2 e · (z_i − z_max)/T) of tensor's exponential, so a
// vector filter that hashes u_i and builds 2^(n_i+1) in the exponent bits
// skips almost every token; the exponential and the logarithm are taken
// only for the few it lets through.
//
// Scores over w and over p = w/Σw round differently, so the two races
// could disagree where two scores are within a few units in the last
// place. raceLogits therefore also keeps the runner-up's score and gives
// up when it is within 2⁻⁴⁰ of the winner's (about once in 10¹² races);
// CoupledSampleLogits then computes the distribution and races over it.
// So it returns exactly CoupledSample's token for the same logits, by
// construction: every ratio of two scores over p is that over w within
// (1 ± 2⁻⁵⁰) — each score is a quotient of a product, and no possible
// winner's probability is subnormal (the argmax's score bounds the
// winner's, ≤ 38, so p_winner ≥ 2⁻⁵⁴/38/V).

var (
	// nearTie is the runner-up's relative distance from the winner's score
	// below which the race from logits does not decide.
	nearTie = 1 + 0x1p-40
	// nearPrune (> nearTie) is the pruning margin: every token whose score
	// is within nearTie of the best is scored, so that the runner-up is
	// known there. Variables for a test that widens both.
	nearPrune = 1 + 0x1p-39
)

// boundClamp is the lowest exponent the vector filter builds (a normal
// 2^n); clamping raises the bound, and below it e^y is 0 anyway.
const boundClamp = -1020

// CoupledSampleLogits is CoupledSample(sampling.Softmax(nil, logits,
// temperature), seed, pos) — the same token for every input — without
// computing the distribution where it can (see above): the server's
// coupled verification at plain temperature sampling, where the softmax of
// every verified position was most of its CPU work.
func CoupledSampleLogits(logits []float32, temperature float64, seed uint64, pos int) int {
	if r, ok := raceLogits(logits, temperature, noiseKey(listSeed(seed, 0)), pos); ok && r.decided() {
		return r.tok
	}
	return CoupledSample(sampling.Softmax(nil, logits, temperature), seed, pos)
}

// VerifyCoupledLogits is VerifyCoupledAt over the distributions
// sampling.Softmax(logits(l), temperature), with the same result: each
// position's race is CoupledSampleLogits.
func VerifyCoupledLogits(logits func(l int) []float32, temperature float64, drafts []int, seed uint64, start int) BlockResult {
	return verifyCoupled(func(l int) int { return CoupledSampleLogits(logits(l), temperature, seed, start+l) }, drafts)
}

// raceLogits is the race over the softmax weights of x at temperature T
// with the noise key: the leader, and the runner-up's score where it is
// within nearTie. ok is false for the inputs whose softmax is not e^z
// normalised (infinite logits, an infinite temperature, no logits).
func raceLogits(x []float32, temperature float64, key uint64, pos int) (raceLead, bool) {
	if len(x) == 0 {
		return raceLead{}, false
	}
	am := sampling.Argmax(x)
	if !(temperature > 0) {
		// Softmax's one-hot distribution at am.
		return raceLead{am, 0, math.Inf(1)}, true
	}
	zmax := float64(x[am])
	if math.IsInf(zmax, 0) || math.IsNaN(zmax) || math.IsInf(temperature, 1) || math.IsInf(1/temperature, 1) {
		return raceLead{}, false // Softmax's uniform cases
	}
	scale := 1 / temperature
	// The argmax's weight is e^0 = 1, its score its E: that bounds the
	// winner's.
	lim := -math.Log1p(-keyedUniform(key, pos, am)) * nearPrune
	var w raceLead
	if len(x) < tensor.ShareMin {
		w = raceLogitRange(x, key, pos, 0, zmax, scale, lim)
	} else {
		leads := make([]raceLead, (len(x)+tensor.ShareChunk-1)/tensor.ShareChunk)
		if tensor.ShareChunks(len(x), 8*len(x), func(lo, hi int) {
			leads[lo/tensor.ShareChunk] = raceLogitRange(x[lo:hi], key, pos, lo, zmax, scale, lim)
		}) {
			w = raceLead{-1, math.Inf(1), math.Inf(1)}
			for _, c := range leads {
				w.merge(c)
			}
		} else {
			w = raceLogitRange(x, key, pos, 0, zmax, scale, lim)
		}
	}
	return w, true
}

// raceLead is a race's leader so far: its token and score, and the best
// score of the others (+Inf where none was scored).
type raceLead struct {
	tok          int
	best, second float64
}

// decided reports whether the leader is CoupledSample's winner: no other
// token's score is within nearTie of its.
func (r raceLead) decided() bool { return r.tok >= 0 && !(r.second <= r.best*nearTie) }

// add scores token tok.
func (r *raceLead) add(tok int, sc float64) {
	if sc < r.best {
		r.tok, r.best, r.second = tok, sc, r.best
	} else if sc < r.second {
		r.second = sc
	}
}

// merge adds the leaders of another part of the vocabulary.
func (r *raceLead) merge(o raceLead) {
	if o.tok >= 0 {
		r.add(o.tok, o.best)
	}
	r.second = min(r.second, o.second)
}

// raceLogitRange scores the tokens off, off+1, … of x (logits shifted by
// zmax and scaled by 1/T) that may come within nearTie of the best score,
// lim being an upper bound of the final best score times nearPrune. Where
// the kernel level has a vector filter (raceLogitKernel) it skips the runs
// of tokens that logitBound says cannot; the scalar loop applies the same
// bound, then the exact test of raceRange.
func raceLogitRange(x []float32, key uint64, pos, off int, zmax, scale, lim float64) raceLead {
	r := raceLead{-1, math.Inf(1), math.Inf(1)}
	const shrink = 1 - 0x1p-40
	pmix := uint64(pos) * 0x9e3779b97f4a7c15
	filter, lanes := raceLogitKernel()
	if uint64(off)+uint64(len(x)) > 1<<32 {
		lanes = 0 // token ids beyond uint32: keyedUniform's truncation
	}
	for i := 0; i < len(x); {
		end := len(x)
		if lanes > 0 {
			if n := (len(x) - i) &^ (lanes - 1); n > 0 {
				i += filter(&x[i], n, key, pmix, off+i, zmax, scale, 2*lim, raceLoose)
			}
			end = min(i+lanes, len(x))
		}
		for ; i < end; i++ {
			y := float64(float64(x[i])-zmax) * scale
			u := keyedUniform(key, pos, off+i)
			if !(u*raceLoose < logitBound(y, 2*lim)) {
				continue
			}
			w := tensor.Exp(y) // ExpShifted's weight, bit for bit
			if !(w > 0) || u*shrink/w >= lim {
				continue
			}
			r.add(off+i, -math.Log1p(-u)/w)
			lim = min(lim, r.best*nearPrune)
		}
	}
	return r
}

// logitBound is s2·2^n for n = round(max(y·log2 e, boundClamp)), the
// vector filter's bound (race_amd64.s), with s2 = 2s: for y ≤ 0,
// tensor.Exp(y) = P·2^n' with n' = round(y·log2 e) ≤ n and P < 1.5 (e^r,
// |r| ≤ ln2/2), so s·Exp(y) < ¾·logitBound(y, 2s). A token with
// u·raceLoose ≥ logitBound therefore has u·shrink/w > s and fails the
// exact test; u ≤ E(u) makes that hold for its score too.
func logitBound(y, s2 float64) float64 {
	n := math.RoundToEven(max(float64(y*log2e), boundClamp))
	if n != n {
		return 0 // NaN logits: no weight
	}
	return s2 * math.Float64frombits(uint64(int64(n)+1023)<<52)
}

// log2e is tensor's expLog2e: the same n as its exponential.
const log2e = 1.4426950408889634

// raceLogitFilter is a vector filter of the race from logits
// (race_amd64.s): over x[:n], n a multiple of its lanes, the length of
// the leading run of tokens tok0, tok0+1, … with no
// u·loose < logitBound((x_i − zmax)·scale, s2).
type raceLogitFilter func(x *float32, n int, key, pmix uint64, tok0 int, zmax, scale, s2, loose float64) int
