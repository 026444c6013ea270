package codec

import (
	"fmt"
	"slices"
)

// Sparse lattice codecs of SQS: the support X (a K-subset of the
// vocabulary) is sent as its subset index, and the K kept probabilities,
// renormalized (SQS eq. 17) and lattice-quantized at resolution ℓ, as their
// composition index. Parts of the composition follow ascending token id.
// Each index is rounded up to whole bits on its own:
//
//	b = ⌈log2 C(V, K)⌉ + ⌈log2 C(ℓ+K−1, K−1)⌉   (SQS eq. 1, 2, 5)
//
// which is at most one bit more than a joint index of both.

// KSQS is top-K sparse quantize-and-sample (SQS Sec. 2, Algorithm 2): the
// support is the K most probable tokens (rank order).
//
// Layout: subset index [⌈log2 C(V,K)⌉] · composition index
// [⌈log2 C(ℓ+K−1,K−1)⌉]. No header: K and ℓ are agreed at session open
// (K > V means K = V). Recon is b_j/ℓ on the support, 0 elsewhere; the
// device samples the draft from it (draft = −1), and a draft passed in must
// have Recon > 0.
type KSQS struct {
	K int // support size, >= 1
	L int // lattice resolution ℓ, 1..MaxL
}

// Validate reports impossible parameters.
func (c KSQS) Validate() error {
	if c.K < 1 || c.K > MaxVocab {
		return fmt.Errorf("%w: K-SQS support size %d outside [1, %d]", ErrParam, c.K, MaxVocab)
	}
	return Lattice{L: c.L}.Validate()
}

// Name returns e.g. "ksqs-64-100".
func (c KSQS) Name() string { return fmt.Sprintf("ksqs-%d-%d", c.K, c.L) }

// Bits returns the payload size for vocabulary v.
func (c KSQS) Bits(v int) (int, error) {
	if err := c.Validate(); err != nil {
		return 0, err
	}
	if err := checkVocab(v); err != nil {
		return 0, err
	}
	ss, cs, err := sparseSpaces(v, min(c.K, v), c.L)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrParam, err)
	}
	return ss.bits + cs.bits, nil
}

// BudgetBits is the payload size Encode will spend on x: fixed by K and
// the vocabulary (SQS Sec. 4's b_n).
func (c KSQS) BudgetBits(x []float64) (int, error) { return c.Bits(len(x)) }

// Encode sends the top-K support and its quantized renormalized mass.
func (c KSQS) Encode(x []float64, draft int) (Encoded, error) {
	if err := c.Validate(); err != nil {
		return Encoded{}, err
	}
	if _, err := checkDist(x, draft); err != nil {
		return Encoded{}, err
	}
	top := topK(x, min(c.K, len(x)))
	support := make([]int, len(top))
	for i, id := range top {
		support[i] = int(id)
	}
	slices.Sort(support)
	var w BitWriter
	recon, err := writeSparse(&w, x, support, c.L)
	if err != nil {
		return Encoded{}, err
	}
	if draft >= 0 && recon[draft] == 0 {
		return Encoded{}, fmt.Errorf("%w: draft token %d has reconstructed probability 0; sample the draft from Recon", ErrInput, draft)
	}
	var dropped float64
	for i, v := range x {
		if _, in := slices.BinarySearch(support, i); !in {
			dropped += v
		}
	}
	return Encoded{Payload: w.Bytes(), Bits: w.Len(), Recon: recon, Support: len(support), Dropped: dropped}, nil
}

// Decode reads the support and the lattice point.
func (c KSQS) Decode(payload []byte, vocab int) ([]float64, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := checkVocab(vocab); err != nil {
		return nil, err
	}
	k := min(c.K, vocab)
	ss, cs, err := sparseSpaces(vocab, k, c.L)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrParam, err)
	}
	if err := checkLen(payload, ss.bits+cs.bits); err != nil {
		return nil, err
	}
	r := NewBitReader(payload)
	recon, err := readSparse(r, ss, cs, vocab, k, c.L)
	if err != nil {
		return nil, err
	}
	if err := finishPayload(r); err != nil {
		return nil, err
	}
	return recon, nil
}

// CSQS is conformal sparse quantize-and-sample (SQS Sec. 3, Algorithm 1):
// the support is X(β) of the embedded Conformal threshold, which Encode
// updates after every token (eq. 8). Call BeginBatch before drafting a
// batch and EndBatch(T) when the server reports T accepted.
//
// Layout: K−1 [⌈log2 V⌉] · subset index [⌈log2 C(V,K)⌉] · composition
// index [⌈log2 C(ℓ+K−1,K−1)⌉], K = |X(β)| in [1, V] (the K field is the
// overhead of SQS Sec. 3, "Communication Overhead"). Decode is stateless
// and may run concurrently; Encode mutates the threshold.
type CSQS struct {
	L int // lattice resolution ℓ, 1..MaxL
	Conformal
}

// NewCSQS returns a C-SQS codec with SQS Sec. 4's settings (ℓ = 100,
// η = 0.001, α = 0.0005) and β_1 = 0, so that its first message carries
// every token of positive probability. hlm's c-sqs method starts instead
// from its conf_beta key (hybrid.DefaultParams; hybrid.Codec builds that
// codec), so numbers from this codec alone differ from a run's.
func NewCSQS() *CSQS {
	return &CSQS{L: DefaultL, Conformal: *DefaultConformal()}
}

