package speculative

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Exact tests on small vocabularies: V = 2…12, 6,000 pairs drawn from the
// families of randomPair (random, peaked, sparse, disjoint supports,
// identical, close), seed (21, 22).
const exactTrials = 6000

func forEachPair(t *testing.T, seed uint64, f func(t *testing.T, rng *rand.Rand, p pair)) {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	for range exactTrials {
		v := 2 + rng.IntN(11)
		f(t, rng, randomPair(rng, v))
		if t.Failed() {
			return
		}
	}
}

// outputDistRef computes the output distribution by enumerating the draft:
// P(v) = Σ_d s_d·[a_d·1{v = d} + (1 − a_d)·r_v], written independently of
// OutputDist.
func outputDistRef(s, xh, y []float64) []float64 {
	v := len(y)
	r := make([]float64, v)
	mass := 0.0
	for i := range y {
		r[i] = math.Max(y[i]-xh[i], 0)
		mass += r[i]
	}
	for i := range r {
		if mass > 0 {
			r[i] /= mass
		} else {
			r[i] = y[i]
		}
	}
	out := make([]float64, v)
	for d := range s {
		a := 1.0
		if xh[d] > y[d] {
			a = y[d] / xh[d]
		}
		out[d] += s[d] * a
		for i := range out {
			out[i] += s[d] * (1 - a) * r[i]
		}
	}
	return out
}

// Speculative sampling is lossless: OutputDist(x, x, y) = y.
func TestOutputDistLossless(t *testing.T) {
	families := map[string]int{}
	forEachPair(t, 21, func(t *testing.T, _ *rand.Rand, p pair) {
		families[p.family]++
		got := OutputDist(p.x, p.x, p.y)
		if d := maxAbsDiff(got, p.y); d > 1e-12 {
			t.Errorf("%s V=%d: max|OutputDist(x,x,y) − y| = %.3g\nx=%v\ny=%v", p.family, len(p.y), d, p.x, p.y)
		}
	})
	t.Logf("pairs per family: %v", families)
}

// Q-S is lossless for any quantizer: OutputDist(q̂, q̂, y) = y whatever q̂
// is, including lattice points with zeros where x > 0, CU-HLM's top-k
// reconstruction, and unrelated random distributions.
func TestOutputDistQuantizeThenSampleLossless(t *testing.T) {
	forEachPair(t, 23, func(t *testing.T, rng *rand.Rand, p pair) {
		v := len(p.x)
		quantizers := map[string][]float64{
			"lattice ℓ=1":   lattice(p.x, 1),
			"lattice ℓ=3":   lattice(p.x, 3),
			"lattice ℓ=10":  lattice(p.x, 10),
			"lattice ℓ=100": lattice(p.x, 100),
			"top-k uniform": topKUniform(p.x, 1+rng.IntN(v)),
			"unrelated":     dirichlet1(rng, v),
		}
		for name, q := range quantizers {
			got := OutputDist(q, q, p.y)
			if d := maxAbsDiff(got, p.y); d > 1e-12 {
				t.Errorf("%s, %s V=%d: max|OutputDist(q̂,q̂,y) − y| = %.3g", name, p.family, v, d)
			}
		}
	})
}

// Sample-then-compress is lossy: with x̂ = top-k-uniform(x) ≠ x,
// OutputDist(x, x̂, y) is a distribution, matches the enumeration, and
// differs from y.
func TestOutputDistSampleThenCompressLossy(t *testing.T) {
	lossy, differs := 0, 0
	forEachPair(t, 25, func(t *testing.T, rng *rand.Rand, p pair) {
		v := len(p.x)
		k := 1 + rng.IntN(v-1)
		xh := topKUniform(p.x, k)
		got := OutputDist(p.x, xh, p.y)
		sum := 0.0
		for _, g := range got {
			sum += g
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("OutputDist sums to %v", sum)
		}
		if d := maxAbsDiff(got, outputDistRef(p.x, xh, p.y)); d > 1e-12 {
			t.Errorf("OutputDist differs from the enumeration by %.3g", d)
		}
		if TV(p.x, xh) > 1e-9 && TV(p.x, p.y) > 1e-9 {
			lossy++
			if TV(got, p.y) > 1e-9 {
				differs++
			}
		}
	})
	// Equality despite x̂ ≠ x needs a coincidence (e.g. y below both x and
	// x̂ on every token where they differ); it must be rare.
	t.Logf("lossy uploads: %d, output ≠ y in %d (%.1f%%)", lossy, differs, 100*float64(differs)/float64(lossy))
	if float64(differs) < 0.9*float64(lossy) {
		t.Errorf("only %d of %d lossy uploads changed the output distribution", differs, lossy)
	}

	// A family where every truncation k ≤ V−2 must show: x strictly
	// decreasing (so the tail is not uniform), y uniform (so y exceeds x
	// and x̂ on the tail by different amounts).
	for v := 3; v <= 12; v++ {
		x, y := geometric(v), uniform(v)
		for k := 1; k <= v-2; k++ {
			if d := TV(OutputDist(x, topKUniform(x, k), y), y); !(d > 1e-6) {
				t.Errorf("V=%d k=%d: TV(output, y) = %.3g, want > 0", v, k, d)
			}
		}
	}
}

