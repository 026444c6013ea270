package codec

import (
	"fmt"
	"math"
)

// A probability value on the wire is one of three formats, chosen by
// ProbBits. All three are unsigned in practice (probabilities are >= 0), and
// for all three the code, read as an unsigned integer, is monotone in the
// value, so ordering codes orders values.
//
//   - 32: IEEE 754 binary32 (float32), sign bit always 0.
//   - 16: IEEE 754 binary16: 1 sign bit (always 0), 5 exponent bits
//     (bias 15), 10 mantissa bits, subnormals; exponent 31 (Inf/NaN) is
//     never produced and is rejected by decoders.
//   - 8: "E5M3", an unsigned 8-bit minifloat made for probabilities:
//     5 exponent bits e, 3 mantissa bits m, bias 31, no sign, no Inf/NaN.
//     e = 0 is subnormal: m·2^-33; e >= 1 is (1 + m/8)·2^(e-31). The range
//     is 2^-33 ≈ 1.16e-10 (code 0x01) to 1.875 (code 0xFF); 1.0 is 0xF8.
//     Relative step 1/8 within a binade (half-step error <= 6.25%).
//
// Rounding is to nearest, ties to even, with one deliberate exception:
// a positive value never rounds to zero; values below half the smallest
// subnormal become the smallest subnormal. This keeps the support of a
// distribution: a token the device may have sampled is never reconstructed
// with probability 0 (the server divides by it). Values above the largest
// finite code saturate to it.

// minifloat describes an unsigned binary floating-point format with
// subnormals and no Inf/NaN below maxCode.
type minifloat struct {
	ebits, mbits int
	bias         int
	maxCode      uint32  // largest finite code
	sub          float64 // value of subnormal code 1: 2^(1−bias−mbits)
}

var (
	fmtE5M3 = minifloat{ebits: 5, mbits: 3, bias: 31, maxCode: 0xFF, sub: 0x1p-33}
	fmtF16  = minifloat{ebits: 5, mbits: 10, bias: 15, maxCode: 0x7BFF, sub: 0x1p-24}
)

// encode rounds a finite v >= 0 to the nearest code (ties to even; see the
// support-preserving exception above) by integer rounding of the float64
// significand mant (v = mant·2^(e−52)): q = (mant + half − 1 + lsb) >> shift
// rounds to nearest even, with shift = 52 − mbits for normal results and
// larger for subnormal ones. A normal code is (e+bias)<<mbits + q − 2^mbits,
// so a carry out of q moves into the exponent field by itself; a subnormal
// code is q. Branch-free apart from the v > 0 test (it runs per token).
func (f minifloat) encode(v float64) uint32 {
	if !(v > 0) {
		return 0
	}
	b := math.Float64bits(v)
	e := int(b>>52) - 1023
	mant := b&(1<<52-1) | 1<<52
	ef := max(e+f.bias, 0)                                   // exponent field, 0 if subnormal
	shift := min(52-f.mbits+(1-min(ef, 1))*(1-f.bias-e), 63) // extra shift when subnormal
	lsb := (mant >> uint(shift)) & 1
	q := (mant + (uint64(1)<<uint(shift-1) - 1) + lsb) >> uint(shift)
	code := uint64(ef)<<f.mbits + q - uint64(min(ef, 1))<<f.mbits
	return uint32(min(max(code, 1), uint64(f.maxCode)))
}

// decode returns the value of a code <= maxCode.
func (f minifloat) decode(c uint32) float64 {
	e := int(c >> f.mbits)
	m := uint64(c & (1<<f.mbits - 1))
	if e == 0 {
		return float64(m) * f.sub
	}
	return math.Float64frombits(uint64(e-f.bias+1023)<<52 | m<<(52-f.mbits))
}

// e5m3Table holds the value of every 8-bit code.
var e5m3Table = func() (t [256]float64) {
	for c := range t {
		t[c] = fmtE5M3.decode(uint32(c))
	}
	return t
}()

// e5m3Fast[h] is the E5M3 code of every float64 whose top 16 bits are h
// and whose low 48 bits are not all zero: those bits only act as the sticky
// bit of rounding, for every exponent where the result is not simply the
// smallest subnormal. Values with zero low bits (few mantissa bits, where
// an exact tie is possible) take the arithmetic path.
var e5m3Fast = func() (t [1 << 16]uint8) {
	for h := range t {
		t[h] = uint8(fmtE5M3.encode(math.Float64frombits(uint64(h)<<48 | 1)))
	}
	return t
}()

// encodeE5M3 is fmtE5M3.encode, mostly by table lookup.
func encodeE5M3(v float64) uint8 {
	b := math.Float64bits(v)
	if b&(1<<48-1) == 0 || !(v > 0) {
		return uint8(fmtE5M3.encode(v))
	}
	return e5m3Fast[b>>48]
}

// encodeF32 rounds v >= 0 to binary32 (Go's conversion rounds to nearest
// even) and returns its bits, never 0 for v > 0.
func encodeF32(v float64) uint32 {
	if !(v > 0) {
		return 0
	}
	if v > math.MaxFloat32 {
		return math.Float32bits(math.MaxFloat32)
	}
	c := math.Float32bits(float32(v))
	if c == 0 {
		c = 1
	}
	return c
}

// probEncode returns the code of v in the format of probBits (8, 16, 32).
func probEncode(v float64, probBits int) uint32 {
	switch probBits {
	case 8:
		return uint32(encodeE5M3(v))
	case 16:
		return fmtF16.encode(v)
	default:
		return encodeF32(v)
	}
}

// probDecode returns the value of a code, or an error for codes that are not
// a finite non-negative number (a sign bit, Inf or NaN).
func probDecode(c uint32, probBits int) (float64, error) {
	switch probBits {
	case 8:
		return e5m3Table[c&0xFF], nil
	case 16:
		if c > fmtF16.maxCode {
			return 0, fmt.Errorf("%w: binary16 code %#04x is negative, Inf or NaN", ErrFormat, c)
		}
		return fmtF16.decode(c), nil
	default:
		if c > 0x7F7FFFFF {
			return 0, fmt.Errorf("%w: binary32 code %#08x is negative, Inf or NaN", ErrFormat, c)
		}
		return float64(math.Float32frombits(c)), nil
	}
}

// ProbEncode returns the wire code of probability v >= 0 at probBits bits
// (8, 16 or 32), rounded as described in the package documentation.
func ProbEncode(v float64, probBits int) (uint32, error) {
	if err := checkProbBits(probBits); err != nil {
		return 0, err
	}
	if !(v >= 0) || math.IsInf(v, 1) {
		return 0, fmt.Errorf("%w: probability %v is not finite and non-negative", ErrInput, v)
	}
	return probEncode(v, probBits), nil
}

// ProbDecode returns the value of a wire code at probBits bits.
func ProbDecode(code uint32, probBits int) (float64, error) {
	if err := checkProbBits(probBits); err != nil {
		return 0, err
	}
	if probBits < 32 && code>>uint(probBits) != 0 {
		return 0, fmt.Errorf("%w: code %#x wider than %d bits", ErrFormat, code, probBits)
	}
	return probDecode(code, probBits)
}

func checkProbBits(b int) error {
	if b != 8 && b != 16 && b != 32 {
		return fmt.Errorf("%w: ProbBits %d, want 8, 16 or 32", ErrParam, b)
	}
	return nil
}
