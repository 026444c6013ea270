package hybrid

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/hlmproject/hlm/channel"
	"github.com/hlmproject/hlm/wire"
)

// Verifier is the server as the device sees it: in the same process (the
// simulator) or across a network connection (hlm edge).
type Verifier interface {
	Verify(ctx context.Context, up *wire.Upload) (*wire.Verdict, error)
}

// Local is an in-process Verifier; it keeps the server's last Trace for the
// simulator's oracle metrics.
type Local struct {
	Server *Server
	last   *Trace
}

// Verify verifies on the local server.
func (l *Local) Verify(_ context.Context, up *wire.Upload) (*wire.Verdict, error) {
	v, tr, err := l.Server.Verify(up)
	l.last = tr
	return v, err
}

// Config is one generation run.
type Config struct {
	Device   *Device
	Verifier Verifier
	Link     channel.Link
	EOS      int // end-of-sequence token (-1: none)
	Context  int // context length available on both sides
	// Decode turns output ids into text (nil: no text).
	Decode func([]int) string
	// Trace, when set, receives one JSON object per committed token.
	Trace io.Writer
	// OnTokens, when set, is called with the tokens each round commits, in
	// order (for streaming). Tokens past EOS or MaxTokens are not passed.
	OnTokens func(tokens []int)
	// OnRound, when set, is called after every verified round of a device
	// with a Controller (for training one).
	OnRound func(RoundInfo)
}

// Result is the summary of a run; `hlm sim --json` and `hlm edge --json`
// print it.
type Result struct {
	Method string `json:"method"`
	Seed   uint64 `json:"seed"`
	Tokens []int  `json:"tokens"`
	Text   string `json:"text"`
	Stop   string `json:"stop_reason"`

	Rounds    int `json:"rounds"`    // device rounds (uploads + local commits)
	Uploads   int `json:"uploads"`   // rounds that went to the server
	Drafted   int `json:"drafted"`   // SLM draft tokens
	Skipped   int `json:"skipped"`   // drafts committed without verification
	Verified  int `json:"verified"`  // drafts sent for verification
	Accepted  int `json:"accepted"`  // drafts accepted by the server
	Resampled int `json:"resampled"` // rejections (a token resampled from the residual)
	Bonus     int `json:"bonus"`     // bonus tokens after fully accepted blocks (incl. LLM-only steps)

	TransmissionRate float64  `json:"transmission_rate"` // uploads / rounds
	TrueSkipRate     *float64 `json:"true_skip_rate"`    // mean acceptance probability of skipped tokens (null: none measured)
	RejectionRate    *float64 `json:"rejection_rate"`    // resampled / drafts examined (accepted + resampled)
	ResamplingRate   float64  `json:"resampling_rate"`   // resampled / uploads (SQS: N_rej per batch)
	AcceptedPerRound float64  `json:"accepted_per_round"`

	UplinkBits       int64    `json:"uplink_bits"`   // papers' accounting: token ids + codec payloads
	DownlinkBits     int64    `json:"downlink_bits"` // ⌈log2(L+1)⌉ + ⌈log2 V⌉ per verdict
	CodecBits        int64    `json:"codec_bits"`    // the distribution payloads alone
	UplinkBytes      int64    `json:"uplink_bytes"`  // message frames as sent (bodies + frame headers)
	DownlinkBytes    int64    `json:"downlink_bytes"`
	BitsPerToken     float64  `json:"uplink_bits_per_token"`
	CompressionRatio *float64 `json:"compression_ratio"` // codec bits / full 32-bit distributions for the same drafts

	VirtualSeconds float64 `json:"virtual_seconds"`
	ThroughputTPS  float64 `json:"throughput_tps"` // tokens per virtual second
	WallSeconds    float64 `json:"wall_seconds"`
	WallTPS        float64 `json:"wall_throughput_tps"`
	Energy         float64 `json:"energy"` // U+I energy model (policy.Energy): Σ uplink Mbit·ε_u + resampled·ε_r + drafted·ε_s, in the paper's unit
	// Supports are the probability entries each uploaded draft carried (k
	// of top-k, K, V), in order: the online k's distribution (CU-HLM
	// Sec. V-C: range and mean of k).
	Supports []int `json:"-"`

	MeanDeviation *float64 `json:"mean_deviation"` // simulator only: mean L1 distance of each committed token's exact output distribution from the LLM's (CU-HLM eq. 17's Bias(t), averaged over the draft)
}

