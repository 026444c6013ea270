package edge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/policy"
	"github.com/hlmproject/hlm/tokenizer"
)

// Generator runs generations against a server with one draft model.
type Generator struct {
	Conn Config
	SLM  model.Model
	Tok  *tokenizer.Tokenizer
	// Params are Run's: prompt i runs with hybrid.PromptParams(Params, i).
	// One and OneTokens take their own, so that generations at the same
	// time (the OpenAI endpoint's requests, a load test's devices) may
	// differ in seed and sampling.
	Params hybrid.Params
	LLM    string    // required server model fingerprint ("" = any)
	Trace  io.Writer // per-token JSON lines
	// TraceRuns labels each generation's trace lines with its number
	// ("run": 1, 2, … in the order they start), for generations that share
	// Trace at the same time (the OpenAI endpoint's requests).
	TraceRuns bool
	runs      atomic.Int64
	// Uploader, when set, replaces the method's upload rule in every
	// generation (hybrid.SessionConfig.Uploader); it is called from the
	// generations' goroutines at once, so it must be safe for that.
	Uploader policy.Uploader
	// Wrap, when set, wraps each generation's Remote in the verifier the
	// generation uses (to time rounds or inject faults).
	Wrap func(*Remote) hybrid.Verifier
	// Conversations, when set, parks each generation's session on the
	// server when it ends, and continues a parked one when a generation's
	// prompt begins with its tokens (a chat's next turn), sending only the
	// new tokens. Nil: each generation opens a session with its whole
	// prompt and closes it.
	Conversations *Conversations
}

// NewGenerator checks the pieces.
func NewGenerator(conn Config, slm model.Model, p hybrid.Params) (*Generator, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	tok := slm.Tokenizer()
	if tok == nil {
		return nil, errors.New("the draft model has no tokenizer: give one with the model (hlm edge: --tokenizer)")
	}
	return &Generator{Conn: conn, SLM: slm, Tok: tok, Params: p}, nil
}

// One generates a continuation of prompt with seed p.Seed, calling onTokens
// (if set) with each round's committed tokens. It returns the same summary
// as the simulator, with wall-clock figures filled in.
func (g *Generator) One(ctx context.Context, p hybrid.Params, prompt string, onTokens func([]int)) (hybrid.Result, Stats, error) {
	return g.OneTokens(ctx, p, g.Tok.Encode(prompt, true), onTokens)
}

// OneTokens is One for a prompt already encoded (a chat template's
// rendering, whose special tokens are in the text, say). The prompt must
// leave room in the context the server and the draft model share, or with
// Params.FitPrompt is cut as the simulator cuts it (hybrid.NewSession).
func (g *Generator) OneTokens(ctx context.Context, p hybrid.Params, ids []int, onTokens func([]int)) (hybrid.Result, Stats, error) {
	vocab := g.SLM.Config().Vocab
	conn := g.Conn
	if conn.Shape != nil {
		sc := *conn.Shape
		sc.Seed += p.Seed
		conn.Shape = &sc
	}
	rem, err := Dial(ctx, conn)
	if err != nil {
		if !errors.As(err, new(fatal)) && ctx.Err() == nil {
			err = fmt.Errorf("%w: %w", ErrUnreachable, err)
		}
		return hybrid.Result{}, Stats{}, fmt.Errorf("connecting to %s: %w", conn.Addr, err)
	}
	defer rem.Close()
	w := rem.Welcome()
	if int(w.Vocab) != vocab {
		return hybrid.Result{}, Stats{}, fmt.Errorf("the server's LLM has a vocabulary of %d tokens and the draft %d: the pair cannot share tokens (the draft must be one of the server's model, with its tokenizer)", w.Vocab, vocab)
	}
	sc := hybrid.SessionConfig{Params: p, SLM: g.SLM, Vocab: vocab, Prompt: ids,
		Context: min(int(w.Context), g.SLM.Config().SeqLen), Text: g.Tok, Trace: g.trace(), OnTokens: onTokens, Uploader: g.Uploader}
	cont := g.continuation(sc)
	if cont != nil {
		sc.Draft = cont.Draft
	}
	s, err := hybrid.NewSession(sc)
	if err != nil {
		if cont != nil {
			g.Conversations.Put(cont) // its server session is untouched: another request may continue it
		}
		return hybrid.Result{}, Stats{}, err
	}
	sess := Session{Params: p, SLM: g.SLM.Fingerprint(), Tokenizer: g.Tok.Fingerprint(), LLM: g.LLM, Prefix: s.Device.Sequence, Continue: cont}
	if err := rem.Open(ctx, sess); err != nil {
		if pk := rem.Continuing(); pk != nil {
			// The server did not refuse it (it was not reached, or the
			// request was cancelled): the next request may continue it.
			pk.Draft = s.Device.DraftSession(g.SLM)
			g.Conversations.Put(pk)
		}
		return hybrid.Result{}, Stats{}, fmt.Errorf("opening a session on %s: %w", conn.Addr, err)
	}
	var ver hybrid.Verifier = rem
	if g.Wrap != nil {
		ver = g.Wrap(rem)
	}
	res, err := s.Run(ctx, ver, nil)
	if err == nil {
		g.park(rem, s.Device)
	}
	return res, rem.Stats, err
}

// continuation is the parked session (Conversations) that a generation
// of sc continues, taken from the parked ones; nil for none.
func (g *Generator) continuation(sc hybrid.SessionConfig) *Parked {
	if g.Conversations == nil {
		return nil
	}
	// The prompt as the session will fit it, found before the device
	// evaluates any of it.
	fitted, err := hybrid.PromptFor(sc.Params, sc.Prompt, g.Tok.BOS(), sc.Context)
	if err != nil {
		return nil
	}
	return g.Conversations.Take(fitted)
}

// park leaves a finished generation's session on the server, with the
// device's draft session, for the conversation's next turn
// (Conversations); without them, or once they are closed, it does
// nothing, and the deferred Close ends the session.
func (g *Generator) park(rem *Remote, dev *hybrid.Device) {
	if g.Conversations == nil || !g.Conversations.parking() {
		return
	}
	// The server holds the sequence up to the last verified round (and,
	// if an interrupted round was verified after all, more, which a
	// continuation does not keep).
	if pk := rem.Park(dev.Sequence()[:dev.Synced()]); pk != nil {
		pk.Draft = dev.DraftSession(g.SLM)
		pk.Prompt = min(len(pk.Tokens), len(dev.Sequence())-len(dev.Output()))
		g.Conversations.Put(pk)
	}
}

// Run generates for every prompt (prompt i with hybrid.PromptParams(Params,
// i), as the simulator does) and aggregates.
func (g *Generator) Run(ctx context.Context, prompts []string, progress func(done, total int)) (hybrid.Summary, error) {
	return hybrid.RunPrompts(ctx, g.Params, len(prompts), func(ctx context.Context, i int, p hybrid.Params) (hybrid.Result, error) {
		r, _, err := g.One(ctx, p, prompts[i], nil)
		return r, err
	}, progress)
}

// trace is the writer of one generation's trace lines.
func (g *Generator) trace() io.Writer {
	if g.Trace == nil || !g.TraceRuns {
		return g.Trace
	}
	return hybrid.RunTrace(g.Trace, int(g.runs.Add(1)))
}
