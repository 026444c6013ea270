package hybrid

import (
	"fmt"
	"math"

	"github.com/hlmproject/hlm/codec"
	"github.com/hlmproject/hlm/importance"
	"github.com/hlmproject/hlm/policy"
	"github.com/hlmproject/hlm/sampling"
)

// A drafter is how a method's device makes one round: it drafts, and
// either commits locally or returns the upload (through Device.send).
// room is the number of tokens that may still be committed, ≥ 1.
type drafter interface {
	step(d *Device, room int) (Step, error)
}

// noDrafts is the LLM-only method's round: an empty upload, the server
// samples the token.
type noDrafts struct{}

func (noDrafts) step(d *Device, _ int) (Step, error) { return d.send(nil), nil }

// oneDraft is the skip family's round (U-HLM eq. 4, CU-HLM eq. 6, CU-HLM Algorithm 1,
// U+I Sec. II): one draft, then the method's upload rule decides whether
// it is committed on the device or uploaded with its distribution.
type oneDraft struct{}

func (oneDraft) step(d *Device, _ int) (Step, error) {
	logits, err := d.slm.last(d.seq)
	if err != nil {
		return Step{}, err
	}
	x := d.p.distOf(nil, logits)
	dr := drafted{sample: x, u: math.NaN()}
	var enc codec.Encoded
	if d.enc != nil && d.p.SamplesRecon() {
		if enc, err = d.enc.Encode(x, -1); err != nil {
			return Step{}, err
		}
		dr.sample = enc.Recon
	}
	dr.token = sampling.Sample(dr.sample, d.rng)
	if dr.token < 0 {
		return Step{}, fmt.Errorf("hybrid: the draft distribution has no mass")
	}
	tok := policy.Token{Pos: len(d.seq), Draft: dr.token, XDraft: dr.sample[dr.token], U: math.NaN(), Dist: dr.sample}
	switch {
	case d.m.Uncertainty:
		tok.U = d.perturb.Measure(logits, dr.token, d.rng)
		dr.u = tok.U
	case d.measure != nil: // observed only: the upload rule does not see it
		dr.u = d.perturb.Measure(logits, dr.token, d.measure)
	}
	if d.m.Attention {
		// The draft's own attention row (U+I eq. 5): evaluate it now; its
		// logits serve the next round.
		if _, err := d.slm.last(append(d.seq, dr.token)); err != nil {
			return Step{}, err
		}
		if a := d.slm.s.Attention(); a != nil {
			row := a.Last()
			tok.Attention = row[:len(row)-1] // attention to the preceding tokens
			dr.imp = importance.CountAbove(tok.Attention, importance.Threshold(tok.Attention, d.p.Gamma))
		}
	}
	if !d.uploader.Upload(tok, d.rng) {
		d.seq = append(d.seq, dr.token)
		d.unsent = append(d.unsent, int32(dr.token))
		d.unsentProb = append(d.unsentProb, float32(tok.XDraft))
		d.unsentX = append(d.unsentX, dr.sample)
		return Step{Drafted: 1, Local: dr.token, U: tok.U, Imp: dr.imp}, nil
	}
	if !d.p.SamplesRecon() {
		if pe, ok := d.enc.(predictive); ok {
			enc, err = pe.EncodePredicted(x, dr.token, d.p.predictedBeta(tok.U))
		} else {
			enc, err = d.enc.Encode(x, dr.token)
		}
		if err != nil {
			return Step{}, err
		}
	}
	dr.recon, dr.payload, dr.bits, dr.support = enc.Recon, enc.Payload, enc.Bits, enc.Support
	st := d.send([]drafted{dr})
	st.Drafted = 1
	return st, nil
}

// predictedBeta is the online top-k's rejection probability a·u + b,
// clipped to [0, 1] (CU-HLM eq. 7, 24).
func (p Params) predictedBeta(u float64) float64 {
	return min(1, max(0, p.CalibA*u+p.CalibB))
}
