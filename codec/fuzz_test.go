package codec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Fuzz targets for every Decode: hostile bytes and vocabulary sizes
// (0, 1, huge, negative) must give an error or a valid distribution of
// length vocab, never a panic or an unbounded allocation (vocab is capped
// at MaxVocab; index arithmetic at MaxRankWork).
//
//	go test ./codec -run '^$' -fuzz FuzzDecodeCSQS -fuzztime 30s
//
// Crashers found while fuzzing are kept in testdata/fuzz as regressions.

func checkDecoded(t *testing.T, out []float64, err error, vocab int) {
	if err != nil {
		return
	}
	if len(out) != vocab {
		t.Fatalf("decoded %d entries for vocab %d", len(out), vocab)
	}
	s := 0.0
	for i, p := range out {
		if !(p >= 0 && p <= 1) {
			t.Fatalf("entry %d = %v", i, p)
		}
		s += p
	}
	if math.Abs(s-1) > 1e-9 {
		t.Fatalf("decoded distribution sums to %v", s)
	}
}

// addSeeds adds real payloads of c and hostile vocabulary sizes.
func addSeeds(f *testing.F, c Codec) {
	r := rand.New(rand.NewPCG(71, 72))
	for _, v := range []int{1, 2, 3, 40, 1000} {
		x := randomDist(r, v)
		e, err := c.Encode(x, -1)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(e.Payload, v, uint8(0))
		f.Add(e.Payload, v+1, uint8(1))
	}
	for _, v := range []int{0, -1, 1, MaxVocab, MaxVocab + 1, math.MaxInt} {
		f.Add([]byte{0xFF, 0x00, 0x13}, v, uint8(2))
		f.Add([]byte{}, v, uint8(3))
	}
}

func FuzzDecodeFull(f *testing.F) {
	addSeeds(f, Full{ProbBits: 8, IndexBits: true})
	f.Fuzz(func(t *testing.T, p []byte, vocab int, sel uint8) {
		c := Full{ProbBits: []int{8, 16, 32}[sel%3], IndexBits: sel&4 != 0}
		out, err := c.Decode(p, vocab)
		checkDecoded(t, out, err, vocab)
	})
}

func FuzzDecodeTopK(f *testing.F) {
	addSeeds(f, TopK{K: 3, ProbBits: 8})
	addSeeds(f, TopK{ProbBits: 8, Theta: 0.1})
	f.Fuzz(func(t *testing.T, p []byte, vocab int, sel uint8) {
		c := TopK{K: int(sel >> 3), ProbBits: []int{8, 16, 32}[sel%3], Theta: 0.1}
		out, err := c.Decode(p, vocab)
		checkDecoded(t, out, err, vocab)
	})
}

func FuzzDecodeLattice(f *testing.F) {
	addSeeds(f, Lattice{L: 100})
	f.Fuzz(func(t *testing.T, p []byte, vocab int, sel uint8) {
		c := Lattice{L: []int{1, 7, 100, 1000}[sel%4]}
		out, err := c.Decode(p, vocab)
		checkDecoded(t, out, err, vocab)
	})
}

func FuzzDecodeKSQS(f *testing.F) {
	addSeeds(f, KSQS{K: 5, L: 100})
	f.Fuzz(func(t *testing.T, p []byte, vocab int, sel uint8) {
		c := KSQS{K: 1 + int(sel>>2), L: []int{1, 7, 100, 1000}[sel%4]}
		out, err := c.Decode(p, vocab)
		checkDecoded(t, out, err, vocab)
	})
}

func FuzzDecodeCSQS(f *testing.F) {
	c0 := NewCSQS()
	c0.Beta = 0.01
	addSeeds(f, c0)
	f.Fuzz(func(t *testing.T, p []byte, vocab int, sel uint8) {
		c := NewCSQS()
		c.L = []int{1, 7, 100, 1000}[sel%4]
		out, err := c.Decode(p, vocab)
		checkDecoded(t, out, err, vocab)
	})
}