// traceEvent is one line of the per-token trace (hlm sim/edge --trace; the
// live view, package live, reads it). Kind is the token's fate: "skip"
// (committed by the device without verification), "accepted" (a draft the
// server accepted), "resampled" (the server's token after a rejection),
// "bonus" (the server's token after a fully accepted block) or "llm" (the
// server's token in a round without drafts). A "check" line reports, once
// the next upload's verdict is back, the acceptance probability of a token
// committed earlier as "skip" (needs diagnostics).
type traceEvent struct {
	Round   int      `json:"round"`
	Pos     int      `json:"pos"`
	Token   int      `json:"token"`
	Kind    string   `json:"kind"`
	Time    float64  `json:"t"`                 // virtual seconds when committed
	U       *float64 `json:"u,omitempty"`       // uncertainty, where the method measures it
	Imp     *int     `json:"imp,omitempty"`     // ui-hlm, i-hlm: attention weights above θ_imp (U+I eq. 6)
	Bits    int      `json:"bits,omitempty"`    // the draft's codec payload
	Support int      `json:"support,omitempty"` // entries the codec sent
	UpBits  int      `json:"up_bits,omitempty"` // the whole upload of the round (UplinkBits)
	// Accept is the probability that the draft would be accepted,
	// min(1, y(x)/x̂(x)): for skipped tokens (check lines) from the
	// diagnostics, for drafts only in the simulator (whose server is in
	// the process); absent for coupled drafts.
	Accept *float64 `json:"accept,omitempty"`
}

