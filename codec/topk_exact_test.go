package codec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hlmproject/hlm/internal/stattest"
	"github.com/hlmproject/hlm/speculative"
)

// TestTopKOutputDistMatchesNaive: the O(V log V) exact output distribution
// equals the draft-by-draft sum with the codec's own Encode, for fixed and
// online k, every probability format and many shapes of x and y (seed 11).
func TestTopKOutputDistMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 0))
	for trial := range 300 {
		v := logUniformInt(rng, 2, 400)
		x, y := randomDist(rng, v), randomDist(rng, v)
		if trial%7 == 0 { // exact zeros in both
			for i := range x {
				if rng.IntN(3) == 0 {
					x[i], y[i] = 0, 0
				}
			}
			x[rng.IntN(v)] += 1 - sum(x)
			y[rng.IntN(v)] += 1 - sum(y)
		}
		c := TopK{K: logUniformInt(rng, 1, v), ProbBits: []int{8, 16, 32}[rng.IntN(3)]}
		beta := rng.Float64()
		if trial%2 == 0 {
			c = TopK{K: 0, ProbBits: c.ProbBits, Theta: []float64{0.01, 0.1, 0.5}[rng.IntN(3)], Eta: []float64{1, 5, 20}[rng.IntN(3)]}
		}
		fast, err := c.OutputDist(x, y, beta)
		if err != nil {
			t.Fatal(err)
		}
		naive, err := outputDistNaive(c, x, y, beta)
		if err != nil {
			t.Fatal(err)
		}
		if d := l1(fast, naive); d > 1e-12 {
			t.Fatalf("trial %d (V=%d, %+v, β=%.3f): fast and naive differ by %.3g in L1", trial, v, c, beta, d)
		}
		if s := sum(fast); math.Abs(s-sum(x)) > 1e-9 {
			t.Fatalf("trial %d: output sums to %v", trial, s)
		}
	}
	// Reconstructions that renormalize: a top value quantized to 1 at 8
	// bits, and k = V − 1 (nothing left to fill once the draft is added).
	x := []float64{0.985, 0.003, 0.002, 0.002, 0.002, 0.002, 0.002, 0.001, 0.0005, 0.0005}
	y := []float64{0.5, 0.1, 0.05, 0.05, 0.1, 0.05, 0.05, 0.05, 0.02, 0.03}
	for _, c := range []TopK{{K: 1, ProbBits: 8}, {K: 9, ProbBits: 16}, {K: 3, ProbBits: 8}} {
		fast, err := c.OutputDist(x, y, 0)
		if err != nil {
			t.Fatal(err)
		}
		naive, err := outputDistNaive(c, x, y, 0)
		if err != nil {
			t.Fatal(err)
		}
		if d := l1(fast, naive); d > 1e-12 {
			t.Errorf("%+v: fast and naive differ by %.3g", c, d)
		}
	}
}

func l1(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += math.Abs(a[i] - b[i])
	}
	return s
}

// TestTopKOutputDistMonteCarlo runs the mechanism itself — draft d ~ x,
// Encode(x, d), the server's Decode and speculative.Verify — 400,000 times (seed
// 5) on V = 40 with k = 4 at 8 bits, and online k at θ = 0.3, and compares
// the committed tokens with OutputDist by chi-square at significance
// 0.001. The old simulator formula, speculative.OutputDist with the top-k
// reconstruction for every token (tail tokens accepted against the
// uniform fill instead of their own value), must fail the same test.
func TestTopKOutputDistMonteCarlo(t *testing.T) {
	if testing.Short() {
		t.Skip("400,000 rounds")
	}
	const v, n = 40, 400_000
	gen := rand.New(rand.NewPCG(5, 1))
	// A draft with a heavy, uneven tail and a target that disagrees with it.
	x := llmLike(gen, v, 0.6)
	y := llmLike(gen, v, 0.9)
	for _, c := range []TopK{{K: 4, ProbBits: 8}, {K: 0, ProbBits: 8, Theta: 0.3, Eta: 1}} {
		const beta = 0.4
		exact, err := c.OutputDist(x, y, beta)
		if err != nil {
			t.Fatal(err)
		}
		base, err := c.EncodeWithBetaOrK(x, -1, beta)
		if err != nil {
			t.Fatal(err)
		}
		old := speculative.OutputDist(x, base.Recon, y)
		rng := rand.New(rand.NewPCG(5, 2))
		counts := make([]int, v)
		for range n {
			d := sampleDist(x, rng)
			enc, err := c.EncodeWithBetaOrK(x, d, beta)
			if err != nil {
				t.Fatal(err)
			}
			xhat, err := c.Decode(enc.Payload, v)
			if err != nil {
				t.Fatal(err)
			}
			tok, _ := speculative.Verify(xhat, y, d, rng)
			counts[tok]++
		}
		chi, df := stattest.ChiSquare(counts, exact)
		chiOld, dfOld := stattest.ChiSquare(counts, old)
		t.Logf("%s: exact chi-square %.1f on %d df (critical %.1f); old formula %.1f; ‖P−y‖₁ exact %.4f, old %.4f, eq. 17 Bias %.4f",
			c.Name(), chi, df, stattest.Critical(df), chiOld, l1(exact, y), l1(old, y), speculative.Bias(x, base.Recon, y))
		if chi > stattest.Critical(df) {
			t.Errorf("%s: the mechanism does not follow OutputDist: chi-square %.1f > %.1f", c.Name(), chi, stattest.Critical(df))
		}
		if chiOld <= stattest.Critical(dfOld) {
			t.Errorf("%s: the old formula passes too (%.1f): the test has no power", c.Name(), chiOld)
		}
	}
}

