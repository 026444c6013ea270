package uncertainty

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hlmproject/hlm/sampling"
)

func TestPerturbationValidate(t *testing.T) {
	tests := []struct {
		p  Perturbation
		ok bool
	}{
		{Perturbation{}, true},
		{Perturbation{M: 20, ThetaMax: 2}, true},
		{Perturbation{M: 1, ThetaMax: 0.1}, true},
		{Perturbation{M: -1}, false},
		{Perturbation{M: 1 << 20}, false},
		{Perturbation{ThetaMax: -1}, false},
		{Perturbation{ThetaMax: math.NaN()}, false},
		{Perturbation{ThetaMax: math.Inf(1)}, false},
	}
	for _, tt := range tests {
		err := tt.p.Validate()
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrInvalid)) {
			t.Errorf("%+v: Validate() = %v, want ok=%v", tt.p, err, tt.ok)
		}
	}
	if d := (Perturbation{}).withDefaults(); d.M != 20 || d.ThetaMax != 2 {
		t.Errorf("defaults = %+v", d)
	}
}

// testLogits are logit vectors of different shapes: flat, Llama-like
// (Gaussian σ = 3 with boosted tokens), very peaked, with exact ties, with
// −Inf and NaN entries, all equal, and tiny vocabularies.
func testLogits(rng *rand.Rand, kind, v int) []float32 {
	z := make([]float32, v)
	switch kind % 7 {
	case 0: // flat-ish
		for i := range z {
			z[i] = float32(rng.NormFloat64() * 0.5)
		}
	case 1: // Llama-like
		for i := range z {
			z[i] = float32(rng.NormFloat64() * 3)
		}
		for range 1 + v/1000 {
			z[rng.IntN(v)] += float32(4 + 8*rng.Float64())
		}
	case 2: // very peaked
		for i := range z {
			z[i] = float32(rng.NormFloat64())
		}
		z[rng.IntN(v)] += 30
	case 3: // ties: few distinct values
		for i := range z {
			z[i] = float32(rng.IntN(4))
		}
	case 4: // masked entries
		for i := range z {
			z[i] = float32(rng.NormFloat64() * 2)
			switch rng.IntN(10) {
			case 0:
				z[i] = float32(math.Inf(-1))
			case 1:
				z[i] = float32(math.NaN())
			}
		}
		z[0] = 1 // at least one finite entry
	case 5: // all equal
		for i := range z {
			z[i] = 1.5
		}
	case 6: // huge spread
		for i := range z {
			z[i] = float32(rng.NormFloat64() * 40)
		}
	}
	return z
}

// TestMeasureMatchesNaive: Measure and MeasureNaive decide every perturbed
// sample the same way, so for the same seed they return the same u. 1500
// logit vectors (V = 1…3000, seven shapes, drafts argmax or random, M from
// 20 to 100, θmax varied): about 9·10^4 perturbed samples; seeds (61, 62) for the
// vectors and (trial, 99) for each comparison. Rounding can only disagree
// when a uniform falls within ~1e-13 of a CDF boundary, which these runs
// never hit: the test requires exact agreement.
func TestMeasureMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	samples := 0
	for trial := range 1500 {
		v := 1 + rng.IntN(3000)
		if trial%5 == 0 {
			v = 1 + rng.IntN(8)
		}
		z := testLogits(rng, trial, v)
		d := rng.IntN(v)
		if trial%2 == 0 {
			d = sampling.Argmax(z)
		}
		p := Perturbation{M: 20 + rng.IntN(81), ThetaMax: []float64{2, 0.5, 5, 0.01}[trial%4]}
		a := rand.New(rand.NewPCG(uint64(trial), 99))
		b := rand.New(rand.NewPCG(uint64(trial), 99))
		fast, naive := p.Measure(z, d, a), p.MeasureNaive(z, d, b)
		samples += p.M
		if fast != naive {
			t.Errorf("trial %d (V=%d shape %d draft %d %+v): Measure = %v, MeasureNaive = %v", trial, v, trial%7, d, p, fast, naive)
		}
		if a.Uint64() != b.Uint64() {
			t.Fatalf("trial %d: the two paths consumed different numbers of draws", trial)
		}
	}
	t.Logf("%d perturbed samples compared", samples)
}

