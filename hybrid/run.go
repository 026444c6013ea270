package hybrid

import (
	"context"
	"fmt"
	"github.com/hlmproject/hlm/policy"
	"io"
	"math"
	"slices"
	"strings"
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
// simulator's oracle metrics (Config.Oracle).
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

// Stop is why a generation ended (Result.Stop).
type Stop string

// Stop reasons of a Result.
const (
	StopEnd         Stop = "end of sequence" // an end-of-generation token
	StopContext     Stop = "context full"
	StopMaxTokens   Stop = "max tokens"
	StopInterrupted Stop = "interrupted"
)

// Truncated reports that the generation was cut short by a limit (the
// context or the token budget) rather than ended by the model or the
// caller: OpenAI's finish_reason "length".
func (s Stop) Truncated() bool { return s == StopContext || s == StopMaxTokens }

// Config is one generation run.
type Config struct {
	Device   *Device
	Verifier Verifier
	// Oracle, when set, is the in-process server that verifies the run
	// (the simulator's; Verifier is it or wraps it): its distributions
	// measure the output's deviation from the LLM (Result.MeanDeviation)
	// and the drafts' acceptance probabilities in the trace.
	Oracle *Local
	Link   channel.Link
	// EOG are the ids that end a generation (the tokenizer's EOG: EOS
	// and the end-of-turn tokens); none when empty.
	EOG     []int
	Context int // context length available on both sides
	// Decode turns output ids into text (nil: no text).
	Decode func([]int) string
	// Trace, when set, receives one JSON object per committed token.
	Trace io.Writer
	// OnTokens, when set, is called with the tokens each round commits, in
	// order (for streaming). Tokens from an EOG token on, and past
	// MaxTokens, are not passed.
	OnTokens func(tokens []int)
	// OnRound, when set, is called after every verified round of a device
	// with a Controller (for training one).
	OnRound func(RoundInfo)
	// OnDraft, when set, is shown every draft the verification reached,
	// with the LLM's distribution at its position: an observer of the
	// simulator's rounds (it needs Oracle; calibration is one, sim.Collect).
	OnDraft func(DraftRecord)
}

// Run generates until an end-of-generation token, the token budget or the
// context is exhausted.
//
// Each round is played by play, which charges the virtual clock as the
// round goes; the finished round is then shown to the meters (counts, link
// ledger, true skip rate, the simulator's oracle, the trace), which make up
// the Result at the end. On error the Result holds what was measured
// before it (the clock includes the failed round's time so far).
func Run(ctx context.Context, c Config) (Result, error) {
	if c.OnDraft != nil {
		if c.Oracle == nil {
			return Result{}, fmt.Errorf("%w: OnDraft observes the server's distributions and needs Oracle", ErrParam)
		}
		if c.Device.m.ListK {
			return Result{}, fmt.Errorf("%w: OnDraft observes one draft per position; method %s sends lists", ErrParam, c.Device.p.Method)
		}
	}
	d := c.Device
	p := d.Params()
	res := Result{Method: p.Method, Seed: p.Seed, Stop: StopMaxTokens, PromptTokens: d.prompt}
	clk := newClock(p)
	meters := c.meters()
	start := time.Now()
	fail := func(err error) (Result, error) {
		c.summarize(&res, clk, meters, time.Since(start))
		return res, err
	}
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			res.Stop = StopInterrupted
			break
		}
		room := min(p.MaxTokens-len(d.Output()), c.Context-1-len(d.Sequence()))
		if room < 1 {
			if min(len(d.Output()), c.outputLimit()) < p.MaxTokens {
				res.Stop = StopContext
			}
			break
		}
		r, err := c.play(ctx, clk, n, room)
		if err != nil {
			if ctx.Err() != nil {
				// Interrupted inside a round (a network verifier gives up
				// its wait): the round is dropped, and the output is what
				// the rounds before it committed, as at a round's start.
				res.Stop = StopInterrupted
				break
			}
			return fail(err)
		}
		for _, m := range meters {
			if err := m.observe(r); err != nil {
				return fail(fmt.Errorf("round %d: %w", n, err))
			}
		}
		emit(c, d, r.committed)
		if c.endsIn(r.committed) >= 0 {
			res.Stop = StopEnd
			break
		}
	}
	wall := time.Since(start)
	for _, m := range meters {
		if e, ok := m.(ender); ok {
			if err := e.end(); err != nil {
				return fail(err)
			}
		}
	}
	c.summarize(&res, clk, meters, wall)
	return res, nil
}

