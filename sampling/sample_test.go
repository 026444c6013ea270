package sampling

import (
	"math"
	"math/rand/v2"
	"testing"
)

// sampleCounts draws n tokens with sample and counts them.
func sampleCounts(p []float64, n int, seed uint64, sample func([]float64, *rand.Rand) int) []int {
	rng := rand.New(rand.NewPCG(seed, 0))
	counts := make([]int, len(p))
	for range n {
		i := sample(p, rng)
		if i < 0 || i >= len(p) {
			counts[0] = -1 << 40 // poisons the statistic
			continue
		}
		counts[i]++
	}
	return counts
}

func normalized(w ...float64) []float64 {
	s := 0.0
	for _, v := range w {
		s += v
	}
	p := make([]float64, len(w))
	for i, v := range w {
		p[i] = v / s
	}
	return p
}

// goodnessCases are the fixed distributions of the chi-square tests.
func goodnessCases() []struct {
	name string
	p    []float64
} {
	geometric := make([]float64, 30)
	for i := range geometric {
		geometric[i] = math.Pow(0.7, float64(i))
	}
	long := make([]float64, 200) // crosses several 64-entry blocks
	for i := range long {
		long[i] = 1 / float64(1+i)
	}
	plusEps := normalized(3, 1, 4, 1, 5, 9, 2, 6)
	plusEps[0] += 1e-9 // sums to 1 + 1e-9
	minusEps := normalized(3, 1, 4, 1, 5, 9, 2, 6)
	minusEps[7] -= 1e-9 // sums to 1 − 1e-9
	return []struct {
		name string
		p    []float64
	}{
		{"uniform10", normalized(1, 1, 1, 1, 1, 1, 1, 1, 1, 1)},
		{"peaked", normalized(90, 5, 3, 1, 0.5, 0.5)},
		{"zeros interleaved", normalized(0, 2, 0, 0, 5, 1, 0, 3, 0)},
		{"geometric30", normalized(geometric...)},
		{"zipf200", normalized(long...)},
		{"sum 1+1e-9", plusEps},
		{"sum 1-1e-9", minusEps},
		// Weights that are not a distribution: Sample scales u by Σp, so a
		// sampler that takes Σp = 1 fails these (it returns token 0 for
		// every u at Σ = 29, and the last token for 40% of them at Σ = 0.6).
		{"weights sum 29", []float64{3, 1, 4, 1, 5, 9, 2, 4}},
		{"weights sum 0.6", []float64{0.1, 0.05, 0.2, 0.15, 0.1}},
	}
}

// TestSampleChiSquare checks Sample against fixed distributions: n = 10^6
// draws per distribution, seed = 1000 + case index (PCG stream 0),
// significance α = 0.001 with the critical value of χ²(df) for the number of
// cells (expected count ≥ 5; smaller cells pooled), against p/Σp (the
// weights cases do not sum to 1). Zero-probability tokens must never be
// drawn.
func TestSampleChiSquare(t *testing.T) {
	const n = 1_000_000
	for ci, c := range goodnessCases() {
		t.Run(c.name, func(t *testing.T) {
			seed := uint64(1000 + ci)
			counts := sampleCounts(c.p, n, seed, Sample)
			for i, p := range c.p {
				if p == 0 && counts[i] != 0 {
					t.Fatalf("zero-probability token %d drawn %d times", i, counts[i])
				}
			}
			stat, df := chiSquare(counts, normalized(c.p...))
			crit := chi2Critical(df)
			t.Logf("n=%d seed=%d χ²=%.2f df=%d critical(α=%v)=%.3f p=%.3f", n, seed, stat, df, alpha, crit, chi2Survival(df, stat))
			if stat > crit {
				t.Errorf("χ² = %.2f > %.3f (df=%d, α=%v): Sample does not follow p", stat, crit, df, alpha)
			}
		})
	}
}

// offByOne is a classic inverse-CDF bug: the comparison happens before the
// current entry is added, so token i receives the mass of token i−1.
func offByOne(p []float64, rng *rand.Rand) int {
	u := rng.Float64()
	cum := 0.0
	for i, v := range p {
		if u < cum {
			return i
		}
		cum += v
	}
	return len(p) - 1
}

// dropsLast scans one entry short and falls back to token 0.
func dropsLast(p []float64, rng *rand.Rand) int {
	u := rng.Float64()
	cum := 0.0
	for i := 0; i < len(p)-1; i++ {
		cum += p[i]
		if u < cum {
			return i
		}
	}
	return 0
}

