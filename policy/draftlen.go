package policy

import (
	"fmt"
	"strconv"
)

// DraftLength chooses how many tokens the device drafts per round (block
// drafting, Q-S and SQS) and learns from the outcome.
type DraftLength interface {
	// Next returns the draft length of the next round, ≥ 1.
	Next() int
	// Observe reports that drafted tokens were sent and accepted of them
	// were accepted (0 ≤ accepted ≤ drafted).
	Observe(drafted, accepted int)
}

var (
	_ DraftLength = Fixed{}
	_ DraftLength = (*Heuristic)(nil)
)

// Fixed drafts L tokens every round.
type Fixed struct {
	L int `json:"l"`
}

// Next returns L.
func (f Fixed) Next() int { return f.L }

// Observe does nothing.
func (Fixed) Observe(int, int) {}

// Validate requires L ≥ 1.
func (f Fixed) Validate() error {
	if f.L < 1 || f.L > maxK {
		return fmt.Errorf("%w: fixed: l = %d (want ≥ 1)", ErrInvalid, f.L)
	}
	return nil
}

func (f Fixed) String() string { return "fixed:l=" + strconv.Itoa(f.L) }

// Default draft lengths of Heuristic. Q-S does not publish its L¹ or the
// set of allowed lengths; these are hlm's choices.
const (
	DefaultInitialL = 4
	DefaultMinL     = 1
	DefaultMaxL     = 16
)

// Heuristic is the adaptive draft length of Q-S Sec. V-A: start at
// Initial; after a round in which every drafted token was accepted, draft
// one more (drafted + 1); otherwise draft as many as were accepted. The
// result is kept in [Min, Max].
//
// Min must be at least 1. Taken literally, the rule sets the length to 0
// after a round whose first draft is rejected. A round of length 0 drafts
// nothing, so it is a plain LLM step that costs a full round trip, and
// implementations that then take "0 of 0 accepted" as "not all accepted"
// stay at 0 forever and the device never drafts again. With Min ≥ 1 the
// device always proposes at least one token, which is also what Q-S's
// action set allows (L ∈ 𝓛 ⊂ ℕ⁺).
//
// Heuristic has state: use one value per generation (a pointer), and
// Reset it for a new prompt.
type Heuristic struct {
	Initial int `json:"initial"`
	Min     int `json:"min"`
	Max     int `json:"max"`

	cur int // 0 until the first Next
}

// DefaultHeuristic returns a Heuristic with Initial = 4, Min = 1, Max = 16.
func DefaultHeuristic() *Heuristic {
	return &Heuristic{Initial: DefaultInitialL, Min: DefaultMinL, Max: DefaultMaxL}
}

// Validate requires 1 ≤ Min ≤ Initial ≤ Max.
func (h *Heuristic) Validate() error {
	if h.Min < 1 || h.Min > h.Initial || h.Initial > h.Max || h.Max > maxK {
		return fmt.Errorf("%w: heuristic: initial=%d min=%d max=%d (want 1 ≤ min ≤ initial ≤ max)", ErrInvalid, h.Initial, h.Min, h.Max)
	}
	return nil
}

// Next returns the current draft length.
func (h *Heuristic) Next() int {
	if h.cur == 0 {
		h.cur = h.clamp(h.Initial)
	}
	return h.cur
}

// Observe applies the rule: all drafted accepted → drafted + 1, else the
// accepted count; clamped to [Min, Max]. Out-of-range arguments are
// clamped (accepted into [0, drafted]).
func (h *Heuristic) Observe(drafted, accepted int) {
	drafted = max(drafted, 0)
	accepted = min(max(accepted, 0), drafted)
	next := accepted
	if accepted == drafted {
		next = drafted + 1
	}
	h.cur = h.clamp(next)
}

// Reset returns to the initial length (a new prompt).
func (h *Heuristic) Reset() { h.cur = 0 }

func (h *Heuristic) clamp(l int) int {
	return min(max(l, h.Min, 1), max(h.Max, 1))
}

func (h *Heuristic) String() string {
	return "heuristic:initial=" + strconv.Itoa(h.Initial) + ",min=" + strconv.Itoa(h.Min) + ",max=" + strconv.Itoa(h.Max)
}
