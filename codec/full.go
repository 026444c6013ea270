package codec

import (
	"fmt"
)

// Full sends the whole distribution: every one of the V probabilities at
// ProbBits bits (U-HLM: B = |V|·b_prob), optionally each with its token id
// (CU-HLM eq. 4: B = |V|(b_prob + b_index), b_index = ⌈log2 V⌉).
//
// Layout, MSB-first, no header (V is agreed at session open):
//
//	IndexBits false:  V × value[ProbBits]                 in token-id order
//	IndexBits true:   V × (id[⌈log2 V⌉] value[ProbBits])  in rank order
//
// Rank order for the pairs is descending transmitted value (descending
// code), ties by ascending id; the decoder checks that the ids are a
// permutation of 0..V-1. Bits = V·ProbBits, or V·(⌈log2 V⌉ + ProbBits);
// at V = 32,000, 8-bit values with ids: 32,000 × 23 = 736,000 bits =
// 92,000 bytes, the "92 kB" of CU-HLM Sec. I.
//
// Recon is the decoded values divided by their sum, computed by the same
// function on both sides (Encode decodes its own payload).
type Full struct {
	ProbBits  int  // 32, 16 or 8; see ProbEncode for the formats
	IndexBits bool // send (id, value) pairs in rank order, as the paper counts
}

// Validate reports impossible parameters.
func (c Full) Validate() error { return checkProbBits(c.ProbBits) }

// Name returns e.g. "full-8" or "full-8-idx".
func (c Full) Name() string {
	if c.IndexBits {
		return fmt.Sprintf("full-%d-idx", c.ProbBits)
	}
	return fmt.Sprintf("full-%d", c.ProbBits)
}

// Bits returns the payload size in bits for vocabulary v.
func (c Full) Bits(v int) int {
	if c.IndexBits {
		return v * (IndexBits(v) + c.ProbBits)
	}
	return v * c.ProbBits
}

// Encode quantizes every probability. draft is only range-checked: every
// token is carried anyway. Recon is what Decode rebuilds from the payload:
// the decoded values divided by their sum.
func (c Full) Encode(x []float64, draft int) (Encoded, error) {
	if err := c.Validate(); err != nil {
		return Encoded{}, err
	}
	if _, err := checkDist(x, draft); err != nil {
		return Encoded{}, err
	}
	v := len(x)
	nbits := c.Bits(v)
	var w BitWriter
	w.buf = make([]byte, 0, (nbits+7)/8)
	recon := make([]float64, v)
	var err error
	switch {
	case c.IndexBits:
		codes := make([]uint32, v)
		for i, p := range x {
			codes[i] = probEncode(p, c.ProbBits)
			if recon[i], err = probDecode(codes[i], c.ProbBits); err != nil {
				return Encoded{}, err
			}
		}
		ib := IndexBits(v)
		for _, id := range codeOrder(codes, c.ProbBits) {
			if ib+c.ProbBits <= 56 {
				w.WriteBits(uint64(id)<<uint(c.ProbBits)|uint64(codes[id]), ib+c.ProbBits)
			} else {
				w.WriteBits(uint64(id), ib)
				w.WriteBits(uint64(codes[id]), c.ProbBits)
			}
		}
	case c.ProbBits == 8:
		for i, p := range x {
			b := encodeE5M3(p)
			w.buf = append(w.buf, b)
			recon[i] = e5m3Table[b]
		}
	default:
		for i, p := range x {
			code := probEncode(p, c.ProbBits)
			w.WriteBits(uint64(code), c.ProbBits)
			if recon[i], err = probDecode(code, c.ProbBits); err != nil {
				return Encoded{}, err
			}
		}
	}
	if err := normalize(recon); err != nil {
		return Encoded{}, err
	}
	return Encoded{Payload: w.Bytes(), Bits: w.Len(), Recon: recon, Support: v}, nil
}

// Decode rebuilds the distribution from a payload for vocabulary vocab.
func (c Full) Decode(payload []byte, vocab int) ([]float64, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := checkVocab(vocab); err != nil {
		return nil, err
	}
	if err := checkLen(payload, c.Bits(vocab)); err != nil {
		return nil, err
	}
	return c.decode(payload, vocab)
}

// decode parses a payload of the right length: it fills the output with the
// decoded values, then divides by their sum.
func (c Full) decode(payload []byte, vocab int) ([]float64, error) {
	out := make([]float64, vocab)
	r := NewBitReader(payload)
	switch {
	case c.IndexBits:
		ib, pb := IndexBits(vocab), c.ProbBits
		seen := make([]bool, vocab)
		for n := 0; n < vocab; n++ {
			var id, code uint64
			var err error
			if ib+pb <= 56 {
				var pair uint64
				pair, err = r.ReadBits(ib + pb)
				id, code = pair>>uint(pb), pair&(1<<uint(pb)-1)
			} else if id, err = r.ReadBits(ib); err == nil {
				code, err = r.ReadBits(pb)
			}
			if err != nil {
				return nil, err
			}
			if id >= uint64(vocab) || seen[id] {
				return nil, fmt.Errorf("%w: pair %d: token id %d out of range or repeated", ErrFormat, n, id)
			}
			seen[id] = true
			if out[id], err = probDecode(uint32(code), pb); err != nil {
				return nil, fmt.Errorf("token %d: %w", id, err)
			}
		}
	case c.ProbBits == 8:
		for i, b := range payload {
			out[i] = e5m3Table[b]
		}
		r.pos = 8 * len(payload)
	default:
		for i := range out {
			code, err := r.ReadBits(c.ProbBits)
			if err != nil {
				return nil, err
			}
			if out[i], err = probDecode(uint32(code), c.ProbBits); err != nil {
				return nil, fmt.Errorf("token %d: %w", i, err)
			}
		}
	}
	if err := finishPayload(r); err != nil {
		return nil, err
	}
	if err := normalize(out); err != nil {
		return nil, err
	}
	return out, nil
}

// codeOrder returns token ids by descending code, ties by ascending id: a
// stable LSD counting sort over 8-bit digits of the code (1, 2 or 4
// passes), exact because codes are monotone in value.
func codeOrder(codes []uint32, probBits int) []int32 {
	n := len(codes)
	a := make([]int32, n)
	b := make([]int32, n)
	for i := range a {
		a[i] = int32(i)
	}
	for shift := 0; shift < probBits; shift += 8 {
		var cnt [257]int32
		for _, id := range a {
			d := 255 - (codes[id]>>uint(shift))&0xFF
			cnt[d+1]++
		}
		for d := 1; d < 257; d++ {
			cnt[d] += cnt[d-1]
		}
		for _, id := range a {
			d := 255 - (codes[id]>>uint(shift))&0xFF
			b[cnt[d]] = id
			cnt[d]++
		}
		a, b = b, a
	}
	return a
}
