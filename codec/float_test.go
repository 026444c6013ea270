package codec

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"sort"
	"testing"
)

// codeValues returns the value of every finite code of a format, checking
// that values increase strictly with the code.
func codeValues(t *testing.T, probBits int, n int) []float64 {
	t.Helper()
	vals := make([]float64, n)
	for c := 0; c < n; c++ {
		v, err := ProbDecode(uint32(c), probBits)
		if err != nil {
			t.Fatalf("code %#x: %v", c, err)
		}
		vals[c] = v
		if c > 0 && !(v > vals[c-1]) {
			t.Fatalf("code %#x: value %v not above %v", c, v, vals[c-1])
		}
	}
	return vals
}

// nearestRef rounds v to the nearest of the sorted code values, ties to the
// even code, comparing exact midpoints with big.Float; positive values
// below half the first positive value go to code 1 (support-preserving).
func nearestRef(vals []float64, v float64) uint32 {
	if v <= 0 {
		return 0
	}
	if v >= vals[len(vals)-1] {
		return uint32(len(vals) - 1)
	}
	hi := sort.SearchFloat64s(vals, v) // vals[hi] >= v
	if vals[hi] == v {
		return uint32(hi)
	}
	lo := hi - 1
	mid := new(big.Float).SetPrec(200).SetFloat64(vals[lo])
	mid.Add(mid, new(big.Float).SetFloat64(vals[hi]))
	mid.Quo(mid, big.NewFloat(2))
	var c int
	switch new(big.Float).SetFloat64(v).Cmp(mid) {
	case -1:
		c = lo
	case 1:
		c = hi
	default:
		c = lo
		if lo%2 == 1 {
			c = hi
		}
	}
	if c == 0 {
		c = 1
	}
	return uint32(c)
}

// checkFormat tests a format exhaustively over its codes: every code's
// value encodes back to the code; the midpoint between neighbours rounds
// to the even one; the next float64 on either side of the midpoint rounds
// to the nearer code; random values match the reference rounding.
func checkFormat(t *testing.T, probBits, n int) {
	vals := codeValues(t, probBits, n)
	enc := func(v float64) uint32 {
		c, err := ProbEncode(v, probBits)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for c := 0; c < n; c++ {
		if got := enc(vals[c]); got != uint32(c) {
			t.Fatalf("encode(decode(%#x) = %v) = %#x", c, vals[c], got)
		}
		if c == 0 {
			continue
		}
		lo, hi := vals[c-1], vals[c]
		mid := lo + (hi-lo)/2 // exact: neighbours differ by a power of two times a small integer
		if mid-lo != hi-mid {
			t.Fatalf("midpoint of %#x not exact", c)
		}
		wantTie := uint32(c - 1)
		if (c-1)%2 == 1 {
			wantTie = uint32(c)
		}
		if wantTie == 0 {
			wantTie = 1
		}
		if got := enc(mid); got != wantTie {
			t.Fatalf("tie between %#x and %#x (%v) -> %#x, want %#x", c-1, c, mid, got, wantTie)
		}
		below, above := math.Nextafter(mid, 0), math.Nextafter(mid, math.Inf(1))
		if got, want := enc(below), max(uint32(c-1), 1); got != want {
			t.Fatalf("just below tie %#x/%#x -> %#x, want %#x", c-1, c, got, want)
		}
		if got := enc(above); got != uint32(c) {
			t.Fatalf("just above tie %#x/%#x -> %#x, want %#x", c-1, c, got, c)
		}
	}
	r := rand.New(rand.NewPCG(uint64(probBits), 1))
	for i := 0; i < 200000; i++ {
		v := math.Ldexp(r.Float64(), -r.IntN(45))
		if got, want := enc(v), nearestRef(vals, v); got != want {
			t.Fatalf("encode(%v) = %#x, reference %#x", v, got, want)
		}
	}
}

// TestE5M3Exhaustive covers all 256 codes of the 8-bit format.
func TestE5M3Exhaustive(t *testing.T) {
	checkFormat(t, 8, 256)
	for _, tc := range []struct {
		v    float64
		code uint32
	}{
		{0, 0}, {0x1p-33, 0x01}, {0x1p-34, 0x01}, {1e-300, 0x01}, {0x1p-30, 0x08},
		{1, 0xF8}, {0.5, 0xF0}, {1.875, 0xFF}, {5, 0xFF}, {0x1.2p-5, 0xD1},
	} {
		if got, _ := ProbEncode(tc.v, 8); got != tc.code {
			t.Errorf("E5M3(%v) = %#02x, want %#02x", tc.v, got, tc.code)
		}
	}
	// The table fast path agrees with the arithmetic path on random bit
	// patterns of every exponent.
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 1<<20; i++ {
		v := math.Float64frombits(r.Uint64() &^ (1 << 63))
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if a, b := uint32(encodeE5M3(v)), fmtE5M3.encode(v); a != b {
			t.Fatalf("fast %#x != exact %#x for %v", a, b, v)
		}
	}
}

// TestBinary16Exhaustive covers all finite non-negative binary16 codes and
// pins known encodings.
func TestBinary16Exhaustive(t *testing.T) {
	checkFormat(t, 16, 0x7C00)
	for _, tc := range []struct {
		v    float64
		code uint32
	}{
		{1, 0x3C00}, {0x1p-24, 0x0001}, {0x1p-14, 0x0400}, {65504, 0x7BFF},
		{1.0 / 3, 0x3555}, {0.1, 0x2E66}, {1e-9, 0x0001}, {1e6, 0x7BFF},
	} {
		if got, _ := ProbEncode(tc.v, 16); got != tc.code {
			t.Errorf("f16(%v) = %#04x, want %#04x", tc.v, got, tc.code)
		}
	}
	for _, c := range []uint32{0x7C00, 0x7E00, 0x8000, 0xBC00, 0xFFFF} {
		if _, err := ProbDecode(c, 16); !errors.Is(err, ErrFormat) {
			t.Errorf("decode %#04x: err = %v, want ErrFormat", c, err)
		}
	}
}

func TestFloat32Codes(t *testing.T) {
	for _, v := range []float64{1, 0.1, 1e-30, 1e-45, 3e-39, 1.0 / 3} {
		c, _ := ProbEncode(v, 32)
		if want := math.Float32bits(float32(v)); c != want && !(want == 0 && c == 1) {
			t.Errorf("f32(%v) = %#x, want %#x", v, c, want)
		}
	}
	if c, _ := ProbEncode(1e-50, 32); c != 1 {
		t.Errorf("f32(1e-50) = %#x, want 1 (smallest subnormal)", c)
	}
	for _, c := range []uint32{0x7F800000, 0x7FC00000, 0x80000000, 0xBF800000} {
		if _, err := ProbDecode(c, 32); !errors.Is(err, ErrFormat) {
			t.Errorf("decode %#x: err = %v, want ErrFormat", c, err)
		}
	}
	if _, err := ProbEncode(0.5, 12); !errors.Is(err, ErrParam) {
		t.Errorf("ProbBits 12: err = %v", err)
	}
	if _, err := ProbEncode(math.NaN(), 8); !errors.Is(err, ErrInput) {
		t.Errorf("NaN: err = %v", err)
	}
	if _, err := ProbDecode(0x100, 8); !errors.Is(err, ErrFormat) {
		t.Errorf("9-bit code: err = %v", err)
	}
}
