// Package generate is plain autoregressive sampling with one model: the
// `hlm generate` command, and the LLM-only and SLM-only baselines of the
// hybrid methods.
package generate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/engine"
	"github.com/hlmproject/hlm/sampling"
)

// Config is one generation request.
type Config struct {
	Model     string // model spec (see model.ParseSpec)
	Tokenizer string // tokenizer path; "" to find it with the model
	Prompt    string
	// PromptIDs, when set, is the prompt already encoded (a chat
	// template's rendering, say); Prompt and NoBOS are then not used.
	PromptIDs []int
	Sampler   sampling.Sampler
	MaxTokens int    // new tokens at most; −1: no limit (llama.cpp's -n -1), until the end of generation or a full context
	Seed      uint64 // seeds the sampler
	NoBOS     bool   // do not prepend the BOS token to the prompt
	IgnoreEOS bool   // keep generating past the end-of-sequence token
}

// DefaultConfig is greedy-free sampling at temperature 1 for 256 tokens.
func DefaultConfig() Config {
	return Config{Sampler: sampling.Sampler{Temperature: 1}, MaxTokens: 256}
}

// Validate reports impossible parameters.
func (c Config) Validate() error {
	if c.Model == "" {
		return errors.New("no model given")
	}
	if c.MaxTokens < -1 {
		return fmt.Errorf("max tokens %d: want a count ≥ 0, or -1 for no limit (until the end of generation or a full context)", c.MaxTokens)
	}
	return c.Sampler.Validate()
}

// Stats summarises a run.
type Stats struct {
	PromptTokens int
	Tokens       []int // generated token ids
	StopReason   string
	Prefill      time.Duration
	Decode       time.Duration
}

// TokensPerSecond is the decode speed (generated tokens over decode time).
func (s Stats) TokensPerSecond() float64 {
	if s.Decode <= 0 {
		return 0
	}
	return float64(len(s.Tokens)) / s.Decode.Seconds()
}

// Run opens the model and generates, writing the continuation text (not the
// prompt) to out as it is produced.
func Run(ctx context.Context, cfg Config, out io.Writer) (Stats, error) {
	if err := cfg.Validate(); err != nil {
		return Stats{}, err
	}
	m, err := engine.OpenSpec(cfg.Model, cfg.Tokenizer)
	if err != nil {
		return Stats{}, err
	}
	return Generate(ctx, m, cfg, out)
}

// Generate samples from an open model.
func Generate(ctx context.Context, m model.Model, cfg Config, out io.Writer) (Stats, error) {
	var st Stats
	tok := m.Tokenizer()
	if tok == nil {
		return st, fmt.Errorf("model %s has no tokenizer: pass one with --tokenizer", m.Name())
	}
	ids := cfg.PromptIDs
	if ids == nil {
		ids = tok.Encode(cfg.Prompt, !cfg.NoBOS)
	}
	if len(ids) == 0 {
		return st, errors.New("empty prompt and no BOS token: nothing to condition on")
	}
	st.PromptTokens = len(ids)
	if len(ids) >= m.Config().SeqLen {
		return st, fmt.Errorf("%w: prompt of %d tokens, context length %d: shorten the prompt (or give the model more context: on llama.cpp, c=)", model.ErrContextFull, len(ids), m.Config().SeqLen)
	}
	dec := tok.NewStreamDecoder()
	for _, id := range ids {
		dec.Push(id) // the prompt is context for the decoder, not output
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0))
	s := m.NewSession()
	t0 := time.Now()
	logits, err := s.Prefill(ids)
	if err != nil {
		return st, err
	}
	st.Prefill = time.Since(t0)
	t1 := time.Now()
	dist := make([]float64, m.Config().Vocab)
	st.StopReason = "max tokens"
	for cfg.MaxTokens < 0 || len(st.Tokens) < cfg.MaxTokens {
		if err := ctx.Err(); err != nil {
			st.StopReason = "interrupted"
			break
		}
		var next int
		next, dist = cfg.Sampler.NextInto(dist, logits, rng)
		if tok.IsEOG(next) && !cfg.IgnoreEOS {
			st.StopReason = "end of sequence"
			break
		}
		st.Tokens = append(st.Tokens, next)
		if _, err := io.WriteString(out, dec.Push(next)); err != nil {
			return st, err
		}
		if len(st.Tokens) == cfg.MaxTokens {
			break
		}
		if s.Len() >= m.Config().SeqLen {
			st.StopReason = "context full"
			break
		}
		rows, err := s.Eval([]int{next})
		if err != nil {
			return st, err
		}
		logits = rows[0]
	}
	st.Decode = time.Since(t1)
	_, err = io.WriteString(out, dec.Flush())
	return st, err
}
