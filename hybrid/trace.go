package hybrid

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
)

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

// tracer writes the trace: one JSON line per committed token and per check
// of a skipped token. Write errors do not stop the run (the trace is a
// view of it).
type tracer struct {
	enc *json.Encoder
	imp bool // the method measures importance (ui-hlm, i-hlm)
}

func newTracer(w io.Writer, p Params) *tracer {
	return &tracer{enc: json.NewEncoder(w), imp: p.method().Attention}
}

func (t *tracer) observe(r *round) error {
	st := r.step
	if !r.verified() {
		ev := traceEvent{Round: r.n, Pos: r.pos, Token: st.Local, Kind: "skip", Time: r.at.Seconds(), U: measured(st.U)}
		if t.imp {
			ev.Imp = &st.Imp
		}
		t.enc.Encode(ev)
		return nil
	}
	for _, c := range r.skipChecks() {
		t.enc.Encode(traceEvent{Round: r.n, Pos: c.pos, Token: c.token, Kind: "check", Time: r.at.Seconds(), Accept: &c.accept})
	}
	v, L, bonus := r.verdict, len(st.Upload.Drafts), r.bonus()
	pos := r.positions()
	accept := r.draftAccepts()
	last := len(r.committed) - 1
	for i, tok := range r.committed[:len(r.committed)-r.beyond] { // not the tokens past max_tokens, cut from the output
		ev := traceEvent{Round: r.n, Pos: r.pos + i, Token: tok, Kind: "accepted", Time: r.at.Seconds(), UpBits: st.UplinkBits}
		switch {
		case i == last && v.Resampled:
			ev.Kind = "resampled"
		case i == last && L == 0:
			ev.Kind = "llm"
		case i == last && bonus:
			ev.Kind = "bonus"
		}
		if i < len(pos) && (ev.Kind == "accepted" || i == v.Accepted) {
			dr := &pos[i]
			ev.U, ev.Bits, ev.Support = measured(dr.u), dr.bits, dr.support
			if t.imp {
				ev.Imp = &dr.imp
			}
			if i < len(accept) {
				ev.Accept = &accept[i]
			}
		}
		t.enc.Encode(ev)
	}
	return nil
}

func (t *tracer) fill(*Result) {}

// measured is x, or nil when x is NaN (not measured) or infinite.
func measured(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// RunTrace is w with "run": n first in every JSON object line written to
// it (one object per Write, as the trace's encoder writes them): the lines
// of several generations that share a trace file say whose they are.
func RunTrace(w io.Writer, n int) io.Writer {
	return &runTrace{w: w, prefix: fmt.Appendf(nil, `{"run":%d,`, n)}
}

type runTrace struct {
	w      io.Writer
	prefix []byte
	buf    []byte
}

func (t *runTrace) Write(p []byte) (int, error) {
	if len(p) < 2 || p[0] != '{' {
		return t.w.Write(p)
	}
	pre := t.prefix
	if p[1] == '}' { // an empty object: no comma
		pre = pre[:len(pre)-1]
	}
	t.buf = append(append(t.buf[:0], pre...), p[1:]...)
	if _, err := t.w.Write(t.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}
