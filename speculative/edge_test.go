package speculative

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hlmproject/hlm/sampling"
)

// fixedSource is a rand.Source that always returns one value and counts the
// draws: rng.Float64() is then (v<<11>>11)/2^53, a chosen uniform.
type fixedSource struct {
	v     uint64
	draws int
}

func (s *fixedSource) Uint64() uint64 { s.draws++; return s.v }

// uniformSource returns a source whose Float64 is u, for u = k/2^53.
func uniformSource(u float64) *fixedSource {
	return &fixedSource{v: uint64(u * (1 << 53))}
}

// TestVerifyAcceptanceEdges checks accept's rule, min(1, y_d/x̂_d) (CU-HLM
// eq. 2; Q-S eq. 1), at the edges a continuous test never reaches: the
// uniform u = 0, ties x̂_d = y_d, and x̂_d = 0 (ratio +∞, accepted). It also
// counts draws: Verify's doc promises no uniform for an outright acceptance
// (x̂_d ≤ y_d), which keeps the device's and server's streams in step.
func TestVerifyAcceptanceEdges(t *testing.T) {
	cases := []struct {
		name      string
		xd, yd, u float64
		accepted  bool
		draws     int // draws made by accept (Verify adds one on rejection)
	}{
		// A token the target gives no mass is never accepted, even when the
		// uniform is exactly 0: u·x̂_d < y_d is 0 < 0.
		{"target zero, u=0", 0.5, 0, 0, false, 1},
		{"target zero, u=1-2^-53", 0.5, 0, 1 - 0x1p-53, false, 1},
		// x̂_d = y_d: ratio 1, accepted without a draw.
		{"tie", 0.25, 0.25, 0.999, true, 0},
		// x̂_d = y_d = 0: the ratio is +∞ by the stated convention.
		{"both zero", 0, 0, 0.5, true, 0},
		{"xhat zero", 0, 0.3, 0.5, true, 0},
		{"ratio above 1", 0.2, 0.3, 0.5, true, 0},
		// x̂_d > y_d: accepted iff u < y_d/x̂_d = 0.5.
		{"just below ratio", 0.5, 0.25, 0.5 - 0x1p-53, true, 1},
		{"at ratio", 0.5, 0.25, 0.5, false, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := uniformSource(c.u)
			if got := rand.New(src).Float64(); got != c.u {
				t.Fatalf("source gives %v, want %v", got, c.u)
			}
			src.draws = 0
			if got := accept(c.xd, c.yd, rand.New(src)); got != c.accepted || src.draws != c.draws {
				t.Errorf("accept(x̂=%v, y=%v, u=%v) = %v after %d draws, want %v after %d",
					c.xd, c.yd, c.u, got, src.draws, c.accepted, c.draws)
			}
			// Verify with the draft at token 0 of a two-token pair.
			xhat := []float64{c.xd, 1 - c.xd}
			y := []float64{c.yd, 1 - c.yd}
			src.draws = 0
			tok, ok := Verify(xhat, y, 0, rand.New(src))
			if ok != c.accepted {
				t.Errorf("Verify accepted = %v, want %v", ok, c.accepted)
			}
			if !ok && y[tok] == 0 {
				t.Errorf("Verify resampled token %d, which the target gives no mass", tok)
			}
			if r := AcceptRatio(c.xd, c.yd); c.accepted != (c.u < r) {
				t.Errorf("AcceptRatio = %v disagrees with accept at u = %v", r, c.u)
			}
		})
	}
}

// TestResidualInverseCDFBoundaries checks the sampler of the residual
// norm((y − x̂)⁺) (CU-HLM eq. 2; Q-S eq. 2) at the exact boundaries of its
// CDF, where the blocked scan must agree with the convention of
// sampling.InverseCDF: the first token i with F(i) > u (so u = F(i) belongs
// to the next positive token). All values are multiples of 2^-10 and the
// residual's mass is 1/2, so every sum below is exact. The positive residual
// entries straddle the 64-token blocks of the scan.
func TestResidualInverseCDFBoundaries(t *testing.T) {
	const v = 130
	num := map[int]int{3: 100, 40: 60, 63: 52, 70: 150, 127: 50, 129: 100} // Σ = 512
	y := make([]float64, v)
	xhat := make([]float64, v)
	for i := range v {
		xhat[i] = 4.0 / 1024
		y[i] = xhat[i]
		if i%5 == 1 {
			y[i] = 0 // negative part, clipped away
		}
		if n, ok := num[i]; ok {
			y[i] = xhat[i] + float64(n)/1024
		}
	}
	if m := residualMass(y, xhat); m != 0.5 {
		t.Fatalf("residual mass %v, want 0.5", m)
	}
	var pos []int // the positive residual entries, in order
	for i := range v {
		if _, ok := num[i]; ok {
			pos = append(pos, i)
		}
	}
	res := Residual(nil, y, xhat)
	F := 0.0 // CDF of the normalised residual
	for k, i := range pos {
		// u strictly inside token i's interval, and u = F(i) exactly.
		mid := F + res[i]/2
		F += res[i]
		checks := []struct {
			u    float64
			want int
		}{{mid, i}}
		if k+1 < len(pos) {
			checks = append(checks, struct {
				u    float64
				want int
			}{F, pos[k+1]})
		}
		for _, c := range checks {
			if got := residualInverseCDF(y, xhat, c.u); got != c.want {
				t.Errorf("residualInverseCDF(u = %v) = %d, want %d (first token with F > u)", c.u, got, c.want)
			}
			if got := sampling.InverseCDF(res, c.u); got != c.want {
				t.Errorf("sampling.InverseCDF(Residual, u = %v) = %d, want %d", c.u, got, c.want)
			}
		}
	}
}

