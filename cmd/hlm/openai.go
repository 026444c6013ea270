package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hlmproject/hlm/edge"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/internal/words"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/openai"
	"github.com/hlmproject/hlm/wire"
)

// openaiBackend serves OpenAI-style requests with hybrid generation: each
// request is a session with the server, a new one or — with the
// generator's Conversations — the parked session of the conversation's
// last turn, continued. Chat completions are formatted by chat (the
// model's template, or the plain format).
type openaiBackend struct {
	g    *edge.Generator
	chat *chatFormat
	seed atomic.Uint64
	// stopping, when set, ends every generation when it is done (the
	// endpoint shutting down; its cause is the generations' error).
	stopping context.Context
}

func (b *openaiBackend) Model() string { return "hlm-" + b.g.Params.Method }

func (b *openaiBackend) Generate(ctx context.Context, req openai.Request, onText func(string)) (openai.Result, error) {
	if b.stopping != nil {
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		defer context.AfterFunc(b.stopping, func() { cancel(context.Cause(b.stopping)) })()
	}
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
	if req.TopK != nil {
		p.TopK = *req.TopK
	}
	if req.Seed != nil {
		p.Seed = *req.Seed
	} else {
		p.Seed = b.seed.Add(1) - 1
	}
	if err := p.Validate(); err != nil {
		return openai.Result{}, &openai.ParamError{Param: requestField(err), Err: err}
	}
	tok := b.g.Tok
	ids := tok.Encode(req.Prompt, true)
	if req.Chat {
		ids = b.chat.encode(req.Prompt)
	}
	dec := tok.NewStreamDecoder()
	for _, id := range ids {
		dec.Push(id)
	}
	res, st, err := b.g.OneTokens(ctx, p, ids, func(toks []int) {
		for _, t := range toks {
			if s := dec.Push(t); s != "" {
				onText(s)
			}
		}
	})
	if s := dec.Flush(); s != "" {
		onText(s)
	}
	if err == nil && res.Stop == hybrid.StopInterrupted {
		// The request was cancelled (the client went, or hlm edge is
		// shutting down): not a completion that stopped.
		err = fmt.Errorf("generation interrupted: %w", context.Cause(ctx))
	}
	if errors.Is(err, model.ErrContextFull) && res.Rounds == 0 {
		// The prompt leaves no room: the client's error (OpenAI's 400
		// context_length_exceeded), not the server's.
		return openai.Result{}, fmt.Errorf("%w: %s", openai.ErrContextLength, strings.TrimPrefix(err.Error(), model.ErrContextFull.Error()+": "))
	}
	if errors.Is(err, edge.ErrUnreachable) {
		// hlm serve is down or gone: a retry may succeed (503), unlike a
		// refusal or a fault (500).
		return openai.Result{}, fmt.Errorf("%w: the verifier (hlm serve) cannot be reached: %w", openai.ErrUnavailable, err)
	}
	var we *wire.Error
	if errors.As(err, &we) && (we.Code == wire.ErrCodeLimit || we.Code == wire.ErrCodeShutdown) && res.Rounds == 0 {
		// hlm serve is full or going away: retry later (503), as above.
		return openai.Result{}, fmt.Errorf("%w: the verifier (hlm serve) is busy: %w", openai.ErrUnavailable, err)
	}
	// An end-of-generation token is "stop"; the token budget or the
	// context running out is "length". The usage counts the prompt tokens
	// the models saw (cut, with --set fit_prompt=true), of which those a
	// continued session kept are "cached" (edge.Stats.Cached).
	out := openai.Result{Text: res.Text, PromptTokens: res.PromptTokens, CachedTokens: st.Cached(), CompletionTokens: len(res.Tokens), FinishReason: openai.FinishStop}
	if res.Stop.Truncated() {
		out.FinishReason = openai.FinishLength
	}
	return out, err
}

// newOpenAIAPI is the OpenAI-compatible handler over g, chat completions
// formatted by f, with opts' other settings.
func newOpenAIAPI(g *edge.Generator, f *chatFormat, opts openai.Options) (http.Handler, *openaiBackend, error) {
	b := &openaiBackend{g: g, chat: f}
	b.seed.Store(g.Params.Seed)
	opts.DefaultMaxTokens = g.Params.MaxTokens
	opts.ChatTemplate = func(msgs []openai.Message) (string, error) { return f.render(openai.ChatMessages(msgs), true) }
	opts.ChatStop = f.stop()
	if err := opts.Validate(); err != nil {
		return nil, nil, err
	}
	return openai.NewHandler(b, opts), b, nil
}

