package codec

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// binomBits is ⌈log2 C(n, k)⌉ computed independently: bitlen(C − 1).
func binomBits(n, k int) int {
	c := new(big.Int).Binomial(int64(n), int64(k))
	return c.Sub(c, big.NewInt(1)).BitLen()
}

// codecCase is a codec with its documented bit count for an encoded message.
type codecCase struct {
	c    Codec
	bits func(v int, e Encoded) int // documented formula
}

func allCodecs() []codecCase {
	var cs []codecCase
	for _, pb := range []int{8, 16, 32} {
		for _, idx := range []bool{false, true} {
			pb, idx := pb, idx
			cs = append(cs, codecCase{Full{ProbBits: pb, IndexBits: idx}, func(v int, _ Encoded) int {
				if idx {
					return v * (IndexBits(v) + pb)
				}
				return v * pb
			}})
		}
		for _, k := range []int{1, 3, 30} {
			pb := pb
			cs = append(cs, codecCase{TopK{K: k, ProbBits: pb}, func(v int, e Encoded) int {
				return 1 + e.Support*(IndexBits(v)+pb)
			}})
		}
		cs = append(cs, codecCase{TopK{ProbBits: pb, Theta: 0.1}, func(v int, e Encoded) int {
			return IndexBits(v) + e.Support*(IndexBits(v)+pb)
		}})
	}
	for _, l := range []int{1, 7, 100} {
		l := l
		cs = append(cs, codecCase{Lattice{L: l}, func(v int, _ Encoded) int { return binomBits(l+v-1, v-1) }})
		for _, k := range []int{1, 5, 64} {
			k := k
			cs = append(cs, codecCase{KSQS{K: k, L: l}, func(v int, _ Encoded) int {
				kk := min(k, v)
				return binomBits(v, kk) + binomBits(l+kk-1, kk-1)
			}})
		}
		c := NewCSQS()
		c.L = l
		c.Eta = 0.05
		c.Beta = 0.01
		cs = append(cs, codecCase{c, func(v int, e Encoded) int {
			return IndexBits(v) + binomBits(v, e.Support) + binomBits(l+e.Support-1, e.Support-1)
		}})
	}
	return cs
}

func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// TestRoundTripAllCodecs: Decode(Encode(x).Payload) == Recon exactly, the
// payload has (Bits+7)/8 bytes, Bits matches the documented formula, and
// Recon is a distribution (sums to 1 within 1e-12).
func TestRoundTripAllCodecs(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	vs := []int{1, 2, 3, 17, 100, 1000, 5000}
	for _, cc := range allCodecs() {
		t.Run(cc.c.Name(), func(t *testing.T) {
			for _, v := range vs {
				for rep := 0; rep < 4; rep++ {
					x := randomDist(r, v)
					if rep == 3 { // one-hot and exact-zero entries
						x = make([]float64, v)
						x[r.IntN(v)] = 1
					}
					draft := -1
					if _, qs := cc.c.(Full); !qs && rep%2 == 0 {
						draft = sampleIndex(r, x)
					}
					switch cc.c.(type) {
					case Lattice, KSQS, *CSQS:
						draft = -1 // quantize-then-sample
					}
					e, err := cc.c.Encode(x, draft)
					if err != nil {
						t.Fatalf("V=%d: Encode: %v", v, err)
					}
					checkEncoded(t, cc, v, x, draft, e)
				}
			}
		})
	}
}

func checkEncoded(t *testing.T, cc codecCase, v int, x []float64, draft int, e Encoded) {
	t.Helper()
	if len(e.Payload) != (e.Bits+7)/8 {
		t.Fatalf("V=%d: %d bytes for %d bits", v, len(e.Payload), e.Bits)
	}
	if want := cc.bits(v, e); e.Bits != want {
		t.Fatalf("V=%d: Bits = %d, formula gives %d", v, e.Bits, want)
	}
	got, err := cc.c.Decode(e.Payload, v)
	if err != nil {
		t.Fatalf("V=%d: Decode: %v", v, err)
	}
	if !sameBits(got, e.Recon) {
		t.Fatalf("V=%d: Decode differs from Recon", v)
	}
	s := 0.0
	for i, p := range e.Recon {
		if !(p >= 0 && p <= 1) {
			t.Fatalf("V=%d: Recon[%d] = %v", v, i, p)
		}
		s += p
	}
	if math.Abs(s-1) > 1e-12 {
		t.Fatalf("V=%d: Recon sums to 1%+.3g", v, s-1)
	}
	if draft >= 0 && !(e.Recon[draft] > 0) {
		t.Fatalf("V=%d: draft %d (x = %v) has Recon 0", v, draft, x[draft])
	}
}

// sampleIndex draws i with probability x_i.
func sampleIndex(r *rand.Rand, x []float64) int {
	u := r.Float64() * sum(x)
	for i, p := range x {
		u -= p
		if u < 0 {
			return i
		}
	}
	for i := len(x) - 1; i >= 0; i-- {
		if x[i] > 0 {
			return i
		}
	}
	return 0
}

