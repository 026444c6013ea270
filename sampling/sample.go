package sampling

import "math/rand/v2"

// chunk is the block size of Sample's two-level scan.
const chunk = 64

// Sample draws a token from the distribution p by inverse-CDF sampling with
// exactly one uniform draw u = rng.Float64(): it returns the first token i,
// in id order, with p_i > 0 and p_0 + … + p_i > u·Σp (see InverseCDF).
//
// Scaling u by the actual sum Σp (rather than assuming 1) makes the result
// exact for a distribution that sums to 1 ± rounding, and in fact for any
// non-negative weights. Entries that are zero, negative or NaN are never
// returned, even when rounding in the running sum would point past the last
// positive entry. If p has no positive entry, Sample returns −1 (and still
// consumes its one draw).
//
// Cost: two passes over p. The first sums it; the second sums blocks of 64
// entries with independent accumulators and scans entry by entry only inside
// the block that contains u·Σp.
func Sample(p []float64, rng *rand.Rand) int {
	return InverseCDF(p, rng.Float64())
}

// InverseCDF is Sample with the uniform supplied by the caller: for u in
// [0, 1) it returns the first token i with p_i > 0 and p_0 + … + p_i > u·Σp
// (up to rounding of the running sum; zero-probability tokens are never
// returned), or −1 if p has no positive entry. With u uniform on [0, 1) the
// result is distributed as p. Callers that need one stream of uniforms
// shared between two samplers (coupled sampling) use it directly.
func InverseCDF(p []float64, u float64) int {
	total := sumPositive(p)
	if !(total > 0) {
		return -1
	}
	r := u * total
	cum := 0.0
	for lo := 0; lo < len(p); lo += chunk {
		hi := min(lo+chunk, len(p))
		s := sumPositive(p[lo:hi])
		if !(s > 0) {
			continue
		}
		if r >= cum+s {
			cum += s
			continue
		}
		// The target lies in this block.
		lastPos := -1
		for i := lo; i < hi; i++ {
			if v := p[i]; v > 0 {
				cum += v
				lastPos = i
				if r < cum {
					return i
				}
			}
		}
		// Rounding: the entry-by-entry sum ended just below r although the
		// block sum did not. The last positive entry is the right answer.
		return lastPos
	}
	// Rounding pushed r past the running total: the last positive entry.
	return lastPositive(p)
}

// sumPositive returns the sum of the positive entries of p, with four
// independent accumulators.
func sumPositive(p []float64) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(p); i += 4 {
		if v := p[i]; v > 0 {
			s0 += v
		}
		if v := p[i+1]; v > 0 {
			s1 += v
		}
		if v := p[i+2]; v > 0 {
			s2 += v
		}
		if v := p[i+3]; v > 0 {
			s3 += v
		}
	}
	for ; i < len(p); i++ {
		if v := p[i]; v > 0 {
			s0 += v
		}
	}
	return (s0 + s1) + (s2 + s3)
}

func lastPositive(p []float64) int {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] > 0 {
			return i
		}
	}
	return -1
}
