package speculative

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hlmproject/hlm/sampling"
)

// verifier is the signature shared by Verify and the deliberately wrong
// verifiers below.
type verifier func(xhat, y []float64, draft int, rng *rand.Rand) (int, bool)

// empiricalPairs are the fixed (x, y) pairs of the empirical tests.
func empiricalPairs() []pair {
	return []pair{
		{"random", []float64{0.1, 0.2, 0.3, 0.15, 0.25}, []float64{0.3, 0.1, 0.1, 0.3, 0.2}},
		{"peaked", []float64{0.85, 0.05, 0.05, 0.03, 0.02}, []float64{0.4, 0.3, 0.1, 0.1, 0.1}},
		{"zeros", []float64{0.5, 0, 0.3, 0.2, 0, 0}, []float64{0.1, 0.3, 0, 0.2, 0.25, 0.15}},
		{"disjoint", []float64{0.6, 0.4, 0, 0}, []float64{0, 0, 0.7, 0.3}},
		{"identical", []float64{0.25, 0.25, 0.4, 0.1}, []float64{0.25, 0.25, 0.4, 0.1}},
		{"ten", normalize([]float64{9, 1, 8, 2, 7, 3, 6, 4, 5, 5}), normalize([]float64{1, 9, 2, 8, 3, 7, 4, 6, 5, 5})},
	}
}

// committedCounts drafts n tokens from s, verifies each against (xhat, y)
// with verify, and counts the committed tokens.
func committedCounts(s, xhat, y []float64, n int, seed uint64, verify verifier) []int {
	rng := rand.New(rand.NewPCG(seed, 0))
	counts := make([]int, len(y))
	for range n {
		d := sampling.Sample(s, rng)
		tok, _ := verify(xhat, y, d, rng)
		if tok < 0 || tok >= len(y) {
			counts[0] = -1 << 40
			continue
		}
		counts[tok]++
	}
	return counts
}

// chiSquareAgainst runs the test and returns the statistic, the critical
// value and whether a zero-probability cell was hit.
func chiSquareAgainst(counts []int, want []float64) (stat, crit float64, df int, zeroHit bool) {
	for i, p := range want {
		if p <= 1e-15 && counts[i] != 0 {
			zeroHit = true
		}
	}
	stat, df = chiSquare(counts, want)
	return stat, chi2Critical(df), df, zeroHit
}

// TestVerifyChiSquare: drafts from x, Verify(x, y), committed tokens tested
// against y. n = 10^6 per pair, seed 100 + pair index (PCG stream 0),
// α = 0.001, critical value of χ²(df) with df = cells − 1.
func TestVerifyChiSquare(t *testing.T) {
	const n = 1_000_000
	for pi, p := range empiricalPairs() {
		seed := uint64(100 + pi)
		counts := committedCounts(p.x, p.x, p.y, n, seed, Verify)
		stat, crit, df, zeroHit := chiSquareAgainst(counts, p.y)
		t.Logf("%-9s n=%d seed=%d χ²=%.2f df=%d critical(α=%v)=%.3f", p.family, n, seed, stat, df, alpha, crit)
		if zeroHit || stat > crit {
			t.Errorf("%s: committed tokens do not follow y: χ²=%.2f > %.3f (zero cell hit: %v)", p.family, stat, crit, zeroHit)
		}
	}
}

// TestVerifyQuantizeThenSample: Q-S with a coarse lattice (ℓ = 4): drafts
// from q̂, Verify(q̂, y). Same n, α; seed 200 + pair index.
func TestVerifyQuantizeThenSample(t *testing.T) {
	const n = 1_000_000
	for pi, p := range empiricalPairs() {
		seed := uint64(200 + pi)
		q := lattice(p.x, 4)
		counts := committedCounts(q, q, p.y, n, seed, Verify)
		stat, crit, df, zeroHit := chiSquareAgainst(counts, p.y)
		if zeroHit || stat > crit {
			t.Errorf("%s: Q-S output does not follow y: χ²=%.2f > %.3f (df=%d)", p.family, stat, crit, df)
		}
	}
}

// TestVerifySampleThenCompress: S-Q with CU-HLM's top-1 reconstruction:
// drafts from x, Verify(x̂, y). The committed tokens follow OutputDist(x,
// x̂, y) (accepted at α = 0.001) and not y (rejected at α = 0.001): the
// closed form predicts the lossy deviation, and the test resolves it.
// n = 10^6, seed 300 + pair index.
func TestVerifySampleThenCompress(t *testing.T) {
	const n = 1_000_000
	for pi, p := range empiricalPairs() {
		if p.family == "identical" || p.family == "disjoint" {
			continue // no deviation to detect: y = x, or every draft rejected
		}
		seed := uint64(300 + pi)
		xh := topKUniform(p.x, 1)
		want := OutputDist(p.x, xh, p.y)
		counts := committedCounts(p.x, xh, p.y, n, seed, Verify)
		stat, crit, df, zeroHit := chiSquareAgainst(counts, want)
		t.Logf("%-9s TV(output, y)=%.4f χ² vs OutputDist=%.2f (df=%d, critical %.3f)", p.family, TV(want, p.y), stat, df, crit)
		if zeroHit || stat > crit {
			t.Errorf("%s: S-Q output does not follow OutputDist: χ²=%.2f > %.3f", p.family, stat, crit)
		}
		stat, crit, _, zeroHit = chiSquareAgainst(counts, p.y)
		if !zeroHit && stat <= crit {
			t.Errorf("%s: S-Q deviation from y not detected: χ²=%.2f ≤ %.3f", p.family, stat, crit)
		}
	}
}

