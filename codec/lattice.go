package codec

import (
	"fmt"
	"math/big"
)

// MaxL is the largest lattice resolution ℓ a codec accepts.
const MaxL = 1 << 14

// Quantize maps a probability vector q of dimension K to the lattice
// Q_ℓ = {b/ℓ : b_i >= 0 integers, Σ b_i = ℓ} (Q-S eq. 5) with Reznik's
// algorithm (SQS Algorithm 2, lines 6–17):
//
//	b'_i = ⌊ℓ q_i + 1/2⌋;
//	if Σb' ≠ ℓ, with ζ_i = b'_i − ℓ q_i: decrement the Σb' − ℓ entries with
//	the largest ζ (if over), or increment the ℓ − Σb' entries with the
//	smallest ζ (if under).
//
// Ties in ζ go to the lowest index, so the result is deterministic. An
// entry at 0 is never decremented (in exact arithmetic it is never chosen:
// at most half the positive entries are). The result satisfies
// TV(q, b/ℓ) <= K/(4ℓ) (SQS eq. 20, after Reznik 2011). Only the selection
// of the |Σb' − ℓ| <= min(ℓ, K/2) adjusted entries is partial (a bounded
// heap), so Quantize is O(K log ℓ) at worst and about O(K) in practice.
//
// q must be non-negative and finite with Σq = 1 (up to rounding);
// Quantize returns ErrInput or ErrParam otherwise.
func Quantize(q []float64, l int) ([]int32, error) {
	if l < 1 || l > MaxL {
		return nil, fmt.Errorf("%w: lattice resolution ℓ = %d outside [1, %d]", ErrParam, l, MaxL)
	}
	if _, err := checkDist(q, -1); err != nil {
		return nil, err
	}
	return quantize(q, l), nil
}

func quantize(q []float64, l int) []int32 { return quantizeScaled(q, 1, l) }

// quantizeScaled quantizes q_i = x_i/s (s = 1: x itself) without
// materializing q; x_i/s is the same number the caller would have stored.
func quantizeScaled(x []float64, s float64, l int) []int32 {
	b := make([]int32, len(x))
	lf := float64(l)
	sum := 0
	if s == 1 {
		for i, qi := range x {
			bi := int32(lf*qi + 0.5) // truncation is ⌊·⌋ for non-negative values
			b[i] = bi
			sum += int(bi)
		}
	} else {
		for i, xi := range x {
			bi := int32(lf*(xi/s) + 0.5)
			b[i] = bi
			sum += int(bi)
		}
	}
	if diff := sum - l; diff > 0 {
		// The diff largest ζ = b' − ℓq among entries >= 1.
		for _, i := range largestZeta(x, s, b, lf, diff, true) {
			b[i]--
		}
	} else if diff < 0 {
		for _, i := range largestZeta(x, s, b, lf, -diff, false) {
			b[i]++
		}
	}
	return b
}

// largestZeta returns the m indices with the largest key, ties to the
// lowest index, where key = ζ_i = b_i − ℓq_i over entries with b_i >= 1
// (over = true), or key = −ζ_i over all entries (over = false, i.e. the
// smallest ζ), with q = x/s. A bounded min-heap scanned in index order: an equal key
// never displaces an earlier index, and most entries fail one comparison
// with the root.
func largestZeta(x []float64, s float64, b []int32, lf float64, m int, over bool) []int {
	type item struct {
		k float64
		i int
	}
	h := make([]item, 0, m)
	// worse(a, c): a ranks after c (smaller key, or equal key and later index).
	worse := func(a, c item) bool { return a.k < c.k || (a.k == c.k && a.i > c.i) }
	for i, xi := range x {
		qi := xi
		if s != 1 {
			qi = xi / s
		}
		var k float64
		if over {
			if b[i] == 0 {
				continue
			}
			k = float64(b[i]) - lf*qi
		} else {
			k = lf*qi - float64(b[i])
		}
		if len(h) == m {
			if k <= h[0].k {
				continue
			}
			h[0] = item{k, i}
			for j := 0; ; {
				c := 2*j + 1
				if c >= m {
					break
				}
				if r := c + 1; r < m && worse(h[r], h[c]) {
					c = r
				}
				if !worse(h[c], h[j]) {
					break
				}
				h[j], h[c] = h[c], h[j]
				j = c
			}
			continue
		}
		h = append(h, item{k, i})
		for j := len(h) - 1; j > 0; {
			p := (j - 1) / 2
			if !worse(h[j], h[p]) {
				break
			}
			h[j], h[p] = h[p], h[j]
			j = p
		}
	}
	out := make([]int, len(h))
	for j, it := range h {
		out[j] = it.i
	}
	return out
}

