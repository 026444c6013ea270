package hybrid

import (
	"math"

	"github.com/hlmproject/hlm/speculative"
)

// Batch is one budget-filled batch of K-SQS or C-SQS (SQS Sec. 4) as the
// simulator measures it, with the terms of SQS Theorem 1 at each draft.
// Only the simulator records batches (Result.Batches): the terms need the
// LLM's distributions, which only the in-process server has.
type Batch struct {
	L         int  // drafts sent, L^t
	Bits      int  // their codec bits, Σ b_n (at most B, except a lone first draft)
	BudgetEnd bool // drafting stopped because the next draft did not fit B (else: the tokens left)
	Accepted  int  // T^t
	Resampled bool // a draft was rejected and resampled: N_rej counts it
	// Beta is C-SQS's threshold after the batch, rolled back to the
	// examined drafts' updates (Algorithm 1, line 13); NaN for K-SQS.
	Beta   float64
	Drafts []BatchDraft
}

// BatchDraft is one draft of a batch and the terms of SQS Theorem 1
// (eq. 3–4) at its position: q is the SLM's distribution, q̂ the sparse
// lattice point sent (the draft is sampled from it), p the LLM's.
type BatchDraft struct {
	K       int     // support size K_n of the sparsified q
	Dropped float64 // α_n: q's mass outside the support (eq. 4; Lemma 1: TV(q, q̄))
	TV      float64 // TV(q_n, p_n): the SLM–LLM discrepancy
	// TVHat is TV(q̂_n, p_n), the exact probability that the draft is
	// rejected (SQS eq. 12–14) when it is sampled from q̂ (the default
	// sample_from=recon).
	TVHat float64
	// Examined: the server examined this draft (an accepted one, or the
	// rejected one). Theorem 1 sums over examined drafts; C-SQS keeps
	// exactly their threshold updates (codec.Conformal.EndBatch).
	Examined bool
}

// batches records Result.Batches (simulator only, budget-filled methods).
type batches struct {
	d   *Device
	out []Batch
}

func (b *batches) observe(r *round) error {
	tr := r.server
	if !r.verified() || tr == nil {
		return nil
	}
	v := r.verdict
	bt := Batch{L: len(r.drafts), Bits: r.step.CodecBits, BudgetEnd: r.step.budgetEnd, Accepted: v.Accepted, Resampled: v.Resampled, Beta: math.NaN()}
	if t, ok := b.d.enc.(thresholded); ok {
		bt.Beta = t.Threshold()
	}
	for l, dr := range r.drafts {
		q := dr.sample
		if dr.slm != nil {
			q = dr.slm
		}
		bd := BatchDraft{K: dr.support, Dropped: dr.dropped, Examined: l <= v.Accepted}
		if l < len(tr.DraftY) && tr.DraftY[l] != nil {
			bd.TV = speculative.TV(q, tr.DraftY[l])
			if l < len(tr.XHat) && tr.XHat[l] != nil {
				bd.TVHat = speculative.TV(tr.XHat[l], tr.DraftY[l])
			}
		}
		bt.Drafts = append(bt.Drafts, bd)
	}
	b.out = append(b.out, bt)
	return nil
}

func (b *batches) fill(res *Result) { res.Batches = b.out }
