package codec

import (
	"math"
	"slices"
	"sync"
)

// Rank order. Every codec and every k-selection function ranks tokens the
// same way: by descending probability, ties by ascending token id. "The k
// largest entries" always means the first k tokens of this order.

// before reports whether token i precedes token j in rank order.
func before(x []float64, i, j int32) bool {
	return x[i] > x[j] || (x[i] == x[j] && i < j)
}

// radixKey is a 33-bit sort key of a probability v in [0, 2): bits 27..63
// of its float64 representation (exponent and 25 mantissa bits) with the
// exponent offset so that 2^-254 <= v < 2 maps to 1<<25 .. 1<<33 − 1, and
// smaller values (and 0) to 0. For v >= 0, float64 bit patterns are
// monotone in v, so keys are too; the key is complemented so that
// ascending keys mean descending values. Values sharing a key (equal in
// exponent and 25 leading mantissa bits, or below 2^-254) are ordered
// exactly afterwards. Callers pass validated probabilities (0 <= v < 2).
func radixKey(v float64) uint64 {
	const top = 1<<33 - 1
	k := int64(math.Float64bits(v)>>27) - (1023-255)<<25
	return top ^ uint64(min(max(k, 0), top))
}

var sortPool = sync.Pool{New: func() any { return new([]uint64) }}

// rankOrder returns all token ids in rank order: an LSD radix sort of
// (radixKey, id) records, key<<22 | id, in three stable 11-bit passes over
// the key (ids start ascending and are < 2^22 = MaxVocab), then an exact
// comparison sort of each run of equal keys (rare). O(V).
func rankOrder(x []float64) []int32 { return rankOrderOf(x, nil) }

// rankOrderOf sorts the given ascending ids (all of x if ids is nil).
func rankOrderOf(x []float64, ids []int32) []int32 {
	n := len(x)
	if ids != nil {
		n = len(ids)
	}
	bufp := sortPool.Get().(*[]uint64)
	defer sortPool.Put(bufp)
	if cap(*bufp) < 2*n {
		*bufp = make([]uint64, 2*n)
	}
	a, b := (*bufp)[:n], (*bufp)[n:2*n]
	var hist [3][2048]int32
	add := func(i int, id int32) {
		k := radixKey(x[id])
		a[i] = k<<22 | uint64(id)
		hist[0][k&0x7FF]++
		hist[1][(k>>11)&0x7FF]++
		hist[2][k>>22]++
	}
	if ids == nil {
		for i := range x {
			add(i, int32(i))
		}
	} else {
		for i, id := range ids {
			add(i, id)
		}
	}
	for p, s := range [3]uint{22, 33, 44} {
		h := &hist[p]
		if trivialPass(h, n) {
			continue
		}
		sum := int32(0)
		for d := range h {
			c := h[d]
			h[d] = sum
			sum += c
		}
		for _, r := range a {
			d := (r >> s) & 0x7FF
			b[h[d]] = r
			h[d]++
		}
		a, b = b, a
	}
	out := make([]int32, n)
	for i, r := range a {
		out[i] = int32(r & (1<<22 - 1))
	}
	for i := 0; i < n; {
		j := i + 1
		for j < n && a[j]>>22 == a[i]>>22 {
			j++
		}
		if j-i > 1 {
			sortRun(x, out[i:j])
		}
		i = j
	}
	return out
}

// sortRun puts a run of ids (ascending on entry) in rank order.
func sortRun(x []float64, run []int32) {
	sorted := true
	for i := 1; i < len(run) && sorted; i++ {
		sorted = before(x, run[i-1], run[i])
	}
	if sorted {
		return
	}
	if len(run) <= 16 {
		for i := 1; i < len(run); i++ {
			for j := i; j > 0 && before(x, run[j], run[j-1]); j-- {
				run[j], run[j-1] = run[j-1], run[j]
			}
		}
		return
	}
	slices.SortFunc(run, func(p, q int32) int {
		if before(x, p, q) {
			return -1
		}
		if before(x, q, p) {
			return 1
		}
		return 0
	})
}

func trivialPass(h *[2048]int32, n int) bool {
	for _, c := range h {
		if c != 0 {
			return int(c) == n
		}
	}
	return true
}

// topK returns the first k token ids in rank order (k <= len(x)). For small
// k it keeps a bounded heap (O(V log k), about O(V) on real distributions);
// otherwise it sorts everything.
func topK(x []float64, k int) []int32 {
	n := len(x)
	if k <= 0 {
		return nil
	}
	if k > 512 && k*8 > n {
		return rankOrder(x)[:k]
	}
	// h is a heap whose root is the worst (last in rank order) of the best
	// k seen so far.
	h := make([]int32, 0, k)
	worse := func(i, j int32) bool { return before(x, j, i) } // i after j
	for i := int32(0); int(i) < n; i++ {
		if len(h) < k {
			h = append(h, i)
			siftUp(h, len(h)-1, worse)
			continue
		}
		if before(x, i, h[0]) {
			h[0] = i
			siftDown(h, 0, worse)
		}
	}
	slices.SortFunc(h, func(p, q int32) int {
		if before(x, p, q) {
			return -1
		}
		return 1
	})
	return h
}

// siftUp and siftDown maintain a heap in which less(h[parent], h[child])
// or equality holds: the root is the "least".
func siftUp(h []int32, i int, less func(a, b int32) bool) {
	for i > 0 {
		p := (i - 1) / 2
		if !less(h[i], h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func siftDown(h []int32, i int, less func(a, b int32) bool) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && less(h[r], h[l]) {
			m = r
		}
		if !less(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
