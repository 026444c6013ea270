package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/hlmproject/hlm/edge"
	"github.com/hlmproject/hlm/openai"
)

// openaiBackend serves OpenAI-style requests with hybrid generation: each
// request is its own session with the server.
type openaiBackend struct {
	g    *edge.Generator
	seed atomic.Uint64
}

func (b *openaiBackend) Model() string { return "hlm-" + b.g.Params.Method }

func (b *openaiBackend) Generate(ctx context.Context, req openai.Request, onText func(string)) (openai.Result, error) {
	p := b.g.Params
	if req.MaxTokens > 0 {
		p.MaxTokens = req.MaxTokens
	}
	if req.Temperature != nil {
		p.Temperature = *req.Temperature
	}
	if req.TopP != nil {
		p.TopP = *req.TopP
	}
	if req.Seed != nil {
		p.Seed = *req.Seed
	} else {
		p.Seed = b.seed.Add(1) - 1
	}
	if err := p.Validate(); err != nil {
		return openai.Result{}, fmt.Errorf("%w: %v", openai.ErrInvalidRequest, err)
	}
	tok := b.g.Tok
	ids := tok.Encode(req.Prompt, true)
	dec := tok.NewStreamDecoder()
	for _, id := range ids {
		dec.Push(id)
	}
	res, _, err := b.g.One(ctx, p, req.Prompt, func(toks []int) {
		for _, t := range toks {
			if s := dec.Push(t); s != "" {
				onText(s)
			}
		}
	})
	if s := dec.Flush(); s != "" {
		onText(s)
	}
	out := openai.Result{Text: res.Text, PromptTokens: len(ids), CompletionTokens: len(res.Tokens), FinishReason: openai.FinishStop}
	if len(res.Tokens) >= p.MaxTokens {
		out.FinishReason = openai.FinishLength
	}
	return out, err
}

// serveOpenAI serves the OpenAI-compatible API until ctx ends.
func serveOpenAI(ctx context.Context, g *edge.Generator, addr, key string, log *slog.Logger, stderr io.Writer) error {
	b := &openaiBackend{g: g}
	b.seed.Store(g.Params.Seed)
	opts := openai.Options{APIKey: key, MaxConcurrent: 4, DefaultMaxTokens: g.Params.MaxTokens, Logger: log}
	if err := opts.Validate(); err != nil {
		return err
	}
	srv := &http.Server{Addr: addr, Handler: openai.NewHandler(b, opts), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	fmt.Fprintf(stderr, "hlm edge: OpenAI-compatible API on http://%s/v1 (model %s, method %s)\n", addr, b.Model(), g.Params.Method)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