// Lattice composition index. A lattice point b (K non-negative parts
// summing to ℓ) is identified by its lexicographic rank among all
// C(ℓ+K−1, K−1) such compositions: (0,…,0,ℓ) has rank 0 and (ℓ,0,…,0) rank
// C(ℓ+K−1, K−1) − 1. Write b as the binary string 1^{b_1} 0 1^{b_2} 0 … 0 1^{b_K}
// of length n = ℓ+K−1 with ℓ ones; lexicographic order of compositions is
// lexicographic order of these strings (0 < 1), whose rank is
// Σ_{ones at position t} C(n−1−t, ones at or after t). With c_m the distances
// from the end of the string of the ones, in increasing order, that is
// Σ_{m=1}^{ℓ} C(c_m, m): the combinatorial-number-system rank of the
// ℓ-subset {c_m} of {0..n−1}. Only non-empty parts produce terms, ones of
// the same part are consecutive c (each a two-factor step), and the index
// takes ⌈log2 C(ℓ+K−1, K−1)⌉ bits. TestCompositionRankWorkedExample pins
// ℓ = 2, K = 3.

// compositionSpace returns the subset space that indexes compositions of l
// into k parts.
func compositionSpace(l, k int) (*subsetSpace, error) {
	return newSubsetSpace(l+k-1, l)
}

// compositionToSubset returns the increasing distances c_m of the ones.
func compositionToSubset(b []int32, l int) []int {
	c := make([]int, 0, l)
	after := 0 // ones after the current part
	k := len(b)
	for i := k - 1; i >= 0; i-- {
		if b[i] == 0 {
			continue
		}
		off := after + (k - 1 - i) // ones and zeros after part i
		for j := 0; j < int(b[i]); j++ {
			c = append(c, off+j)
		}
		after += int(b[i])
	}
	return c
}

// subsetToComposition inverts compositionToSubset: the one with distance
// c_m has c_m − (m−1) zeros after it, so it is in part k−1−(c_m−m+1).
func subsetToComposition(c []int, k int) []int32 {
	b := make([]int32, k)
	for i, cm := range c {
		b[k-1-(cm-i)]++
	}
	return b
}

// CompositionRank returns the lexicographic rank of the composition b
// (non-negative parts) among all compositions of Σb into len(b) parts.
func CompositionRank(b []int32) (*big.Int, error) {
	l := 0
	for i, bi := range b {
		if bi < 0 {
			return nil, fmt.Errorf("%w: part %d is negative", ErrInput, i)
		}
		l += int(bi)
	}
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: no parts", ErrInput)
	}
	sp, err := compositionSpace(l, len(b))
	if err != nil {
		return nil, err
	}
	return sp.rank(compositionToSubset(b, l)), nil
}

// CompositionUnrank returns the composition of l into k parts with
// lexicographic rank r.
func CompositionUnrank(r *big.Int, l, k int) ([]int32, error) {
	if l < 0 || k < 1 {
		return nil, fmt.Errorf("%w: compositions of %d into %d parts", ErrParam, l, k)
	}
	sp, err := compositionSpace(l, k)
	if err != nil {
		return nil, err
	}
	c, err := sp.unrank(r)
	if err != nil {
		return nil, err
	}
	return subsetToComposition(c, k), nil
}

