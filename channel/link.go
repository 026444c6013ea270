package channel

import (
	"errors"
	"math"
	"time"
)

// Errors returned by this package, always wrapped with details.
var (
	// ErrConfig reports an invalid configuration value.
	ErrConfig = errors.New("channel: invalid config")
	// ErrUnknownKey reports a configuration key that does not exist.
	ErrUnknownKey = errors.New("channel: unknown config key")
	// ErrTrace reports a malformed rate trace.
	ErrTrace = errors.New("channel: malformed trace")
)

// Link is the wireless link between device and server.
//
// Block fading: the state is drawn once per round and holds for the whole
// round (U-HLM Sec. II-B, CU-HLM Sec. II-B). A round is one upload/verify/
// download exchange; the caller calls Round exactly once per round.
//
// Implementations own a seeded random source and are not safe for concurrent
// use.
type Link interface {
	// Round starts a round at virtual time now (time since the start of the
	// run) and returns the link state for it.
	Round(now time.Duration) State
}

// State is the link during one round.
type State struct {
	// UpRate and DownRate are in bit/s; +Inf means transmission takes no time.
	UpRate, DownRate float64
	// SNR is the linear received SNR of the round, NaN for links that are not
	// Shannon links.
	SNR float64
	// UpOverhead and DownOverhead are fixed per-message costs (preambles,
	// headers, the Q-S remark after its eq. 8), paid once per non-empty message.
	UpOverhead, DownOverhead time.Duration
}

// UpTime is the time to send a bits-long message on the uplink:
// UpOverhead + bits/UpRate (U-HLM eq. 3, Q-S eq. 7). A message of zero bits
// is not sent and takes no time.
func (s State) UpTime(bits int) time.Duration {
	return transferTime(bits, s.UpRate, s.UpOverhead)
}

// DownTime is the time to receive a bits-long message on the downlink:
// DownOverhead + bits/DownRate (Q-S eq. 8). Zero bits take no time.
func (s State) DownTime(bits int) time.Duration {
	return transferTime(bits, s.DownRate, s.DownOverhead)
}

// maxDuration is what an unbounded transfer time saturates to (about 292
// years): a rate of zero or a deep fade must not wrap around.
const maxDuration = time.Duration(math.MaxInt64)

// transferTime returns overhead + bits/rate, rounded to the nanosecond and
// saturated at maxDuration; a rate that is not positive counts as zero, an
// infinite rate as instantaneous.
func transferTime(bits int, rate float64, overhead time.Duration) time.Duration {
	if bits <= 0 {
		return 0
	}
	if !(rate > 0) { // zero, negative or NaN: the message never arrives
		return maxDuration
	}
	ns := math.Round(float64(bits)/rate*1e9) + float64(overhead)
	if ns >= float64(maxDuration) {
		return maxDuration
	}
	return time.Duration(ns)
}

// DBmToWatts converts a power in dBm to watts: 10^(dBm/10) mW.
func DBmToWatts(dBm float64) float64 { return math.Pow(10, dBm/10) / 1000 }

// DBToLinear converts a ratio in dB to a linear ratio: 10^(dB/10).
func DBToLinear(dB float64) float64 { return math.Pow(10, dB/10) }

// LinearToDB converts a linear power ratio to dB: 10·log10(x).
func LinearToDB(x float64) float64 { return 10 * math.Log10(x) }

// ShannonRate is the capacity W·log2(1 + snr) in bit/s of a bandwidth of
// bandwidthHz at linear SNR snr (U-HLM eq. 3, CU-HLM eq. 5, U+I eq. 2).
func ShannonRate(bandwidthHz, snr float64) float64 {
	return bandwidthHz * math.Log1p(snr) / math.Ln2
}

// common is what every link built by New shares: the downlink rate and the
// per-message overheads of both directions.
type common struct {
	downRate                 float64
	upOverhead, downOverhead time.Duration
}

func commonOf(cfg Config) common {
	return common{downRate: cfg.DownlinkBps, upOverhead: cfg.UpOverhead, downOverhead: cfg.DownOverhead}
}

// state completes a round's state from its uplink rate and SNR.
func (c common) state(upRate, snr float64) State {
	return State{UpRate: upRate, DownRate: c.downRate, SNR: snr, UpOverhead: c.upOverhead, DownOverhead: c.downOverhead}
}

// Fixed is a link whose state never changes (channel=fixed).
type Fixed struct {
	s State
}

var _ Link = (*Fixed)(nil)

// NewFixed returns a link with the constant state s.
func NewFixed(s State) *Fixed { return &Fixed{s: s} }

// Round returns the constant state.
func (f *Fixed) Round(time.Duration) State { return f.s }