// Validate reports impossible parameters.
func (c *CSQS) Validate() error {
	if err := (Lattice{L: c.L}).Validate(); err != nil {
		return err
	}
	return c.Conformal.Validate()
}

// Name returns e.g. "csqs-100".
func (c *CSQS) Name() string { return fmt.Sprintf("csqs-%d", c.L) }

// Bits returns the payload size for a support of k tokens out of v.
func (c *CSQS) Bits(v, k int) (int, error) {
	if err := checkVocab(v); err != nil {
		return 0, err
	}
	if k < 1 || k > v {
		return 0, fmt.Errorf("%w: support size %d outside [1, %d]", ErrParam, k, v)
	}
	ss, cs, err := sparseSpaces(v, k, c.L)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrParam, err)
	}
	return IndexBits(v) + ss.bits + cs.bits, nil
}

// BudgetBits is the payload size Encode will spend on x, known before
// encoding so that a batch can be filled to a bit budget (SQS Sec. 4): the
// support X(β) at the current threshold decides it.
func (c *CSQS) BudgetBits(x []float64) (int, error) {
	support, _ := c.Conformal.Support(x)
	return c.Bits(len(x), len(support))
}

// Threshold is the current threshold β.
func (c *CSQS) Threshold() float64 { return c.Beta }

// Encode sends X(β) and its quantized renormalized mass, then applies the
// threshold update of eq. 8 with the dropped mass of this token.
func (c *CSQS) Encode(x []float64, draft int) (Encoded, error) {
	if err := c.Validate(); err != nil {
		return Encoded{}, err
	}
	if _, err := checkDist(x, draft); err != nil {
		return Encoded{}, err
	}
	support, dropped := c.Conformal.Support(x)
	var w BitWriter
	w.WriteBits(uint64(len(support)-1), IndexBits(len(x)))
	recon, err := writeSparse(&w, x, support, c.L)
	if err != nil {
		return Encoded{}, err
	}
	if draft >= 0 && recon[draft] == 0 {
		return Encoded{}, fmt.Errorf("%w: draft token %d has reconstructed probability 0; sample the draft from Recon", ErrInput, draft)
	}
	c.Observe(dropped)
	return Encoded{Payload: w.Bytes(), Bits: w.Len(), Recon: recon, Support: len(support), Dropped: dropped}, nil
}

// Decode reads K, the support and the lattice point.
func (c *CSQS) Decode(payload []byte, vocab int) ([]float64, error) {
	if err := (Lattice{L: c.L}).Validate(); err != nil {
		return nil, err
	}
	if err := checkVocab(vocab); err != nil {
		return nil, err
	}
	r := NewBitReader(payload)
	km1, err := r.ReadBits(IndexBits(vocab))
	if err != nil {
		return nil, err
	}
	if km1 >= uint64(vocab) {
		return nil, fmt.Errorf("%w: support size %d > vocabulary %d", ErrFormat, km1+1, vocab)
	}
	k := int(km1) + 1
	ss, cs, err := sparseSpaces(vocab, k, c.L)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	if err := checkLen(payload, IndexBits(vocab)+ss.bits+cs.bits); err != nil {
		return nil, err
	}
	recon, err := readSparse(r, ss, cs, vocab, k, c.L)
	if err != nil {
		return nil, err
	}
	if err := finishPayload(r); err != nil {
		return nil, err
	}
	return recon, nil
}

// sparseSpaces returns the index spaces of K-subsets of V and of
// compositions of ℓ into K parts.
func sparseSpaces(v, k, l int) (subsets, comps *subsetSpace, err error) {
	if subsets, err = newSubsetSpace(v, k); err != nil {
		return nil, nil, err
	}
	if comps, err = compositionSpace(l, k); err != nil {
		return nil, nil, err
	}
	return subsets, comps, nil
}

// writeSparse renormalizes x over support (ascending ids), quantizes it,
// writes both indices and returns the dense reconstruction.
func writeSparse(w *BitWriter, x []float64, support []int, l int) ([]float64, error) {
	ss, cs, err := sparseSpaces(len(x), len(support), l)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrParam, err)
	}
	q := make([]float64, len(support))
	kept := 0.0
	for j, id := range support {
		q[j] = x[id]
		kept += x[id]
	}
	if !(kept > 0) {
		return nil, fmt.Errorf("%w: the support carries no probability", ErrInput)
	}
	for j := range q {
		q[j] /= kept
	}
	b := quantize(q, l)
	w.WriteBig(ss.rank(support), ss.bits)
	w.WriteBig(cs.rank(compositionToSubset(b, l)), cs.bits)
	return latticeRecon(b, support, len(x), l), nil
}

// readSparse reads a subset index and a composition index.
func readSparse(r *BitReader, ss, cs *subsetSpace, v, k, l int) ([]float64, error) {
	idx, err := r.ReadBig(ss.bits)
	if err != nil {
		return nil, err
	}
	support, err := ss.unrank(idx)
	if err != nil {
		return nil, fmt.Errorf("subset index: %w", err)
	}
	b, err := readComposition(r, cs, k)
	if err != nil {
		return nil, err
	}
	return latticeRecon(b, support, v, l), nil
}