// TestRoundTripVocab32000 runs every codec family once at the papers'
// vocabulary size (Llama-2's 32,000).
func TestRoundTripVocab32000(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	x := llmLike(r, 32000, 1.2)
	for _, cc := range []codecCase{
		{Full{ProbBits: 8, IndexBits: true}, func(v int, _ Encoded) int { return v * 23 }},
		{Full{ProbBits: 16}, func(v int, _ Encoded) int { return v * 16 }},
		{TopK{K: 30, ProbBits: 8}, func(v int, e Encoded) int { return 1 + e.Support*23 }},
		{TopK{ProbBits: 8, Theta: 0.1}, func(v int, e Encoded) int { return 15 + e.Support*23 }},
		{Lattice{L: 100}, func(v int, _ Encoded) int { return binomBits(100+v-1, v-1) }},
		{KSQS{K: 64, L: 100}, func(v int, _ Encoded) int { return binomBits(v, 64) + binomBits(163, 63) }},
		{NewCSQS(), func(v int, e Encoded) int {
			return 15 + binomBits(v, e.Support) + binomBits(100+e.Support-1, e.Support-1)
		}},
	} {
		draft := 17
		switch cc.c.(type) {
		case Lattice, KSQS, *CSQS:
			draft = -1
		}
		e, err := cc.c.Encode(x, draft)
		if err != nil {
			t.Fatalf("%s: %v", cc.c.Name(), err)
		}
		checkEncoded(t, cc, len(x), x, draft, e)
		t.Logf("%-16s %7d bits, support %5d", cc.c.Name(), e.Bits, e.Support)
	}
}

// TestDecodeRejectsMutations flips bits, truncates and extends valid
// payloads: Decode must return a value or an error, never panic, and
// wrong lengths are always errors.
func TestDecodeRejectsMutations(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, cc := range allCodecs() {
		for _, v := range []int{2, 50, 700} {
			x := randomDist(r, v)
			e, err := cc.c.Encode(x, -1)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 30; i++ {
				p := append([]byte(nil), e.Payload...)
				if len(p) > 0 {
					p[r.IntN(len(p))] ^= 1 << r.IntN(8)
				}
				if d, err := cc.c.Decode(p, v); err == nil && len(d) != v {
					t.Fatalf("%s: decoded %d entries", cc.c.Name(), len(d))
				}
			}
			if len(e.Payload) > 0 {
				if _, err := cc.c.Decode(e.Payload[:len(e.Payload)-1], v); err == nil {
					t.Errorf("%s V=%d: truncated payload accepted", cc.c.Name(), v)
				}
			}
			if _, err := cc.c.Decode(append(append([]byte(nil), e.Payload...), 0), v); err == nil {
				t.Errorf("%s V=%d: extended payload accepted", cc.c.Name(), v)
			}
			for _, bad := range []int{0, -1, MaxVocab + 1} {
				if _, err := cc.c.Decode(e.Payload, bad); !errors.Is(err, ErrParam) {
					t.Errorf("%s: vocab %d: err = %v, want ErrParam", cc.c.Name(), bad, err)
				}
			}
		}
	}
}

func TestEncodeRejectsBadInput(t *testing.T) {
	bad := map[string][]float64{
		"empty":    {},
		"nan":      {0.5, math.NaN(), 0.5},
		"negative": {1.5, -0.5},
		"inf":      {math.Inf(1), 0},
		"sum":      {0.2, 0.2},
	}
	for _, cc := range allCodecs() {
		for name, x := range bad {
			if _, err := cc.c.Encode(x, -1); !errors.Is(err, ErrInput) {
				t.Errorf("%s %s: err = %v, want ErrInput", cc.c.Name(), name, err)
			}
		}
		for _, d := range []int{-2, 3} {
			if _, err := cc.c.Encode([]float64{0.5, 0.25, 0.25}, d); !errors.Is(err, ErrInput) {
				t.Errorf("%s draft %d: err = %v, want ErrInput", cc.c.Name(), d, err)
			}
		}
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []interface{ Validate() error }{
		Full{ProbBits: 12}, TopK{K: -1, ProbBits: 8}, TopK{ProbBits: 8, Theta: math.NaN()},
		TopK{K: 3, ProbBits: 8, Eta: -1}, Lattice{L: 0}, Lattice{L: MaxL + 1},
		KSQS{K: 0, L: 10}, KSQS{K: 3, L: 0}, &CSQS{L: 10, Conformal: Conformal{Alpha: 0, Eta: 0.1}},
		&CSQS{L: 10, Conformal: Conformal{Alpha: 0.1, Eta: -0.1}}, &Conformal{Alpha: 0.1, Eta: 1, Beta: math.Inf(1)},
	} {
		if err := c.Validate(); !errors.Is(err, ErrParam) {
			t.Errorf("%#v: Validate = %v, want ErrParam", c, err)
		}
	}
	for _, c := range []interface{ Validate() error }{
		Full{ProbBits: 8}, TopK{K: 30, ProbBits: 8}, TopK{ProbBits: 16, Theta: 0.1},
		Lattice{L: 100}, KSQS{K: 64, L: 100}, NewCSQS(), DefaultConformal(),
	} {
		if err := c.Validate(); err != nil {
			t.Errorf("%#v: Validate = %v", c, err)
		}
	}
}
