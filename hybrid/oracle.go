package hybrid

import (
	"fmt"

	"github.com/hlmproject/hlm/speculative"
)

// oracle measures, in the simulator only (the server in the process, its
// distributions at hand), how far the committed tokens' distributions are
// from the LLM's: the mean L1 distance between the distribution each
// committed draft position effectively followed and the LLM's (CU-HLM
// eq. 17's Bias(t), averaged over the draft). That distribution is
// speculative.OutputDist of the draft's sampling distribution, x̂ and y for
// standard verification (Device.outputDist), and the law of the server's
// exponential race over y for coupled and coupled-list positions
// (speculative.RaceDist). For the methods that sample what they send (Q-S,
// K-SQS, C-SQS, HLM, replica) and for coupling the result is 0 up to
// rounding by construction — OutputDist(x̂, x̂, y) = y, RaceDist(y) = y — so
// it checks the bookkeeping, not the sampler; the chi-square tests on the
// real pair (TestBlocksFollowTheLLMOnRealPair) check the sampler. Skipped
// tokens are measured against the LLM's distribution when their upload is
// verified, or at the end of the run for those that never reached the
// server.
type oracle struct {
	d      *Device
	server *Server
	sum    float64
	n      int
}

func (o *oracle) observe(r *round) error {
	tr := r.server
	if !r.verified() || tr == nil {
		return nil
	}
	for j, x := range r.unsentX {
		if j < len(tr.CommittedY) {
			o.sum += l1(x, tr.CommittedY[j])
			o.n++
		}
	}
	pos := r.positions()
	for l := 0; l <= r.verdict.Accepted && l < len(pos); l++ {
		if l >= len(tr.DraftY) || tr.DraftY[l] == nil {
			return fmt.Errorf("deviation: no target distribution at draft %d of %d", l, len(pos))
		}
		eff, err := o.positionDist(r, l)
		if err != nil {
			return fmt.Errorf("deviation: %w", err)
		}
		o.sum += l1(eff, tr.DraftY[l])
		o.n++
	}
	return nil
}

// positionDist is the exact distribution of the token committed at draft
// position l of a verified round, given that the round reached it.
func (o *oracle) positionDist(r *round, l int) ([]float64, error) {
	tr := r.server
	if tr.XHat[l] == nil { // coupled, coupled-list: the server's race over y decides
		return speculative.RaceDist(tr.DraftY[l]), nil
	}
	return o.d.outputDist(r.positions()[l], tr.XHat[l], tr.DraftY[l])
}

// end measures the tokens committed on the device after the last upload.
func (o *oracle) end() error {
	if len(o.d.unsent) == 0 {
		return nil
	}
	ys, err := o.server.Targets(int32s(o.d.unsent))
	if err != nil {
		return err
	}
	for j, y := range ys {
		o.sum += l1(o.d.unsentX[j], y)
		o.n++
	}
	return nil
}

func (o *oracle) fill(res *Result) {
	if o.n > 0 {
		res.MeanDeviation = ptr(o.sum / float64(o.n))
	}
}

func int32s(xs []int32) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x)
	}
	return out
}

// l1 is Σ|a_i − b_i|, twice the total variation distance.
func l1(a, b []float64) float64 { return 2 * speculative.TV(a, b) }