func geometric(v int) []float64 {
	x := make([]float64, v)
	for i := range x {
		x[i] = math.Pow(0.5, float64(i))
	}
	return normalize(x)
}

func uniform(v int) []float64 {
	y := make([]float64, v)
	for i := range y {
		y[i] = 1 / float64(v)
	}
	return y
}

// Hand-computed cases, including x̂_v = 0 where s_v > 0 (ratio +∞: accept).
func TestOutputDistTable(t *testing.T) {
	tests := []struct {
		name       string
		s, xh, y   []float64
		want       []float64
		wantAccept float64
	}{
		// Token 1 is drafted w.p. 0.5 and x̂_1 = 0: accepted. Token 0:
		// accepted w.p. y_0/x̂_0 = 0.5; the rejected 0.25 is resampled from
		// (y − x̂)⁺ = (0, 0.5), i.e. token 1.
		{"x̂ zero where s > 0", []float64{0.5, 0.5}, []float64{1, 0}, []float64{0.5, 0.5}, []float64{0.25, 0.75}, 0.75},
		// Lossless: P = y. Acceptance Σ min(x, y) = 0.3 + 0.3 + 0.1 = 0.7.
		{"lossless", []float64{0.6, 0.3, 0.1}, []float64{0.6, 0.3, 0.1}, []float64{0.3, 0.3, 0.4}, []float64{0.3, 0.3, 0.4}, 0.7},
		// S-Q with CU-HLM top-1: x̂ = (0.6, 0.2, 0.2). Accepted: 0.3 (token 0,
		// ratio 0.5), 0.3 (token 1, ratio 1.5 → 1), 0.1 (token 2). Rejected
		// 0.3, resampled from (y − x̂)⁺ = (0, 0.1, 0.2)/0.3.
		{"S-Q top-1", []float64{0.6, 0.3, 0.1}, []float64{0.6, 0.2, 0.2}, []float64{0.3, 0.3, 0.4}, []float64{0.3, 0.4, 0.3}, 0.7},
		// Disjoint supports: always rejected, output y.
		{"disjoint", []float64{1, 0}, []float64{1, 0}, []float64{0, 1}, []float64{0, 1}, 0},
	}
	for _, tt := range tests {
		if got := OutputDist(tt.s, tt.xh, tt.y); maxAbsDiff(got, tt.want) > 1e-15 {
			t.Errorf("%s: OutputDist = %v, want %v", tt.name, got, tt.want)
		}
		if got := AcceptProb(tt.s, tt.xh, tt.y); math.Abs(got-tt.wantAccept) > 1e-15 {
			t.Errorf("%s: AcceptProb = %v, want %v", tt.name, got, tt.wantAccept)
		}
	}
}

func TestAcceptProb(t *testing.T) {
	forEachPair(t, 27, func(t *testing.T, rng *rand.Rand, p pair) {
		if d := math.Abs(AcceptProb(p.x, p.x, p.y) - (1 - TV(p.x, p.y))); d > 1e-12 {
			t.Errorf("%s: AcceptProb(x,x,y) − (1 − TV) = %.3g", p.family, d)
		}
		// For any s, x̂: the accepted mass is what OutputDist puts on the
		// first term; the rest is resampled.
		xh := topKUniform(p.x, 1+rng.IntN(len(p.x)))
		rej := 1 - AcceptProb(p.x, xh, p.y)
		if rej < -1e-12 || rej > 1+1e-12 {
			t.Errorf("rejection probability %v out of [0, 1]", rej)
		}
	})
}

