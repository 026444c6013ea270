// Package sim is the end-to-end simulator: the device and the server of
// package hybrid in one process, a wireless link model from package channel,
// and a virtual clock, so that every method of the papers runs through the
// same loop on the same prompts, seeds and link and can be compared on
// tokens, bits, time and energy.
package sim

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/tokenizer"
)

// Config is a simulation: models, prompts and parameters.
type Config struct {
	LLM, SLM  string // model specs (model.ParseSpec)
	Tokenizer string // tokenizer path, "" to find it with the models
	Prompts   []string
	Params    hybrid.Params
	Trace     io.Writer // per-token JSON lines (nil: none)
	// Progress, when set, is called after each prompt.
	Progress func(done, total int)
}

// Models are an opened LLM/SLM pair.
type Models struct {
	LLM, SLM model.Model
	Tok      *tokenizer.Tokenizer
}

// Open opens the model pair and checks that it can work together: same
// vocabulary, a tokenizer.
func Open(llmSpec, slmSpec, tokPath string) (*Models, error) {
	llm, err := llama.OpenSpec(llmSpec, tokPath)
	if err != nil {
		return nil, fmt.Errorf("LLM: %w", err)
	}
	slm, err := llama.OpenSpec(slmSpec, tokPath)
	if err != nil {
		return nil, fmt.Errorf("SLM: %w", err)
	}
	if llm.Config().Vocab != slm.Config().Vocab {
		return nil, fmt.Errorf("LLM vocabulary %d and SLM vocabulary %d differ: the pair cannot share tokens", llm.Config().Vocab, slm.Config().Vocab)
	}
	tok := llm.Tokenizer()
	if tok == nil {
		tok = slm.Tokenizer()
	}
	if tok == nil {
		return nil, errors.New("no tokenizer found with either model: pass --tokenizer")
	}
	return &Models{LLM: llm, SLM: slm, Tok: tok}, nil
}

// Run simulates every prompt and aggregates.
func Run(ctx context.Context, c Config) (hybrid.Summary, error) {
	if len(c.Prompts) == 0 {
		return hybrid.Summary{}, errors.New("no prompts")
	}
	if err := c.Params.Validate(); err != nil {
		return hybrid.Summary{}, err
	}
	ms, err := Open(c.LLM, c.SLM, c.Tokenizer)
	if err != nil {
		return hybrid.Summary{}, err
	}
	return RunModels(ctx, ms, c)
}

// RunModels simulates every prompt on an opened pair (prompt i with
// hybrid.PromptParams(Params, i)).
func RunModels(ctx context.Context, ms *Models, c Config) (hybrid.Summary, error) {
	return hybrid.RunPrompts(ctx, c.Params, len(c.Prompts), func(ctx context.Context, i int, p hybrid.Params) (hybrid.Result, error) {
		return One(ctx, ms, p, c.Prompts[i], c.Trace)
	}, c.Progress)
}

// Session is the generation of one prompt on the pair, set up as every
// caller of hybrid sets it up; sc's Params, Prompt, Context and models are
// filled in.
func (ms *Models) Session(p hybrid.Params, prompt string, sc hybrid.SessionConfig) (*hybrid.Session, error) {
	sc.Params, sc.SLM, sc.Vocab, sc.Text = p, ms.SLM, ms.LLM.Config().Vocab, ms.Tok
	sc.Prompt = ms.Tok.Encode(prompt, true)
	sc.Context = ms.Context()
	return hybrid.NewSession(sc)
}

// Context is the positions both models have.
func (ms *Models) Context() int { return min(ms.LLM.Config().SeqLen, ms.SLM.Config().SeqLen) }

// Server opens the server side of a session in the process.
func (ms *Models) Server(s *hybrid.Session) (*hybrid.Local, error) {
	srv, err := hybrid.NewReplicaServer(s.Device.Params(), ms.LLM, ms.SLM, s.Device.Sequence())
	if err != nil {
		return nil, err
	}
	return &hybrid.Local{Server: srv}, nil
}

// One simulates one prompt.
func One(ctx context.Context, ms *Models, p hybrid.Params, prompt string, trace io.Writer) (hybrid.Result, error) {
	s, err := ms.Session(p, prompt, hybrid.SessionConfig{Trace: trace})
	if err != nil {
		return hybrid.Result{}, err
	}
	local, err := ms.Server(s)
	if err != nil {
		return hybrid.Result{}, err
	}
	return s.Run(ctx, local, local)
}

// PromptIDs is a prompt as the simulator runs it: encoded with BOS and
// fitted to the pair's context with room for maxTokens (hybrid.FitPrompt).
func PromptIDs(ms *Models, prompt string, maxTokens int) ([]int, error) {
	return hybrid.FitPrompt(ms.Tok.Encode(prompt, true), ms.Tok.BOS(), ms.Context(), maxTokens)
}
