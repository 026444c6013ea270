package hybrid

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hlmproject/hlm/channel"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/policy"
)

// Text is what a generation needs of the tokenizer: the ids that end it,
// the BOS id a fitted prompt keeps, and the decoder of its output.
type Text interface {
	EOG() []int
	BOS() int
	Decode(ids []int) string
}

// SessionConfig is one generation as the simulator, the device and
// training all set it up.
type SessionConfig struct {
	Params Params
	SLM    model.Model // the draft model (nil for the LLM-only method)
	Vocab  int         // the LLM's vocabulary
	// Prompt is the encoded prompt (BOS included); Context the positions
	// both sides have. NewSession fits the prompt into the context
	// (FitPrompt).
	Prompt  []int
	Context int
	Text    Text
	// Trace, OnTokens, OnRound and OnDraft are Config's.
	Trace    io.Writer
	OnTokens func([]int)
	OnRound  func(RoundInfo)
	OnDraft  func(DraftRecord)
	// MeasureUncertainty makes the device measure every one-token draft's
	// uncertainty (DraftRecord.U) even when its method does not use it,
	// on a random stream of its own: the run's drafts, uploads and tokens
	// stay those of the same run without the measurement.
	MeasureUncertainty bool
	// Uploader, when set, replaces the upload rule of a method that drafts
	// one token per round (the skip family: hlm, rand-hlm, u-hlm,
	// cu-hlm-offline, cu-hlm-online, ui-hlm, i-hlm): a rule of one's own,
	// deciding from policy.Token (the draft, its probability and
	// distribution, and U or the attention row where the method measures
	// them). The method still decides what an upload sends (its codec)
	// and what the device measures, and the server verifies an upload as
	// the method does: it needs to know nothing of the rule. NewSession
	// refuses it for the other families and for slm, which sends nothing.
	Uploader policy.Uploader
	// Draft, when set, is the draft model's session of an earlier
	// generation (Device.DraftSession) that this one takes over: what it
	// holds of the prompt is not evaluated again. Ignored when it is of
	// another model.
	Draft *DraftSession
	// Controller, when set, chooses each round's L and ℓ (replacing a
	// policy loaded from Params.DDQNModel). It drives the methods whose
	// rounds may change L and ℓ (q-s and s-q) with Params.Draft "ddqn":
	// NewSession refuses it elsewhere.
	Controller Controller
}

// A Session is a generation ready to run: its device holds the fitted
// prompt (Device.Sequence is what the server must open the session with).
type Session struct {
	Device *Device
	cfg    SessionConfig
	link   channel.Link
}

// NewSession checks the prompt against the context (or fits it, with
// Params.FitPrompt) and opens the device and the link model.
func NewSession(c SessionConfig) (*Session, error) {
	ids, err := PromptFor(c.Params, c.Prompt, c.Text.BOS(), c.Context)
	if err != nil {
		return nil, err
	}
	dev, err := newDevice(c.Params, c.SLM, c.Vocab, ids, c.Draft)
	if err != nil {
		return nil, err
	}
	if c.Uploader != nil {
		switch {
		case dev.m.Family != FamilySkip:
			return nil, fmt.Errorf("%w: an Uploader decides whether one drafted token is sent, which method %s does not ask (its family uploads every round)", ErrParam, c.Params.Method)
		case dev.enc == nil:
			return nil, fmt.Errorf("%w: method %s sends nothing, so an Uploader has nothing to send: use hlm (full distributions) or a method whose codec you want", ErrParam, c.Params.Method)
		}
		dev.uploader = c.Uploader
	}
	if c.Controller != nil {
		if err := controllable(c.Params); err != nil {
			return nil, err
		}
		dev.SetController(c.Controller)
	}
	if c.MeasureUncertainty {
		if err := dev.measureUncertainty(); err != nil {
			return nil, err
		}
	}
	link, err := NewLink(c.Params)
	if err != nil {
		return nil, err
	}
	return &Session{Device: dev, cfg: c, link: link}, nil
}

// Run generates against v. oracle, when set, is the in-process server v
// is or wraps (Config.Oracle).
func (s *Session) Run(ctx context.Context, v Verifier, oracle *Local) (Result, error) {
	c := s.cfg
	return Run(ctx, Config{Device: s.Device, Verifier: v, Oracle: oracle, Link: s.link, EOG: c.Text.EOG(),
		Context: c.Context, Decode: c.Text.Decode, Trace: c.Trace, OnTokens: c.OnTokens, OnRound: c.OnRound, OnDraft: c.OnDraft})
}