// Run generates until EOS, the token budget or the context is exhausted.
func Run(ctx context.Context, c Config) (Result, error) {
	d := c.Device
	p := d.p
	res := Result{Method: p.Method, Seed: p.Seed, Stop: "max tokens"}
	tau := func(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }
	var (
		now      time.Duration
		tsrSum   float64
		tsrN     int
		devSum   float64
		devN     int
		fullBits int64
	)
	local, _ := c.Verifier.(*Local)
	enc := json.NewEncoder(io.Discard)
	if c.Trace != nil {
		enc = json.NewEncoder(c.Trace)
	}
	start := time.Now()
	out := func() []int { return d.Output() }
	var sizeBuf []byte // scratch for counting message bytes
	for {
		if err := ctx.Err(); err != nil {
			res.Stop = "interrupted"
			break
		}
		room := min(p.MaxTokens-len(out()), c.Context-1-len(d.seq))
		if room < 1 {
			if len(out()) < p.MaxTokens {
				res.Stop = "context full"
			}
			break
		}
		// A controller sees the round's uplink rate before drafting (Q-S
		// Sec. IV-B), so the link state is drawn at the start of its rounds.
		var state channel.State
		roundStart := now
		ctrlState := ControlState{}
		if d.ctrl != nil {
			state = c.Link.Round(now)
			d.rate = state.UpRate
			ctrlState = d.controlState()
		}
		stepStart := time.Now()
		st, err := d.Step(room)
		if err != nil {
			return res, err
		}
		res.Rounds++
		res.Drafted += st.Drafted
		if p.MeasureTau {
			now += time.Since(stepStart)
		} else {
			now += time.Duration(st.Drafted) * tau(p.TauSLM)
		}
		if st.Upload == nil { // committed locally
			res.Skipped++
			emit(c, d, []int{st.Local})
			ev := traceEvent{Round: res.Rounds, Pos: len(d.seq) - 1, Token: st.Local, Kind: "skip", Time: now.Seconds(), U: measured(st.U)}
			if p.Method == UIHLM || p.Method == IHLM {
				ev.Imp = &st.Imp
			}
			enc.Encode(ev)
			if st.Local == c.EOS {
				res.Stop = "end of sequence"
				break
			}
			continue
		}
		// Copy what the oracle needs before the verdict clears it.
		unsentX, drafts := d.wantX, d.pending
		L := len(st.Upload.Drafts)
		res.Uploads++
		res.Verified += L
		for _, dr := range drafts {
			if dr.support > 0 {
				res.Supports = append(res.Supports, dr.support)
			}
		}
		sizeBuf = wire.AppendUpload(sizeBuf[:0], st.Upload) // to count bytes
		upBody := len(sizeBuf)
		if d.ctrl == nil {
			state = c.Link.Round(now)
		}
		now += state.UpTime(st.UplinkBits)
		verifyStart := time.Now()
		v, err := c.Verifier.Verify(ctx, st.Upload)
		if err != nil {
			return res, fmt.Errorf("round %d: %w", res.Rounds, err)
		}
		downBits := VerdictBits(p, L, d.vocab)
		if p.MeasureTau {
			now += time.Since(verifyStart)
		} else {
			now += tau(p.TauLLM)
		}
		now += state.DownTime(downBits)
		res.UplinkBits += int64(st.UplinkBits)
		res.CodecBits += int64(st.CodecBits)
		res.DownlinkBits += int64(downBits)
		res.UplinkBytes += int64(upBody + wire.FrameHeader)
		sizeBuf = wire.AppendVerdict(sizeBuf[:0], v)
		res.DownlinkBytes += int64(len(sizeBuf) + wire.FrameHeader)
		fullBits += int64(st.FullBits)

		// True skip rate from the diagnostics the server returned.
		for j, yd := range v.CommittedTarget {
			if sent := st.Upload.CommittedProb; j < len(sent) && sent[j] > 0 {
				a := math.Min(1, float64(yd)/float64(sent[j]))
				tsrSum += a
				tsrN++
				if c.Trace != nil {
					enc.Encode(traceEvent{Round: res.Rounds, Pos: len(d.seq) - len(st.Upload.Committed) + j, Token: int(st.Upload.Committed[j]),
						Kind: "check", Time: now.Seconds(), Accept: &a})
				}
			}
		}
		// The acceptance probability of each draft, where the server's
		// distributions are at hand (simulator, not coupled).
		var accept []float64
		if local != nil && local.last != nil && c.Trace != nil {
			for l := 0; l < L && l < len(local.last.XHat) && l < len(local.last.DraftY) && l < len(drafts); l++ {
				xh, y := local.last.XHat[l], local.last.DraftY[l]
				if xh == nil || y == nil || drafts[l].token >= len(xh) || !(xh[drafts[l].token] > 0) {
					break
				}
				accept = append(accept, math.Min(1, y[drafts[l].token]/xh[drafts[l].token]))
			}
		}
		// Oracle deviation (simulator only): L1 distance between the
		// distribution each committed draft position effectively followed
		// and the LLM's.
		if local != nil && local.last != nil {
			tr := local.last
			for j, x := range unsentX {
				if j < len(tr.CommittedY) {
					devSum += l1(x, tr.CommittedY[j])
					devN++
				}
			}
			for l := 0; l <= v.Accepted && l < L; l++ {
				devN++
				if tr.XHat[l] == nil { // coupled: the committed token is exactly y-distributed
					continue
				}
				eff, err := d.outputDist(drafts[l], tr.XHat[l], tr.DraftY[l])
				if err != nil {
					return res, fmt.Errorf("round %d: deviation: %w", res.Rounds, err)
				}
				devSum += l1(eff, tr.DraftY[l])
			}
		}
		committed, err := d.Apply(v)
		if err != nil {
			return res, err
		}
		emit(c, d, committed)
		if c.OnRound != nil && d.ctrl != nil {
			next := d.controlState()
			next.Rate = state.UpRate // the next round's rate is not known yet
			done := contains(committed, c.EOS) || len(out()) >= p.MaxTokens || c.Context-1-len(d.seq) < 1
			c.OnRound(RoundInfo{State: ctrlState, L: d.lastL, Ell: d.lastEll, Accepted: v.Accepted, Committed: len(committed),
				Seconds: (now - roundStart).Seconds(), Next: next, Done: done})
		}
		res.Accepted += v.Accepted
		bonus := !v.Resampled && len(committed) > v.Accepted // one-token rounds without the bonus commit the draft alone
		if v.Resampled {
			res.Resampled++
		} else if bonus {
			res.Bonus++
		}
		for i, t := range committed {
			kind := "accepted"
			ev := traceEvent{Round: res.Rounds, Pos: len(d.seq) - len(committed) + i, Token: t, Time: now.Seconds(), UpBits: st.UplinkBits}
			switch {
			case i == len(committed)-1 && v.Resampled:
				kind = "resampled"
			case i == len(committed)-1 && L == 0:
				kind = "llm"
			case i == len(committed)-1 && bonus:
				kind = "bonus"
			}
			if i < len(drafts) && (kind == "accepted" || i == v.Accepted) {
				ev.U, ev.Bits, ev.Support = measured(drafts[i].u), drafts[i].bits, drafts[i].support
				if p.Method == UIHLM || p.Method == IHLM {
					ev.Imp = &drafts[i].imp
				}
				if i < len(accept) {
					ev.Accept = &accept[i]
				}
			}
			ev.Kind = kind
			enc.Encode(ev)
		}
		if c.EOS >= 0 && contains(committed, c.EOS) {
			res.Stop = "end of sequence"
			break
		}
	}
	res.WallSeconds = time.Since(start).Seconds()
	// Oracle: tokens committed on the device after the last upload.
	if local != nil && len(d.unsent) > 0 {
		ys, err := local.Server.Targets(int32s(d.unsent))
		if err != nil {
			return res, err
		}
		for j, y := range ys {
			devSum += l1(d.unsentX[j], y)
			devN++
		}
	}

	// The output stops at EOS (excluded) and at MaxTokens.
	toks := append([]int(nil), out()...)
	for i, t := range toks {
		if t == c.EOS {
			toks = toks[:i]
			break
		}
	}
	if len(toks) > p.MaxTokens {
		toks = toks[:p.MaxTokens]
	}
	res.Tokens = toks
	if c.Decode != nil {
		res.Text = c.Decode(toks)
	}
	res.VirtualSeconds = now.Seconds()
	res.SetRates()
	if tsrN > 0 {
		res.TrueSkipRate = ptr(tsrSum / float64(tsrN))
	}
	if fullBits > 0 {
		res.CompressionRatio = ptr(float64(res.CodecBits) / float64(fullBits))
	}
	if local != nil && devN > 0 {
		res.MeanDeviation = ptr(devSum / float64(devN))
	}
	res.Energy = p.Energy().Total(res.UplinkBits, res.Resampled, res.Drafted)
	return res, nil
}

