package codec

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// quantizeRef is SQS Algorithm 2 lines 6–17 with a full stable sort of ζ.
func quantizeRef(q []float64, l int) []int32 {
	k := len(q)
	b := make([]int32, k)
	zeta := make([]float64, k)
	sum := 0
	for i := range q {
		b[i] = int32(math.Floor(float64(l)*q[i] + 0.5))
		sum += int(b[i])
	}
	for i := range q {
		zeta[i] = float64(b[i]) - float64(l)*q[i]
	}
	idx := make([]int, k)
	for i := range idx {
		idx[i] = i
	}
	// Increasing ζ, ties by index.
	slices.SortStableFunc(idx, func(a, c int) int {
		switch {
		case zeta[a] < zeta[c]:
			return -1
		case zeta[a] > zeta[c]:
			return 1
		}
		return 0
	})
	if d := sum - l; d > 0 {
		// Largest ζ first, ties by lowest index, skipping zeros.
		slices.SortStableFunc(idx, func(a, c int) int {
			switch {
			case zeta[a] > zeta[c]:
				return -1
			case zeta[a] < zeta[c]:
				return 1
			}
			return a - c
		})
		for _, i := range idx {
			if d == 0 {
				break
			}
			if b[i] > 0 {
				b[i]--
				d--
			}
		}
	} else {
		for _, i := range idx[:-d] {
			b[i]++
		}
	}
	return b
}

func tvLattice(q []float64, b []int32, l int) float64 {
	s := 0.0
	for i := range q {
		s += math.Abs(float64(b[i])/float64(l) - q[i])
	}
	return s / 2
}

// adversarial returns probability vectors that sit on rounding boundaries.
func adversarial(r *rand.Rand, k, l int) [][]float64 {
	var out [][]float64
	// Every ℓq_i = 1/2: all round up, half must come back down; TV = K/(4ℓ)
	// exactly when K = 2ℓ.
	if k%2 == 0 {
		h := make([]float64, k)
		for i := range h {
			h[i] = 1 / float64(k)
		}
		out = append(out, h)
	}
	// ℓq_i = n_i + 1/2 ± tiny: every entry at a boundary.
	for _, sign := range []float64{-1, 1} {
		v := make([]float64, k)
		s := 0.0
		for i := range v {
			v[i] = float64(r.IntN(3)) + 0.5 + sign*1e-9
			s += v[i]
		}
		for i := range v {
			v[i] /= s
		}
		out = append(out, v)
	}
	// One large entry and K−1 just below the rounding threshold.
	v := make([]float64, k)
	eps := 0.4999 / float64(l)
	v[0] = 1 - float64(k-1)*eps
	if v[0] > 0 {
		for i := 1; i < k; i++ {
			v[i] = eps
		}
		out = append(out, v)
	}
	return out
}

// TestQuantize: Σb = ℓ, b >= 0, equal to the reference algorithm, and the
// bound TV(q, b/ℓ) <= K/(4ℓ) (SQS eq. 20) on random and adversarial vectors.
func TestQuantize(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	worst := 0.0
	for it := 0; it < 3000; it++ {
		k := logUniformInt(r, 1, 3000)
		l := logUniformInt(r, 1, 2000)
		vecs := [][]float64{randomDist(r, k)}
		if it%3 == 0 {
			vecs = append(vecs, adversarial(r, k, l)...)
		}
		for _, q := range vecs {
			b, err := Quantize(q, l)
			if err != nil {
				t.Fatal(err)
			}
			s := 0
			for _, bi := range b {
				if bi < 0 {
					t.Fatalf("negative count")
				}
				s += int(bi)
			}
			if s != l {
				t.Fatalf("K=%d ℓ=%d: Σb = %d", k, l, s)
			}
			if ref := quantizeRef(q, l); !slices.Equal(b, ref) {
				t.Fatalf("K=%d ℓ=%d: differs from reference", k, l)
			}
			tv, bound := tvLattice(q, b, l), float64(k)/(4*float64(l))
			if tv > bound+1e-12 {
				t.Fatalf("K=%d ℓ=%d: TV = %v > K/(4ℓ) = %v", k, l, tv, bound)
			}
			worst = math.Max(worst, tv/bound)
		}
	}
	// Quantizing x/s on the fly (Lattice.Encode) equals quantizing the
	// stored quotients.
	for it := 0; it < 200; it++ {
		k, l := logUniformInt(r, 1, 3000), logUniformInt(r, 1, 2000)
		x := randomDist(r, k)
		sc := 0.999 + 0.002*r.Float64()
		q := make([]float64, k)
		for i := range x {
			x[i] *= sc
			q[i] = x[i] / sc
		}
		if !slices.Equal(quantizeScaled(x, sc, l), quantize(q, l)) {
			t.Fatalf("K=%d ℓ=%d: scaled quantization differs", k, l)
		}
	}
	// The all-halves vector attains the bound.
	q := make([]float64, 200)
	for i := range q {
		q[i] = 1.0 / 200
	}
	b, _ := Quantize(q, 100)
	if tv := tvLattice(q, b, 100); math.Abs(tv-0.5) > 1e-12 {
		t.Fatalf("all halves: TV = %v, want K/(4ℓ) = 0.5", tv)
	}
	t.Logf("largest TV/(K/4ℓ) on random and adversarial vectors: %.4f", worst)
	if _, err := Quantize(q, 0); !errors.Is(err, ErrParam) {
		t.Errorf("ℓ = 0: %v", err)
	}
}

