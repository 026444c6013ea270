package ddqn

import (
	"fmt"
	"math"
)

// Bounds on Config beyond the network limits.
const (
	MaxBatch  = 1 << 16
	MaxReplay = 1 << 24
)

// Config holds an Agent's hyperparameters. Start from DefaultConfig and
// change what differs; Validate (called by NewAgent) rejects the rest,
// including the zero Config.
type Config struct {
	Hidden        []int   // hidden-layer widths, default {64, 64}; empty: a linear Q-function
	Gamma         float64 // discount γ ∈ [0, 1], default 0.9
	LearningRate  float64 // Adam step size, default 1e-3
	BatchSize     int     // transitions per update, default 32
	Replay        int     // replay capacity (≥ BatchSize), default 10000
	TargetEvery   int     // copy online → target every N updates, default 200
	EpsStart      float64 // ε of the first Act, default 1.0
	EpsEnd        float64 // ε after EpsDecaySteps Acts, default 0.05
	EpsDecaySteps int     // length of the linear ε decay in Act calls (0: EpsEnd at once), default 2000
	Huber         float64 // Huber loss δ (> 0; +Inf: squared error), default 1
	GradClip      float64 // clip the gradient's global L2 norm to this (0: no clipping), default 10
	Seed          uint64  // seeds the agent's generator: initial weights, ε-greedy, minibatches
}

// DefaultConfig returns the defaults listed on Config's fields, with Seed 0.
func DefaultConfig() Config {
	return Config{
		Hidden:        []int{64, 64},
		Gamma:         0.9,
		LearningRate:  1e-3,
		BatchSize:     32,
		Replay:        10000,
		TargetEvery:   200,
		EpsStart:      1.0,
		EpsEnd:        0.05,
		EpsDecaySteps: 2000,
		Huber:         1,
		GradClip:      10,
	}
}

// Validate reports the first invalid field, wrapping ErrConfig or ErrLimit.
func (c Config) Validate() error {
	if len(c.Hidden) > MaxHidden {
		return fmt.Errorf("%w: %d hidden layers, at most %d", ErrLimit, len(c.Hidden), MaxHidden)
	}
	for i, h := range c.Hidden {
		if h < 1 {
			return fmt.Errorf("%w: Hidden[%d] = %d, need ≥ 1", ErrConfig, i, h)
		}
		if h > MaxWidth {
			return fmt.Errorf("%w: Hidden[%d] = %d, at most %d", ErrLimit, i, h, MaxWidth)
		}
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case !(c.Gamma >= 0 && c.Gamma <= 1):
		return fmt.Errorf("%w: Gamma = %v, need [0, 1]", ErrConfig, c.Gamma)
	case !(c.LearningRate > 0) || !finite(c.LearningRate):
		return fmt.Errorf("%w: LearningRate = %v, need finite > 0", ErrConfig, c.LearningRate)
	case c.BatchSize < 1 || c.BatchSize > MaxBatch:
		return fmt.Errorf("%w: BatchSize = %d, need 1…%d", ErrConfig, c.BatchSize, MaxBatch)
	case c.Replay < c.BatchSize || c.Replay > MaxReplay:
		return fmt.Errorf("%w: Replay = %d, need BatchSize (%d)…%d", ErrConfig, c.Replay, c.BatchSize, MaxReplay)
	case c.TargetEvery < 1:
		return fmt.Errorf("%w: TargetEvery = %d, need ≥ 1", ErrConfig, c.TargetEvery)
	case !(c.EpsStart >= 0 && c.EpsStart <= 1):
		return fmt.Errorf("%w: EpsStart = %v, need [0, 1]", ErrConfig, c.EpsStart)
	case !(c.EpsEnd >= 0 && c.EpsEnd <= 1):
		return fmt.Errorf("%w: EpsEnd = %v, need [0, 1]", ErrConfig, c.EpsEnd)
	case c.EpsDecaySteps < 0:
		return fmt.Errorf("%w: EpsDecaySteps = %d, need ≥ 0", ErrConfig, c.EpsDecaySteps)
	case !(c.Huber > 0):
		return fmt.Errorf("%w: Huber = %v, need > 0", ErrConfig, c.Huber)
	case !(c.GradClip >= 0):
		return fmt.Errorf("%w: GradClip = %v, need ≥ 0", ErrConfig, c.GradClip)
	}
	return nil
}
