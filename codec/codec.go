package codec

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// Errors returned by this package. They are wrapped with %w and a message
// that names what is wrong; test them with errors.Is.
var (
	// ErrParam reports an impossible parameter: a codec configuration that
	// fails Validate, a vocabulary size outside [1, MaxVocab], a k or K that
	// does not fit the vocabulary.
	ErrParam = errors.New("codec: invalid parameter")
	// ErrInput reports a distribution that is not one: wrong length, NaN,
	// infinite or negative entries, a sum far from 1, or a draft token id
	// outside the vocabulary.
	ErrInput = errors.New("codec: invalid input distribution")
	// ErrFormat reports a payload that does not decode: truncated, padded,
	// an index out of range, a duplicated token, a forbidden value code.
	ErrFormat = errors.New("codec: malformed payload")
	// ErrLimit reports that a size limit of this package (MaxVocab,
	// MaxRankWork) would be exceeded. It accompanies ErrParam or ErrFormat.
	ErrLimit = errors.New("codec: size limit exceeded")
	// ErrInfeasible reports that no k up to the given maximum meets a
	// tolerance (OfflineK).
	ErrInfeasible = errors.New("codec: tolerance not reachable")
)

// MaxVocab is the largest vocabulary a codec accepts, in Encode and in
// Decode. It bounds what a hostile payload can make a decoder allocate
// (a dense reconstruction of MaxVocab float64 values is 32 MiB).
const MaxVocab = 1 << 22

// SumTolerance is how far from 1 the sum of an input distribution may be.
// Codecs renormalize or reconstruct on their own; the check only rejects
// vectors that are not distributions at all.
const SumTolerance = 1e-3

// Encoded is one draft distribution as it crosses the uplink.
type Encoded struct {
	Payload []byte    // exactly the bytes sent
	Bits    int       // information bits; len(Payload) == (Bits+7)/8 always
	Recon   []float64 // the distribution the server reconstructs: bit-identical to Decode(Payload)
	Support int       // number of probability entries carried (k, K or V), for reporting
	// Dropped is, for the sparse lattice codecs (K-SQS, C-SQS), the mass
	// of x outside the support, α_n of SQS eq. 4 (0 for the others).
	Dropped float64
}

// Codec compresses a draft distribution for the uplink.
type Codec interface {
	Name() string
	// Encode compresses x. draft is the draft token when the device has
	// already sampled it (top-k must then carry the draft's index and
	// probability), or -1 when the device will sample the draft from Recon
	// afterwards (quantize-then-sample).
	Encode(x []float64, draft int) (Encoded, error)
	// Decode rebuilds the server-side distribution. vocab is agreed at
	// session open; a hostile payload returns an error.
	Decode(payload []byte, vocab int) ([]float64, error)
}

// A Chained codec's first payload of an upload carries settings that the
// upload's later payloads share and do not repeat (VarLattice's ℓ, chosen
// per round). The device encodes the first draft with the codec itself and
// the later ones with Rest; the server decodes the first with the codec
// itself and the later ones with RestOf(first payload).
type Chained interface {
	Codec
	Rest() Codec
	RestOf(first []byte) (Codec, error)
}

var (
	_ Codec = Full{}
	_ Codec = TopK{}
	_ Codec = Lattice{}
	_ Codec = KSQS{}
	_ Codec = (*CSQS)(nil)
)

// IndexBits is ⌈log2 V⌉, the bits of one token id in a vocabulary of V
// tokens (CU-HLM eq. 4, b_index). IndexBits(1) = 0.
func IndexBits(v int) int {
	if v <= 1 {
		return 0
	}
	return bits.Len(uint(v - 1))
}

// checkVocab rejects vocabulary sizes outside [1, MaxVocab].
func checkVocab(v int) error {
	if v < 1 {
		return fmt.Errorf("%w: vocabulary size %d < 1", ErrParam, v)
	}
	if v > MaxVocab {
		return fmt.Errorf("%w: %w: vocabulary size %d > MaxVocab %d", ErrParam, ErrLimit, v, MaxVocab)
	}
	return nil
}

// checkDist validates a draft distribution and a draft token id
// (-1 or in [0, len(x))) and returns Σx.
func checkDist(x []float64, draft int) (float64, error) {
	if len(x) < 1 || len(x) > MaxVocab {
		return 0, fmt.Errorf("%w: length %d outside [1, %d]", ErrInput, len(x), MaxVocab)
	}
	for i, v := range x {
		if !(v >= 0 && v <= math.MaxFloat64) {
			return 0, fmt.Errorf("%w: x[%d] = %v is not a finite non-negative number", ErrInput, i, v)
		}
	}
	sum := sum4(x)
	if math.Abs(sum-1) > SumTolerance {
		return 0, fmt.Errorf("%w: entries sum to %v, not 1 (tolerance %v)", ErrInput, sum, SumTolerance)
	}
	if draft < -1 || draft >= len(x) {
		return 0, fmt.Errorf("%w: draft token %d outside [-1, %d)", ErrInput, draft, len(x))
	}
	return sum, nil
}

// finishPayload checks that a reader consumed a payload exactly: no bits
// left beyond the padding of the last byte, and padding bits zero. Every
// decoder calls it.
func finishPayload(r *BitReader) error {
	if rem := r.Remaining(); rem >= 8 {
		return fmt.Errorf("%w: %d trailing bits after the message", ErrFormat, rem)
	}
	if rem := r.Remaining(); rem > 0 {
		pad, err := r.ReadBits(rem)
		if err != nil {
			return err
		}
		if pad != 0 {
			return fmt.Errorf("%w: non-zero padding bits", ErrFormat)
		}
	}
	return nil
}

// checkLen rejects a payload whose length is not (bits+7)/8 bytes before
// anything is decoded or allocated.
func checkLen(payload []byte, nbits int) error {
	if want := (nbits + 7) / 8; len(payload) != want {
		return fmt.Errorf("%w: payload is %d bytes, want %d (%d bits)", ErrFormat, len(payload), want, nbits)
	}
	return nil
}

// sum4 returns Σx with four interleaved partial sums: a fixed summation
// order (device and server agree on it) that does not wait on one long
// chain of dependent additions.
func sum4(x []float64) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i]
		s1 += x[i+1]
		s2 += x[i+2]
		s3 += x[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// normalize divides x by its sum (multiplying by the reciprocal) and fails
// if the sum is not positive.
func normalize(x []float64) error {
	s := sum4(x)
	if !(s > 0) {
		return fmt.Errorf("%w: all probabilities are zero", ErrFormat)
	}
	inv := 1 / s
	for i := range x {
		x[i] *= inv
	}
	return nil
}
