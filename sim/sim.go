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

	"github.com/hlmproject/hlm/channel"
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

// Summary aggregates runs over prompts.
type Summary struct {
	hybrid.Result
	Runs []hybrid.Result `json:"runs,omitempty"`
}

// Run simulates every prompt and aggregates.
func Run(ctx context.Context, c Config) (Summary, error) {
	if len(c.Prompts) == 0 {
		return Summary{}, errors.New("no prompts")
	}
	if err := c.Params.Validate(); err != nil {
		return Summary{}, err
	}
	ms, err := Open(c.LLM, c.SLM, c.Tokenizer)
	if err != nil {
		return Summary{}, err
	}
	return RunModels(ctx, ms, c)
}

// RunModels simulates every prompt on an opened pair. Prompt i runs with seed
// Params.Seed + i.
func RunModels(ctx context.Context, ms *Models, c Config) (Summary, error) {
	var runs []hybrid.Result
	for i, prompt := range c.Prompts {
		p := c.Params
		p.Seed += uint64(i)
		r, err := One(ctx, ms, p, prompt, c.Trace)
		if err != nil {
			return Summary{}, fmt.Errorf("prompt %d: %w", i, err)
		}
		runs = append(runs, r)
		if c.Progress != nil {
			c.Progress(i+1, len(c.Prompts))
		}
	}
	return Aggregate(runs), nil
}

// One simulates one prompt.
func One(ctx context.Context, ms *Models, p hybrid.Params, prompt string, trace io.Writer) (hybrid.Result, error) {
	ids, err := PromptIDs(ms, prompt, p.MaxTokens)
	if err != nil {
		return hybrid.Result{}, err
	}
	vocab := ms.LLM.Config().Vocab
	dev, err := hybrid.NewDevice(p, ms.SLM, vocab, ids)
	if err != nil {
		return hybrid.Result{}, err
	}
	srv, err := hybrid.NewReplicaServer(p, ms.LLM, ms.SLM, ids)
	if err != nil {
		return hybrid.Result{}, err
	}
	lc := p.Channel
	lc.Seed += p.Seed
	link, err := channel.New(lc)
	if err != nil {
		return hybrid.Result{}, err
	}
	ctxLen := min(ms.LLM.Config().SeqLen, ms.SLM.Config().SeqLen)
	local := &hybrid.Local{Server: srv}
	return hybrid.Run(ctx, hybrid.Config{
		Device: dev, Verifier: local, Oracle: local, Link: link,
		EOG: ms.Tok.EOG(), Context: ctxLen, Decode: ms.Tok.Decode, Trace: trace,
	})
}

// PromptIDs encodes a prompt (with BOS). A prompt too long to leave room for
// maxTokens new tokens in the pair's context keeps BOS and its last tokens
// (long QA passages, e.g. QED, exceed small models' contexts).
func PromptIDs(ms *Models, prompt string, maxTokens int) ([]int, error) {
	ids := ms.Tok.Encode(prompt, true)
	if len(ids) == 0 {
		return nil, errors.New("prompt encodes to no tokens")
	}
	ctx := min(ms.LLM.Config().SeqLen, ms.SLM.Config().SeqLen)
	keep := ctx - maxTokens - 8
	if keep < 2 {
		return nil, fmt.Errorf("max tokens %d leaves no room for a prompt in a context of %d", maxTokens, ctx)
	}
	if len(ids) > keep {
		head := ids[:0:0]
		if ids[0] == ms.Tok.BOS() {
			head = append(head, ids[0])
		}
		ids = append(head, ids[len(ids)-(keep-len(head)):]...)
	}
	return ids, nil
}

// Aggregate sums runs: counts, bits, bytes, energy and times (the virtual
// time and its parts) add up, rates are recomputed from the sums, the true
// skip rate and deviation are weighted by what they were measured on.
func Aggregate(runs []hybrid.Result) Summary {
	var s Summary
	if len(runs) == 1 {
		s.Result = runs[0]
		return s
	}
	s.Runs = runs
	a := &s.Result
	var tsr, tsrW, dev, devW, fullRatioNum, fullRatioDen float64
	for i, r := range runs {
		if i == 0 {
			a.Method, a.Seed = r.Method, r.Seed
		}
		a.Tokens = append(a.Tokens, r.Tokens...)
		a.Supports = append(a.Supports, r.Supports...)
		if i > 0 {
			a.Text += "\n\n"
		}
		a.Text += r.Text
		a.Rounds += r.Rounds
		a.Uploads += r.Uploads
		a.Drafted += r.Drafted
		a.Skipped += r.Skipped
		a.Verified += r.Verified
		a.Accepted += r.Accepted
		a.Resampled += r.Resampled
		a.Bonus += r.Bonus
		a.UplinkBits += r.UplinkBits
		a.DownlinkBits += r.DownlinkBits
		a.CodecBits += r.CodecBits
		a.UplinkBytes += r.UplinkBytes
		a.DownlinkBytes += r.DownlinkBytes
		a.VirtualSeconds += r.VirtualSeconds
		a.SLMSeconds += r.SLMSeconds
		a.UplinkSeconds += r.UplinkSeconds
		a.LLMSeconds += r.LLMSeconds
		a.DownlinkSeconds += r.DownlinkSeconds
		a.WallSeconds += r.WallSeconds
		a.Energy += r.Energy
		if r.TrueSkipRate != nil {
			tsr += *r.TrueSkipRate * float64(r.Skipped)
			tsrW += float64(r.Skipped)
		}
		if r.MeanDeviation != nil {
			dev += *r.MeanDeviation * float64(r.Drafted)
			devW += float64(r.Drafted)
		}
		if r.CompressionRatio != nil && *r.CompressionRatio > 0 {
			fullRatioNum += float64(r.CodecBits)
			fullRatioDen += float64(r.CodecBits) / *r.CompressionRatio
		}
	}
	a.Stop = "aggregate"
	a.SetRates()
	if tsrW > 0 {
		x := tsr / tsrW
		a.TrueSkipRate = &x
	}
	if devW > 0 {
		x := dev / devW
		a.MeanDeviation = &x
	}
	if fullRatioDen > 0 {
		x := fullRatioNum / fullRatioDen
		a.CompressionRatio = &x
	}
	return s
}
