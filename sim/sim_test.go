package sim

import (
	"context"
	"os"
	"testing"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/uncertainty"
)

const stories = "../../shared/models/stories260K/stories260K.bin"

func pair(t *testing.T, slm string) *Models {
	t.Helper()
	if _, err := os.Stat(stories); err != nil {
		t.Skipf("shared model not present (%v)", err)
	}
	ms, err := Open(stories, slm, "")
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// TestTheorem1OnCalibratedData: on real calibration data (the stories260K
// pair with a 4-layer early-exit draft, whose fitted slope is positive) the
// rejection risk R of U-HLM Theorem 1 stays below its Hölder bound.
func TestTheorem1OnCalibratedData(t *testing.T) {
	ms := pair(t, stories+"@exit=4")
	p := hybrid.DefaultParams()
	p.MaxTokens = 48
	prompts := []string{"Once upon a time", "Lily saw a big dog", "Tom had a red car", "The sun was hot", "Ben and Mia went to the park", "One day, a little bird"}
	log, err := Collect(context.Background(), ms, p, prompts, 50, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, density := range []string{uncertainty.DensityKDE, uncertainty.DensityHistogram} {
		res, err := Analyze(log, 0.1, uncertainty.Options{M: p.M, Density: density})
		if err != nil {
			t.Fatal(err)
		}
		if res.Degenerate {
			t.Fatalf("slope %v: expected a positive slope for this pair", res.Fit.A)
		}
		t.Logf("%s: n=%d a=%.3f b=%.3f Δ=%.3f R=%.4g bound=%.4g k*=%d", density, res.N, res.Fit.A, res.Fit.B, res.Delta, res.Risk, res.RiskBound, res.KOffline)
		if !(res.Risk <= res.RiskBound+1e-12) {
			t.Errorf("%s: R = %g exceeds the Hölder bound %g", density, res.Risk, res.RiskBound)
		}
	}
}

// TestAggregate: counts add up and rates are recomputed from the sums.
func TestAggregate(t *testing.T) {
	a := hybrid.Result{Tokens: []int{1, 2}, Rounds: 2, Uploads: 1, VirtualSeconds: 1, UplinkBits: 10, Accepted: 1, Resampled: 1}
	b := hybrid.Result{Tokens: []int{3, 4, 5, 6}, Rounds: 2, Uploads: 2, VirtualSeconds: 1, UplinkBits: 30, Accepted: 3, Resampled: 0}
	s := Aggregate([]hybrid.Result{a, b})
	if len(s.Tokens) != 6 || s.Rounds != 4 || s.Uploads != 3 || s.TransmissionRate != 0.75 || s.ThroughputTPS != 3 || s.BitsPerToken != 40.0/6 || *s.RejectionRate != 0.2 {
		t.Errorf("aggregate %+v", s.Result)
	}
}