func TestBias(t *testing.T) {
	forEachPair(t, 29, func(t *testing.T, rng *rand.Rand, p pair) {
		v := len(p.x)
		if b := Bias(p.x, p.x, p.y); b > 1e-12 {
			t.Errorf("%s: Bias(x, x, y) = %.3g, want 0", p.family, b)
		}
		k := 1 + rng.IntN(v)
		xh := topKUniform(p.x, k)
		b := Bias(p.x, xh, p.y)
		// Bias = TV(x, y)·‖p − q‖₁ (the uncompressed terms cancel by eq. 3).
		pres, q := Residual(nil, p.y, p.x), Residual(nil, p.y, xh)
		if want := TV(p.x, p.y) * 2 * TV(pres, q); math.Abs(b-want) > 1e-12 {
			t.Errorf("%s V=%d k=%d: Bias = %v, TV(x,y)·‖p−q‖₁ = %v", p.family, v, k, b, want)
		}
		if b > 2*TV(p.x, p.y)+1e-12 {
			t.Errorf("Bias %v > 2·TV(x,y) = %v", b, 2*TV(p.x, p.y))
		}
		if k >= v-1 && b > 1e-12 {
			// k = V−1: the single untransmitted entry is reconstructed
			// exactly as 1 − Σ(top V−1).
			t.Errorf("%s V=%d k=%d: Bias = %.3g, want 0", p.family, v, k, b)
		}
	})
	// Bias > 0 for every k < V−1 and → 0 as k → V on the geometric/uniform
	// family, and it does not increase with k there.
	for v := 3; v <= 12; v++ {
		x, y := geometric(v), uniform(v)
		prev := math.Inf(1)
		for k := 1; k <= v; k++ {
			b := Bias(x, topKUniform(x, k), y)
			switch {
			case k <= v-2 && !(b > 1e-9):
				t.Errorf("V=%d k=%d: Bias = %.3g, want > 0", v, k, b)
			case k >= v-1 && b > 1e-12:
				t.Errorf("V=%d k=%d: Bias = %.3g, want 0", v, k, b)
			case b > prev+1e-12:
				t.Errorf("V=%d: Bias increased from %v to %v at k=%d", v, prev, b, k)
			}
			prev = b
		}
	}
}

func TestResidual(t *testing.T) {
	tests := []struct {
		name    string
		y, xhat []float64
		want    []float64
	}{
		{"clipped and normalized", []float64{0.5, 0.3, 0.2}, []float64{0.2, 0.6, 0.2}, []float64{1, 0, 0}},
		{"two positive", []float64{0.4, 0.4, 0.2}, []float64{0.2, 0.2, 0.6}, []float64{0.5, 0.5, 0}},
		{"identical: falls back to y", []float64{0.7, 0.3}, []float64{0.7, 0.3}, []float64{0.7, 0.3}},
		{"NaN counts as zero", []float64{math.NaN(), 0.6, 0.4}, []float64{0.5, 0.5, 0}, []float64{0, 0.2, 0.8}},
	}
	for _, tt := range tests {
		got := Residual(nil, tt.y, tt.xhat)
		if d := maxAbsDiff(got, tt.want); d > 1e-15 {
			t.Errorf("%s: Residual = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestExpectedTokens(t *testing.T) {
	tests := []struct {
		alpha []float64
		want  float64
	}{
		{nil, 1},
		{[]float64{0}, 1},
		{[]float64{1}, 2},
		{[]float64{0.5}, 1.5},
		{[]float64{1, 1, 1}, 4},
		{[]float64{0.5, 0.5}, 1.75},
		{[]float64{0.9, 0, 1}, 1.9},
		{[]float64{0.8, 0.5, 0.25}, 1 + 0.8 + 0.4 + 0.1},
	}
	for _, tt := range tests {
		if got := ExpectedTokens(tt.alpha); math.Abs(got-tt.want) > 1e-15 {
			t.Errorf("ExpectedTokens(%v) = %v, want %v", tt.alpha, got, tt.want)
		}
	}
	// g as Q-S writes it, against the product form and the i.i.d. closed
	// form (1 − α^{L+1})/(1 − α).
	rng := rand.New(rand.NewPCG(31, 32))
	for range 1000 {
		L := rng.IntN(10)
		alpha := make([]float64, L)
		for i := range alpha {
			alpha[i] = rng.Float64()
		}
		g, prod := 0.0, 1.0
		for l := 1; l <= L; l++ {
			g += float64(l) * prod * (1 - alpha[l-1])
			prod *= alpha[l-1]
		}
		g += float64(L+1) * prod
		if got := ExpectedTokens(alpha); math.Abs(got-g) > 1e-12 {
			t.Fatalf("ExpectedTokens(%v) = %v, Q-S g = %v", alpha, got, g)
		}
		a := rng.Float64()
		for i := range alpha {
			alpha[i] = a
		}
		if got, want := ExpectedTokens(alpha), (1-math.Pow(a, float64(L+1)))/(1-a); math.Abs(got-want) > 1e-12 {
			t.Fatalf("i.i.d. α=%v L=%d: %v, want %v", a, L, got, want)
		}
	}
}
