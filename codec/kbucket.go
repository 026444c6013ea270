package codec

import (
	"math"
	"slices"
	"sort"
	"sync"
)

// Online k without sorting the vocabulary.
//
// bucketK finds the same k as firstK over the full rank order, but sorts
// only what the answer and the returned ids need. Tokens are grouped by the
// top 11 bits of their radix key (exponent and 3 mantissa bits, so each
// bucket spans a factor of at most 1.125 in value and buckets are ordered by
// value). Write the head of size k as "all buckets before b, plus the first
// o tokens of bucket b in rank order". With P_k the head sum and
// m = (Σx − P_k)/(V − k) the tail mean,
//
//	N(k) = 2 Σ_{tail, x >= m} (x − m)
//
// and every token at or above m lies either in the rest of bucket b, in a
// whole bucket between b and the bucket of m, or in the bucket of m itself
// (m <= s_k, so that bucket is never before b). Whole buckets enter through
// their counts and sums; only the buckets that hold m, and the one that
// holds the answer, are sorted. N is non-increasing in k (see ksel.go), so
// the answer is found by evaluating N at bucket ends until one qualifies,
// then by bisection inside that bucket. The sums are taken in another order
// than firstK's prefix sums, so near a tie with θ the two may differ by
// rounding in the last bits of N.

const bucketShift = 22 // radixKey is 33 bits; its top 11 bits name the bucket

type kBuckets struct {
	x      []float64
	total  float64
	start  [2049]int32   // start[b]: first slot of bucket b in ids; start[2048] = V
	cumSum [2049]float64 // Σ x over buckets before b
	ids    []int32       // token ids grouped by bucket, ascending within each
	keys   []uint16      // bucket of each token (scratch)
	// Sorted buckets: ids[start[b]:start[b+1]] in rank order, with prefix
	// sums (Σ of the first i, i = 0…count) in pre[start[b]+b:].
	isSorted [2048]bool
	pre      []float64
}

var kbPool = sync.Pool{New: func() any { return new(kBuckets) }}

// newKBuckets groups x by bucket. Release it with free once done with ids.
func newKBuckets(x []float64, total float64) *kBuckets {
	kb := kbPool.Get().(*kBuckets)
	kb.x, kb.total = x, total
	kb.isSorted = [2048]bool{}
	var cnt [2048]int32
	var sum [2048]float64
	if cap(kb.keys) < len(x) {
		kb.keys = make([]uint16, len(x))
		kb.ids = make([]int32, len(x))
		kb.pre = make([]float64, len(x)+2048)
	}
	keys := kb.keys[:len(x)]
	for i, p := range x {
		b := uint16(radixKey(p) >> bucketShift)
		keys[i] = b
		cnt[b]++
		sum[b] += p
	}
	var c int32
	s := 0.0
	for b := range cnt {
		kb.start[b], kb.cumSum[b] = c, s
		c += cnt[b]
		s += sum[b]
	}
	kb.start[2048], kb.cumSum[2048] = c, s
	kb.ids, kb.pre = kb.ids[:len(x)], kb.pre[:len(x)+2048]
	next := cnt // reuse as write cursors
	for b := range next {
		next[b] = kb.start[b]
	}
	for i, b := range keys {
		kb.ids[next[b]] = int32(i)
		next[b]++
	}
	return kb
}

func (kb *kBuckets) free() {
	kb.x = nil
	kbPool.Put(kb)
}

func (kb *kBuckets) count(b int) int { return int(kb.start[b+1] - kb.start[b]) }

// prefix returns the prefix sums of bucket b (meaningful once sorted).
func (kb *kBuckets) prefix(b int) []float64 {
	lo := int(kb.start[b]) + b
	return kb.pre[lo : lo+kb.count(b)+1]
}

// sorted puts bucket b in rank order (once) and returns its prefix sums.
func (kb *kBuckets) sorted(b int) []float64 {
	p := kb.prefix(b)
	if kb.isSorted[b] {
		return p
	}
	seg := kb.ids[kb.start[b]:kb.start[b+1]]
	sortIDs(kb.x, seg)
	p[0] = 0
	for i, id := range seg {
		p[i+1] = p[i] + kb.x[id]
	}
	kb.isSorted[b] = true
	return p
}

// tailMean returns the tail mean m = (Σx − head)/(V − k) for a head of k
// tokens summing to head, and the bucket m falls in.
func (kb *kBuckets) tailMean(k int, head float64) (float64, int) {
	m := (kb.total - head) / float64(len(kb.x)-k)
	return m, int(radixKey(max(m, 0)) >> bucketShift)
}

