package hybrid

import "fmt"

// A DraftRecord is one draft that a verification reached (the accepted
// ones and the first rejected), as the simulator sees it: what the device
// drew it from and the LLM's distribution at its position.
type DraftRecord struct {
	Round int // the round, from 1
	Pos   int // the draft's position in the sequence (prompt included)
	Token int
	// X is the distribution the draft was drawn from; XHat what the
	// server verified it against (the reconstruction of what was sent;
	// nil where the server's race decides: coupled, coupled-list); Y the
	// LLM's distribution at Pos.
	X, XHat, Y []float64
	// U is the draft's uncertainty (U-HLM eq. 7): NaN unless the method
	// measures it or the session asks for it
	// (SessionConfig.MeasureUncertainty).
	U float64
	// Accepted: the draft was committed.
	Accepted bool
}

// draftObserver shows every draft the verification reached to f
// (Config.OnDraft).
type draftObserver struct {
	f func(DraftRecord)
}

func (o *draftObserver) observe(r *round) error {
	tr := r.server
	if !r.verified() || tr == nil {
		return nil
	}
	pos := r.positions()
	for l := 0; l <= r.verdict.Accepted && l < len(pos); l++ {
		if l >= len(tr.DraftY) || tr.DraftY[l] == nil {
			return fmt.Errorf("observer: no target distribution at draft %d of %d", l, len(pos))
		}
		dr := pos[l]
		var xh []float64
		if l < len(tr.XHat) {
			xh = tr.XHat[l]
		}
		o.f(DraftRecord{Round: r.n, Pos: r.pos + l, Token: dr.token, X: dr.sample, XHat: xh, Y: tr.DraftY[l],
			U: dr.u, Accepted: l < r.verdict.Accepted})
	}
	return nil
}

func (o *draftObserver) fill(*Result) {}
