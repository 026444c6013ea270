package codec

import (
	"fmt"
	"math"
	"slices"
)

// TopK sends the k most probable tokens with their probabilities (CU-HLM
// Sec. IV-B, eq. 15), plus the draft token's entry when the draft is not
// among them (the draft's entry is always sent, Sec. IV-B). k is fixed
// (K > 0), or chosen per message (K == 0): online by eq. 24 in Encode and
// EncodeWithBeta, or by the caller in EncodeK (e.g. OfflineK's k*).
//
// An entry is id [⌈log2 V⌉] · value [ProbBits] (formats as in ProbEncode).
// Entries are the top k in rank order, then the draft if appended. Layout:
//
//	fixed k  (K > 0):   appended [1] · n entries, n = min(K, V) + appended
//	per-message k (K == 0): n−1 [⌈log2 V⌉] · n entries, n in [1, V]
//
// so Bits = 1 + n(⌈log2 V⌉ + ProbBits) or ⌈log2 V⌉ + n(⌈log2 V⌉ + ProbBits).
// Beyond the paper's k(b_prob + b_index), the only overhead is that header
// (1 bit, or ⌈log2 V⌉ bits when k varies) and the draft's entry when it is
// appended.
//
// Reconstruction (eq. 15): the sent values are kept and the residual
// 1 − Σsent is spread uniformly over the V − n tokens not sent. If
// quantization pushed Σsent to 1 or more, or all V tokens were sent, the
// residual is clamped at 0 and the sent values are renormalized to sum 1.
type TopK struct {
	K        int     // entries per message; 0 = chosen per message (Encode: with the conservative β = 1; EncodeWithBeta: CU-HLM's online k)
	ProbBits int     // 32, 16 or 8
	Theta    float64 // tolerance θ on Ū_TV for the online k (eq. 24), used when K == 0
	Eta      float64 // softplus temperature η of ℓ (eq. 22); 0 means DefaultEta
}

// Validate reports impossible parameters.
func (c TopK) Validate() error {
	if err := checkProbBits(c.ProbBits); err != nil {
		return err
	}
	if c.K < 0 || c.K > MaxVocab {
		return fmt.Errorf("%w: top-k K = %d outside [0, %d]", ErrParam, c.K, MaxVocab)
	}
	if !(c.Theta >= 0) || math.IsInf(c.Theta, 1) {
		return fmt.Errorf("%w: top-k theta %v, want finite >= 0", ErrParam, c.Theta)
	}
	if !(c.Eta >= 0) || math.IsInf(c.Eta, 1) {
		return fmt.Errorf("%w: top-k eta %v, want finite >= 0", ErrParam, c.Eta)
	}
	return nil
}

func (c TopK) eta() float64 {
	if c.Eta == 0 {
		return DefaultEta
	}
	return c.Eta
}

// Name returns e.g. "topk-30-8" or "topk-online-8".
func (c TopK) Name() string {
	if c.K == 0 {
		return fmt.Sprintf("topk-online-%d", c.ProbBits)
	}
	return fmt.Sprintf("topk-%d-%d", c.K, c.ProbBits)
}

// Bits returns the payload size of a message with n entries for vocabulary v.
func (c TopK) Bits(v, n int) int {
	head := 1
	if c.K == 0 {
		head = IndexBits(v)
	}
	return head + n*(IndexBits(v)+c.ProbBits)
}

// Encode sends the top min(K, V) tokens, or with K == 0 the online k of
// eq. 24 at the conservative β = 1 (the largest k for θ; use
// EncodeWithBeta to pass the predicted rejection probability).
func (c TopK) Encode(x []float64, draft int) (Encoded, error) {
	if c.K == 0 {
		return c.EncodeWithBeta(x, draft, 1)
	}
	if err := c.Validate(); err != nil {
		return Encoded{}, err
	}
	if _, err := checkDist(x, draft); err != nil {
		return Encoded{}, err
	}
	return c.encode(x, draft, topK(x, min(c.K, len(x))))
}

// EncodeWithBeta chooses k online (eq. 24: the smallest k with
// Ū_TV(k) <= Theta) for the predicted rejection probability beta of the
// draft (a·u + b, clipped to [0, 1]) and sends it. It needs K == 0.
func (c TopK) EncodeWithBeta(x []float64, draft int, beta float64) (Encoded, error) {
	if err := c.Validate(); err != nil {
		return Encoded{}, err
	}
	if c.K != 0 {
		return Encoded{}, fmt.Errorf("%w: online k needs TopK.K == 0, have %d", ErrParam, c.K)
	}
	k, order, err := onlineK(x, draft, beta, c.eta(), c.Theta)
	if err != nil {
		return Encoded{}, err
	}
	return c.encode(x, draft, order[:k])
}

// EncodePredicted encodes with the draft's predicted rejection
// probability beta where the codec uses it (K == 0: the online k of
// eq. 24), and as Encode does otherwise (a fixed K).
func (c TopK) EncodePredicted(x []float64, draft int, beta float64) (Encoded, error) {
	if c.K == 0 {
		return c.EncodeWithBeta(x, draft, beta)
	}
	return c.Encode(x, draft)
}