// n returns N(k) for the head "buckets before b plus the first o tokens of
// bucket b" (bucket b must be sorted when o > 0).
func (kb *kBuckets) n(b, o int) float64 {
	k := int(kb.start[b]) + o
	if k >= len(kb.x) {
		return 0
	}
	head := kb.cumSum[b]
	if o > 0 {
		head += kb.prefix(b)[o]
	}
	m, bm := kb.tailMean(k, head)
	// m <= s_k, so bm >= b; rounding may put m just above s_k
	bm = max(b, bm)
	var above float64 // Σ (x − m) over tail tokens with x >= m
	if bm == b {
		p := kb.sorted(b)
		j := o + kb.firstBelow(b, o, m)
		above = (p[j] - p[o]) - float64(j-o)*m
	} else {
		// the rest of bucket b and the whole buckets b+1 .. bm-1
		rest := kb.cumSum[bm] - kb.cumSum[b]
		if o > 0 {
			rest -= kb.prefix(b)[o]
		}
		above = rest - float64(int(kb.start[bm])-k)*m
		p := kb.sorted(bm)
		j := kb.firstBelow(bm, 0, m)
		above += p[j] - float64(j)*m
	}
	return max(0, 2*above)
}

// firstBelow returns how many tokens of sorted bucket b from position o on
// are >= m (they come first).
func (kb *kBuckets) firstBelow(b, o int, m float64) int {
	seg := kb.ids[int(kb.start[b])+o : kb.start[b+1]]
	return sort.Search(len(seg), func(i int) bool { return kb.x[seg[i]] < m })
}

// bucketMax returns an upper bound on the values in bucket b: the largest
// float64 whose radix key falls in it.
func bucketMax(b int) float64 {
	const top = 1<<33 - 1
	k := uint64(top) - uint64(b)<<bucketShift // largest uncomplemented key of b
	return math.Float64frombits((k+(1023-255)<<25)<<27 | (1<<27 - 1))
}

// bounds returns lower and upper bounds on N at the end of bucket b
// (head = buckets 0..b) without sorting anything: the bucket that holds the
// tail mean m contributes between 0 and count·(max − m).
func (kb *kBuckets) bounds(b int) (lo, hi float64) {
	k := int(kb.start[b+1])
	if k >= len(kb.x) {
		return 0, 0
	}
	m, bm := kb.tailMean(k, kb.cumSum[b+1])
	bm = max(b+1, bm)
	whole := (kb.cumSum[bm] - kb.cumSum[b+1]) - float64(int(kb.start[bm])-k)*m
	part := float64(kb.count(bm)) * max(0, bucketMax(bm)-m)
	return max(0, 2*whole), max(0, 2*(whole+part))
}

// bucketK returns the smallest k in [1, V] with N(k)/den <= theta and the
// top k ids in rank order.
func bucketK(x []float64, total, den, theta float64) (int, []int32) {
	kb := newKBuckets(x, total)
	defer kb.free()
	ok := func(nk float64) bool { return nk/den <= theta }
	// Find the bucket that holds the answer: the first whose end passes.
	// Bounds settle most bucket ends; the undecided ones after the last
	// sure failure are evaluated exactly.
	var pending []int
	ans := -1
	for b := 0; b < 2048 && ans < 0; b++ {
		if kb.count(b) == 0 {
			continue
		}
		lo, hi := kb.bounds(b)
		switch {
		case ok(hi):
			ans = b
		case !ok(lo):
			pending = pending[:0]
		default:
			pending = append(pending, b)
		}
	}
	for _, b := range pending {
		if ok(kb.n(b+1, 0)) {
			ans = b
			break
		}
	}
	// N at the end of the last non-empty bucket (k = V) is 0.
	c := kb.count(ans)
	kb.sorted(ans)
	// N fails at the bucket's start (or the start is k = 0) and holds at
	// its end; rounding aside, so o = c is the fallback.
	o := 1 + sort.Search(c, func(i int) bool { return ok(kb.n(ans, i+1)) })
	o = min(o, c)
	k := int(kb.start[ans]) + o
	if kb.start[ans] > 0 {
		sortIDs(x, kb.ids[:kb.start[ans]])
	}
	return k, slices.Clone(kb.ids[:k])
}

// sortIDs puts ids in rank order in place: small sets by sortRun, larger
// ones by the radix sort.
func sortIDs(x []float64, ids []int32) {
	if len(ids) <= 32 {
		sortRun(x, ids)
		return
	}
	copy(ids, rankOrderOf(x, ids))
}
