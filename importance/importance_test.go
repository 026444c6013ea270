package importance

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestThreshold(t *testing.T) {
	tests := []struct {
		name  string
		a     []float32
		gamma float64
		want  float64
	}{
		// mean 0.25, population variance (0.0225+0.0025+0.0025+0.0225)/4 = 0.0125.
		{"four weights γ=1", []float32{0.1, 0.2, 0.3, 0.4}, 1, 0.4 - math.Sqrt(0.0125)},
		{"four weights γ=0.5", []float32{0.1, 0.2, 0.3, 0.4}, 0.5, 0.4 - 0.5*math.Sqrt(0.0125)},
		// mean 2, population std 1.
		{"exact", []float32{1, 3}, 2, 1},
		{"constant row", []float32{0.25, 0.25, 0.25, 0.25}, 1.5, 0.25},
		{"γ=0 is the max", []float32{0.5, 0.3, 0.2}, 0, 0.5},
		{"NaN ignored", []float32{1, float32(math.NaN()), 3}, 2, 1},
		{"single weight", []float32{1}, 1, 1},
	}
	for _, tt := range tests {
		if got := Threshold(tt.a, tt.gamma); math.Abs(got-tt.want) > 1e-7 {
			t.Errorf("%s: Threshold = %v, want %v", tt.name, got, tt.want)
		}
	}
	if !math.IsNaN(Threshold(nil, 1)) {
		t.Error("empty row: want NaN")
	}
}

func TestImportant(t *testing.T) {
	// Peaked: three strong positions over eight weak ones. mean 1/11,
	// population std 0.114293.
	peaked := []float32{0.3, 0.02, 0.25, 0.02, 0.02, 0.28, 0.02, 0.02, 0.03, 0.02, 0.02}
	// Flat (attention collapse): mean 0.125, population std 0.0035355.
	flat := []float32{0.13, 0.12, 0.125, 0.125, 0.12, 0.13, 0.125, 0.125}
	tests := []struct {
		name  string
		a     []float32
		k     int
		gamma float64
		want  bool
	}{
		// θ = 0.4 − 0.1118 = 0.2882: above are 0.3 and 0.4.
		{"k=2 met", []float32{0.1, 0.2, 0.3, 0.4}, 2, 1, true},
		{"k=3 not met", []float32{0.1, 0.2, 0.3, 0.4}, 3, 1, false},
		// γ = 1.5: θ = 0.4 − 0.1677 = 0.2323: above are 0.3, 0.4.
		{"γ=1.5 k=3", []float32{0.1, 0.2, 0.3, 0.4}, 3, 1.5, false},
		// γ = 2.5: θ = 0.4 − 0.2795 = 0.1205: above 0.2, 0.3, 0.4.
		{"γ=2.5 k=3", []float32{0.1, 0.2, 0.3, 0.4}, 3, 2.5, true},
		// θ = 3 − 2·1 = 1 exactly: the weight 1 is not strictly above.
		{"equal to threshold is not above", []float32{1, 3}, 2, 2, false},
		// θ = 0.3 − 0.1143 = 0.1857: above 0.3, 0.25, 0.28.
		{"peaked k=3 γ=1", peaked, 3, 1, true},
		// θ = 0.3 − 0.1714 = 0.1286: still only those three.
		{"peaked k=5 γ=1.5", peaked, 5, 1.5, false},
		// θ = 0.3 − 0.0286 = 0.2714: above 0.3 and 0.28 only.
		{"peaked k=3 γ=0.25", peaked, 3, 0.25, false},
		// θ = 0.13 − 0.0035 = 0.12646: above only the two 0.13.
		{"flat k=3 γ=1", flat, 3, 1, false},
		// θ = 0.13 − 0.0053 = 0.12470: above the two 0.13 and four 0.125.
		{"flat k=3 γ=1.5", flat, 3, 1.5, true},
		{"flat k=7 γ=1.5", flat, 7, 1.5, false},
		{"constant row", []float32{0.25, 0.25, 0.25, 0.25}, 1, 1, false},
		{"row shorter than k", []float32{0.5, 0.5}, 3, 1.5, false},
		// A row of exactly k weights can have all k above θ_imp (U+I
		// Sec. IV: "at least k of its attention weights exceeding the
		// importance threshold θ_imp(t)", eq. 6): std = 0.1 and γ = 3
		// give θ = 0.6 − 0.3 = 0.3, below both weights (a row is never
		// too short at len = k; it needs γ > 2 to happen).
		{"row of exactly k, all above", []float32{0.4, 0.6}, 2, 3, true},
		{"empty row", nil, 1, 1, false},
		{"k=0 acts as 1", []float32{0.2, 0.8}, 0, 1, true},
	}
	for _, tt := range tests {
		if got := Important(tt.a, tt.k, tt.gamma); got != tt.want {
			th := Threshold(tt.a, tt.gamma)
			t.Errorf("%s: Important(k=%d, γ=%v) = %v, want %v (θ=%v, above=%d)", tt.name, tt.k, tt.gamma, got, tt.want, th, CountAbove(tt.a, th))
		}
	}
}