// TestMeasureConditionalFrequencies is the statistical test of the fast
// path's decision: for fixed logits (V = 32,000, Llama-like) and fixed θ,
// the share of samples with d_θ ≠ d over n = 10^5 uniforms must match the
// exact P(d_θ ≠ d | θ) = 1 − softmax(z/θ)_d computed with a full softmax.
// Each count is Binomial(n, q); two-sided z-test at α = 0.001 (|z| ≤ 3.29).
// 5 temperatures × 2 drafts (the tokens ranked first and second by
// logit); seed (81, 82).
func TestMeasureConditionalFrequencies(t *testing.T) {
	const n = 100_000
	rng := rand.New(rand.NewPCG(81, 82))
	z := testLogits(rng, 1, 32000)
	order := make([]int, 0, 64) // top tokens by logit
	for len(order) < 2 {
		best := -1
		for i, v := range z {
			taken := false
			for _, o := range order {
				taken = taken || o == i
			}
			if !taken && (best < 0 || v > z[best]) {
				best = i
			}
		}
		order = append(order, best)
	}
	b := getBuckets()
	defer putBuckets(b)
	for _, d := range []int{order[0], order[1]} {
		if !b.prepare(z, d, 2) {
			t.Fatal("prepare refused finite logits")
		}
		for _, theta := range []float64{0.05, 0.3, 0.7, 1.2, 2} {
			q := DisagreeProb(z, d, theta)
			diff := 0
			for range n {
				if !b.sampleIsDraft(theta, rng.Float64()) {
					diff++
				}
			}
			freq := float64(diff) / n
			sd := math.Sqrt(q * (1 - q) / n)
			switch {
			case sd == 0 && freq != q:
				t.Errorf("draft %d θ=%v: frequency %v, exact %v", d, theta, freq, q)
			case sd > 0 && math.Abs(freq-q)/sd > 3.29:
				t.Errorf("draft %d θ=%v: frequency %.5f, exact %.5f, z = %.2f", d, theta, freq, q, (freq-q)/sd)
			}
			if testing.Verbose() && sd > 0 {
				t.Logf("draft %5d θ=%.2f: P(≠d) exact %.5f, fast %.5f, z=%+.2f", d, theta, q, freq, (freq-q)/sd)
			}
		}
	}
}

// meanDisagree is E[1(d_θ ≠ d)] for θ uniform on [0, θmax]: composite
// Simpson on 2000 intervals of DisagreeProb (smooth on (0, θmax], with all
// derivatives → 0 at θ → 0⁺ when d is not the argmax, and DisagreeProb(0)
// is the greedy value). Error below 1e-8 for the logits used here.
func meanDisagree(z []float32, d int, thetaMax float64) float64 {
	const n = 2000
	h := thetaMax / n
	s := 0.0
	for i := 0; i <= n; i++ {
		th := float64(i) * h
		f := DisagreeProb(z, d, th)
		if i == 0 {
			// The limit θ → 0⁺ (the θ = 0 point itself has measure zero).
			f = DisagreeProb(z, d, 1e-9)
		}
		switch {
		case i == 0 || i == n:
			s += f
		case i%2 == 1:
			s += 4 * f
		default:
			s += 2 * f
		}
	}
	return s * h / 3 / thetaMax
}

// binomialPMF returns P(X = k) for X ~ Binomial(m, q), k = 0…m.
func binomialPMF(m int, q float64) []float64 {
	p := make([]float64, m+1)
	for k := range p {
		lc, _ := math.Lgamma(float64(m + 1))
		l1, _ := math.Lgamma(float64(k + 1))
		l2, _ := math.Lgamma(float64(m - k + 1))
		p[k] = math.Exp(lc - l1 - l2 + float64(k)*math.Log(q) + float64(m-k)*math.Log1p(-q))
	}
	return p
}

