package sampling

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// order returns the token ids of p sorted by the filter order (probability
// descending, id ascending), positive entries only: the brute-force
// reference for TopK and TopP.
func order(p []float64) []int {
	var idx []int
	for i, v := range p {
		if v > 0 {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case p[a] > p[b]:
			return -1
		case p[a] < p[b]:
			return 1
		}
		return 0
	})
	return idx
}

// keepRef zeroes everything but keep and renormalizes.
func keepRef(p []float64, keep []int) []float64 {
	out := make([]float64, len(p))
	s := 0.0
	for _, i := range keep {
		s += p[i]
	}
	for _, i := range keep {
		out[i] = p[i] / s
	}
	return out
}

func topKRef(p []float64, k int) []float64 {
	o := order(p)
	return keepRef(p, o[:min(k, len(o))])
}

func topPRef(p []float64, top float64) []float64 {
	o := order(p)
	total := 0.0
	for _, i := range o {
		total += p[i]
	}
	cum := 0.0
	for n, i := range o {
		cum += p[i]
		if cum >= top*total {
			return keepRef(p, o[:n+1])
		}
	}
	return keepRef(p, o)
}

func equalDist(a, b []float64, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol {
			return false
		}
	}
	return true
}

func TestTopKTable(t *testing.T) {
	tests := []struct {
		name string
		p    []float64
		k    int
		want []float64
	}{
		{"k=1", []float64{0.2, 0.5, 0.3}, 1, []float64{0, 1, 0}},
		{"k=2", []float64{0.2, 0.5, 0.3}, 2, []float64{0, 0.625, 0.375}},
		{"tie: lower id kept", []float64{0.25, 0.25, 0.5}, 2, []float64{1.0 / 3, 0, 2.0 / 3}},
		{"all tied", []float64{0.25, 0.25, 0.25, 0.25}, 3, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3, 0}},
		{"k=0 disables", []float64{0.2, 0.5, 0.3}, 0, []float64{0.2, 0.5, 0.3}},
		{"k≥V disables", []float64{0.2, 0.5, 0.3}, 3, []float64{0.2, 0.5, 0.3}},
		// k = V exactly is "k ≥ len(p)": untouched, not renormalized and
		// with its non-positive entries left as they are.
		{"k=V leaves p untouched", []float64{1, 6, -3}, 3, []float64{1, 6, -3}},
		{"fewer positives than k", []float64{0, 0.4, 0, 0.6}, 3, []float64{0, 0.4, 0, 0.6}},
		{"negative and NaN never kept", []float64{-1, math.NaN(), 0.5, 0.5}, 3, []float64{0, 0, 0.5, 0.5}},
		{"all zero untouched", []float64{0, 0, 0}, 1, []float64{0, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := slices.Clone(tt.p)
			TopK(p, tt.k)
			if !equalDist(p, tt.want, 1e-15) {
				t.Errorf("TopK(%v, %d) = %v, want %v", tt.p, tt.k, p, tt.want)
			}
		})
	}
}

func TestTopPTable(t *testing.T) {
	tests := []struct {
		name string
		p    []float64
		top  float64
		want []float64
	}{
		{"smallest set reaching top", []float64{0.1, 0.6, 0.3}, 0.8, []float64{0, 2.0 / 3, 1.0 / 3}},
		{"exactly reaching", []float64{0.1, 0.6, 0.3}, 0.6, []float64{0, 1, 0}},
		{"just above", []float64{0.1, 0.6, 0.3}, 0.61, []float64{0, 2.0 / 3, 1.0 / 3}},
		{"tie: lower id first", []float64{0.4, 0.4, 0.2}, 0.3, []float64{1, 0, 0}},
		{"top ≤ 0 keeps the argmax", []float64{0.3, 0.3, 0.4}, 0, []float64{0, 0, 1}},
		// "only the most probable token": one token, the lower id of a tie.
		{"top ≤ 0, tied maximum keeps the lower id", []float64{0.4, 0.2, 0.4}, 0, []float64{1, 0, 0}},
		{"top=1 disables", []float64{0.1, 0.6, 0.3}, 1, []float64{0.1, 0.6, 0.3}},
		{"unnormalized input", []float64{1, 6, 3}, 0.8, []float64{0, 2.0 / 3, 1.0 / 3}},
		{"all zero untouched", []float64{0, 0}, 0.5, []float64{0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := slices.Clone(tt.p)
			TopP(p, tt.top)
			if !equalDist(p, tt.want, 1e-15) {
				t.Errorf("TopP(%v, %v) = %v, want %v", tt.p, tt.top, p, tt.want)
			}
		})
	}
}

// Random distributions with many ties (values drawn from a small set)
// against the sort-everything reference.
func TestFiltersMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 3000 {
		v := 1 + rng.IntN(40)
		if trial%100 == 0 {
			v = 5000
		}
		p := make([]float64, v)
		s := 0.0
		for i := range p {
			if rng.IntN(5) == 0 {
				continue // zeros
			}
			p[i] = float64(1 + rng.IntN(6))
			if trial%3 == 0 {
				p[i] = rng.ExpFloat64()
			}
			s += p[i]
		}
		for i := range p {
			if s > 0 {
				p[i] /= s
			}
		}
		k := rng.IntN(v + 2)
		top := rng.Float64()
		got := slices.Clone(p)
		TopK(got, k)
		want := p
		if k > 0 && k < v && s > 0 {
			want = topKRef(p, k)
		}
		if !equalDist(got, want, 1e-12) {
			t.Fatalf("trial %d: TopK(%v, %d) = %v, want %v", trial, p, k, got, want)
		}
		got = slices.Clone(p)
		TopP(got, top)
		want = p
		if s > 0 {
			want = topPRef(p, top)
		}
		if !equalDist(got, want, 1e-12) {
			t.Fatalf("trial %d: TopP(%v, %v) = %v, want %v", trial, p, top, got, want)
		}
	}
}