// TestQuantizeTies: ties in ζ go to the lowest index.
func TestQuantizeTies(t *testing.T) {
	// ℓq = (0.5, 0.5, 0.5, 0.5), ℓ = 2: all round to 1 (Σ = 4), the two
	// lowest indices are decremented.
	b, _ := Quantize([]float64{0.25, 0.25, 0.25, 0.25}, 2)
	if want := []int32{0, 0, 1, 1}; !slices.Equal(b, want) {
		t.Errorf("over: %v, want %v", b, want)
	}
	// ℓq = (0.4, 0.4, 0.4, 0.4, 0.4), ℓ = 2: all round to 0, the two lowest
	// indices are incremented.
	b, _ = Quantize([]float64{0.2, 0.2, 0.2, 0.2, 0.2}, 2)
	if want := []int32{1, 1, 0, 0, 0}; !slices.Equal(b, want) {
		t.Errorf("under: %v, want %v", b, want)
	}
}

// TestQuantizeThenSample is the lossless building block of Q-S: the device
// samples its draft from Recon, and the server's decoded distribution is
// the same array, so every token the device can sample has the same
// positive probability at the server, and nothing else is positive.
func TestQuantizeThenSample(t *testing.T) {
	r := rand.New(rand.NewPCG(53, 54))
	for _, c := range []Codec{Lattice{L: 100}, Lattice{L: 7}, KSQS{K: 20, L: 50}, NewCSQS()} {
		for it := 0; it < 20; it++ {
			v := logUniformInt(r, 2, 4000)
			x := randomDist(r, v)
			e, err := c.Encode(x, -1)
			if err != nil {
				t.Fatal(err)
			}
			server, err := c.Decode(e.Payload, v)
			if err != nil {
				t.Fatal(err)
			}
			for s := 0; s < 200; s++ {
				d := sampleIndex(r, e.Recon)
				if !(server[d] > 0) || server[d] != e.Recon[d] {
					t.Fatalf("%s: sampled %d with q̂ %v, server has %v", c.Name(), d, e.Recon[d], server[d])
				}
			}
			for i := range server {
				if (server[i] > 0) != (e.Recon[i] > 0) {
					t.Fatalf("%s: supports differ at %d", c.Name(), i)
				}
			}
			// Every lattice probability is a multiple of 1/ℓ.
			for _, p := range e.Recon {
				if m := p * 100; c.Name() == "lattice-100" && math.Abs(m-math.Round(m)) > 1e-9 {
					t.Fatalf("%v is not a multiple of 1/ℓ", p)
				}
			}
		}
	}
	// A pre-sampled draft with q̂ = 0 is refused.
	x := make([]float64, 1000)
	for i := range x {
		x[i] = 1.0 / 1000
	}
	e, _ := Lattice{L: 10}.Encode(x, -1)
	zero := slices.Index(e.Recon, 0)
	if _, err := (Lattice{L: 10}).Encode(x, zero); !errors.Is(err, ErrInput) {
		t.Errorf("draft with q̂ = 0: %v", err)
	}
}

// TestLatticeIndexOutOfRange: an index >= C(ℓ+V−1, V−1) in a payload of the
// right length is an error.
func TestLatticeIndexOutOfRange(t *testing.T) {
	c := Lattice{L: 2}
	// V = 3: C(4, 2) = 6 points in 3 bits; indices 6 and 7 are invalid.
	for idx, ok := range map[uint64]bool{5: true, 6: false, 7: false} {
		p := []byte{byte(idx << 5)}
		_, err := c.Decode(p, 3)
		if ok != (err == nil) {
			t.Errorf("index %d: err = %v", idx, err)
		}
		if !ok && !errors.Is(err, ErrFormat) {
			t.Errorf("index %d: err = %v, want ErrFormat", idx, err)
		}
	}
	bits, _ := c.Bits(3)
	if bits != 3 {
		t.Errorf("Bits = %d", bits)
	}
}

// TestLatticeBitsFormula compares Bits with ⌈log2 C(ℓ+V−1, V−1)⌉ from
// math/big, including V = 32,000.
func TestLatticeBitsFormula(t *testing.T) {
	for _, tc := range [][2]int{{1, 1}, {1, 2}, {100, 1}, {100, 32000}, {1000, 32000}, {7, 5}, {MaxL, 2}} {
		l, v := tc[0], tc[1]
		got, err := Lattice{L: l}.Bits(v)
		if err != nil {
			t.Fatal(err)
		}
		if want := binomBits(l+v-1, v-1); got != want {
			t.Errorf("ℓ=%d V=%d: Bits %d, want %d", l, v, got, want)
		}
	}
}

func TestRankWorkLimit(t *testing.T) {
	if _, err := newSubsetSpace(MaxVocab, MaxVocab/2); !errors.Is(err, ErrLimit) {
		t.Errorf("half of MaxVocab: %v", err)
	}
	if _, err := (Lattice{L: MaxL}).Bits(MaxVocab); !errors.Is(err, ErrLimit) || !errors.Is(err, ErrParam) {
		t.Errorf("ℓ = MaxL at MaxVocab: %v", err)
	}
	if _, err := (Lattice{L: MaxL}).Bits(32000); err != nil {
		t.Errorf("ℓ = MaxL at V = 32,000: %v", err)
	}
	if _, err := (KSQS{K: 16000, L: 100}).Bits(32000); err != nil {
		t.Errorf("K = V/2 at V = 32,000: %v", err)
	}
}