// meters are the run's meters, in the order they see each round.
func (c Config) meters() []meter {
	ms := []meter{&tally{}, &ledger{}, &skipRate{}}
	if c.Oracle != nil {
		ms = append(ms, &oracle{d: c.Device, server: c.Oracle.Server})
		if c.Device.p.Entropy {
			ms = append(ms, &entropyMeter{d: c.Device, server: c.Oracle.Server})
		}
		if c.Device.m.budgetFilled() {
			ms = append(ms, &batches{d: c.Device})
		}
	}
	if c.OnDraft != nil {
		ms = append(ms, &draftObserver{f: c.OnDraft})
	}
	if c.Trace != nil {
		ms = append(ms, newTracer(c.Trace, c.Device.p))
	}
	return ms
}

// play plays round n: the device drafts and either commits a token locally
// or uploads; an upload crosses the link, is verified and its verdict
// applied. The clock is charged for each part as it happens.
func (c Config) play(ctx context.Context, clk *clock, n, room int) (*round, error) {
	d := c.Device
	// A controller sees the round's uplink rate before drafting (Q-S
	// Sec. IV-B), so the link state is drawn at the start of its rounds.
	var state channel.State
	roundStart := clk.now
	ctrlState := ControlState{}
	if d.Controlled() {
		state = c.Link.Round(clk.now)
		ctrlState = d.ControlState(state.UpRate)
	}
	t := time.Now()
	st, err := d.Step(room)
	if err != nil {
		return nil, err
	}
	clk.draft(st.Drafted+st.Probed, time.Since(t))
	r := &round{n: n, step: st}
	if st.Upload == nil { // committed locally
		r.committed, r.pos, r.at = []int{st.Local}, len(d.Sequence())-1, clk.now
		return r, nil
	}
	// Keep what the meters need before the verdict clears it.
	r.unsentX, r.drafts = st.unsentX, st.drafts
	if !d.Controlled() {
		state = c.Link.Round(clk.now)
	}
	clk.uplink(state, st.UplinkBits)
	t = time.Now()
	v, err := c.Verifier.Verify(ctx, st.Upload)
	if err != nil {
		return nil, fmt.Errorf("round %d: %w", n, err)
	}
	clk.verify(time.Since(t))
	r.downBits = VerdictBits(d.Params(), len(st.Upload.Drafts), d.Vocab())
	clk.downlink(state, r.downBits)
	if c.Oracle != nil {
		r.server = c.Oracle.last
	}
	r.pos = len(d.Sequence())
	out := len(d.Output())
	if r.committed, err = d.Apply(st, v); err != nil {
		return nil, err
	}
	r.beyond = max(0, out+len(r.committed)-c.outputLimit())
	if d.m.Tree {
		r.path = d.view
	}
	r.verdict, r.at = v, clk.now
	if c.OnRound != nil && d.Controlled() {
		next := d.ControlState(state.UpRate) // the next round's rate is not known yet
		done := c.endsIn(r.committed) >= 0 || len(d.Output()) >= d.Params().MaxTokens || c.Context-1-len(d.Sequence()) < 1
		c.OnRound(RoundInfo{State: ctrlState, L: st.L, Ell: st.Ell, Accepted: v.Accepted, Committed: len(r.committed),
			Alpha: r.draftAccepts(), Seconds: (clk.now - roundStart).Seconds(), Next: next, Done: done})
	}
	return r, nil
}

// outputLimit is the most output tokens a run keeps: max_tokens, and what
// the context leaves after the prompt but one position (the room rounds
// are planned by). A round's last token can land past it — a block's bonus
// after the one draft a round with room for one token still sends — and is
// cut, as past max_tokens, so that every method stops at the same length.
func (c Config) outputLimit() int {
	d := c.Device
	return min(d.Params().MaxTokens, c.Context-1-d.prompt)
}

// summarize makes up res from the meters and the clock: the output
// (stopped at an EOG token, excluded, and at outputLimit), the meters' figures, the
// times, the rates and the energy.
func (c Config) summarize(res *Result, clk *clock, meters []meter, wall time.Duration) {
	p := c.Device.Params()
	toks := append([]int(nil), c.Device.Output()...)
	if i := c.endsIn(toks); i >= 0 {
		toks = toks[:i]
	}
	if n := c.outputLimit(); len(toks) > n {
		toks = toks[:max(n, 0)]
	}
	res.Tokens = toks
	if c.Decode != nil {
		res.Text = c.Decode(toks)
	}
	for _, m := range meters {
		m.fill(res)
	}
	clk.fill(res)
	res.WallSeconds = wall.Seconds()
	res.SetRates()
	res.Energy = p.Energy().Total(res.UplinkBits, res.Resampled, res.Drafted+res.Probed)
	if c.Device.m.Tree {
		tr := c.Device.TreeReport()
		res.Tree = &tr
	}
	res.Warnings = append(res.Warnings, Warnings(p, *res)...) // after the clock's
}

