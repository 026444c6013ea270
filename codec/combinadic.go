package codec

import (
	"fmt"
	"math"
	"math/big"
	"sync"
)

// Combinatorial number system. A w-subset c_1 < c_2 < ... < c_w of
// {0, ..., n−1} has rank
//
//	rank(c) = Σ_{m=1}^{w} C(c_m, m)   in [0, C(n, w)),
//
// its position in colexicographic order (Knuth TAOCP 7.2.1.3, Theorem L).
// It is the subset index of SQS eq. 5 and, through stars and bars, the
// lexicographic index of a lattice point (see compositionToSubset).
//
// Ranking walks a binom from term to term; unranking is greedy from m = w
// down: c_m is the largest c with C(c, m) <= the remaining rank, located by
// a floating-point estimate (lgamma) and confirmed with exact arithmetic.

// MaxRankWork bounds the arithmetic a rank or unrank may cost, in units of
// one machine word times one factor: min(2(n+w), w(w+1)) × (bits/64 + 1).
// It admits every configuration hlm uses at V = 32,000 (K-SQS and C-SQS with
// any K; lattice resolution up to MaxL at K = V) and stops a hostile payload
// from buying seconds of decoding: near the limit a decode costs tens of
// milliseconds (60–80 ms measured for K = 16,000 of 32,000 and for ℓ = MaxL
// over 32,000 on the 2-vCPU reference machine under load).
const MaxRankWork = 1 << 27

// rankWork estimates the cost of ranking a w-subset of n (w <= n/2; larger
// subsets are ranked through their complement) with an index of nbits bits.
func rankWork(n, w int, nbits float64) float64 {
	steps := math.Min(2*float64(n+w), float64(w)*float64(w+1))
	return steps * (nbits/64 + 1)
}

// subsetSpace describes the w-subsets of {0..n−1}: their count C(n, w) and
// the index width ⌈log2 C(n, w)⌉ = bitlen(C(n, w) − 1).
type subsetSpace struct {
	n, w  int
	count *big.Int // read-only
	bits  int
}

var spaceCache struct {
	sync.Mutex
	m map[[2]int]*subsetSpace
}

// newSubsetSpace returns the (cached) space of w-subsets of n, or an error
// wrapping ErrLimit if indexing it would exceed MaxRankWork.
func newSubsetSpace(n, w int) (*subsetSpace, error) {
	if w < 0 || w > n {
		return nil, fmt.Errorf("%w: %d-subsets of %d elements", ErrParam, w, n)
	}
	key := [2]int{n, w}
	spaceCache.Lock()
	s := spaceCache.m[key]
	spaceCache.Unlock()
	if s != nil {
		return s, nil
	}
	if est := log2Binom(n, w); rankWork(n, min(w, n-w), est) > MaxRankWork {
		return nil, fmt.Errorf("%w: index of %d-subsets of %d (about %.0f bits) exceeds MaxRankWork", ErrLimit, w, n, est)
	}
	b := newBinom()
	b.moveTo(n, w)
	count := new(big.Int).Set(b.value())
	s = &subsetSpace{n: n, w: w, count: count, bits: new(big.Int).Sub(count, big.NewInt(1)).BitLen()}
	spaceCache.Lock()
	if spaceCache.m == nil || len(spaceCache.m) >= 1024 {
		spaceCache.m = make(map[[2]int]*subsetSpace)
	}
	spaceCache.m[key] = s
	spaceCache.Unlock()
	return s, nil
}

// complement returns the ascending elements of {0..n−1} not in c.
func complement(c []int, n int) []int {
	out := make([]int, 0, n-len(c))
	j := 0
	for x := 0; x < n; x++ {
		if j < len(c) && c[j] == x {
			j++
			continue
		}
		out = append(out, x)
	}
	return out
}

// rank returns Σ_m C(c_m, m) for a strictly increasing c of length w with
// elements < n (the caller guarantees it). Complementing reverses colex
// order (S <colex T iff max(S Δ T) is in T, and S Δ T = Sᶜ Δ Tᶜ), so
// rank(S) = C(n, w) − 1 − rank(Sᶜ); for w > n/2 the complement has fewer
// terms and is ranked instead.
func (s *subsetSpace) rank(c []int) *big.Int {
	if 2*s.w > s.n {
		r := rankTerms(complement(c, s.n))
		return r.Sub(s.count, r.Add(r, big.NewInt(1)))
	}
	return rankTerms(c)
}

func rankTerms(c []int) *big.Int {
	r := new(big.Int)
	b := newBinom()
	for i, cm := range c {
		m := i + 1
		if cm < m {
			continue // C(cm, m) = 0
		}
		b.moveTo(cm, m)
		r.Add(r, b.v)
	}
	return r
}

