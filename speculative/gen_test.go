package speculative

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Generators of small test vocabularies. Every family is a deterministic
// function of the rng, so the exact tests are reproducible from their seed.

func normalize(w []float64) []float64 {
	s := 0.0
	for _, v := range w {
		s += v
	}
	for i := range w {
		w[i] /= s
	}
	return w
}

// dirichlet1 is a uniformly random point of the simplex.
func dirichlet1(rng *rand.Rand, v int) []float64 {
	w := make([]float64, v)
	for i := range w {
		w[i] = rng.ExpFloat64()
	}
	return normalize(w)
}

// peaked is a softmax of N(0, 3²) logits: one or two tokens dominate.
func peaked(rng *rand.Rand, v int) []float64 {
	w := make([]float64, v)
	for i := range w {
		w[i] = math.Exp(3 * rng.NormFloat64())
	}
	return normalize(w)
}

// sparse is a random distribution with about a third of the entries zero
// (at least one positive).
func sparse(rng *rand.Rand, v int) []float64 {
	w := make([]float64, v)
	w[rng.IntN(v)] = rng.ExpFloat64()
	for i := range w {
		if rng.IntN(3) != 0 {
			w[i] += rng.ExpFloat64()
		}
	}
	return normalize(w)
}

// pair is a draft/target pair of one family.
type pair struct {
	family string
	x, y   []float64
}

// randomPair draws (x, y) from one of the families: independent random,
// peaked, sparse (zeros in either), disjoint supports, identical, and y a
// small perturbation of x.
func randomPair(rng *rand.Rand, v int) pair {
	switch f := rng.IntN(6); f {
	case 0:
		return pair{"random", dirichlet1(rng, v), dirichlet1(rng, v)}
	case 1:
		return pair{"peaked", peaked(rng, v), peaked(rng, v)}
	case 2:
		return pair{"sparse", sparse(rng, v), sparse(rng, v)}
	case 3:
		// disjoint: x on a random nonempty proper subset, y on the rest.
		perm := rng.Perm(v)
		cut := 1 + rng.IntN(v-1)
		x, y := make([]float64, v), make([]float64, v)
		for _, i := range perm[:cut] {
			x[i] = rng.ExpFloat64()
		}
		for _, i := range perm[cut:] {
			y[i] = rng.ExpFloat64()
		}
		return pair{"disjoint", normalize(x), normalize(y)}
	case 4:
		x := dirichlet1(rng, v)
		return pair{"identical", x, slices.Clone(x)}
	default:
		x := dirichlet1(rng, v)
		y := make([]float64, v)
		for i := range y {
			y[i] = x[i] * math.Exp(0.2*rng.NormFloat64())
		}
		return pair{"close", x, normalize(y)}
	}
}

// order returns token ids by probability, highest first, lower id on ties.
func order(p []float64) []int {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case p[a] > p[b]:
			return -1
		case p[a] < p[b]:
			return 1
		}
		return 0
	})
	return idx
}

// topKUniform is CU-HLM eq. 15: the k most probable entries of x kept,
// the remaining mass spread uniformly over the other V − k tokens.
func topKUniform(x []float64, k int) []float64 {
	v := len(x)
	if k >= v {
		return slices.Clone(x)
	}
	o := order(x)
	xh := make([]float64, v)
	kept := 0.0
	for _, i := range o[:k] {
		xh[i] = x[i]
		kept += x[i]
	}
	rest := (1 - kept) / float64(v-k)
	for _, i := range o[k:] {
		xh[i] = rest
	}
	return xh
}

// lattice quantizes x to the lattice of probability vectors with
// denominator ell (Q-S eq. 5): floor, then give the missing units to the
// largest remainders (lower id on ties).
func lattice(x []float64, ell int) []float64 {
	v := len(x)
	o := make([]int, v)
	rem := make([]float64, v)
	units := 0
	for i, p := range x {
		f := p * float64(ell)
		o[i] = int(math.Floor(f))
		rem[i] = f - float64(o[i])
		units += o[i]
	}
	for _, i := range order(rem)[:ell-units] {
		o[i]++
	}
	q := make([]float64, v)
	for i := range q {
		q[i] = float64(o[i]) / float64(ell)
	}
	return q
}

func maxAbsDiff(a, b []float64) float64 {
	m := 0.0
	for i := range a {
		m = max(m, math.Abs(a[i]-b[i]))
	}
	return m
}