// TestChiSquareDetectsBiasedSamplers runs the same test (same n, seeds and
// α) on two deliberately wrong samplers and requires it to reject them, so
// that the passing test above means something.
func TestChiSquareDetectsBiasedSamplers(t *testing.T) {
	const n = 1_000_000
	bugs := []struct {
		name   string
		sample func([]float64, *rand.Rand) int
	}{
		{"off-by-one CDF", offByOne},
		{"drops last token", dropsLast},
	}
	for _, bug := range bugs {
		for ci, c := range goodnessCases() {
			if bug.name == "drops last token" && c.p[len(c.p)-1] < 1e-3 {
				// The bug moves p_last to token 0. With p_last = 0 it is
				// harmless; with p_last ≈ 2e-5 (geometric30) 10^6 draws
				// cannot resolve it. Only cases with p_last ≥ 1e-3 count.
				continue
			}
			seed := uint64(1000 + ci)
			counts := sampleCounts(c.p, n, seed, bug.sample)
			stat, df := chiSquare(counts, normalized(c.p...))
			zeroHit := false
			for i, p := range c.p {
				if p == 0 && counts[i] != 0 {
					zeroHit = true
				}
			}
			if stat <= chi2Critical(df) && !zeroHit {
				t.Errorf("%s on %s: χ² = %.2f ≤ %.3f, bug not detected", bug.name, c.name, stat, chi2Critical(df))
			}
		}
	}
}

func TestSampleEdgeCases(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	tests := []struct {
		name string
		p    []float64
		want int // −2: any valid
	}{
		{"empty", nil, -1},
		{"all zero", []float64{0, 0, 0}, -1},
		{"negative and NaN only", []float64{-1, math.NaN()}, -1},
		{"one-hot", []float64{0, 0, 1, 0}, 2},
		{"one-hot at end", []float64{0, 0, 0, 1e-300}, 3},
		{"negative entries ignored", []float64{-5, 0, 1}, 2},
	}
	for _, tt := range tests {
		for range 100 {
			if got := Sample(tt.p, rng); got != tt.want {
				t.Fatalf("%s: Sample(%v) = %d, want %d", tt.name, tt.p, got, tt.want)
			}
		}
	}
}

// Rounding must never produce a zero-probability token: a distribution
// whose positive entries are tiny and surrounded by zeros, with u forced
// near 1 by many draws.
func TestSampleNeverReturnsZeroMass(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	p := make([]float64, 1000)
	for i := 0; i < len(p); i += 97 {
		p[i] = 1.0 / 3 * float64(1+i%5)
	}
	p[500] = 1e-17 // below the rounding of the running sum
	for range 200_000 {
		i := Sample(p, rng)
		if i < 0 || !(p[i] > 0) {
			t.Fatalf("drew token %d of probability %v", i, p[i])
		}
	}
}

func TestSampleReproducible(t *testing.T) {
	p := normalized(1, 2, 3, 4, 5)
	a := rand.New(rand.NewPCG(9, 9))
	b := rand.New(rand.NewPCG(9, 9))
	for range 1000 {
		if Sample(p, a) != Sample(p, b) {
			t.Fatal("same seed, different tokens")
		}
	}
}

// TestInverseCDFBoundaries checks InverseCDF's convention at the exact
// boundaries of the CDF F: it returns the first token i with F(i) > u, so
// u = F(i) belongs to the next positive token, both inside a block of the
// blocked scan and where F(i) is the total of the blocks before. All values
// are multiples of 2^-10 summing to 1, so every sum is exact.
func TestInverseCDFBoundaries(t *testing.T) {
	const v = 200
	num := map[int]int{0: 64, 5: 100, 63: 60, 64: 200, 100: 100, 127: 300, 191: 100, 199: 100} // Σ = 1024
	p := make([]float64, v)
	var pos []int
	for i := range v {
		if n, ok := num[i]; ok {
			p[i] = float64(n) / 1024
			pos = append(pos, i)
		} else if i%7 == 3 {
			p[i] = -0.5 // never returned, not counted
		}
	}
	F := 0.0
	for k, i := range pos {
		if got := InverseCDF(p, F+p[i]/2); got != i {
			t.Errorf("InverseCDF(u = %v) = %d, want %d", F+p[i]/2, got, i)
		}
		F += p[i]
		if k+1 < len(pos) {
			if got := InverseCDF(p, F); got != pos[k+1] {
				t.Errorf("InverseCDF(u = F(%d) = %v) = %d, want %d (first token with F > u)", i, F, got, pos[k+1])
			}
		}
	}
	if got := InverseCDF(p, 0); got != 0 {
		t.Errorf("InverseCDF(u = 0) = %d, want 0", got)
	}
}