// Important is "the k-th largest weight is above θ_imp", the paper's
// formulation with the ascending sort; checked on 2000 random rows (seed
// (1, 2)) against a sort-based reference for the paper's grid of k and γ.
func TestImportantMatchesSortedDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		n := 1 + rng.IntN(60)
		a := make([]float32, n)
		s := float32(0)
		for i := range a {
			a[i] = float32(rng.ExpFloat64() * math.Exp(2*rng.NormFloat64()))
			s += a[i]
		}
		for i := range a {
			a[i] /= s
		}
		sorted := slices.Clone(a)
		slices.Sort(sorted) // ascending, as Ã(t)
		for _, k := range []int{3, 5, 7, 9, 11} {
			for _, g := range []float64{0.5, 1, 1.5} {
				want := n >= k && float64(sorted[n-k]) > Threshold(a, g)
				if got := Important(a, k, g); got != want {
					t.Fatalf("row %v k=%d γ=%v: %v, sorted definition %v", a, k, g, got, want)
				}
			}
		}
	}
}

func BenchmarkImportant(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	a := make([]float32, 2048)
	for i := range a {
		a[i] = float32(rng.ExpFloat64())
	}
	for b.Loop() {
		Important(a, 5, 1)
	}
}

// TestMatrixReadingDegenerates: a causal attention matrix with random
// rows whose draft row has collapsed — flat at 1/L except two positions a
// little above — is not important under the row reading for any k ≥ 3 and
// γ of the paper's grid (only two weights stand out), but is under the
// literal L×L reading for all of them: the k-th largest entry of the
// matrix is at least 1/k (rows 1…k), above θ_imp ≤ max of the flat row.
func TestMatrixReadingDegenerates(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	const L = 40
	rows := make([][]float32, L)
	for j := range rows {
		r := make([]float32, j+1)
		s := float32(0)
		for i := range r {
			r[i] = float32(rng.ExpFloat64())
			s += r[i]
		}
		for i := range r {
			r[i] /= s
		}
		rows[j] = r
	}
	flat := make([]float32, L)
	for i := range flat {
		flat[i] = (1 - 2*0.05) / (L - 2)
	}
	flat[7], flat[23] = 0.05, 0.05 // max 0.05 < 1/11
	rows[L-1] = flat
	for _, k := range []int{3, 5, 7, 9, 11} {
		for _, g := range []float64{0.5, 1, 1.5} {
			if Important(flat, k, g) {
				t.Errorf("k=%d γ=%v: the collapsed row counts as important", k, g)
			}
			if !ImportantMatrix(rows, k, g) {
				t.Errorf("k=%d γ=%v: the matrix reading should pass the collapsed row", k, g)
			}
		}
	}
}
