package sampling

// The filters order tokens by probability, highest first, and break ties by
// token id, lowest first. before reports whether token i precedes token j in
// that total order.
func before(p []float64, i, j int) bool {
	return p[i] > p[j] || (p[i] == p[j] && i < j)
}

// keepThrough zeroes every token that comes after token last in the filter
// order (and every entry that is not a positive number), then renormalizes
// the survivors to sum to 1.
func keepThrough(p []float64, last int) {
	pl := p[last]
	sum := 0.0
	for i, v := range p {
		if v > 0 && (v > pl || (v == pl && i <= last)) {
			sum += v
		} else {
			p[i] = 0
		}
	}
	scale := 1 / sum // sum ≥ p[last] > 0
	for i := range p {
		p[i] *= scale
	}
}

// TopK keeps the k most probable tokens of p, zeroes the others and
// renormalizes, in place. Among tokens of equal probability the lower id is
// kept, so the result is a deterministic function of p. Entries that are
// zero, negative or NaN are never kept.
//
// k ≤ 0 disables the filter, as does k ≥ len(p); p is then left untouched.
// If fewer than k tokens have positive probability all of them are kept. If
// none has, p is left untouched.
//
// Cost: O(V log k) with a size-k heap, no sort of the whole vocabulary.
func TopK(p []float64, k int) {
	if k <= 0 || k >= len(p) {
		return
	}
	// h is a heap of the k best tokens seen so far with the worst at the
	// root: h[0] comes after every other element in the filter order.
	h := make([]int32, 0, k)
	worse := func(a, b int32) bool { return before(p, int(b), int(a)) }
	for i, v := range p {
		if !(v > 0) {
			continue
		}
		if len(h) < k {
			h = append(h, int32(i))
			siftUp(h, len(h)-1, worse)
		} else if before(p, i, int(h[0])) {
			h[0] = int32(i)
			siftDown(h, 0, worse)
		}
	}
	if len(h) == 0 {
		return
	}
	keepThrough(p, int(h[0]))
}

// TopP applies nucleus sampling's filter in place: it keeps the smallest set
// of most probable tokens whose total mass is at least top (as a share of
// the total mass of p), zeroes the others and renormalizes. Ties are broken
// by token id (lower first), so the kept set is deterministic.
//
// top ≥ 1 (or NaN) disables the filter and leaves p untouched. top ≤ 0 keeps
// only the most probable token — unlike Sampler.TopP, where 0 means "no
// filter" (the convention of the command line and of llama.cpp), so a
// Sampler never calls TopP with 0. If p has no positive entry it is left
// untouched.
//
// Cost: O(V) to discard the tail, then O(n + m log n) for n remaining
// candidates and a nucleus of m tokens. A token with p_i < (1 − top)·Σp/V
// can never be in the nucleus: all such tokens together hold less than
// (1 − top)·Σp, so the others already reach top·Σp. The candidates are
// heapified and popped best-first until the nucleus is complete.
func TopP(p []float64, top float64) {
	if !(top < 1) {
		return
	}
	total := 0.0
	best := -1
	for i, v := range p {
		if v > 0 {
			total += v
			if best < 0 || v > p[best] {
				best = i
			}
		}
	}
	if best < 0 {
		return
	}
	if !(top > 0) {
		keepThrough(p, best)
		return
	}
	cut := (1 - top) * total / float64(len(p))
	cands := make([]int32, 0, 64)
	for i, v := range p {
		if v > 0 && v >= cut {
			cands = append(cands, int32(i))
		}
	}
	// Extract candidates best-first from a heap (heapify O(n), then one
	// O(log n) pop per nucleus member) until the mass reaches top.
	better := func(a, b int32) bool { return before(p, int(a), int(b)) }
	for j := len(cands)/2 - 1; j >= 0; j-- {
		siftDown(cands, j, better)
	}
	target := top * total
	cum := 0.0
	last := cands[0]
	for n := len(cands); n > 0; n-- {
		last = cands[0]
		cum += p[last]
		if cum >= target {
			break
		}
		cands[0] = cands[n-1]
		cands = cands[:n-1]
		siftDown(cands, 0, better)
	}
	keepThrough(p, int(last))
}

// siftUp and siftDown maintain a binary heap whose root r satisfies
// !less(c, r) for every element c: with less = worse, the root is the worst.
func siftUp(h []int32, j int, less func(a, b int32) bool) {
	for j > 0 {
		parent := (j - 1) / 2
		if !less(h[j], h[parent]) {
			return
		}
		h[j], h[parent] = h[parent], h[j]
		j = parent
	}
}

func siftDown(h []int32, j int, less func(a, b int32) bool) {
	n := len(h)
	for {
		l := 2*j + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && less(h[r], h[l]) {
			m = r
		}
		if !less(h[m], h[j]) {
			return
		}
		h[j], h[m] = h[m], h[j]
		j = m
	}
}
