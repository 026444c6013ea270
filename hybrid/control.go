package hybrid

import "math"

// Controller chooses the draft length L and the lattice resolution ℓ of each
// round from what the device knows at its start (Q-S Sec. IV-B: the prefix
// confidence features and the current uplink rate). Methods q-s and s-q use
// it when Params.Draft is "ddqn".
type Controller interface {
	Choose(s ControlState) (L, ell int)
}

// ControlState is the device's state at the start of a round.
type ControlState struct {
	MeanConf  float64 // f̄: mean SLM probability of the committed tokens it drafted or resampled
	LastConf  float64 // the last such probability (1 before any)
	Rate      float64 // the round's uplink rate, bit/s
	Generated int     // tokens committed so far
}

// Features is the state as a vector for a learned policy: f̄, the last
// confidence, log2 of the rate, and the generated count scaled by 1/100.
func (s ControlState) Features() []float64 {
	return []float64{s.MeanConf, s.LastConf, math.Log2(math.Max(s.Rate, 1)), float64(s.Generated) / 100}
}

// RoundInfo reports one verified round to Config.OnRound (e.g. to train a
// controller): the state and action, what the server accepted, and the
// round's virtual duration.
type RoundInfo struct {
	State     ControlState
	L, Ell    int
	Accepted  int
	Committed int
	Seconds   float64
	Next      ControlState
	Done      bool
}

// controlState is the device's current state.
func (d *Device) controlState() ControlState {
	s := ControlState{MeanConf: 1, LastConf: d.lastConf, Rate: d.rate, Generated: len(d.seq) - d.prompt}
	if d.confN > 0 {
		s.MeanConf = d.confSum / float64(d.confN)
	}
	return s
}

// SetController installs a controller (replacing any loaded from Params).
func (d *Device) SetController(c Controller) { d.ctrl = c }

// noteConfidence records the SLM probability of a committed token.
func (d *Device) noteConfidence(p float64) {
	d.confSum += p
	d.confN++
	d.lastConf = p
}
