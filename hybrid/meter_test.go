package hybrid

import (
	"slices"
	"testing"
)

// TestDraftAccepts: a round's α_l (Q-S g(x), the DDQN reward of eq. 13–14)
// is the server's acceptance rule for every draft, min(1, y/x̂), with a
// draft of x̂ = 0 accepted outright (S-Q sends the lattice point of the x
// it sampled from, where ℓ·x < ½ rounds to 0): the list used to stop there,
// counting a two-draft block whose drafts are both surely accepted as one
// token instead of three.
func TestDraftAccepts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tokens []int
		xhat   [][]float64
		y      [][]float64
		want   []float64
	}{
		{"x̂ = 0 is accepted", []int{0, 1}, [][]float64{{0, 1}, {0.5, 0.5}}, [][]float64{{0.5, 0.5}, {0.25, 0.75}, {0.5, 0.5}}, []float64{1, 1}},
		{"ratio below 1", []int{1, 0}, [][]float64{{0.2, 0.8}, {0.5, 0.5}}, [][]float64{{0.6, 0.4}, {0.25, 0.75}}, []float64{0.5, 0.5}},
		{"y = 0", []int{1}, [][]float64{{0.5, 0.5}}, [][]float64{{1, 0}}, []float64{0}},
		{"no distribution for the second", []int{0, 1}, [][]float64{{0.5, 0.5}, nil}, [][]float64{{0.5, 0.5}, {0.5, 0.5}}, []float64{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &round{server: &Trace{XHat: tc.xhat, DraftY: tc.y}}
			for _, tok := range tc.tokens {
				r.drafts = append(r.drafts, drafted{token: tok})
			}
			got := r.draftAccepts()
			if !slices.Equal(got, tc.want) {
				t.Fatalf("α = %v, want %v", got, tc.want)
			}
		})
	}
}
