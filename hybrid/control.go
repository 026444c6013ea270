package hybrid

import "math"

// Controller chooses the draft length L and the lattice resolution ℓ of each
// round from what the device knows at its start (Q-S Sec. IV-B: the prefix
// confidence features and the current uplink rate). Methods q-s and s-q use
// it when Params.Draft is "ddqn".
type Controller interface {
	Choose(s ControlState) (L, ell int)
}

// ConfWindow is how many of the latest prefix confidences a ControlState
// carries. Q-S Sec. IV-B's state holds the whole confidence vector f^t,
// whose length grows with the output; a network takes a fixed number of
// inputs, so the policy sees its latest ConfWindow entries, its mean f̄ and
// its length.
const ConfWindow = 8

// ControlState is the device's state at the start of a round: Q-S
// Sec. IV-B's semantic information (the prefix confidence vector f^t, each
// entry the SLM's own probability of a generated token, and its mean f̄^t)
// and connectivity information (the round's uplink rate C_u^t).
type ControlState struct {
	MeanConf  float64   // f̄^t (1 before any token)
	Conf      []float64 // the latest entries of f^t, newest first, at most ConfWindow
	Rate      float64   // C_u^t, the round's uplink rate, bit/s
	Generated int       // Δt: tokens committed so far, the length of f^t
}

// Features is the state as a vector for a learned policy: f̄, the
// ConfWindow latest confidences newest first (f̄ in the places f^t is too
// short to fill), log2 of the rate, and Δt/100.
func (s ControlState) Features() []float64 {
	f := make([]float64, 0, ControlFeatures)
	f = append(f, s.MeanConf)
	for i := range ConfWindow {
		c := s.MeanConf
		if i < len(s.Conf) {
			c = s.Conf[i]
		}
		f = append(f, c)
	}
	return append(f, math.Log2(math.Max(s.Rate, 1)), float64(s.Generated)/100)
}

// RoundInfo reports one verified round to Config.OnRound (e.g. to train a
// controller): the state and action, what the server accepted, and the
// round's virtual duration.
type RoundInfo struct {
	State     ControlState
	L, Ell    int
	Accepted  int
	Committed int
	// Alpha are the drafts' acceptance probabilities min(1, p_l(x_l)/q̂_l(x_l))
	// in order, as far as the server's distributions are at hand (the
	// simulator: Config.Oracle; nil otherwise): Q-S's g(x) (Sec. IV-C,
	// speculative.ExpectedTokens) is the expected number of tokens the round
	// commits given its drafts.
	Alpha   []float64
	Seconds float64
	Next    ControlState
	Done    bool
}

// controlState is the device's current state.
func (d *Device) controlState() ControlState {
	s := ControlState{MeanConf: 1, Rate: d.rate, Generated: len(d.seq) - d.prompt}
	if d.confN > 0 {
		s.MeanConf = d.confSum / float64(d.confN)
	}
	for i := len(d.confs) - 1; i >= 0; i-- {
		s.Conf = append(s.Conf, d.confs[i])
	}
	return s
}

// SetController installs a controller (replacing any loaded from Params).
func (d *Device) SetController(c Controller) { d.ctrl = c }

// noteConfidence records the SLM's probability of a committed token (an
// entry of f^t).
func (d *Device) noteConfidence(p float64) {
	d.confSum += p
	d.confN++
	if len(d.confs) == ConfWindow {
		d.confs = append(d.confs[:0], d.confs[1:]...)
	}
	d.confs = append(d.confs, p)
}

// noteBonus records the SLM's probability of the bonus token that now ends
// the sequence, for a controlled device: the SLM reads the token now (it
// must before it drafts on, so this costs no extra evaluation), and the
// logits before it give the probability. The other methods need no
// confidences and skip this.
func (d *Device) noteBonus() error {
	rows, err := d.slm.rows(d.seq, len(d.seq)-1)
	if err != nil {
		return err
	}
	x := d.p.distOf(nil, rows[0])
	d.noteConfidence(x[d.seq[len(d.seq)-1]])
	return nil
}
