package cloud

import "time"

// Metrics receives the server's events (see NewPrometheus).
type Metrics interface {
	// SessionStarted: a new session over prefix tokens, which the LLM
	// evaluates with the session's first round; reopened when the device
	// lost its session elsewhere (another replica, a restart) and starts
	// again from its committed prefix (so the prefix is evaluated again).
	SessionStarted(prefix int, reopened bool)
	SessionResumed() // a device reattached to its session
	// SessionContinued: a parked session continued with a new prompt
	// (a conversation's next turn) that kept kept of its positions and
	// added added new ones.
	SessionContinued(kept, added int)
	SessionEnded()
	Round(drafts, accepted int, resampled bool, verify time.Duration)
	Batch(size int)
	Bytes(in, out int)
	Bits(in, out int) // the papers' bit accounting (hybrid.UplinkBits, hybrid.VerdictBits)
	Error(code uint16)
}

// NopMetrics records nothing: the server's default, and a base to embed
// for a Metrics that records only some events.
type NopMetrics struct{}

func (NopMetrics) SessionStarted(int, bool)            {}
func (NopMetrics) SessionResumed()                     {}
func (NopMetrics) SessionContinued(int, int)           {}
func (NopMetrics) SessionEnded()                       {}
func (NopMetrics) Round(int, int, bool, time.Duration) {}
func (NopMetrics) Batch(int)                           {}
func (NopMetrics) Bytes(int, int)                      {}
func (NopMetrics) Bits(int, int)                       {}
func (NopMetrics) Error(uint16)                        {}
