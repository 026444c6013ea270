package hybrid

import (
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/hlmproject/hlm/channel"
)

// TestClockCharges: each charge lands in its part and in the total; fixed
// τ ignores the measured times, measured τ uses them; transfers follow the
// link state (zero bits cost nothing).
func TestClockCharges(t *testing.T) {
	s := channel.State{UpRate: 1e6, DownRate: 2e6, UpOverhead: time.Millisecond, DownOverhead: 2 * time.Millisecond}
	for _, tc := range []struct {
		name               string
		measure            bool
		slm, up, llm, down time.Duration
	}{
		// 3 drafted tokens at 25.6 ms, 1000 bits at 1 Mbit/s + 1 ms,
		// 104.6 ms, 20 bits at 2 Mbit/s + 2 ms; then a skip (1 token) and
		// an empty upload (0 bits: not sent).
		{"fixed", false, 4 * 25600 * time.Microsecond, 2 * time.Millisecond, 2 * 104600 * time.Microsecond, 2*2*time.Millisecond + 2*10*time.Microsecond},
		// measured: 7 ms and 1 ms drafting, 50 ms and 60 ms verifying.
		{"measured", true, 8 * time.Millisecond, 2 * time.Millisecond, 110 * time.Millisecond, 2*2*time.Millisecond + 2*10*time.Microsecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultParams()
			p.TauSLM, p.TauLLM, p.MeasureTau = 0.0256, 0.1046, tc.measure
			c := newClock(p)
			c.draft(3, 7*time.Millisecond)
			c.uplink(s, 1000)
			c.verify(50 * time.Millisecond)
			c.downlink(s, 20)
			c.draft(1, time.Millisecond)
			c.uplink(s, 0)
			c.verify(60 * time.Millisecond)
			c.downlink(s, 20)
			got := [4]time.Duration{c.slm, c.up, c.llm, c.down}
			want := [4]time.Duration{tc.slm, tc.up, tc.llm, tc.down}
			if got != want {
				t.Errorf("parts (SLM, up, LLM, down) %v, want %v", got, want)
			}
			if c.now != tc.slm+tc.up+tc.llm+tc.down {
				t.Errorf("total %v, parts sum to %v", c.now, tc.slm+tc.up+tc.llm+tc.down)
			}
			var r Result
			c.fill(&r)
			if r.VirtualSeconds != c.now.Seconds() || r.SLMSeconds != tc.slm.Seconds() || r.UplinkSeconds != tc.up.Seconds() ||
				r.LLMSeconds != tc.llm.Seconds() || r.DownlinkSeconds != tc.down.Seconds() {
				t.Errorf("fill: %+v", r)
			}
		})
	}
}

// breakdownSum is how far the four parts of a result's virtual time are
// from its total, relative to the total (0 for an empty run).
func breakdownSum(r Result) float64 {
	sum := r.SLMSeconds + r.UplinkSeconds + r.LLMSeconds + r.DownlinkSeconds
	return math.Abs(sum-r.VirtualSeconds) / math.Max(r.VirtualSeconds, 1e-300)
}

// TestTimeBreakdown: for every method, with fixed and with measured τ, the
// SLM, uplink, LLM and downlink seconds add up to the virtual time (to float
// rounding: the clock sums whole nanoseconds). With fixed τ on a fixed-rate
// link each part is also what Q-S eq. 9 makes of the run's counts: τ_SLM
// per drafted token, τ_LLM per upload, bits/rate on the uplink and
// overhead + bits/rate per verdict on the downlink (each transfer rounded
// to the nanosecond). With measured τ the drafting and verifying fit in the
// wall time of the run (a device round without drafts, as in llm, still
// takes the measured time of building its upload).
func TestTimeBreakdown(t *testing.T) {
	llm, slm := openPair(t, stories+"@exit=2")
	prompt := llm.Tokenizer().Encode("Tom had a red car", true)
	const upRate, downRate = 2e5, 1e6
	for _, measure := range []bool{false, true} {
		for _, m := range Methods {
			p := DefaultParams()
			p.Method, p.Seed, p.MaxTokens, p.MeasureTau = m, 7, 24, measure
			p.UTh = 0.4 // the skip methods both skip and upload
			p.Channel = channel.DefaultConfig()
			p.Channel.Channel, p.Channel.RateBps = channel.ChannelFixed, upRate
			p.Channel.DownlinkBps, p.Channel.DownOverhead = downRate, time.Millisecond
			r := runOnce(t, p, llm, slm, prompt)
			if e := breakdownSum(r); !(e <= 1e-12) || r.VirtualSeconds <= 0 {
				t.Errorf("%s (measured τ %v): SLM %v + uplink %v + LLM %v + downlink %v s vs virtual %v s (relative error %.3g)",
					m, measure, r.SLMSeconds, r.UplinkSeconds, r.LLMSeconds, r.DownlinkSeconds, r.VirtualSeconds, e)
			}
			if measure {
				if r.SLMSeconds+r.LLMSeconds > r.WallSeconds || (r.Drafted > 0 && r.SLMSeconds <= 0) || (r.Uploads > 0) != (r.LLMSeconds > 0) {
					t.Errorf("%s: measured SLM %v s + LLM %v s, wall %v s, %d drafted, %d uploads", m, r.SLMSeconds, r.LLMSeconds, r.WallSeconds, r.Drafted, r.Uploads)
				}
				continue
			}
			ns := 1e-9 * float64(r.Uploads) // rounding of each transfer to the nanosecond
			for _, c := range []struct {
				part      string
				got, want float64
				tol       float64
			}{
				{"SLM", r.SLMSeconds, float64(r.Drafted) * p.TauSLM, 1e-12},
				{"LLM", r.LLMSeconds, float64(r.Uploads) * p.TauLLM, 1e-12},
				{"uplink", r.UplinkSeconds, float64(r.UplinkBits) / upRate, ns + 1e-12},
				{"downlink", r.DownlinkSeconds, float64(r.Uploads)*1e-3 + float64(r.DownlinkBits)/downRate, ns + 1e-12},
			} {
				if math.Abs(c.got-c.want) > c.tol {
					t.Errorf("%s: %s %v s, want %v s", m, c.part, c.got, c.want)
				}
			}
			if m != LLM && r.Uploads > 0 && r.UplinkSeconds <= 0 {
				t.Errorf("%s: %d uploads took no uplink time", m, r.Uploads)
			}
		}
	}
}