// controllable is nil when a Controller may choose the rounds of p's
// method: a method whose rounds may change L and ℓ, with draft=ddqn (any
// other draft policy fixes the codec's ℓ for the session).
func controllable(p Params) error {
	m, err := MethodByName(p.Method)
	if err != nil {
		return err
	}
	if !m.Controlled {
		return fmt.Errorf("%w: a Controller chooses L and ℓ per round, which method %s cannot change (methods %s)", ErrParam, p.Method, strings.Join(controlledMethods(), ", "))
	}
	if p.Draft != DraftDDQN {
		return fmt.Errorf("%w: a Controller chooses L and ℓ per round, which needs draft=%s (method %s has draft=%s)", ErrParam, DraftDDQN, p.Method, p.Draft)
	}
	return nil
}

// controlledMethods names the methods a Controller can drive.
func controlledMethods() []string {
	var out []string
	for _, m := range methods {
		if m.Controlled {
			out = append(out, m.Name)
		}
	}
	return out
}

// PromptFor is the prompt ids a session of p starts from in a context of
// ctx positions: fitted with Params.FitPrompt (FitPrompt), else the prompt
// itself when it leaves room for at least one token (CheckPrompt: a longer
// one wraps model.ErrContextFull and names the context).
func PromptFor(p Params, ids []int, bos, ctx int) ([]int, error) {
	if p.FitPrompt {
		return FitPrompt(ids, bos, ctx, p.MaxTokens)
	}
	return CheckPrompt(ids, ctx)
}

// CheckPrompt refuses a prompt that leaves no room for a token in a
// context of ctx positions (the round loop keeps one position free:
// Run's room), wrapping model.ErrContextFull.
func CheckPrompt(ids []int, ctx int) ([]int, error) {
	switch {
	case len(ids) == 0:
		return nil, errors.New("prompt encodes to no tokens")
	case len(ids) > ctx-2:
		return nil, fmt.Errorf("%w: the prompt has %d tokens and the context %d positions: at most %d prompt tokens leave room for output (shorten the prompt, --set fit_prompt=true to keep BOS and its last tokens, or give the model more context: on llama.cpp, c=)",
			model.ErrContextFull, len(ids), ctx, ctx-2)
	}
	return ids, nil
}

// FitPrompt fits a prompt into a context of ctx positions with room for
// maxTokens new tokens (and 8 to spare): a longer prompt keeps its first
// token when it is BOS, then its last tokens (long QA passages exceed small
// models' contexts). The simulator and the device fit prompts this one way.
func FitPrompt(ids []int, bos, ctx, maxTokens int) ([]int, error) {
	if len(ids) == 0 {
		return nil, errors.New("prompt encodes to no tokens")
	}
	keep := ctx - maxTokens - 8
	if keep < 2 {
		return nil, fmt.Errorf("%w: max tokens %d leaves no room for a prompt in a context of %d (a fitted prompt keeps 2 tokens or more and 8 positions spare: a context of at least %d; lower max_tokens, or give the model more context: on llama.cpp, c=)", ErrParam, maxTokens, ctx, maxTokens+10)
	}
	if len(ids) <= keep {
		return ids, nil
	}
	head := ids[:0:0]
	if ids[0] == bos {
		head = append(head, ids[0])
	}
	return append(head, ids[len(ids)-(keep-len(head)):]...), nil
}

// NewLink is a run's link model: the channel of p, its seed offset by the
// run's seed.
func NewLink(p Params) (channel.Link, error) {
	lc := p.Channel
	lc.Seed += p.Seed
	return channel.New(lc)
}

// PromptParams are the parameters of prompt i of a run over several
// prompts: the run's, with seed Seed + i.
func PromptParams(p Params, i int) Params {
	p.Seed += uint64(i)
	return p
}

// RunPrompts generates for n prompts in order — prompt i with
// PromptParams(p, i) — and aggregates the results. progress, when set, is
// called after each.
func RunPrompts(ctx context.Context, p Params, n int, gen func(ctx context.Context, i int, p Params) (Result, error), progress func(done, total int)) (Summary, error) {
	if n == 0 {
		return Summary{}, errors.New("no prompts")
	}
	runs := make([]Result, 0, n)
	for i := range n {
		r, err := gen(ctx, i, PromptParams(p, i))
		if err != nil {
			return Summary{}, fmt.Errorf("prompt %d: %w", i, err)
		}
		runs = append(runs, r)
		if progress != nil {
			progress(i+1, n)
		}
		if r.Stop == StopInterrupted {
			break // the prompts after it would each stop at once
		}
	}
	return Aggregate(runs), nil
}
