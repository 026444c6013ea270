package codec

import (
	"fmt"
	"math"
)

// Defaults of C-SQS: SQS Sec. 4's experiments.
const (
	DefaultConformalEta   = 0.001  // learning rate η of SQS eq. 8
	DefaultConformalAlpha = 0.0005 // target dropped mass α of SQS eq. 7–8
	DefaultL              = 100    // lattice resolution ℓ
	DefaultBudget         = 5000   // bits per batch B
)

// Conformal is the online conformal threshold of C-SQS (SQS eq. 6 and 8,
// Algorithm 1). The support of a draft distribution q is
//
//	X(β) = {x : q(x) >= β}      (eq. 6; never empty: at least the top token)
//
// and after each drafted token the threshold moves by
//
//	β ← β − η(Σ_{x∉X} q(x) − α)   (eq. 8).
//
// Within a batch the device updates β after every drafted token
// (Algorithm 1, line 8). When the server reports T accepted of L drafted,
// β returns to its value after min(T+1, L) updates: the T accepted tokens'
// updates, plus the update of the rejected (T+1)-th token, whose
// distribution and support the device already used (line 12: "a further
// iteration for the new (T+1)-th token"); when all L are accepted there is
// no further update. The kept updates are exactly sequential eq. 8 over the
// accepted tokens and one per rejection, so Theorem 2 applies to them:
//
//	(1/T) Σ_{n<=T} dropped_n <= α + (|β_1| + 1 + ηα)/(ηT)   (eq. 9).
//
// Telescoping eq. 8 gives Σ_{n<=T}(dropped_n − α) = (β_1 − β_{T+1})/η, and β
// never falls below min(β_1, −η(1−α)) (at β <= 0 nothing is dropped and β
// rises), so the average is at most α + max(0, β_1 + η(1−α))/(ηT) for every
// η > 0. That implies eq. 9 when η(1−2α) <= 1, as with SQS Sec. 4's η = 0.001;
// for larger η the printed eq. 9 can fail at small T (one step can drop
// nearly all mass and move β by nearly η).
//
// A Conformal belongs to one device session and is not safe for concurrent
// use.
type Conformal struct {
	Alpha float64 // target average dropped mass α, in (0, 1)
	Eta   float64 // learning rate η ≥ 0 (0: β stays β_1, SQS Fig. 5's non-adaptive C-SQS; Theorem 2 needs η > 0)
	Beta  float64 // current threshold β (initial value β_1 before the first token)

	start   float64   // β at BeginBatch
	history []float64 // history[j] = β after j+1 updates in this batch
}

// DefaultConformal returns SQS Sec. 4's settings, starting at β = 0 (keep every
// token until the first update).
func DefaultConformal() *Conformal {
	return &Conformal{Alpha: DefaultConformalAlpha, Eta: DefaultConformalEta}
}

// Validate reports impossible parameters.
func (c *Conformal) Validate() error {
	if !(c.Alpha > 0 && c.Alpha < 1) {
		return fmt.Errorf("%w: conformal alpha %v outside (0, 1)", ErrParam, c.Alpha)
	}
	if !(c.Eta >= 0) || math.IsInf(c.Eta, 1) {
		return fmt.Errorf("%w: conformal eta %v, want finite >= 0", ErrParam, c.Eta)
	}
	if math.IsNaN(c.Beta) || math.IsInf(c.Beta, 0) {
		return fmt.Errorf("%w: conformal beta %v is not finite", ErrParam, c.Beta)
	}
	return nil
}

// Support returns X(β) for q, ascending token ids (eq. 6), and the dropped
// mass Σ_{x∉X} q(x). If no token reaches β the support is the top token
// (the lowest id among equal maxima).
func (c *Conformal) Support(q []float64) (support []int, dropped float64) {
	top := 0
	for i, v := range q {
		if v >= c.Beta {
			support = append(support, i)
		} else {
			dropped += v
		}
		if v > q[top] {
			top = i
		}
	}
	if len(support) == 0 && len(q) > 0 {
		return []int{top}, dropped - q[top]
	}
	return support, dropped
}

// Observe applies eq. 8 for one drafted token with the given dropped mass.
func (c *Conformal) Observe(dropped float64) {
	c.Beta -= c.Eta * (dropped - c.Alpha)
	c.history = append(c.history, c.Beta)
}

// BeginBatch checkpoints β at the start of a batch (Algorithm 1, line 2).
func (c *Conformal) BeginBatch() {
	c.start = c.Beta
	c.history = c.history[:0]
}

// Updates returns the number of Observe calls since BeginBatch (L).
func (c *Conformal) Updates() int { return len(c.history) }

// EndBatch rolls β back for a batch in which the server accepted
// `accepted` of the L drafted tokens: β becomes its value after
// min(accepted+1, L) updates (Algorithm 1, lines 11–13).
func (c *Conformal) EndBatch(accepted int) error {
	l := len(c.history)
	if accepted < 0 || accepted > l {
		return fmt.Errorf("%w: %d accepted of %d drafted", ErrParam, accepted, l)
	}
	if l > 0 {
		c.Beta = c.history[min(accepted+1, l)-1]
	} else {
		c.Beta = c.start
	}
	c.history = c.history[:0]
	return nil
}

// FitsBudget reports whether a distribution of next bits still fits a
// batch that has used `used` of `budget` bits (SQS Sec. 4:
// L = max{L : Σ_{n<=L} b_n <= B}, filled sequentially; stop drafting at the
// first token that does not fit).
func FitsBudget(used, next, budget int) bool {
	return next >= 0 && used+next <= budget
}