// serveOpenAI serves the OpenAI-compatible API until ctx ends.
func serveOpenAI(ctx context.Context, g *edge.Generator, f *chatFormat, addr, key string, maxConcurrent int, log *slog.Logger, stderr io.Writer) error {
	g.TraceRuns = true // requests run at once: their --trace lines say whose they are
	h, b, err := newOpenAIAPI(g, f, openai.Options{APIKey: key, MaxConcurrent: maxConcurrent, MaxTokens: hybrid.MaxTokensLimit, Ready: verifierReady(g.Conn), Logger: log})
	if err != nil {
		return err
	}
	// Bound before it is announced: a taken address is an error, not an
	// announcement followed by one.
	ln, err := listen("--openai", addr)
	if err != nil {
		return err
	}
	// The generations still running openaiGrace after the signal are
	// interrupted (each closes its session on hlm serve) and answered 503,
	// so that their handlers, and Shutdown, return: http.Server.Shutdown
	// itself cancels no request, and would wait for generations nobody
	// told to stop, then give up with an error, leaving them running.
	stopping, stopGenerations := context.WithCancelCause(context.Background())
	defer stopGenerations(nil)
	b.stopping = stopping
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: openaiIdleTimeout}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	addr = ln.Addr().String()
	fmt.Fprintf(stderr, "hlm edge: OpenAI-compatible API on http://%s/v1 (model %s, method %s; chat with %s)\n", addr, b.Model(), g.Params.Method, f.describe())
	servingUntilSignal.Store(true)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	if g.Conversations != nil {
		// The generations that end from now on close their sessions:
		// this process will not continue them.
		g.Conversations.Close()
	}
	interrupt := time.AfterFunc(openaiGrace, func() { stopGenerations(errEdgeShutdown) })
	defer interrupt.Stop()
	forced, err := stopHTTP(srv, openaiGrace+openaiInterrupted)
	if err != nil {
		return err
	}
	msg := "hlm edge: stopped"
	if forced {
		msg += " (closing the connections of clients that had not taken their responses)"
	}
	if n := parkedSessions(g); n > 0 {
		msg += fmt.Sprintf(" (%s parked on hlm serve for conversations stay there until its --idle-timeout or until it needs the room)", words.Plural(n, "session"))
	}
	fmt.Fprintln(stderr, msg)
	return nil
}

// requestField is the request field that a refusal of hybrid's parameters
// names (hybrid.KeyError), or "" when it names none of the fields an
// OpenAI request sets.
func requestField(err error) string {
	var ke *hybrid.KeyError
	if errors.As(err, &ke) && slices.Contains([]string{"temperature", "top_p", "top_k", "seed", "max_tokens"}, ke.Key) {
		return ke.Key
	}
	return ""
}

// stopHTTP shuts srv down, waiting at most wait for its requests to end,
// and then closes the connections of those still being written to — a
// client that stopped reading holds its handler in a write for up to
// writeTimeout of package openai, longer than a stop may take — and says
// whether it had to.
func stopHTTP(srv *http.Server, wait time.Duration) (forced bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	err = srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		return true, srv.Close()
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return false, err
	}
	return false, nil
}

// parkedSessions is how many sessions g's conversations hold on the server.
func parkedSessions(g *edge.Generator) int {
	if g.Conversations == nil {
		return 0
	}
	return g.Conversations.Len()
}

// verifierReady is the endpoint's readiness: hlm serve answers a handshake
// within a few seconds (one connection, dropped at once; the server opens
// no session for it).
func verifierReady(conn edge.Config) func(context.Context) error {
	conn.Retries, conn.Backoff = 1, 50*time.Millisecond
	conn.DialTimeout, conn.IOTimeout = 2*time.Second, 2*time.Second
	conn.Shape = nil // a probe, not traffic: no simulated link
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		rem, err := edge.Dial(ctx, conn)
		if err != nil {
			return fmt.Errorf("the verifier (hlm serve at %s) cannot be reached: %w", conn.Addr, err)
		}
		rem.Drop()
		return nil
	}
}

// openaiGrace is how long serveOpenAI lets the requests in flight finish
// after the signal before it interrupts them; openaiInterrupted how long
// it then waits for their handlers to return.
var openaiGrace, openaiInterrupted = 5 * time.Second, 5 * time.Second

// openaiIdleTimeout is how long a keep-alive connection may wait for its
// next request: a client that holds connections open without using them
// holds a descriptor and a goroutine each only this long. Longer than the
// idle timeouts of common proxies' connection pools (nginx's upstream
// keepalive_timeout is 60 s), so that a proxy seldom reuses a connection
// this side is closing.
var openaiIdleTimeout = 2 * time.Minute

// errEdgeShutdown ends the generations interrupted by the endpoint's
// shutdown: 503, as when hlm serve is away, for the client to retry.
var errEdgeShutdown = fmt.Errorf("%w: hlm edge is shutting down", openai.ErrUnavailable)