// TestClockSaturates: times beyond the largest Duration (a link of 1e-7
// bit/s, τ_LLM = 1e10 s) stop the clock at its limit with a warning; they
// wrapped to negative or zero times before.
// TestClockSeconds: τ_SLM and τ_LLM (Q-S eq. 9's per-token and
// per-verification times, in seconds) become whole nanoseconds by rounding
// to the nearest one, so that L·τ_SLM of a round is off by at most L/2 ns.
// CU-HLM Table II's 25.6 ms is exact in any unit down to 0.1 ms; the other
// values are sub-microsecond and tell rounding from truncation at a coarser
// unit.
func TestClockSeconds(t *testing.T) {
	for _, tc := range []struct {
		s    float64
		want time.Duration
	}{
		{25.6e-3, 25600 * time.Microsecond},
		{0.0123456789, 12345679},
		{1.5e-7, 150},
		{0.6e-9, 1},
		{0.4e-9, 0},
		{1e10, math.MaxInt64},
	} {
		if got := seconds(tc.s); got != tc.want {
			t.Errorf("seconds(%v) = %d ns, want %d ns", tc.s, got, tc.want)
		}
	}
	p := DefaultParams()
	p.TauSLM, p.TauLLM = 1.5e-7, 2.5e-6
	c := newClock(p)
	c.draft(3, 0)
	c.verify(0)
	if c.slm != 450 || c.llm != 2500 || c.now != 2950 {
		t.Errorf("3·150 ns + 2500 ns: slm %d, llm %d, now %d ns", c.slm, c.llm, c.now)
	}
}

func TestClockSaturates(t *testing.T) {
	p := DefaultParams()
	p.TauLLM = 1e10
	c := newClock(p)
	if c.tauLLM != math.MaxInt64 {
		t.Errorf("τ_LLM = 1e10 s is %v", c.tauLLM)
	}
	c.draft(3, 0)
	c.uplink(channel.State{UpRate: 1e-7}, 1000)
	c.verify(0)
	c.verify(0)
	var res Result
	c.fill(&res)
	if !c.saturated || c.now != math.MaxInt64 || c.up != math.MaxInt64 || c.llm != math.MaxInt64 || res.VirtualSeconds <= 0 || len(res.Warnings) != 1 {
		t.Errorf("now %v, up %v, llm %v, virtual %v s, warnings %q", c.now, c.up, c.llm, res.VirtualSeconds, res.Warnings)
	}
	ok := newClock(DefaultParams())
	ok.draft(4, 0)
	ok.verify(0)
	var r2 Result
	ok.fill(&r2)
	if ok.saturated || len(r2.Warnings) != 0 || math.Abs(r2.VirtualSeconds-(4*DefaultParams().TauSLM+DefaultParams().TauLLM)) > 1e-9 {
		t.Errorf("an ordinary round: saturated %v, %v s, %q", ok.saturated, r2.VirtualSeconds, r2.Warnings)
	}
}

// TestQSBitsPaper: a Q-S or S-Q run's uplink bits are Q-S eq. 7's,
// L·(⌈log2 V⌉ + b) per round, with b = ⌈log2 C(ℓ+V−1, V−1)⌉ (eq. 6)
// computed here with math/big; a verdict's downlink bits are
// ⌈log2(L+1)⌉ + ⌈log2 V⌉ (eq. 8 with the accepted count's L+1 values).
func TestQSBitsPaper(t *testing.T) {
	ceilLog2 := func(n *big.Int) int64 {
		m := new(big.Int).Sub(n, big.NewInt(1))
		return int64(m.BitLen())
	}
	for _, tc := range []struct{ L, V int }{{1, 2}, {1, 32000}, {2, 32000}, {3, 32000}, {4, 512}, {8, 151936}} {
		want := ceilLog2(big.NewInt(int64(tc.L+1))) + ceilLog2(big.NewInt(int64(tc.V)))
		if got := DownlinkBits(tc.L, tc.V); int64(got) != want {
			t.Errorf("DownlinkBits(%d, %d) = %d, want %d", tc.L, tc.V, got, want)
		}
	}
	llm, slm := openPair(t, stories+"-draft")
	prompt := llm.Tokenizer().Encode("Tom had a red car", true)
	V := llm.Config().Vocab
	for _, m := range []string{QS, SQ} {
		for _, ell := range []int{1, 100} {
			p := DefaultParams()
			p.Method, p.Seed, p.MaxTokens, p.L, p.Ell = m, 5, 40, 4, ell
			r := runOnce(t, p, llm, slm, prompt)
			b := ceilLog2(new(big.Int).Binomial(int64(ell+V-1), int64(V-1)))
			if want := int64(r.Drafted) * (ceilLog2(big.NewInt(int64(V))) + b); r.UplinkBits != want || r.Drafted == 0 {
				t.Errorf("%s ℓ=%d: %d uplink bits for %d drafts, want %d (b = %d)", m, ell, r.UplinkBits, r.Drafted, want, b)
			}
		}
	}
}
