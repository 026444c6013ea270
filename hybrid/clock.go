package hybrid

import (
	"math"
	"time"

	"github.com/hlmproject/hlm/channel"
)

// clock is a run's virtual time (Q-S eq. 9: L·τ_SLM + τ_up + τ_LLM +
// τ_down per round) and what it was spent on. The driver charges each part
// of a round as it happens: the drafting, then, for an upload, the uplink
// transfer, the verification and the downlink transfer. Durations are whole
// nanoseconds, so the four parts add up to the total exactly — up to the
// largest time.Duration (about 292 years), where the clock saturates and
// the run says so (a link of 1e-7 bit/s, an SNR of −150 dB, τ_LLM = 1e10 s
// wrapped it to negative or zero times).
type clock struct {
	tauSLM, tauLLM time.Duration // per drafted token, per verification
	measured       bool          // charge the measured wall times instead (Params.MeasureTau)

	now                time.Duration // since the start of the run
	slm, up, llm, down time.Duration
	saturated          bool // a charge reached the largest Duration
}

func newClock(p Params) *clock {
	return &clock{tauSLM: seconds(p.TauSLM), tauLLM: seconds(p.TauLLM), measured: p.MeasureTau}
}

// seconds is s seconds rounded to the nanosecond, at most the largest
// Duration.
func seconds(s float64) time.Duration {
	if ns := math.Round(s * 1e9); ns < math.MaxInt64 {
		return time.Duration(ns)
	}
	return math.MaxInt64
}

// draft charges a round's drafting: τ_SLM per drafted token, or wall, the
// time the device took, when measured.
func (c *clock) draft(tokens int, wall time.Duration) {
	if !c.measured {
		wall = c.tauSLM
		if tokens > 0 && wall > math.MaxInt64/time.Duration(tokens) {
			wall = math.MaxInt64
		} else {
			wall *= time.Duration(tokens)
		}
	}
	c.charge(&c.slm, wall)
}

// uplink charges sending bits in link state s (zero bits cost nothing).
func (c *clock) uplink(s channel.State, bits int) { c.charge(&c.up, s.UpTime(bits)) }

// verify charges a verification: τ_LLM, or wall, the time the verifier
// took to answer, when measured.
func (c *clock) verify(wall time.Duration) {
	if !c.measured {
		wall = c.tauLLM
	}
	c.charge(&c.llm, wall)
}

// downlink charges receiving bits in link state s.
func (c *clock) downlink(s channel.State, bits int) { c.charge(&c.down, s.DownTime(bits)) }

// charge adds d (≥ 0) to a part and to the total, saturating at the
// largest Duration.
func (c *clock) charge(part *time.Duration, d time.Duration) {
	for _, x := range []*time.Duration{part, &c.now} {
		if d >= math.MaxInt64-*x {
			*x = math.MaxInt64
			c.saturated = true
		} else {
			*x += d
		}
	}
}

// fill writes the virtual time and its parts into res.
func (c *clock) fill(res *Result) {
	res.VirtualSeconds = c.now.Seconds()
	res.SLMSeconds = c.slm.Seconds()
	res.UplinkSeconds = c.up.Seconds()
	res.LLMSeconds = c.llm.Seconds()
	res.DownlinkSeconds = c.down.Seconds()
	if c.saturated {
		res.Warnings = append(res.Warnings, "the virtual clock reached its limit (about 292 years) and stopped there: the link or the timings are too slow for this run, so its times are lower bounds and its rates upper bounds")
	}
}
