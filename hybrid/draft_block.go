package hybrid

import (
	"fmt"
	"math"

	"github.com/hlmproject/hlm/codec"
	"github.com/hlmproject/hlm/sampling"
	"github.com/hlmproject/hlm/speculative"
)

// blockLength is the number of drafts a block round may make: one less
// than the room left (blockRoom), capped by the controller's choice
// (draft=ddqn, which also sets the round's ℓ) or the draft-length
// policy. A budget-filled batch (K-SQS, C-SQS) is capped only by
// batch_max when set; by default the bit budget alone ends it
// (encodedBlock.step).
func (d *Device) blockLength(room int, budget bool) (int, error) {
	L := blockRoom(room)
	switch {
	case d.p.Draft == DraftDDQN && d.ctrl == nil && d.m.Controlled:
		return 0, fmt.Errorf("%w: draft=ddqn needs a trained policy (ddqn_model=FILE, see hlm train-ddqn)", ErrParam)
	case d.ctrl != nil && d.m.Controlled:
		res, ok := d.enc.(resolvable)
		if !ok {
			return 0, fmt.Errorf("%w: draft=ddqn chooses ℓ per round, which codec %s cannot carry", ErrParam, d.enc.Name())
		}
		l, ell := d.ctrl.Choose(d.controlState())
		if l < 1 {
			return 0, fmt.Errorf("hybrid: controller chose L=%d, ℓ=%d", l, ell)
		}
		enc, err := res.AtResolution(ell)
		if err != nil {
			return 0, fmt.Errorf("hybrid: controller chose L=%d, ℓ=%d: %v", l, ell, err)
		}
		L = min(L, l)
		d.enc = enc
		d.lastEll = ell
	case !budget:
		L = min(L, d.dlen.Next())
	case d.p.BatchMax > 0:
		L = min(L, d.p.BatchMax)
	}
	if d.batch != nil {
		d.batch.BeginBatch()
	}
	return L, nil
}

// encodedBlock drafts a block of up to L tokens, each with its encoded
// distribution (Q-S, S-Q; K-SQS and C-SQS fill the block to the bit
// budget: a draft whose payload would exceed it ends the block, the
// first always goes).
type encodedBlock struct{ budget bool }

func (b encodedBlock) step(d *Device, room int) (Step, error) {
	L, err := d.blockLength(room, b.budget)
	if err != nil {
		return Step{}, err
	}
	var drafts []drafted
	fill := batchFill{on: b.budget, budget: d.p.Budget}
	ctx := append([]int(nil), d.seq...)
	enc := d.enc // the first draft's codec; a Chained one's Rest after it
	for len(drafts) < L {
		stop, err := fill.ahead(d, len(drafts))
		if err != nil {
			return Step{}, err
		}
		if stop {
			break
		}
		logits, err := d.slm.last(ctx)
		if err != nil {
			return Step{}, err
		}
		x := d.p.distOf(nil, logits)
		stop, err = fill.admit(d, x, len(drafts))
		if err != nil {
			return Step{}, err
		}
		if stop {
			break
		}
		dr, err := d.encodeDraft(enc, x)
		if err != nil {
			return Step{}, err
		}
		if ch, ok := enc.(codec.Chained); ok {
			enc = ch.Rest()
		}
		drafts = append(drafts, dr)
		ctx = append(ctx, dr.token)
	}
	st := d.sendBlock(drafts)
	st.budgetEnd, st.overBudget, st.Probed = fill.full, fill.over, fill.probed
	return st, nil
}

// encodeDraft encodes x with c (the device's codec, or its Rest after a
// Chained codec's first draft) and samples the draft from what the server
// will verify against (x, or its reconstruction for the methods that
// sample it).
func (d *Device) encodeDraft(c codec.Codec, x []float64) (drafted, error) {
	enc, err := c.Encode(x, -1)
	if err != nil {
		return drafted{}, err
	}
	dr := drafted{sample: x, recon: enc.Recon, payload: enc.Payload, bits: enc.Bits, support: enc.Support, dropped: enc.Dropped, u: math.NaN()}
	if d.p.SamplesRecon() {
		dr.sample, dr.slm = enc.Recon, x
	}
	dr.token = sampling.Sample(dr.sample, d.rng)
	if dr.token < 0 {
		return drafted{}, fmt.Errorf("hybrid: the draft distribution has no mass")
	}
	return dr, nil
}