// Lattice is the quantize-then-sample codec of Q-S (Sec. III-B) over the
// whole vocabulary: the distribution is normalized, quantized to Q_ℓ with
// Quantize, and the lattice point is sent as its lexicographic index.
//
// Layout: one field, the composition rank of (b_0, …, b_{V−1}) in
// ⌈log2 C(ℓ+V−1, V−1)⌉ bits (Q-S eq. 6); nothing else. Recon_i = b_i/ℓ.
//
// The device samples the draft from Recon (draft = −1 in Encode), which
// makes speculative sampling lossless for any ℓ (Q-S Proposition 1). A
// draft already sampled from x may be passed, but it must have Recon > 0.
type Lattice struct {
	L int // resolution ℓ, 1..MaxL (100 in SQS Sec. 4)
}

// Validate reports impossible parameters.
func (c Lattice) Validate() error {
	if c.L < 1 || c.L > MaxL {
		return fmt.Errorf("%w: lattice resolution ℓ = %d outside [1, %d]", ErrParam, c.L, MaxL)
	}
	return nil
}

// Name returns e.g. "lattice-100".
func (c Lattice) Name() string { return fmt.Sprintf("lattice-%d", c.L) }

// Bits returns ⌈log2 C(ℓ+V−1, V−1)⌉, the payload size for vocabulary v.
func (c Lattice) Bits(v int) (int, error) {
	if err := c.Validate(); err != nil {
		return 0, err
	}
	if err := checkVocab(v); err != nil {
		return 0, err
	}
	sp, err := compositionSpace(c.L, v)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrParam, err)
	}
	return sp.bits, nil
}

// Encode quantizes x and writes its lattice index.
func (c Lattice) Encode(x []float64, draft int) (Encoded, error) {
	if err := c.Validate(); err != nil {
		return Encoded{}, err
	}
	sum, err := checkDist(x, draft)
	if err != nil {
		return Encoded{}, err
	}
	sp, err := compositionSpace(c.L, len(x))
	if err != nil {
		return Encoded{}, fmt.Errorf("%w: %w", ErrParam, err)
	}
	b := quantizeScaled(x, sum, c.L)
	var w BitWriter
	w.WriteBig(sp.rank(compositionToSubset(b, c.L)), sp.bits)
	recon := latticeRecon(b, nil, len(x), c.L)
	if draft >= 0 && recon[draft] == 0 {
		return Encoded{}, fmt.Errorf("%w: draft token %d has reconstructed probability 0; sample the draft from Recon", ErrInput, draft)
	}
	return Encoded{Payload: w.Bytes(), Bits: w.Len(), Recon: recon, Support: len(x)}, nil
}

// Decode reads the lattice index and returns b/ℓ.
func (c Lattice) Decode(payload []byte, vocab int) ([]float64, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := checkVocab(vocab); err != nil {
		return nil, err
	}
	sp, err := compositionSpace(c.L, vocab)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrParam, err)
	}
	if err := checkLen(payload, sp.bits); err != nil {
		return nil, err
	}
	r := NewBitReader(payload)
	b, err := readComposition(r, sp, vocab)
	if err != nil {
		return nil, err
	}
	if err := finishPayload(r); err != nil {
		return nil, err
	}
	return latticeRecon(b, nil, vocab, c.L), nil
}

// readComposition reads a composition index of sp's width and unranks it
// into k parts.
func readComposition(r *BitReader, sp *subsetSpace, k int) ([]int32, error) {
	idx, err := r.ReadBig(sp.bits)
	if err != nil {
		return nil, err
	}
	c, err := sp.unrank(idx)
	if err != nil {
		return nil, fmt.Errorf("lattice index: %w", err)
	}
	return subsetToComposition(c, k), nil
}

// latticeRecon returns the dense distribution with b_j/ℓ at support[j]
// (or at j when support is nil).
func latticeRecon(b []int32, support []int, v, l int) []float64 {
	out := make([]float64, v)
	lf := float64(l)
	for j, bj := range b {
		if bj == 0 {
			continue
		}
		id := j
		if support != nil {
			id = support[j]
		}
		out[id] = float64(bj) / lf
	}
	return out
}