// TestMeasureMarginalDistribution: the M samples of u are i.i.d.
// Bernoulli(q̄) with q̄ = E_θ[P(d_θ ≠ d | θ)], so M·u ~ Binomial(M, q̄).
// For three (logits, draft) cases with q̄ = 0.93, 0.64, 0.88 (V = 1000:
// flat logits and their argmax; two close leading tokens, each as the
// draft), N = 10^4 calls of Measure (M = 20: 2·10^5 perturbed samples per
// case) are tested against that binomial: Pearson χ² over the 21 values of
// M·u (cells with expected count < 5 pooled), α = 0.001. Seeds (91, 92) for
// the logits and (93 + case, 0) for the calls. MeasureNaive is run through
// the same test as a check of the test itself (N = 1000).
func TestMeasureMarginalDistribution(t *testing.T) {
	const n, m = 10_000, 20
	rng := rand.New(rand.NewPCG(91, 92))
	p := Perturbation{M: m, ThetaMax: 2}
	flat := testLogits(rng, 0, 1000)
	pair := make([]float32, 1000)
	for i := range pair {
		pair[i] = float32(rng.NormFloat64())
	}
	pair[10] += 6
	pair[20] += 6.5
	cases := []struct {
		z     []float32
		draft int
	}{
		{flat, sampling.Argmax(flat)},
		{pair, 20},
		{pair, 10},
	}
	for c, cs := range cases {
		z, d := cs.z, cs.draft
		qbar := meanDisagree(z, d, p.ThetaMax)
		if qbar < 0.05 || qbar > 0.95 {
			t.Fatalf("case %d: q̄ = %v is not an informative case", c, qbar)
		}
		want := binomialPMF(m, qbar)
		for _, naive := range []bool{false, true} {
			runs := n
			measure := p.Measure
			if naive {
				runs, measure = 1000, p.MeasureNaive
			}
			r := rand.New(rand.NewPCG(uint64(93+c), 0))
			counts := make([]int, m+1)
			for range runs {
				counts[int(math.Round(measure(z, d, r)*m))]++
			}
			stat, df := chiSquare(counts, want)
			crit := chi2Critical(df)
			t.Logf("case %d naive=%v: q̄=%.4f, N=%d, χ²=%.2f df=%d critical(α=%v)=%.3f", c, naive, qbar, runs, stat, df, alpha, crit)
			if stat > crit {
				t.Errorf("case %d naive=%v: M·u does not follow Binomial(%d, %.4f): χ²=%.2f > %.3f", c, naive, m, qbar, stat, crit)
			}
		}
	}
}