// TestListResultDraftIsLowest: ListResult.Draft is documented as the lowest
// index of a draft whose first Accepted tokens were accepted. One-hot targets
// make the server's race winner certain (only a token with mass can win).
func TestListResultDraftIsLowest(t *testing.T) {
	const v = 10
	oneHot := func(tok int) []float64 {
		p := make([]float64, v)
		p[tok] = 1
		return p
	}
	// The target: 5 first, then 6, then 7.
	y := func(prefix []int) ([]float64, error) { return oneHot(5 + len(prefix)), nil }
	cases := []struct {
		name   string
		drafts [][]int
		want   ListResult
	}{
		{"rejected at 1", [][]int{{1, 6}, {5, 7}, {5, 8}}, ListResult{BlockResult{Accepted: 1, Token: 6, Resampled: true}, 1}},
		{"rejected at 0", [][]int{{1, 6}, {2, 6}, {3, 6}}, ListResult{BlockResult{Accepted: 0, Token: 5, Resampled: true}, 0}},
		{"all accepted", [][]int{{1, 6}, {5, 6}, {5, 6}}, ListResult{BlockResult{Accepted: 2, Token: 7}, 1}},
	}
	for _, c := range cases {
		got, err := VerifyCoupledList(y, c.drafts, 99, 3)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestVerifyAcceptanceRate measures how often Verify accepts a draft with
// x̂_d > y_d against min(1, y_d/x̂_d) computed here, not by AcceptRatio.
// The ratios near 1 catch a rule that accepts outright "close enough"
// drafts (x̂_d ≤ 1.05·y_d, say), which the chi-square pairs, none of which
// has a token with y_d slightly below x̂_d, do not see; the others catch a
// scaled ratio. n = 400,000 per case, seed 700 + case (PCG stream 7).
// Hoeffding: P(|rate − ratio| ≥ 0.005) ≤ 2·exp(−2·n·0.005²) = 4.1e-9 per
// case, so the false-alarm probability of the test is below 3e-8. Accepting
// outright at x̂_d ≤ 1.05·y_d moves the first three rates to 1; a ratio
// scaled by 1.05 moves the fourth by 0.025.
func TestVerifyAcceptanceRate(t *testing.T) {
	const n, eps = 400_000, 0.005
	cases := []struct{ xd, yd float64 }{
		{0.5, 0.49},   // ratio 0.98
		{0.5, 0.48},   // 0.96
		{0.25, 0.24},  // 0.96
		{0.5, 0.25},   // 0.5
		{0.9, 0.18},   // 0.2
		{0.06, 0.035}, // ≈ 0.583
	}
	for ci, c := range cases {
		xhat := []float64{c.xd, 1 - c.xd}
		y := []float64{c.yd, 1 - c.yd}
		want := c.yd / c.xd
		rng := rand.New(rand.NewPCG(uint64(700+ci), 7))
		acc := 0
		for range n {
			if tok, ok := Verify(xhat, y, 0, rng); ok {
				acc++
			} else if tok != 1 {
				t.Fatalf("x̂_d=%v, y_d=%v: rejected draft replaced by %d; the residual is all token 1", c.xd, c.yd, tok)
			}
		}
		rate := float64(acc) / n
		t.Logf("x̂_d=%v y_d=%v: acceptance %.4f, min(1, y/x̂) = %.4f", c.xd, c.yd, rate, want)
		if math.Abs(rate-want) >= eps {
			t.Errorf("x̂_d=%v, y_d=%v: draft accepted at rate %.4f, want min(1, y/x̂) = %.4f ± %v", c.xd, c.yd, rate, want, eps)
		}
	}
}