// batchFill fills a K-SQS or C-SQS batch to the bit budget (SQS Sec. 4's
// rule, codec.FitsBudget), except that a round always carries its first
// draft: a budget smaller than one draft would otherwise stall the
// generation. It is inert for the blocks of a fixed length (on false).
type batchFill struct {
	on     bool
	budget int
	used   int
	full   bool // the budget ended the batch
	over   bool // the first draft alone exceeded the budget
	probed int  // SLM passes computed for a draft that did not fit
}

// ahead tells, before the SLM pass of draft n, whether a payload size the
// vocabulary alone fixes (K-SQS) already leaves no room for it.
func (f *batchFill) ahead(d *Device, n int) (bool, error) {
	fb, ok := d.enc.(fixedBits)
	if !f.on || n == 0 || !ok {
		return false, nil
	}
	bits, err := fb.Bits(d.vocab)
	if err != nil {
		return false, err
	}
	f.full = !codec.FitsBudget(f.used, bits, f.budget)
	return f.full, nil
}

// admit tells whether draft n, of distribution x, ends the batch instead
// of joining it: its payload (C-SQS: decided by its support) would exceed
// the budget. The pass that computed x is then counted as probed.
func (f *batchFill) admit(d *Device, x []float64, n int) (bool, error) {
	if !f.on {
		return false, nil
	}
	bits, err := d.bitsFor(x)
	if err != nil {
		return false, err
	}
	if !codec.FitsBudget(f.used, bits, f.budget) {
		if n > 0 {
			f.full, f.probed = true, 1
			return true, nil
		}
		f.over = true
	}
	f.used += bits
	return false, nil
}

// fixedBits is a budgeted codec whose payload size the vocabulary alone
// fixes (codec.KSQS: K and V), so a batch needs no draft to know that
// the next one will not fit.
type fixedBits interface {
	Bits(vocab int) (int, error)
}

// bitsFor is the codec payload size a budget-filled batch will spend on x.
func (d *Device) bitsFor(x []float64) (int, error) {
	if b, ok := d.enc.(budgeted); ok {
		return b.BudgetBits(x)
	}
	return 0, fmt.Errorf("hybrid: codec %s cannot tell its payload size before encoding: no bit budget", d.enc.Name())
}

// idsBlock drafts a block sent as token ids only: coupled drafts by the
// keyed-noise race the server repeats (drafter-invariant), or replica
// drafts sampled as usual with a running hash of their logits, which the
// server's own copy of the SLM must reproduce.
type idsBlock struct{ coupled bool }

func (b idsBlock) step(d *Device, room int) (Step, error) {
	L, err := d.blockLength(room, false)
	if err != nil {
		return Step{}, err
	}
	check := checkSeed
	var drafts []drafted
	ctx := append([]int(nil), d.seq...)
	for len(drafts) < L {
		logits, err := d.slm.last(ctx)
		if err != nil {
			return Step{}, err
		}
		x := d.p.distOf(nil, logits)
		dr := drafted{sample: x, u: math.NaN()}
		if b.coupled {
			dr.token = speculative.CoupledSample(x, d.p.Seed, len(ctx))
		} else {
			dr.token = sampling.Sample(x, d.rng)
			check = checkLogits(check, logits)
		}
		if dr.token < 0 {
			return Step{}, fmt.Errorf("hybrid: the draft distribution has no mass")
		}
		drafts = append(drafts, dr)
		ctx = append(ctx, dr.token)
	}
	st := d.sendBlock(drafts)
	if !b.coupled {
		st.Upload.Check, st.Upload.HasCheck = check, true
	}
	return st, nil
}

// sendBlock sends a block's drafts.
func (d *Device) sendBlock(drafts []drafted) Step {
	d.lastL = len(drafts)
	st := d.send(drafts)
	st.Drafted = len(drafts)
	return st
}

// blockRoom is the most drafts a block round needs when room tokens may
// still be committed: a fully accepted block is followed by the server's
// bonus token (Q-S eq. 3), so room−1 drafts already yield room tokens,
// and a room-th draft would cost an SLM pass and its uplink bits for a
// token the bonus gives anyway (the bonus would be cut). A round with
// room for one token still drafts one.
func blockRoom(room int) int {
	return max(1, room-1)
}