// TestBucketBounds is the deterministic test of the bounds: for every
// nonempty bucket and temperature, lo ≤ exact sum ≤ hi (after the 1e-10
// widening that covers rounding, which is also what the decision uses); the side sums
// bracket A and B; and for a grid of uniforms the fast decision equals the
// decision computed from a full softmax (inverse CDF) except within 1e-9 of
// a CDF boundary.
func TestBucketBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(101, 102))
	b := getBuckets()
	defer putBuckets(b)
	for trial := range 60 {
		v := 2 + rng.IntN(5000)
		z := testLogits(rng, trial, v)
		d := rng.IntN(v)
		if trial%3 == 0 {
			d = sampling.Argmax(z)
		}
		if !b.prepare(z, d, 2) {
			continue // non-finite draft logit: handled by the naive path
		}
		for _, theta := range []float64{1e-3, 0.01, 0.1, 0.5, 1, 2} {
			inv := 1 / theta
			aLo, aHi, bLo, bHi, _ := b.bound(inv)
			var aEx, bEx float64
			for k, g := range b.nonempty {
				// The decision uses the bounds widened by a relative 1e-10.
				lo, hi := b.lo[k]*(1-widen), b.hi[k]*(1+widen)
				ex := b.exact(k, inv)
				if ex < lo || ex > hi {
					t.Fatalf("trial %d θ=%v group %d: exact %v outside [%v, %v]", trial, theta, g, ex, lo, hi)
				}
				if int(g) <= b.nb {
					aEx += ex
				} else {
					bEx += ex
				}
			}
			if aEx < aLo*(1-1e-12) || aEx > aHi*(1+1e-12) || bEx < bLo*(1-1e-12) || bEx > bHi*(1+1e-12) {
				t.Fatalf("trial %d θ=%v: A=%v ∉ [%v, %v] or B=%v ∉ [%v, %v]", trial, theta, aEx, aLo, aHi, bEx, bLo, bHi)
			}
			// Decisions against the full softmax.
			x := sampling.Softmax(nil, z, theta)
			lo, hi := 0.0, 0.0
			for i := range d {
				lo += x[i]
			}
			hi = lo + x[d]
			total := hi
			for i := d + 1; i < v; i++ {
				total += x[i]
			}
			for k := range 200 {
				u := (float64(k) + 0.5) / 200
				if math.Abs(u*total-lo) < 1e-9 || math.Abs(u*total-hi) < 1e-9 {
					continue
				}
				want := lo <= u*total && u*total < hi
				if got := b.sampleIsDraft(theta, u); got != want {
					t.Fatalf("trial %d θ=%v u=%v: fast decision %v, softmax %v", trial, theta, u, got, want)
				}
			}
		}
	}
}

func TestMeasureEdgeCases(t *testing.T) {
	rng := rand.New(rand.NewPCG(111, 112))
	p := Perturbation{}
	inf := float32(math.Inf(1))
	tests := []struct {
		name   string
		logits []float32
		draft  int
		want   float64 // −1: only check the range and agreement with naive
	}{
		{"empty", nil, 0, 1},
		{"draft out of range", []float32{1, 2}, 2, 1},
		{"negative draft", []float32{1, 2}, -1, 1},
		{"single token", []float32{3}, 0, 0},
		{"dominant draft", []float32{100, 0, 0}, 0, 0},
		{"impossible draft", []float32{0, float32(math.Inf(-1))}, 1, 1},
		{"NaN draft logit", []float32{0, float32(math.NaN())}, 1, 1},
		{"+Inf logit (naive path)", []float32{inf, 0, inf}, 0, -1},
		{"all equal", []float32{1, 1, 1, 1}, 2, -1},
	}
	for _, tt := range tests {
		a := rand.New(rand.NewPCG(7, 7))
		b := rand.New(rand.NewPCG(7, 7))
		got := p.Measure(tt.logits, tt.draft, a)
		if naive := p.MeasureNaive(tt.logits, tt.draft, b); got != naive {
			t.Errorf("%s: Measure %v ≠ MeasureNaive %v", tt.name, got, naive)
		}
		if tt.want >= 0 && got != tt.want {
			t.Errorf("%s: u = %v, want %v", tt.name, got, tt.want)
		}
		if got < 0 || got > 1 {
			t.Errorf("%s: u = %v out of [0, 1]", tt.name, got)
		}
	}
	// Invalid configurations fall back to the defaults rather than panic.
	_ = Perturbation{M: -5, ThetaMax: math.NaN()}.Measure([]float32{1, 2, 3}, 1, rng)
}

func TestDisagreeProb(t *testing.T) {
	z := []float32{0, float32(math.Ln2), 0}
	tests := []struct {
		draft int
		theta float64
		want  float64
	}{
		{1, 1, 0.5},
		{0, 1, 0.75},
		{1, 0, 0},
		{0, 0, 1},
		{5, 1, 1},
	}
	for _, tt := range tests {
		if got := DisagreeProb(z, tt.draft, tt.theta); math.Abs(got-tt.want) > 1e-7 {
			t.Errorf("DisagreeProb(d=%d, θ=%v) = %v, want %v", tt.draft, tt.theta, got, tt.want)
		}
	}
}
