package stattest

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestChi2Table(t *testing.T) {
	for df := 1; df < len(crit001); df++ {
		if q := Survival(df, crit001[df]); math.Abs(q-Alpha) > 2e-6 {
			t.Errorf("df=%d: P(χ² > %v) = %.7f, want %v", df, crit001[df], q, Alpha)
		}
	}
	for _, df := range []int{40, 63, 100, 400} {
		if q := Survival(df, Critical(df)); math.Abs(q-Alpha)/Alpha > 0.05 {
			t.Errorf("df=%d: Wilson–Hilferty critical value %v has tail %v, want %v", df, Critical(df), q, Alpha)
		}
	}
}

// dirichlet1 draws a distribution uniformly from the simplex over v cells.
func dirichlet1(rng *rand.Rand, v int) []float64 {
	p := make([]float64, v)
	s := 0.0
	for i := range p {
		p[i] = rng.ExpFloat64()
		s += p[i]
	}
	for i := range p {
		p[i] /= s
	}
	return p
}

func draw(rng *rand.Rand, p []float64) int {
	u, c := rng.Float64(), 0.0
	for i, pi := range p {
		if c += pi; u < c {
			return i
		}
	}
	return len(p) - 1
}

// TestConditionalIsPearsonWhenHomogeneous: with one distribution for every
// draw, W equals Pearson's statistic (same cells), to 1e-9 relative; seed 1,
// 10 sets of 500 draws over 8 cells, two of them rare enough to be pooled.
func TestConditionalIsPearsonWhenHomogeneous(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 0))
	p := []float64{0.3, 0.2, 0.15, 0.15, 0.1, 0.094, 0.004, 0.002}
	for rep := range 10 {
		var c Conditional
		counts := make([]int, len(p))
		for range 500 {
			tok := draw(rng, p)
			c.Add(tok, p)
			counts[tok]++
		}
		w, df, imp, err := c.Test()
		if err != nil {
			t.Fatal(err)
		}
		chi, dfc := ChiSquare(counts, p)
		if df != dfc || imp != 0 || math.Abs(w-chi) > 1e-9*chi {
			t.Errorf("set %d: W = %v on %d df (%d impossible), Pearson %v on %d df", rep, w, df, imp, chi, dfc)
		}
	}
}

// TestConditionalCalibration: draws each from its own distribution (a fresh
// Dirichlet(1) over 6 cells per draw), 400 draws per test, 4,000 tests, seed
// 3. Under this null W's p-value falls below 0.05 in 5% of the tests
// (tolerance ±1.15 points, 3.3 binomial standard deviations), while
// Pearson's statistic against the summed expectations, conservative here,
// rejects less often. Draws from distributions that move up to
// 0.1 of cell 1's probability to cell 0 must be rejected at 0.001 in at
// least 90% of the tests (power).
func TestConditionalCalibration(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 0))
	const tests, n, v = 4000, 400, 6
	var wRej, pRej, shiftRej int
	for range tests {
		var c, shifted Conditional
		counts := make([]int, v)
		exp := make([]float64, v)
		for range n {
			p := dirichlet1(rng, v)
			tok := draw(rng, p)
			c.Add(tok, p)
			counts[tok]++
			for i := range p {
				exp[i] += p[i] / n
			}
			q := append([]float64(nil), p...)
			moved := math.Min(q[1], 0.1)
			q[0], q[1] = q[0]+moved, q[1]-moved
			shifted.Add(draw(rng, q), p)
		}
		w, df, _, err := c.Test()
		if err != nil {
			t.Fatal(err)
		}
		if Survival(df, w) < 0.05 {
			wRej++
		}
		chi, dfc := ChiSquare(counts, exp)
		if Survival(dfc, chi) < 0.05 {
			pRej++
		}
		ws, df, _, err := shifted.Test()
		if err != nil {
			t.Fatal(err)
		}
		if Survival(df, ws) < Alpha {
			shiftRej++
		}
	}
	wr, pr, sr := float64(wRej)/tests, float64(pRej)/tests, float64(shiftRej)/tests
	t.Logf("rejections at 0.05 under the null: W %.4f, Pearson %.4f; shifted rejected at 0.001: %.3f", wr, pr, sr)
	if math.Abs(wr-0.05) > 0.0115 {
		t.Errorf("W rejects %.4f of true nulls at 0.05, want 0.05 ± 0.0115", wr)
	}
	if pr >= wr {
		t.Errorf("Pearson rejects %.4f, W %.4f: Pearson should be the conservative one here", pr, wr)
	}
	if sr < 0.9 {
		t.Errorf("shifted draws rejected in %.3f of the tests, want >= 0.9", sr)
	}
}

// TestConditionalImpossible: a draw of probability 0 under its own
// distribution is counted.
func TestConditionalImpossible(t *testing.T) {
	var c Conditional
	for i := range 100 {
		c.Add(i%2, []float64{0.5, 0.5, 0})
	}
	c.Add(2, []float64{0.5, 0.5, 0})
	if _, _, imp, err := c.Test(); err != nil || imp != 1 {
		t.Errorf("impossible draws %d (err %v), want 1", imp, err)
	}
}
