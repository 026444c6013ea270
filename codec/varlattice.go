package codec

import (
	"fmt"
	"math/bits"
)

// VarLattice is the Lattice codec with a resolution chosen per round (the
// adaptive quantization of Q-S Sec. IV, where a policy picks ℓ^t each
// round): the first payload of an upload starts with ℓ−1 in ⌈log2 MaxL⌉
// bits, then the lattice index of Lattice{L: ℓ}; the upload's later
// payloads are plain Lattice{L: ℓ} indices (Chained: Rest, RestOf), so a
// round pays for ℓ once, as Q-S eq. 7 counts no ℓ per draft. Encode uses
// L; Decode reads ℓ from the payload and ignores L.
type VarLattice struct {
	L int // resolution used by Encode, 1..MaxL
}

// varLatticeHeader is the width of the ℓ field.
var varLatticeHeader = bits.Len(uint(MaxL - 1))

// Validate reports an impossible resolution.
func (c VarLattice) Validate() error { return Lattice{L: c.L}.Validate() }

// Name returns e.g. "varlattice-100".
func (c VarLattice) Name() string { return fmt.Sprintf("varlattice-%d", c.L) }

// Encode quantizes x at resolution L.
func (c VarLattice) Encode(x []float64, draft int) (Encoded, error) {
	enc, err := Lattice{L: c.L}.Encode(x, draft)
	if err != nil {
		return Encoded{}, err
	}
	var w BitWriter
	w.WriteBits(uint64(c.L-1), varLatticeHeader)
	r := NewBitReader(enc.Payload)
	for left := enc.Bits; left > 0; {
		n := min(left, 64)
		v, err := r.ReadBits(n)
		if err != nil {
			return Encoded{}, err
		}
		w.WriteBits(v, n)
		left -= n
	}
	enc.Payload, enc.Bits = w.Bytes(), w.Len()
	return enc, nil
}

// Decode reads ℓ and the lattice index.
func (c VarLattice) Decode(payload []byte, vocab int) ([]float64, error) {
	r := NewBitReader(payload)
	l1, err := r.ReadBits(varLatticeHeader)
	if err != nil {
		return nil, err
	}
	lat := Lattice{L: int(l1) + 1}
	if err := lat.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	bitsLeft, err := lat.Bits(vocab)
	if err != nil {
		return nil, err
	}
	if err := checkLen(payload, varLatticeHeader+bitsLeft); err != nil {
		return nil, err
	}
	var w BitWriter
	for left := bitsLeft; left > 0; {
		n := min(left, 64)
		v, err := r.ReadBits(n)
		if err != nil {
			return nil, err
		}
		w.WriteBits(v, n)
		left -= n
	}
	if err := finishPayload(r); err != nil {
		return nil, err
	}
	return lat.Decode(w.Bytes(), vocab)
}

var _ Chained = VarLattice{}

// Rest is the codec of an upload's payloads after the first: the lattice
// at the resolution the first one names.
func (c VarLattice) Rest() Codec { return Lattice{L: c.L} }

// RestOf is the codec that decodes the payloads after first: the lattice
// at the resolution first names. A hostile first payload returns an error.
func (c VarLattice) RestOf(first []byte) (Codec, error) {
	l1, err := NewBitReader(first).ReadBits(varLatticeHeader)
	if err != nil {
		return nil, fmt.Errorf("%w: no resolution: %v", ErrFormat, err)
	}
	lat := Lattice{L: int(l1) + 1}
	if err := lat.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	return lat, nil
}

// AtResolution is the codec encoding at resolution ell, for a policy
// that chooses ℓ per round (Q-S Sec. IV-B); the decoder reads ℓ from the
// payload and needs no other word of it.
func (c VarLattice) AtResolution(ell int) (Codec, error) {
	n := VarLattice{L: ell}
	return n, n.Validate()
}
