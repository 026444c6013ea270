package codec

import (
	"encoding/hex"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTopKHex pins both layouts on V = 5.
func TestTopKHex(t *testing.T) {
	x := []float64{0.0625, 0.5, 0.25, 0.125, 0.0625}
	// Fixed K = 2, draft 3 appended: flag 1, then (1, F0) (2, E8) (3, E0),
	// ids in 3 bits: 1 001 11110000 010 11101000 011 11100000 -> 34 bits.
	e, err := TopK{K: 2, ProbBits: 8}.Encode(x, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(e.Payload); got != "9f05d0f800" || e.Bits != 34 || e.Support != 3 {
		t.Fatalf("payload %s, %d bits, support %d", got, e.Bits, e.Support)
	}
	// Sent 0.5 + 0.25 + 0.125; the residual 0.125 is spread over tokens 0 and 4.
	if want := []float64{0.0625, 0.5, 0.25, 0.125, 0.0625}; !sameBits(e.Recon, want) {
		t.Fatalf("Recon %v", e.Recon)
	}
	// Per-message k = 1 (EncodeK), draft 1 already in: n−1 = 0 in 3 bits,
	// then (1, F0): 000 001 11110000 -> 14 bits.
	e, err = TopK{ProbBits: 8}.EncodeK(x, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(e.Payload); got != "07c0" || e.Bits != 14 {
		t.Fatalf("payload %s, %d bits", got, e.Bits)
	}
	if want := []float64{0.125, 0.5, 0.125, 0.125, 0.125}; !sameBits(e.Recon, want) {
		t.Fatalf("Recon %v", e.Recon)
	}
}

// TestTopKClamp: when quantized values sum past 1 the residual is clamped
// to 0 and the sent values are renormalized.
func TestTopKClamp(t *testing.T) {
	x := []float64{0.49, 0.49, 0.02}
	e, err := TopK{K: 2, ProbBits: 8}.Encode(x, -1)
	if err != nil {
		t.Fatal(err)
	}
	// 0.49 rounds to 0.5 in E5M3: Σ = 1, nothing left for token 2.
	if want := []float64{0.5, 0.5, 0}; !sameBits(e.Recon, want) {
		t.Fatalf("Recon %v, want %v", e.Recon, want)
	}
	// All tokens sent with Σ < 1: renormalized.
	e, err = TopK{K: 3, ProbBits: 8}.Encode([]float64{0.3, 0.3, 0.4}, -1)
	if err != nil {
		t.Fatal(err)
	}
	if s := sum(e.Recon); math.Abs(s-1) > 1e-15 {
		t.Fatalf("sum %v", s)
	}
}

// TestTopKDraftAlwaysSent: the draft's index and value are in every
// message, appended after the top k when it is not among them.
func TestTopKDraftAlwaysSent(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for it := 0; it < 300; it++ {
		v := 2 + r.IntN(400)
		x := randomDist(r, v)
		d := sampleIndex(r, x)
		k := 1 + r.IntN(v)
		for _, c := range []TopK{{K: k, ProbBits: 16}, {ProbBits: 8, Theta: 0.2}} {
			e, err := c.Encode(x, d)
			if err != nil {
				t.Fatal(err)
			}
			ids := topKIDs(t, c, e.Payload, v)
			if !slices.Contains(ids, int32(d)) {
				t.Fatalf("draft %d missing from %v", d, ids)
			}
			top := topK(x, len(ids))
			if slices.Contains(top, int32(d)) {
				if !slices.Equal(ids, top) {
					t.Fatalf("ids %v, want top %v", ids, top)
				}
			} else if !slices.Equal(ids[:len(ids)-1], topK(x, len(ids)-1)) || ids[len(ids)-1] != int32(d) {
				t.Fatalf("ids %v: want top-%d then draft %d", ids, len(ids)-1, d)
			}
			code, _ := ProbEncode(x[d], c.ProbBits)
			want, _ := ProbDecode(code, c.ProbBits)
			if s := sentSum(t, c, e.Payload, v); s < 1 && e.Recon[d] != want {
				t.Fatalf("Recon[draft] = %v, want quantized x_d = %v", e.Recon[d], want)
			}
		}
	}
}

// topKIDs parses the ids of a TopK payload.
func topKIDs(t *testing.T, c TopK, p []byte, v int) []int32 {
	t.Helper()
	r := NewBitReader(p)
	ib := IndexBits(v)
	var n int
	if c.K == 0 {
		m, _ := r.ReadBits(ib)
		n = int(m) + 1
	} else {
		f, _ := r.ReadBits(1)
		n = min(c.K, v) + int(f)
	}
	ids := make([]int32, n)
	for j := range ids {
		id, _ := r.ReadBits(ib)
		r.ReadBits(c.ProbBits)
		ids[j] = int32(id)
	}
	return ids
}

func sentSum(t *testing.T, c TopK, p []byte, v int) float64 {
	r := NewBitReader(p)
	ib := IndexBits(v)
	var n int
	if c.K == 0 {
		m, _ := r.ReadBits(ib)
		n = int(m) + 1
	} else {
		f, _ := r.ReadBits(1)
		n = min(c.K, v) + int(f)
	}
	s := 0.0
	for j := 0; j < n; j++ {
		r.ReadBits(ib)
		code, _ := r.ReadBits(c.ProbBits)
		p, _ := ProbDecode(uint32(code), c.ProbBits)
		s += p
	}
	return s
}

// TestTopKOnlineMatchesOnlineK: the online codec sends exactly OnlineK's k.
func TestTopKOnlineMatchesOnlineK(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for it := 0; it < 100; it++ {
		v := 2 + r.IntN(3000)
		x := randomDist(r, v)
		d := sampleIndex(r, x)
		beta := r.Float64()
		c := TopK{ProbBits: 8, Theta: 0.05 + 0.2*r.Float64(), Eta: 0.5 + 2*r.Float64()}
		k, err := OnlineK(x, d, beta, c.Eta, c.Theta)
		if err != nil {
			t.Fatal(err)
		}
		e, err := c.EncodeWithBeta(x, d, beta)
		if err != nil {
			t.Fatal(err)
		}
		ids := topKIDs(t, c, e.Payload, v)
		if !slices.Equal(ids[:k], topK(x, k)) || len(ids) > k+1 {
			t.Fatalf("sent %d entries for k = %d", len(ids), k)
		}
	}
}

func TestTopKErrors(t *testing.T) {
	x := []float64{0.5, 0.25, 0.25}
	if _, err := (TopK{K: 2, ProbBits: 8}).EncodeWithBeta(x, 0, 0.5); !errors.Is(err, ErrParam) {
		t.Errorf("EncodeWithBeta with fixed K: %v", err)
	}
	if _, err := (TopK{K: 2, ProbBits: 8}).EncodeK(x, 0, 1); !errors.Is(err, ErrParam) {
		t.Errorf("EncodeK with fixed K: %v", err)
	}
	if _, err := (TopK{ProbBits: 8}).EncodeK(x, 0, 4); !errors.Is(err, ErrParam) {
		t.Errorf("EncodeK k > V: %v", err)
	}
	// K >= V with the "appended" flag set: more entries than tokens.
	var w BitWriter
	w.WriteBits(1, 1)
	for id := 0; id < 4; id++ {
		w.WriteBits(uint64(id%3), 2)
		w.WriteBits(0xE0, 8)
	}
	if _, err := (TopK{K: 5, ProbBits: 8}).Decode(w.Bytes(), 3); !errors.Is(err, ErrFormat) {
		t.Errorf("appended to full vocabulary: %v", err)
	}
	// Duplicate id.
	w = BitWriter{}
	w.WriteBits(0, 1)
	w.WriteBits(1, 2)
	w.WriteBits(0xE0, 8)
	w.WriteBits(1, 2)
	w.WriteBits(0xE0, 8)
	if _, err := (TopK{K: 2, ProbBits: 8}).Decode(w.Bytes(), 3); !errors.Is(err, ErrFormat) {
		t.Errorf("duplicate id: %v", err)
	}
	// Count field beyond V.
	w = BitWriter{}
	w.WriteBits(3, 2)
	if _, err := (TopK{ProbBits: 8}).Decode(w.Bytes(), 3); !errors.Is(err, ErrFormat) {
		t.Errorf("count 4 of 3: %v", err)
	}
}
