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
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/model/engine"
	"github.com/hlmproject/hlm/tokenizer"
)

// Config is a simulation: models, prompts and parameters.
type Config struct {
	LLM, SLM  string // model specs (model.ParseSpec); LLM "": builtin.DefaultLLM, SLM "": its shipped draft
	Tokenizer string // tokenizer path, "" to find it with the models
	Prompts   []string
	Params    hybrid.Params
	Trace     io.Writer // per-token JSON lines (nil: none)
	// Progress, when set, is called after each prompt.
	Progress func(done, total int)
	// Opened, when set, is told the models once they are open (to say
	// which ran: the shipped draft found for the LLM, the engine).
	Opened func(ms *Models)
}

// Models are an opened LLM/SLM pair.
type Models struct {
	LLM, SLM model.Model // SLM is nil when no draft was given or shipped
	Tok      *tokenizer.Tokenizer
	noDraft  error
}

// Open opens the model pair and checks that it can work together: same
// vocabulary, a tokenizer. An empty llmSpec is the embedded default
// (builtin.DefaultLLM). An empty slmSpec means the draft hlm ships for
// the LLM (found by the fingerprint of the model it was made from,
// model.OriginOf and model/builtin.DraftFor: a quantized copy finds its
// model's draft); without one,
// Models.SLM is nil, the LLM-only method still runs and RequireDraft says
// how to get a draft.
func Open(llmSpec, slmSpec, tokPath string) (*Models, error) {
	if llmSpec == "" {
		llmSpec = builtin.DefaultLLM // as every command's --llm
	}
	llm, err := engine.OpenSpec(llmSpec, tokPath)
	if err != nil {
		return nil, fmt.Errorf("LLM: %w", err)
	}
	ms := &Models{LLM: llm}
	if slmSpec == "" {
		var ok bool
		if slmSpec, ok = builtin.DraftFor(model.OriginOf(llm)); !ok {
			ms.noDraft = noDraft(llmSpec)
		}
	}
	if slmSpec != "" {
		slm, err := openDraft(llm, llmSpec, slmSpec, tokPath)
		if err != nil {
			return nil, err
		}
		ms.SLM = slm
	}
	ms.Tok = llm.Tokenizer()
	if ms.Tok == nil && ms.SLM != nil {
		ms.Tok = ms.SLM.Tokenizer()
	}
	if ms.Tok == nil {
		return nil, errors.New("no tokenizer found with the models: pass --tokenizer")
	}
	return ms, nil
}

// openDraft opens the draft slmSpec for llm and checks that the two share
// their tokens.
func openDraft(llm model.Model, llmSpec, slmSpec, tokPath string) (model.Model, error) {
	slm, err := engine.OpenSpec(slmSpec, tokPath)
	if err != nil {
		return nil, fmt.Errorf("SLM: %w", err)
	}
	if llm.Config().Vocab != slm.Config().Vocab {
		return nil, fmt.Errorf("LLM vocabulary %d and SLM vocabulary %d differ: the pair cannot share tokens", llm.Config().Vocab, slm.Config().Vocab)
	}
	// The same check hlm serve makes of a device (cloud: tokenizer
	// mismatch): vocabularies of one size with other pieces would
	// exchange meaningless token ids.
	if lt, st := llm.Tokenizer(), slm.Tokenizer(); lt != nil && st != nil && lt.Fingerprint() != st.Fingerprint() {
		return nil, fmt.Errorf("tokenizer mismatch: the LLM %s and the SLM %s have vocabularies of %d tokens but not the same tokenizer (fingerprints %.12s… and %.12s…): the pair cannot share tokens (hlm serve refuses such a device too)", llmSpec, slmSpec, llm.Config().Vocab, lt.Fingerprint(), st.Fingerprint())
	}
	return slm, nil
}

// WithDraft is ms with the draft slmSpec instead of its own, the LLM and
// its tokenizer shared (not opened again); the pair is checked as Open
// checks it.
func (ms *Models) WithDraft(llmSpec, slmSpec, tokPath string) (*Models, error) {
	slm, err := openDraft(ms.LLM, llmSpec, slmSpec, tokPath)
	if err != nil {
		return nil, err
	}
	return &Models{LLM: ms.LLM, SLM: slm, Tok: ms.Tok}, nil
}

// noDraft is the error for an LLM without a shipped draft: it names an
// early exit and a distilled draft of the model, both on hlm's engine
// (neither exists on llama.cpp, where the LLM may run).
func noDraft(llmSpec string) error {
	own, exit := llmSpec, llmSpec+"@exit=1"
	if sp, err := model.ParseSpec(llmSpec); err == nil {
		sp = sp.OnOwnEngine()
		own = sp.String()
		sp.Exit = 1
		exit = sp.String()
	}
	return fmt.Errorf("hlm ships no draft for the LLM %s: pass one with --slm (an early exit works: --slm '%s'), or train one with hlm distill --teacher '%s' --out draft.gguf", llmSpec, exit, own)
}