// unrank returns the w-subset of rank r, or an error if r >= C(n, w).
func (s *subsetSpace) unrank(r *big.Int) ([]int, error) {
	if r.Sign() < 0 || r.Cmp(s.count) >= 0 {
		return nil, fmt.Errorf("%w: index %d bits long is not below C(%d, %d)", ErrFormat, r.BitLen(), s.n, s.w)
	}
	w := s.w
	if 2*w > s.n { // unrank the complement (see rank)
		r = new(big.Int).Sub(s.count, r)
		r.Sub(r, big.NewInt(1))
		w = s.n - w
	}
	c, ok := unrankGreedy(r, s.n, w, false)
	if !ok {
		// A floating-point shortcut misled the search (not expected to
		// happen: see largestAtMost); redo it with exact comparisons only.
		c, _ = unrankGreedy(r, s.n, w, true)
	}
	if w != s.w {
		c = complement(c, s.n)
	}
	return c, nil
}

// unrankGreedy picks c_w, …, c_1 greedily. It reports false if the rank
// was not consumed exactly, which can only follow a wrong floating-point
// shortcut (exact = false).
func unrankGreedy(r *big.Int, n, w int, exact bool) ([]int, bool) {
	rem := new(big.Int).Set(r)
	c := make([]int, w)
	b := newBinom()
	var tmp big.Int
	hi := n - 1 // c_m <= hi
	for m := w; m >= 1; m-- {
		if rem.Sign() == 0 {
			for ; m >= 1; m-- {
				c[m-1] = m - 1 // C(m−1, m) = 0
			}
			break
		}
		cm := largestAtMost(b, &tmp, rem, m, hi, exact)
		c[m-1] = cm
		rem.Sub(rem, b.value())
		hi = cm - 1
		if hi < m-2 {
			return nil, false
		}
	}
	return c, rem.Sign() == 0
}

// lnMargin is how far apart, in natural log, an lgamma estimate of
// ln C(c, m) and ln(rank) must be for largestAtMost to trust their order
// without exact arithmetic. Double-precision lgamma of arguments below
// 2^23 errs by well under 1e-9 here; consecutive ln C(c, m) differ by at
// least ln(1 + 1/c) >= 2e-7 even at c = 2^22 + MaxL. Near a tie it
// compares exactly.
const lnMargin = 1e-6

// largestAtMost returns the largest c in [m−1, hi] with C(c, m) <= rem
// (rem > 0, and C(hi+1, m) > rem by the greedy invariant) and leaves b at
// C(c, m). It solves ln C(c, m) = ln rem in floating point (safeguarded
// Newton on lgamma), moves b there exactly, and corrects by single steps:
// C(c, m) <= rem is always checked exactly (b's value is needed anyway);
// C(c+1, m) > rem only when the estimate is within lnMargin, or always if
// exact is set.
func largestAtMost(b *binom, tmp, rem *big.Int, m, hi int, exact bool) int {
	lm, _ := math.Lgamma(float64(m) + 1)
	target := lnBig(rem) + lm
	g := func(c float64) float64 { // ln C(c, m) + ln m!
		a, _ := math.Lgamma(c + 1)
		d, _ := math.Lgamma(c - float64(m) + 1)
		return a - d
	}
	c := hi
	if g(float64(hi)) > target {
		// Answer in [m, hi−1]: C(m, m) = 1 <= rem. Bracket [lo, up] with
		// g(lo) <= target < g(up); Newton steps with the slope
		// ln((c+1)/(c−m+1)), bisection when they leave the bracket.
		lo, up := float64(m), float64(hi)
		x := up
		for i := 0; i < 60 && up-lo > 0.5; i++ {
			gx := g(x)
			if gx <= target {
				lo = x
			} else {
				up = x
			}
			slope := math.Log((x + 1) / (x - float64(m) + 1))
			nx := x - (gx-target)/slope
			if !(nx > lo && nx < up) || slope <= 0 {
				nx = (lo + up) / 2
			}
			x = nx
		}
		c = int(math.Floor(up))
		if g(float64(c)) > target {
			c = int(math.Floor(lo))
		}
		c = min(max(c, m), hi-1)
	}
	b.moveTo(c, m)
	for c > m && b.value().Cmp(rem) > 0 {
		c--
		b.moveTo(c, m)
	}
	for c < hi {
		if !exact && g(float64(c+1))-target > lnMargin {
			break
		}
		// C(c+1, m) = C(c, m)·(c+1)/(c+1−m)
		tmp.Mul(b.value(), big.NewInt(int64(c+1)))
		tmp.Quo(tmp, big.NewInt(int64(c+1-m)))
		if tmp.Cmp(rem) > 0 {
			break
		}
		c++
		b.moveTo(c, m)
	}
	return c
}