func ptr(x float64) *float64 { return &x }

// SetRates fills the rates that follow from r's counts, its tokens and its
// times: throughput, wall tokens/s, transmission, resampling and rejection
// rates, accepted drafts per round and uplink bits per token.
func (r *Result) SetRates() {
	n := float64(len(r.Tokens))
	if r.VirtualSeconds > 0 {
		r.ThroughputTPS = n / r.VirtualSeconds
	}
	if r.WallSeconds > 0 {
		r.WallTPS = n / r.WallSeconds
	}
	if r.Rounds > 0 {
		r.TransmissionRate = float64(r.Uploads) / float64(r.Rounds)
	}
	if r.Uploads > 0 {
		r.ResamplingRate = float64(r.Resampled) / float64(r.Uploads)
		r.AcceptedPerRound = float64(r.Accepted) / float64(r.Uploads)
	}
	if m := r.Accepted + r.Resampled; m > 0 {
		r.RejectionRate = ptr(float64(r.Resampled) / float64(m))
	}
	if n > 0 {
		r.BitsPerToken = float64(r.UplinkBits) / n
	}
}

func int32s(xs []int32) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x)
	}
	return out
}

// emit passes newly committed tokens to OnTokens, stopping at EOS and at
// MaxTokens (the device's output already includes them).
func emit(c Config, d *Device, committed []int) {
	if c.OnTokens == nil {
		return
	}
	out := d.Output()
	start := len(out) - len(committed)
	var pass []int
	for i, t := range committed {
		if t == c.EOS || start+i >= d.p.MaxTokens || contains(out[:start+i], c.EOS) {
			break
		}
		pass = append(pass, t)
	}
	if len(pass) > 0 {
		c.OnTokens(pass)
	}
}

// measured is x, or nil when x is NaN (not measured) or infinite.
func measured(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func l1(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += math.Abs(a[i] - b[i])
	}
	return s
}

func contains(xs []int, t int) bool {
	for _, x := range xs {
		if x == t {
			return true
		}
	}
	return false
}