// EncodeWithBetaOrK encodes with the online k at beta (K == 0) or the
// fixed K.
func (c TopK) EncodeWithBetaOrK(x []float64, d int, beta float64) (Encoded, error) {
	if c.K == 0 {
		return c.EncodeWithBeta(x, d, beta)
	}
	return c.Encode(x, d)
}

func sampleDist(x []float64, rng *rand.Rand) int {
	u := rng.Float64()
	for i, p := range x {
		u -= p
		if u < 0 {
			return i
		}
	}
	return len(x) - 1
}

// TestTopKOutputDistIsBias: when no token outside the top k can be drafted
// and the values are sent (nearly) exactly, the exact deviation is CU-HLM's
// eq. 17 Bias: ‖P − y‖₁ = Bias(x, x̂, y) to float32 rounding.
func TestTopKOutputDistIsBias(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for range 50 {
		v := 20 + rng.IntN(200)
		k := 1 + rng.IntN(10)
		x := randomDist(rng, v)
		top := topK(x, k)
		keep := make([]float64, v)
		s := 0.0
		for _, id := range top {
			keep[id] = x[id]
			s += x[id]
		}
		for i := range keep {
			keep[i] /= s
		}
		y := randomDist(rng, v)
		c := TopK{K: k, ProbBits: 32}
		p, err := c.OutputDist(keep, y, 0)
		if err != nil {
			t.Fatal(err)
		}
		enc, err := c.Encode(keep, -1)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := l1(p, y), speculative.Bias(keep, enc.Recon, y); math.Abs(got-want) > 1e-5 {
			t.Fatalf("V=%d k=%d: ‖P − y‖₁ = %v, Bias = %v", v, k, got, want)
		}
	}
}

func BenchmarkTopKOutputDist(b *testing.B) {
	for _, v := range []int{2048, 32000} {
		rng := rand.New(rand.NewPCG(1, 1))
		x, y := llmLike(rng, v, 1.1), llmLike(rng, v, 1.2)
		for _, c := range []TopK{{K: 30, ProbBits: 8}, {K: 0, ProbBits: 8, Theta: 0.1, Eta: 5}} {
			b.Run(fmt.Sprintf("V=%d/%s", v, c.Name()), func(b *testing.B) {
				for b.Loop() {
					if _, err := c.OutputDist(x, y, 0.3); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// outputDistNaive is OutputDist computed draft by draft: for every d with
// x_d > 0 it encodes (x, d) with the codec itself (Encode, or EncodeWithBeta
// with beta when K == 0) and adds x_d·[a_d·δ_d + (1 − a_d)·q⁽ᵈ⁾]. O(V²):
// the reference for tests and small vocabularies.
func outputDistNaive(c TopK, x, y []float64, beta float64) ([]float64, error) {
	if _, _, err := c.draftKs(x, y, beta); err != nil {
		return nil, err
	}
	out := make([]float64, len(x))
	res := make([]float64, len(x))
	for d := range x {
		if !(x[d] > 0) {
			continue
		}
		enc, err := c.EncodeWithBetaOrK(x, d, beta)
		if err != nil {
			return nil, err
		}
		a := speculative.AcceptRatio(enc.Recon[d], y[d])
		out[d] += x[d] * a
		if w := x[d] * (1 - a); w > 0 {
			speculative.Residual(res, y, enc.Recon)
			for i, r := range res {
				out[i] += w * r
			}
		}
	}
	return out, nil
}

// TestTopKOutputDistRepeatable: the same inputs give the same bits every
// time (the simulator's results files are byte-identical from run to run;
// summing the in-top weights in map order broke that for online k).
func TestTopKOutputDistRepeatable(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 0))
	for trial := range 50 {
		x, y := randomDist(rng, 2000), randomDist(rng, 2000)
		c := TopK{K: 0, ProbBits: 8, Theta: []float64{0.01, 0.1}[trial%2], Eta: []float64{1, 10}[trial%2]}
		beta := rng.Float64()
		first, err := c.OutputDist(x, y, beta)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			again, err := c.OutputDist(x, y, beta)
			if err != nil {
				t.Fatal(err)
			}
			for j := range again {
				if math.Float64bits(again[j]) != math.Float64bits(first[j]) {
					t.Fatalf("trial %d, call %d: entry %d is %v, was %v", trial, i+2, j, again[j], first[j])
				}
			}
		}
	}
}