// Deliberately wrong verifiers. Each is a plausible slip in an
// implementation of the rule.

// unclippedResidual scans the signed residual y − x (not clipped at zero)
// while normalizing by the clipped mass.
func unclippedResidual(xhat, y []float64, d int, rng *rand.Rand) (int, bool) {
	if accept(xhat[d], y[d], rng) {
		return d, true
	}
	mass := 0.0
	for i := range y {
		mass += math.Max(y[i]-xhat[i], 0)
	}
	r := rng.Float64() * mass
	cum := 0.0
	for i := range y {
		cum += y[i] - xhat[i]
		if r < cum {
			return i, false
		}
	}
	return len(y) - 1, false
}

// resampleFromTarget replaces a rejected draft by a sample from y instead
// of the residual.
func resampleFromTarget(xhat, y []float64, d int, rng *rand.Rand) (int, bool) {
	if accept(xhat[d], y[d], rng) {
		return d, true
	}
	return sampling.Sample(y, rng), false
}

// deterministicOnly accepts only when y_d ≥ x_d and never probabilistically.
func deterministicOnly(xhat, y []float64, d int, rng *rand.Rand) (int, bool) {
	if y[d] >= xhat[d] {
		return d, true
	}
	return residualInverseCDF(y, xhat, rng.Float64()), false
}

// invertedRatio accepts with probability min(1, x_d/y_d).
func invertedRatio(xhat, y []float64, d int, rng *rand.Rand) (int, bool) {
	if accept(y[d], xhat[d], rng) {
		return d, true
	}
	return residualInverseCDF(y, xhat, rng.Float64()), false
}

// TestVerifyChiSquareDetectsWrongVerifiers runs TestVerifyChiSquare's test
// (same n, seeds, α) on each wrong verifier and requires rejection on the
// pairs where the bug changes the output distribution. (Accepting iff
// u < y_d/x_d with the ratio not capped at 1 is not on the list: it is the
// same rule, the cap is implied by u < 1.)
func TestVerifyChiSquareDetectsWrongVerifiers(t *testing.T) {
	const n = 1_000_000
	bugs := []struct {
		name    string
		verify  verifier
		visible []string // pairs on which the bug must be detected
	}{
		{"residual y−x not clipped", unclippedResidual, []string{"random", "peaked", "zeros", "ten"}},
		{"resample from y", resampleFromTarget, []string{"random", "peaked", "zeros", "ten"}},
		{"no probabilistic acceptance", deterministicOnly, []string{"random", "peaked", "zeros", "ten"}},
		{"ratio x/y instead of y/x", invertedRatio, []string{"random", "peaked", "zeros", "ten"}},
	}
	pairs := map[string]pair{}
	seeds := map[string]uint64{}
	for pi, p := range empiricalPairs() {
		pairs[p.family] = p
		seeds[p.family] = uint64(100 + pi)
	}
	for _, bug := range bugs {
		for _, name := range bug.visible {
			p := pairs[name]
			counts := committedCounts(p.x, p.x, p.y, n, seeds[name], bug.verify)
			stat, crit, df, zeroHit := chiSquareAgainst(counts, p.y)
			t.Logf("%-28s on %-7s χ²=%10.1f (df=%d, critical %.3f)", bug.name, name, stat, df, crit)
			if !zeroHit && stat <= crit {
				t.Errorf("%s on %s: not detected, χ²=%.2f ≤ %.3f", bug.name, name, stat, crit)
			}
		}
	}
}

func TestVerifyEdgeCases(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	y := []float64{0, 0.5, 0.5}
	// Out-of-range drafts are rejected and replaced from y.
	for _, d := range []int{-1, 3, 1 << 30} {
		tok, ok := Verify([]float64{1, 0, 0}, y, d, rng)
		if ok || tok < 1 || tok > 2 {
			t.Errorf("draft %d: Verify = %d, %v", d, tok, ok)
		}
	}
	// x̂_d = 0: acceptance ratio +∞.
	if tok, ok := Verify([]float64{1, 0, 0}, y, 2, rng); !ok || tok != 2 {
		t.Errorf("x̂_d = 0: Verify = %d, %v, want 2, true", tok, ok)
	}
	// y_d = 0 < x̂_d: always rejected, never returns d.
	for range 1000 {
		if tok, ok := Verify([]float64{1, 0, 0}, y, 0, rng); ok || tok == 0 {
			t.Fatalf("y_d = 0: Verify = %d, %v", tok, ok)
		}
	}
	// y = x̂ exactly: always accepted.
	for range 1000 {
		if _, ok := Verify(y, y, 1, rng); !ok {
			t.Fatal("y = x̂ rejected")
		}
	}
	mustPanic(t, "length mismatch", func() { Verify([]float64{1}, []float64{0.5, 0.5}, 0, rng) })
}

func mustPanic(t *testing.T, name string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", name)
		}
	}()
	f()
}
