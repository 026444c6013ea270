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
// nanoseconds, so the four parts add up to the total exactly.
type clock struct {
	tauSLM, tauLLM time.Duration // per drafted token, per verification
	measured       bool          // charge the measured wall times instead (Params.MeasureTau)

	now                time.Duration // since the start of the run
	slm, up, llm, down time.Duration
}

func newClock(p Params) *clock {
	return &clock{tauSLM: seconds(p.TauSLM), tauLLM: seconds(p.TauLLM), measured: p.MeasureTau}
}

// seconds is s seconds rounded to the nanosecond.
func seconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// draft charges a round's drafting: τ_SLM per drafted token, or wall, the
// time the device took, when measured.
func (c *clock) draft(tokens int, wall time.Duration) {
	if !c.measured {
		wall = time.Duration(tokens) * c.tauSLM
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

func (c *clock) charge(part *time.Duration, d time.Duration) {
	*part += d
	c.now += d
}

// fill writes the virtual time and its parts into res.
func (c *clock) fill(res *Result) {
	res.VirtualSeconds = c.now.Seconds()
	res.SLMSeconds = c.slm.Seconds()
	res.UplinkSeconds = c.up.Seconds()
	res.LLMSeconds = c.llm.Seconds()
	res.DownlinkSeconds = c.down.Seconds()
}
