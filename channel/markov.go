package channel

import (
	"math"
	"math/rand/v2"
	"time"
)

// Markov is the two-state rate model of Q-S Sec. V-A (channel=markov): the
// uplink is in a low- or a high-rate state, and between rounds it moves
// low→high with probability p_lh and high→low with probability p_hl.
// The stationary probability of the high state is p_lh/(p_lh + p_hl) and the
// mean stay in the low (high) state is 1/p_lh (1/p_hl) rounds.
type Markov struct {
	common
	low, high float64 // rates, bit/s
	pLH, pHL  float64
	inHigh    bool // current state
	started   bool // false until the first Round
	rng       *rand.Rand
}

var _ Link = (*Markov)(nil)

func newMarkov(cfg Config) *Markov {
	m := &Markov{
		common: commonOf(cfg),
		low:    cfg.RateLowBps,
		high:   cfg.RateHighBps,
		pLH:    cfg.PLowHigh,
		pHL:    cfg.PHighLow,
		rng:    newRand(cfg.Seed),
	}
	switch cfg.MarkovInit {
	case InitHigh:
		m.inHigh = true
	case InitStationary:
		m.inHigh = m.rng.Float64() < m.StationaryHigh()
	}
	return m
}

// Round returns the current state's rate; the first round is in the initial
// state and every later round first makes one transition.
func (m *Markov) Round(time.Duration) State {
	if m.started {
		if m.inHigh {
			m.inHigh = m.rng.Float64() >= m.pHL
		} else {
			m.inHigh = m.rng.Float64() < m.pLH
		}
	}
	m.started = true
	rate := m.low
	if m.inHigh {
		rate = m.high
	}
	return m.state(rate, math.NaN())
}

// StationaryHigh is the stationary probability of the high state,
// p_lh/(p_lh + p_hl) (NaN when both are zero).
func (m *Markov) StationaryHigh() float64 { return m.pLH / (m.pLH + m.pHL) }

// MeanRate is the stationary mean uplink rate in bit/s.
func (m *Markov) MeanRate() float64 {
	ph := m.StationaryHigh()
	return (1-ph)*m.low + ph*m.high
}
