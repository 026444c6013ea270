package codec

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math/big"
	"math/rand/v2"
	"testing"
)

func TestBitWriterHex(t *testing.T) {
	var w BitWriter
	w.WriteBits(1, 1)      // 1
	w.WriteBits(0b010, 3)  // 010
	w.WriteBits(0xABC, 12) // 1010 1011 1100
	w.WriteBits(0x3, 2)    // 11
	w.WriteBig(big.NewInt(5), 7)
	// 1010 1010 1011 1100 11 0000101 -> a a b c c 2 8 (padded)
	if got := hex.EncodeToString(w.Bytes()); got != "aabcc280" || w.Len() != 25 {
		t.Fatalf("bytes %s len %d", got, w.Len())
	}
	r := NewBitReader(w.Bytes())
	for _, tc := range []struct {
		n    int
		want uint64
	}{{1, 1}, {3, 2}, {12, 0xABC}, {2, 3}} {
		if v, err := r.ReadBits(tc.n); err != nil || v != tc.want {
			t.Fatalf("ReadBits(%d) = %#x, %v", tc.n, v, err)
		}
	}
	if v, err := r.ReadBig(7); err != nil || v.Int64() != 5 {
		t.Fatalf("ReadBig = %v, %v", v, err)
	}
	if r.Remaining() != 7 {
		t.Fatalf("remaining %d", r.Remaining())
	}
	if _, err := r.ReadBits(8); !errors.Is(err, ErrFormat) {
		t.Fatalf("over-read: %v", err)
	}
	if _, err := r.ReadBig(9); !errors.Is(err, ErrFormat) {
		t.Fatalf("over-read big: %v", err)
	}
	if _, err := r.ReadBits(65); !errors.Is(err, ErrParam) {
		t.Fatalf("65 bits: %v", err)
	}
}

func TestBitsRandomRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	type item struct {
		v   uint64
		b   *big.Int
		n   int
		big bool
	}
	for rep := 0; rep < 200; rep++ {
		var w BitWriter
		var items []item
		total := 0
		for i := 0; i < 50; i++ {
			if r.IntN(5) == 0 {
				n := r.IntN(300)
				raw := make([]byte, n/8+1)
				for j := range raw {
					raw[j] = byte(r.Uint32())
				}
				b := new(big.Int).SetBytes(raw)
				b.Rsh(b, uint(len(raw)*8-n))
				w.WriteBig(b, n)
				items = append(items, item{b: b, n: n, big: true})
				total += n
				continue
			}
			n := r.IntN(65)
			v := r.Uint64()
			if n < 64 {
				v &= 1<<uint(n) - 1
			}
			w.WriteBits(v, n)
			items = append(items, item{v: v, n: n})
			total += n
		}
		if w.Len() != total || len(w.Bytes()) != (total+7)/8 {
			t.Fatalf("len %d bits %d bytes, want %d", w.Len(), len(w.Bytes()), total)
		}
		rd := NewBitReader(w.Bytes())
		for i, it := range items {
			if it.big {
				b, err := rd.ReadBig(it.n)
				if err != nil || b.Cmp(it.b) != 0 {
					t.Fatalf("item %d: big mismatch (%v)", i, err)
				}
				continue
			}
			v, err := rd.ReadBits(it.n)
			if err != nil || v != it.v {
				t.Fatalf("item %d: %#x, want %#x (%d bits, %v)", i, v, it.v, it.n, err)
			}
		}
		if err := finishPayload(rd); err != nil {
			t.Fatal(err)
		}
	}
	// A set padding bit is rejected.
	p := []byte{0x81}
	rd := NewBitReader(p)
	rd.ReadBits(1)
	if err := finishPayload(rd); !errors.Is(err, ErrFormat) {
		t.Fatalf("padding: %v", err)
	}
	if !bytes.Equal((&BitWriter{}).Bytes(), []byte{}) {
		t.Fatal("empty writer")
	}
}

// TestIndexBits pins IndexBits to ⌈log2 V⌉, the b_index of CU-HLM eq. 4
// (B = |V|(b_prob + b_index)), computed here from the definition: the
// smallest b with 2^b >= V. Powers of two and their neighbours are where
// an off-by-one (bit length of V instead of V−1) shows; the round-trip
// tests count bits with IndexBits itself and cannot see one.
func TestIndexBits(t *testing.T) {
	ceilLog2 := func(v int) int {
		b := 0
		for 1<<b < v {
			b++
		}
		return b
	}
	for _, tc := range []struct{ v, want int }{
		{1, 0}, {2, 1}, {3, 2}, {4, 2}, {5, 3}, {255, 8}, {256, 8}, {257, 9},
		{512, 9}, {32000, 15}, {32768, 15}, {32769, 16}, {MaxVocab, ceilLog2(MaxVocab)},
	} {
		if got := IndexBits(tc.v); got != tc.want || got != ceilLog2(tc.v) {
			t.Errorf("IndexBits(%d) = %d, want ⌈log2 %d⌉ = %d", tc.v, got, tc.v, tc.want)
		}
	}
	// Full with ids at V = 256: 256 × (8 + 8) bits (eq. 4).
	if got := (Full{ProbBits: 8, IndexBits: true}).Bits(256); got != 256*16 {
		t.Errorf("Full{8, ids}.Bits(256) = %d, want 256·(8+8) = %d", got, 256*16)
	}
}