// neverConsultedAfter is the output length from which a skip rule that
// never uploaded is worth a warning.
const neverConsultedAfter = 16

// Warnings are what the user should know about a run of p that produced
// r: a method with an upload rule that skipped all of at least
// neverConsultedAfter tokens never consulted the LLM — its output is the
// draft's alone, whatever the method promises. (u_th's defaults were
// calibrated for the papers' pairs; another draft's uncertainties may all
// lie below them.)
func Warnings(p Params, r Result) []string {
	m := p.method()
	w := append(treeShapeWarnings(p), budgetWarnings(p, r)...)
	if m.Family != FamilySkip || m.uploader == nil || r.Uploads > 0 || len(r.Tokens) < neverConsultedAfter {
		return w
	}
	up := m.uploader(p)
	if _, never := up.(policy.Never); never { // the SLM alone: by design
		return w
	}
	uth := fmt.Sprintf("u_th=%g", p.UploadThreshold())
	lower := "set a lower u_th"
	if math.IsNaN(p.UTh) {
		uth += " (the method's default, calibrated for another pair)"
		lower = "measure this pair's threshold with hlm calibrate, or " + lower
	}
	imp := fmt.Sprintf("the importance test (imp_k=%d, gamma=%g)", p.ImpK, p.Gamma)
	why := ""
	switch {
	case m.Uncertainty && m.Attention:
		why = ": no draft was both more uncertain than " + uth + " and passed " + imp + "; " + lower + " or gamma"
	case m.Uncertainty:
		why = ": every draft's uncertainty was at most " + uth + "; " + lower
	case m.Attention:
		why = ": no draft passed " + imp
	case len(m.uploadKeys) > 0:
		var kv []string
		for _, k := range m.uploadKeys {
			v, _ := p.Get(k)
			kv = append(kv, k+"="+v)
		}
		why = " (" + strings.Join(kv, ", ") + ")"
	default:
		why = fmt.Sprintf(" (its upload rule: %v)", up)
	}
	return append(w, fmt.Sprintf("method %s skipped all %d tokens: the LLM was never consulted and the output is the draft's alone%s", p.Method, len(r.Tokens), why))
}

// treeShapeWarnings says where tree_depth or tree_nodes cut a fixed
// tree_shape (growShape stops at either): the levels past the cut never
// grow, whatever the shape asks.
func treeShapeWarnings(p Params) []string {
	shape, err := parseTreeShape(p.TreeShape)
	if !p.method().Tree || err != nil || shape == nil {
		return nil
	}
	var w []string
	if len(shape) > p.TreeDepth {
		w = append(w, fmt.Sprintf("tree_shape=%s has %d levels but tree_depth=%d: levels %d… never grow; set tree_depth=%d", p.TreeShape, len(shape), p.TreeDepth, p.TreeDepth+1, min(len(shape), maxDraftLen)))
	}
	nodes, width := 0, 1
	for i, k := range shape[:min(len(shape), p.TreeDepth)] {
		width *= k
		if nodes+width > p.TreeNodes {
			w = append(w, fmt.Sprintf("tree_shape=%s needs more than tree_nodes=%d nodes: level %d is cut after %d of its %d nodes, the levels after it never grow", p.TreeShape, p.TreeNodes, i+1, p.TreeNodes-nodes, width))
			break
		}
		nodes += width
	}
	return w
}

// budgetWarnings says when budget_bits was below what one draft costs: a
// round (tree methods) or a batch (k-sqs, c-sqs) always sends at least one
// draft, so those uploads sent more than the budget.
func budgetWarnings(p Params, r Result) []string {
	if r.OverBudget == 0 {
		return nil
	}
	return []string{fmt.Sprintf("budget_bits=%d is below what one draft costs in %d of %d uploads: each sent its first draft anyway (an upload always carries one), %d bits on average per upload", p.Budget, r.OverBudget, r.Uploads, r.UplinkBits/int64(max(1, r.Uploads)))}
}

// emit passes newly committed tokens to OnTokens, stopping at an EOG
// token and at outputLimit (the device's output already includes them).
func emit(c Config, d *Device, committed []int) {
	if c.OnTokens == nil {
		return
	}
	out := d.Output()
	start := len(out) - len(committed)
	var pass []int
	if c.endsIn(out[:start]) >= 0 {
		return
	}
	limit := c.outputLimit()
	for i, t := range committed {
		if slices.Contains(c.EOG, t) || start+i >= limit {
			break
		}
		pass = append(pass, t)
	}
	if len(pass) > 0 {
		c.OnTokens(pass)
	}
}

// endsIn returns the index of the first EOG token in xs, or -1.
func (c Config) endsIn(xs []int) int {
	return slices.IndexFunc(xs, func(t int) bool { return slices.Contains(c.EOG, t) })
}
