package hybrid

import (
	"testing"

	"github.com/hlmproject/hlm/wire"
)

// TestRoundsDrawApart: the server draws each round's accept tests and
// resamples from that round's own stream (roundRNG(seed, round)). The same
// block verified as round 1 and as round 2 of one seed must come out
// differently for some of 200 seeds: with independent streams, two
// verifications of this block agree (accepted count, token) with
// probability 0.43 (0.6² + 0.24² + 0.096² + 0.064²·(0.3² + 0.7²)), so all
// 200 agree with probability 0.43^200 < 1e-73. A
// verifier that drew every round from round 0's stream passes the
// chi-square tests under -short (each position's law is unchanged; only
// rounds are correlated), and this test fails at once.
func TestRoundsDrawApart(t *testing.T) {
	p := DefaultParams()
	p.Method = QS
	s := &Server{p: p}
	xh := [][]float64{{0.5, 0.5}, {0.5, 0.5}, {0.5, 0.5}}
	ys := [][]float64{{0.2, 0.8}, {0.2, 0.8}, {0.2, 0.8}, {0.3, 0.7}}
	lists := [][]int{{0, 0, 0}} // each draft accepted with probability 0.4
	differ := 0
	for seed := range uint64(200) {
		s.p.Seed = seed
		r1 := standard{}.verifyAt(&Job{s: s, up: &wire.Upload{Round: 1}, lists: lists, xhats: xh}, at(ys))
		r2 := standard{}.verifyAt(&Job{s: s, up: &wire.Upload{Round: 2}, lists: lists, xhats: xh}, at(ys))
		if r1 != r2 {
			differ++
		}
	}
	if differ == 0 {
		t.Fatal("rounds 1 and 2 of 200 seeds verified the same block identically: they draw from one stream")
	}
}
