package cloud

import "time"

// Metrics receives the server's events (see NewPrometheus).
type Metrics interface {
	SessionStarted()
	SessionEnded()
	Round(drafts, accepted int, resampled bool, verify time.Duration)
	Batch(size int)
	Bytes(in, out int)
	Bits(in, out int) // the papers' bit accounting (hybrid.UplinkBits, hybrid.DownlinkBits)
	Error(code uint16)
}

type nopMetrics struct{}

func (nopMetrics) SessionStarted()                     {}
func (nopMetrics) SessionEnded()                       {}
func (nopMetrics) Round(int, int, bool, time.Duration) {}
func (nopMetrics) Batch(int)                           {}
func (nopMetrics) Bytes(int, int)                      {}
func (nopMetrics) Bits(int, int)                       {}
func (nopMetrics) Error(uint16)                        {}