// RequireDraft is nil when the pair has a draft model, else an error that
// says how to get one.
func (ms *Models) RequireDraft() error {
	if ms.SLM != nil {
		return nil
	}
	if ms.noDraft != nil {
		return ms.noDraft
	}
	return errors.New("no draft model: pass --slm")
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
	if c.Opened != nil {
		c.Opened(ms)
	}
	if c.Params.Family() != hybrid.FamilyLLM {
		if err := ms.RequireDraft(); err != nil {
			return hybrid.Summary{}, err
		}
	}
	return RunModels(ctx, ms, c)
}

// RunModels simulates every prompt on an opened pair (prompt i with
// hybrid.PromptParams(Params, i)).
// With several prompts and a trace, each trace line starts with "run": i+1
// (hybrid.RunTrace), so that a prompt's lines can be told apart.
func RunModels(ctx context.Context, ms *Models, c Config) (hybrid.Summary, error) {
	// Every prompt is checked against the context first, so that prompt 7
	// that does not fit fails the command before prompts 0–6 have run.
	for i, text := range c.Prompts {
		if _, err := hybrid.PromptFor(c.Params, ms.Tok.Encode(text, true), ms.Tok.BOS(), ms.Context()); err != nil {
			return hybrid.Summary{}, fmt.Errorf("prompt %d: %w", i, err)
		}
	}
	return hybrid.RunPrompts(ctx, c.Params, len(c.Prompts), func(ctx context.Context, i int, p hybrid.Params) (hybrid.Result, error) {
		trace := c.Trace
		if trace != nil && len(c.Prompts) > 1 {
			trace = hybrid.RunTrace(trace, i+1)
		}
		return One(ctx, ms, p, c.Prompts[i], trace)
	}, c.Progress)
}

// Session is the generation of one prompt on the pair, set up as every
// caller of hybrid sets it up; sc's Params, Prompt, Context and models are
// filled in.
func (ms *Models) Session(p hybrid.Params, prompt string, sc hybrid.SessionConfig) (*hybrid.Session, error) {
	if p.Family() != hybrid.FamilyLLM {
		if err := ms.RequireDraft(); err != nil {
			return nil, err
		}
	}
	sc.Params, sc.Vocab, sc.Text = p, ms.LLM.Config().Vocab, ms.Tok
	if ms.SLM != nil {
		sc.SLM = ms.SLM
	}
	sc.Prompt = ms.Tok.Encode(prompt, true)
	sc.Context = ms.Context()
	return hybrid.NewSession(sc)
}

// Context is the positions both models have.
func (ms *Models) Context() int {
	if ms.SLM == nil {
		return ms.LLM.Config().SeqLen
	}
	return min(ms.LLM.Config().SeqLen, ms.SLM.Config().SeqLen)
}

// Server opens the server side of a session in the process, from the
// session parameters as the device sends them over the network
// (hybrid.SessionParams, parsed back as hlm serve parses them), so that the
// simulator's server knows exactly what a real one would.
func (ms *Models) Server(s *hybrid.Session) (*hybrid.Local, error) {
	var slm model.Model
	if ms.SLM != nil {
		slm = ms.SLM
	}
	p, err := hybrid.ParseSessionParams(s.Device.Params().SessionParams())
	if err != nil {
		return nil, err
	}
	srv, err := hybrid.NewReplicaServer(p, ms.LLM, slm, s.Device.Sequence())
	if err != nil {
		return nil, err
	}
	return &hybrid.Local{Server: srv}, nil
}

// One simulates one prompt.
func One(ctx context.Context, ms *Models, p hybrid.Params, prompt string, trace io.Writer) (hybrid.Result, error) {
	return ms.Simulate(ctx, p, prompt, hybrid.SessionConfig{Trace: trace})
}

// Simulate runs the session of prompt (Session) against its server in the
// process, the server also its oracle; sc's observers see the rounds.
func (ms *Models) Simulate(ctx context.Context, p hybrid.Params, prompt string, sc hybrid.SessionConfig) (hybrid.Result, error) {
	s, err := ms.Session(p, prompt, sc)
	if err != nil {
		return hybrid.Result{}, err
	}
	local, err := ms.Server(s)
	if err != nil {
		return hybrid.Result{}, err
	}
	defer local.Server.Close() // frees a llama.cpp LLM's sequence for the next prompt at once
	return s.Run(ctx, local, local)
}

// PromptIDs is a prompt as the simulator runs it: encoded with BOS and
// fitted to the pair's context with room for maxTokens (hybrid.FitPrompt).
func PromptIDs(ms *Models, prompt string, maxTokens int) ([]int, error) {
	return hybrid.FitPrompt(ms.Tok.Encode(prompt, true), ms.Tok.BOS(), ms.Context(), maxTokens)
}
