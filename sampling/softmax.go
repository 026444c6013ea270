package sampling

import (
	"math"

	"github.com/hlmproject/hlm/tensor"
)

// Softmax writes the distribution softmax(logits/temperature) into dst and
// returns it. dst is reused when cap(dst) ≥ len(logits) and reallocated
// otherwise; it may be nil.
//
// The computation is numerically stable: the maximum logit is subtracted
// before exponentiating, so every exponent is ≤ 0 and the largest term is 1.
//
// Special cases, all deterministic:
//   - temperature == 0 (and, defensively, any temperature ≤ 0 or NaN) gives a
//     one-hot distribution on Argmax(logits), the lowest id among ties. Use
//     Sampler.Validate to reject negative temperatures as configuration.
//   - temperature == +Inf gives the uniform distribution over the tokens with
//     a finite logit.
//   - NaN logits are treated as −Inf: probability zero.
//   - If the maximum logit is not finite (+Inf, or every logit is −Inf/NaN),
//     the mass is shared uniformly by the tokens that attain it (the limit of
//     the finite case).
//   - Empty logits give an empty distribution.
func Softmax(dst []float64, logits []float32, temperature float64) []float64 {
	n := len(logits)
	if cap(dst) >= n {
		dst = dst[:n]
	} else {
		dst = make([]float64, n)
	}
	if n == 0 {
		return dst
	}
	am := Argmax(logits)
	zmax := float64(logits[am])
	if math.IsNaN(zmax) {
		zmax = math.Inf(-1)
	}
	if !(temperature > 0) {
		clear(dst)
		dst[am] = 1
		return dst
	}
	if math.IsInf(zmax, 0) || math.IsInf(1/temperature, 1) {
		// An infinite maximum, or a temperature so small (subnormal) that
		// 1/T overflows: the limit T → 0+, uniform over the maxima (at
		// 1/T = +Inf the argmax's (z − zmax)·(1/T) would be 0·Inf = NaN).
		return uniformOver(dst, logits, func(z float64) bool { return z == zmax })
	}
	if math.IsInf(temperature, 1) {
		return uniformOver(dst, logits, func(z float64) bool { return !math.IsInf(z, -1) })
	}
	// Every (z − zmax)/T ≤ 0, so each term is in [0, 1]; −Inf and NaN logits
	// give 0. tensor.ExpShifted is a vectorised exponential with ~1e-15
	// relative error and the same bits on every machine.
	sum := tensor.ExpShifted(dst, logits, zmax, 1/temperature)
	// sum ≥ 1: the argmax term is exp(0) = 1.
	scale := 1 / sum
	if n < tensor.ShareMin || !tensor.ShareChunks(n, n, func(lo, hi int) { tensor.ScaleF64(dst[lo:hi], scale) }) {
		tensor.ScaleF64(dst, scale)
	}
	return dst
}

// uniformOver sets dst to the uniform distribution over the tokens whose
// logit (NaN read as −Inf) satisfies keep; if none does, over all tokens.
func uniformOver(dst []float64, logits []float32, keep func(float64) bool) []float64 {
	cnt := 0
	for i, z := range logits {
		v := float64(z)
		if math.IsNaN(v) {
			v = math.Inf(-1)
		}
		if keep(v) {
			dst[i] = 1
			cnt++
		} else {
			dst[i] = 0
		}
	}
	if cnt == 0 {
		for i := range dst {
			dst[i] = 1
		}
		cnt = len(dst)
	}
	w := 1 / float64(cnt)
	for i := range dst {
		dst[i] *= w
	}
	return dst
}

// Argmax returns the index of the largest logit, the lowest index among
// ties. NaN logits are treated as −Inf, so if every logit is NaN or −Inf the
// result is 0. It returns −1 for empty logits.
//
// From tensor.ShareMin logits on, chunks are searched on the threads
// (tensor.ShareChunks) and their winners compared in chunk order: the same
// index as one pass.
func Argmax(logits []float32) int {
	n := len(logits)
	if n < tensor.ShareMin {
		return argmax(logits)
	}
	best := make([]int, (n+tensor.ShareChunk-1)/tensor.ShareChunk)
	if !tensor.ShareChunks(n, n, func(lo, hi int) {
		best[lo/tensor.ShareChunk] = lo + argmax(logits[lo:hi])
	}) {
		return argmax(logits)
	}
	bi := best[0]
	for _, i := range best[1:] {
		// Strictly greater: the lowest index among ties; NaN never wins
		// (a chunk of NaN and −Inf gives its first).
		if logits[i] > logits[bi] || logits[bi] != logits[bi] && logits[i] == logits[i] && logits[i] > float32(math.Inf(-1)) {
			bi = i
		}
	}
	return bi
}

// argmax is Argmax in one pass: the largest value (tensor.MaxF32, which
// skips NaN), then the first index that holds it (tensor.IndexF32).
func argmax(logits []float32) int {
	if len(logits) == 0 {
		return -1
	}
	m := tensor.MaxF32(logits)
	if math.IsInf(float64(m), -1) { // every logit is NaN or −Inf
		return 0
	}
	return tensor.IndexF32(logits, m)
}
