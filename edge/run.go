package edge

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/hlmproject/hlm/channel"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/sim"
	"github.com/hlmproject/hlm/tokenizer"
)

// Generator runs generations against a server with one draft model.
type Generator struct {
	Conn   Config
	SLM    model.Model
	Tok    *tokenizer.Tokenizer
	Params hybrid.Params
	LLM    string    // required server model fingerprint ("" = any)
	Trace  io.Writer // per-token JSON lines
	// Wrap, when set, wraps each generation's Remote in the verifier the
	// generation uses (to time rounds or inject faults).
	Wrap func(*Remote) hybrid.Verifier
}

// NewGenerator checks the pieces.
func NewGenerator(conn Config, slm model.Model, p hybrid.Params) (*Generator, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	tok := slm.Tokenizer()
	if tok == nil {
		return nil, errors.New("the draft model has no tokenizer: pass --tokenizer")
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
// rendering, whose special tokens are in the text, say).
func (g *Generator) OneTokens(ctx context.Context, p hybrid.Params, ids []int, onTokens func([]int)) (hybrid.Result, Stats, error) {
	if len(ids) == 0 {
		return hybrid.Result{}, Stats{}, errors.New("prompt encodes to no tokens")
	}
	vocab := g.SLM.Config().Vocab
	dev, err := hybrid.NewDevice(p, g.SLM, vocab, ids)
	if err != nil {
		return hybrid.Result{}, Stats{}, err
	}
	lc := p.Channel
	lc.Seed += p.Seed
	conn := g.Conn
	if conn.Shape != nil {
		sc := *conn.Shape
		sc.Seed += p.Seed
		conn.Shape = &sc
	}
	rem, err := Connect(ctx, conn, Session{Params: p, SLM: g.SLM.Fingerprint(), Tokenizer: g.Tok.Fingerprint(), LLM: g.LLM, Prefix: dev.Sequence})
	if err != nil {
		return hybrid.Result{}, Stats{}, fmt.Errorf("connecting to %s: %w", conn.Addr, err)
	}
	defer rem.Close()
	if int(rem.Opened().Vocab) != vocab {
		return hybrid.Result{}, Stats{}, fmt.Errorf("server vocabulary %d, draft model %d", rem.Opened().Vocab, vocab)
	}
	link, err := channel.New(lc)
	if err != nil {
		return hybrid.Result{}, Stats{}, err
	}
	var ver hybrid.Verifier = rem
	if g.Wrap != nil {
		ver = g.Wrap(rem)
	}
	res, err := hybrid.Run(ctx, hybrid.Config{Device: dev, Verifier: ver, Link: link, EOG: g.Tok.EOG(),
		Context: min(int(rem.Opened().Context), g.SLM.Config().SeqLen), Decode: g.Tok.Decode, Trace: g.Trace, OnTokens: onTokens})
	return res, rem.Stats, err
}

// Run generates for every prompt (prompt i with seed Params.Seed+i, as the
// simulator does) and aggregates.
func (g *Generator) Run(ctx context.Context, prompts []string, progress func(done, total int)) (sim.Summary, error) {
	var runs []hybrid.Result
	for i, pr := range prompts {
		p := g.Params
		p.Seed += uint64(i)
		r, _, err := g.One(ctx, p, pr, nil)
		if err != nil {
			return sim.Summary{}, fmt.Errorf("prompt %d: %w", i, err)
		}
		runs = append(runs, r)
		if progress != nil {
			progress(i+1, len(prompts))
		}
	}
	return sim.Aggregate(runs), nil
}