// EncodeK sends the top k tokens with a per-message k (K == 0), k in [1, V].
func (c TopK) EncodeK(x []float64, draft, k int) (Encoded, error) {
	if err := c.Validate(); err != nil {
		return Encoded{}, err
	}
	if c.K != 0 {
		return Encoded{}, fmt.Errorf("%w: EncodeK needs TopK.K == 0, have %d", ErrParam, c.K)
	}
	if _, err := checkDist(x, draft); err != nil {
		return Encoded{}, err
	}
	if k < 1 || k > len(x) {
		return Encoded{}, fmt.Errorf("%w: k = %d outside [1, %d]", ErrParam, k, len(x))
	}
	return c.encode(x, draft, topK(x, k))
}

// encode writes the message for the given top ids (rank order).
func (c TopK) encode(x []float64, draft int, top []int32) (Encoded, error) {
	v := len(x)
	ids := top
	appended := draft >= 0 && !slices.Contains(top, int32(draft))
	if appended {
		ids = append(slices.Clip(top), int32(draft))
	}
	n := len(ids)
	ib := IndexBits(v)
	var w BitWriter
	w.buf = make([]byte, 0, (c.Bits(v, n)+7)/8)
	if c.K == 0 {
		w.WriteBits(uint64(n-1), ib)
	} else if appended {
		w.WriteBits(1, 1)
	} else {
		w.WriteBits(0, 1)
	}
	codes := make([]uint32, n)
	for j, id := range ids {
		codes[j] = probEncode(x[id], c.ProbBits)
		w.WriteBits(uint64(id), ib)
		w.WriteBits(uint64(codes[j]), c.ProbBits)
	}
	recon, err := topKRecon(v, ids, codes, c.ProbBits)
	if err != nil {
		return Encoded{}, err
	}
	return Encoded{Payload: w.Bytes(), Bits: w.Len(), Recon: recon, Support: n}, nil
}

// Decode reads the entries and reconstructs by eq. 15.
func (c TopK) Decode(payload []byte, vocab int) ([]float64, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := checkVocab(vocab); err != nil {
		return nil, err
	}
	ib := IndexBits(vocab)
	r := NewBitReader(payload)
	var n int
	if c.K == 0 {
		nm1, err := r.ReadBits(ib)
		if err != nil {
			return nil, err
		}
		if nm1 >= uint64(vocab) {
			return nil, fmt.Errorf("%w: %d entries for vocabulary %d", ErrFormat, nm1+1, vocab)
		}
		n = int(nm1) + 1
	} else {
		flag, err := r.ReadBits(1)
		if err != nil {
			return nil, err
		}
		n = min(c.K, vocab) + int(flag)
		if n > vocab {
			return nil, fmt.Errorf("%w: draft appended to all %d tokens", ErrFormat, vocab)
		}
	}
	if err := checkLen(payload, c.Bits(vocab, n)); err != nil {
		return nil, err
	}
	ids := make([]int32, n)
	codes := make([]uint32, n)
	for j := range ids {
		id, err := r.ReadBits(ib)
		if err != nil {
			return nil, err
		}
		if id >= uint64(vocab) {
			return nil, fmt.Errorf("%w: entry %d: token id %d >= vocabulary %d", ErrFormat, j, id, vocab)
		}
		code, err := r.ReadBits(c.ProbBits)
		if err != nil {
			return nil, err
		}
		ids[j], codes[j] = int32(id), uint32(code)
	}
	if err := finishPayload(r); err != nil {
		return nil, err
	}
	sortedIDs := slices.Clone(ids)
	slices.Sort(sortedIDs)
	for j := 1; j < n; j++ {
		if sortedIDs[j] == sortedIDs[j-1] {
			return nil, fmt.Errorf("%w: token %d sent twice", ErrFormat, sortedIDs[j])
		}
	}
	return topKRecon(vocab, ids, codes, c.ProbBits)
}

// topKRecon is eq. 15 over quantized values (shared by Encode and Decode).
func topKRecon(v int, ids []int32, codes []uint32, probBits int) ([]float64, error) {
	vals := make([]float64, len(ids))
	sum := 0.0
	for j, code := range codes {
		p, err := probDecode(code, probBits)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", j, err)
		}
		vals[j] = p
		sum += p
	}
	out := make([]float64, v)
	rest := v - len(ids)
	if sum >= 1 || rest == 0 {
		if !(sum > 0) {
			return nil, fmt.Errorf("%w: all %d sent probabilities are zero", ErrFormat, len(ids))
		}
		for j, id := range ids {
			out[id] = vals[j] / sum
		}
		return out, nil
	}
	fill := (1 - sum) / float64(rest)
	for i := range out {
		out[i] = fill
	}
	for j, id := range ids {
		out[id] = vals[j]
	}
	return out, nil
}
