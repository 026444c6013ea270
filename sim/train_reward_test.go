package sim

import (
	"math"
	"testing"

	"github.com/hlmproject/hlm/hybrid"
)

// TestRoundReward: the DDQN's reward is Q-S eq. 13, N_avg/T, with N_avg
// the g(x) of eq. 14 written out as the paper writes it:
//
//	g(x) = Σ_{l=1}^{L} l·(Π_{j<l} α_j)·(1 − α_l) + (L + 1)·Π_{j≤L} α_j
//
// — the accepted drafts and the token after them. A reward of the
// accepted drafts alone (speculative.ExpectedAccepted, no + 1) trains for
// another throughput and passed every test before this one.
func TestRoundReward(t *testing.T) {
	g := func(alpha []float64) float64 {
		var sum, prod float64 = 0, 1
		for l, a := range alpha {
			sum += float64(l+1) * prod * (1 - a)
			prod *= a
		}
		return sum + float64(len(alpha)+1)*prod
	}
	for _, c := range []struct {
		alpha   []float64
		seconds float64
	}{
		{nil, 0.05}, // L = 0: the LLM's token alone
		{[]float64{0.5}, 0.1},
		{[]float64{0.5, 0.4}, 0.5},
		{[]float64{1, 1, 1, 1}, 0.2},
		{[]float64{0.9, 0, 0.7}, 0.3},
	} {
		want := g(c.alpha) / c.seconds
		if got := roundReward(hybrid.RoundInfo{Alpha: c.alpha, Seconds: c.seconds}); math.Abs(got-want) > 1e-12*want {
			t.Errorf("α %v over %g s: reward %g, want g(x)/T = %g", c.alpha, c.seconds, got, want)
		}
	}
}
