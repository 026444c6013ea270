package codec

import (
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"testing"
)

// TestFull92kB is the payload of CU-HLM Sec. I: V = 32,000, 8-bit values
// with 15-bit indices: 32,000 × 23 = 736,000 bits = 92,000 bytes.
func TestFull92kB(t *testing.T) {
	x := llmLike(rand.New(rand.NewPCG(1, 2)), 32000, 1.1)
	c := Full{ProbBits: 8, IndexBits: true}
	e, err := c.Encode(x, 7)
	if err != nil {
		t.Fatal(err)
	}
	if e.Bits != 736000 || len(e.Payload) != 92000 || c.Bits(32000) != 736000 {
		t.Fatalf("Bits = %d, payload %d bytes", e.Bits, len(e.Payload))
	}
	got, err := c.Decode(e.Payload, 32000)
	if err != nil || !sameBits(got, e.Recon) {
		t.Fatalf("round trip: %v", err)
	}
	// The pairs come in descending code order, ties by ascending id.
	r := NewBitReader(e.Payload)
	prevCode, prevID := uint64(256), uint64(0)
	for n := 0; n < 32000; n++ {
		id, _ := r.ReadBits(15)
		code, _ := r.ReadBits(8)
		if code > prevCode || (code == prevCode && id <= prevID) {
			t.Fatalf("pair %d (id %d, code %#x) out of order after (%d, %#x)", n, id, code, prevID, prevCode)
		}
		prevCode, prevID = code, id
	}
	// Support is preserved: every token with x > 0 has Recon > 0.
	for i := range x {
		if x[i] > 0 && !(e.Recon[i] > 0) {
			t.Fatalf("token %d: x = %v, Recon 0", i, x[i])
		}
	}
}

// TestFullHex pins the layout on V = 3.
func TestFullHex(t *testing.T) {
	x := []float64{0.25, 0.5, 0.25}
	for _, tc := range []struct {
		c    Full
		want string
	}{
		// E5M3: 0.25 = 0xE8, 0.5 = 0xF0, in id order.
		{Full{ProbBits: 8}, "e8f0e8"},
		// (id[2] value[8]) in rank order: (1, F0) (0, E8) (2, E8):
		// 01 11110000 00 11101000 10 11101000 -> 7c 0e 8b a0 (padded)
		{Full{ProbBits: 8, IndexBits: true}, "7c0e8ba0"},
		// binary16: 0.25 = 0x3400, 0.5 = 0x3800.
		{Full{ProbBits: 16}, "340038003400"},
	} {
		e, err := tc.c.Encode(x, -1)
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(e.Payload); got != tc.want {
			t.Errorf("%s: payload %s, want %s", tc.c.Name(), got, tc.want)
		}
		if !sameBits(e.Recon, x) {
			t.Errorf("%s: Recon %v, want %v", tc.c.Name(), e.Recon, x)
		}
	}
}

func TestFullDecodeErrors(t *testing.T) {
	c := Full{ProbBits: 8, IndexBits: true}
	// Repeated id: (0, E8) (0, E8) (2, E8).
	var w BitWriter
	for _, id := range []uint64{0, 0, 2} {
		w.WriteBits(id, 2)
		w.WriteBits(0xE8, 8)
	}
	if _, err := c.Decode(w.Bytes(), 3); !errors.Is(err, ErrFormat) {
		t.Errorf("repeated id: %v", err)
	}
	// Id out of range.
	w = BitWriter{}
	for _, id := range []uint64{0, 3, 2} {
		w.WriteBits(id, 2)
		w.WriteBits(0xE8, 8)
	}
	if _, err := c.Decode(w.Bytes(), 3); !errors.Is(err, ErrFormat) {
		t.Errorf("id 3 of 3: %v", err)
	}
	// All zero.
	if _, err := (Full{ProbBits: 8}).Decode([]byte{0, 0, 0}, 3); !errors.Is(err, ErrFormat) {
		t.Errorf("all zero: %v", err)
	}
	// binary16 NaN.
	if _, err := (Full{ProbBits: 16}).Decode([]byte{0x7E, 0, 0x3C, 0}, 2); !errors.Is(err, ErrFormat) {
		t.Errorf("NaN: %v", err)
	}
	// Non-zero padding.
	if _, err := (Full{ProbBits: 8, IndexBits: true}).Decode([]byte{0x7c, 0x0e, 0x8b, 0xa1}, 3); !errors.Is(err, ErrFormat) {
		t.Errorf("padding: %v", err)
	}
}
