package hybrid

import (
	"math"
	"testing"

	"github.com/hlmproject/hlm/wire"
)

// TestOracleCoupledRace: a coupled position's deviation is computed from the
// law of the server's race (speculative.RaceDist of the distribution it raced
// over), not taken as 0. A round whose server raced over weights (0.5, 0.3,
// 0) — a target that lost 0.2 of its mass — committed a token distributed
// as (0.625, 0.375, 0): L1 deviation 0.2 from the target it was compared
// with; with a proper distribution the deviation is 0.
func TestOracleCoupledRace(t *testing.T) {
	for _, tc := range []struct {
		y    []float64
		want float64
	}{
		{[]float64{0.5, 0.3, 0}, 0.2},
		{[]float64{0.5, 0.3, 0.2}, 0},
	} {
		o := &oracle{}
		r := &round{
			step:    Step{Upload: &wire.Upload{Drafts: []wire.Draft{{Token: 1}, {Token: 2}}}},
			drafts:  []drafted{{token: 1}, {token: 2}},
			verdict: &wire.Verdict{Accepted: 0, Token: 0, Resampled: true},
			server:  &Trace{DraftY: [][]float64{tc.y, tc.y, tc.y}, XHat: make([][]float64, 2)},
		}
		if err := o.observe(r); err != nil {
			t.Fatal(err)
		}
		var res Result
		o.fill(&res)
		if res.MeanDeviation == nil {
			t.Fatalf("y = %v: no deviation measured", tc.y)
		}
		if got := *res.MeanDeviation; math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("y = %v: deviation %v, want %v", tc.y, got, tc.want)
		}
	}
}

// TestCoupledDeviationMeasured: on the real pair, coupled and coupled-list
// runs report a deviation (measured from the race's law at every examined
// draft position) of 0 up to rounding, as the race lemma says by
// construction.
func TestCoupledDeviationMeasured(t *testing.T) {
	llm, slm := openPair(t, stories+"@exit=2")
	prompt := llm.Tokenizer().Encode("She was", true)
	for _, m := range []string{Coupled, CoupledList} {
		p := DefaultParams()
		p.Method, p.Seed, p.MaxTokens, p.L = m, 3, 40, 3
		r := runOnce(t, p, llm, slm, prompt)
		if r.MeanDeviation == nil || !(*r.MeanDeviation < 1e-12) {
			t.Errorf("%s: deviation %v, want measured and 0 up to rounding", m, r.MeanDeviation)
			continue
		}
		t.Logf("%s: deviation %.3g over %d rounds", m, *r.MeanDeviation, r.Uploads)
	}
}
