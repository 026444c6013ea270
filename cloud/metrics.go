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
	SessionEnded()
	Round(drafts, accepted int, resampled bool, verify time.Duration)
	Batch(size int)
	Bytes(in, out int)
	Bits(in, out int) // the papers' bit accounting (hybrid.UplinkBits, hybrid.DownlinkBits)
	Error(code uint16)
}

type nopMetrics struct{}

func (nopMetrics) SessionStarted(int, bool)            {}
func (nopMetrics) SessionResumed()                     {}
func (nopMetrics) SessionEnded()                       {}
func (nopMetrics) Round(int, int, bool, time.Duration) {}
func (nopMetrics) Batch(int)                           {}
func (nopMetrics) Bytes(int, int)                      {}
func (nopMetrics) Bits(int, int)                       {}
func (nopMetrics) Error(uint16)                        {}
