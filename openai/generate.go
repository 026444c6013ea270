package openai

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"unicode"
)

// generate runs one checked request on the Backend and writes the response,
// whole or as a stream.
//
// Text flows Backend → stopFilter → (chat: leading white space trimmed) →
// client. The context given to the Backend is cancelled when a stop string
// is found, when a stream write fails and when the client goes away.
func (h *handler) generate(w http.ResponseWriter, r *http.Request, req genRequest) {
	start := h.o.Now()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()

	out := &responder{created: start.Unix(), model: h.model().ID, chat: req.Chat, includeUsage: req.includeUsage}
	if req.Chat {
		out.id = "chatcmpl-" + rand.Text()
	} else {
		out.id = "cmpl-" + rand.Text()
	}
	var sse *sseWriter
	if req.stream {
		sse = &sseWriter{w: w, rc: http.NewResponseController(w)}
	}

	// State shared with onText; mu only guards against a Backend that
	// breaks its contract and calls onText from elsewhere or too late.
	var (
		mu       sync.Mutex
		done     bool // Generate returned: later pieces are dropped
		got      bool // some piece arrived
		stopped  bool // a stop string was found
		text     strings.Builder
		trim     = req.Chat
		writeErr error
		filter   = stopFilter{stops: req.Stop}
	)
	release := func(s string) {
		if trim {
			if s = strings.TrimLeftFunc(s, unicode.IsSpace); s == "" {
				return
			}
			trim = false
		}
		if s == "" {
			return
		}
		text.WriteString(s)
		if sse != nil && writeErr == nil {
			if writeErr = out.streamText(sse, s); writeErr != nil {
				cancel()
			}
		}
	}
	push := func(piece string) {
		if done || stopped {
			return
		}
		got = got || piece != ""
		s, hit := filter.push(piece)
		release(s)
		if hit {
			stopped = true
			cancel()
		}
	}
	onText := func(piece string) {
		mu.Lock()
		defer mu.Unlock()
		push(piece)
	}

	res, err := h.b.Generate(ctx, req.Request, onText)

	mu.Lock()
	if !got && err == nil && res.Text != "" {
		push(res.Text) // a Backend that does not stream
	}
	done = true
	mu.Unlock()

	log := h.o.Logger.With("path", r.URL.Path, "id", out.id, "stream", req.stream)
	finish := res.FinishReason
	switch {
	case stopped:
		finish = FinishStop
	case r.Context().Err() != nil:
		log.Info("client went away", "err", context.Cause(r.Context()))
		return
	case writeErr != nil:
		log.Info("writing the stream failed", "err", writeErr)
		return
	case err != nil:
		h.fail(w, sse, out, log, err)
		return
	default:
		release(filter.flush())
		if finish == "" {
			finish = FinishStop
		}
	}
	u := usage{PromptTokens: res.PromptTokens, CompletionTokens: res.CompletionTokens,
		TotalTokens: res.PromptTokens + res.CompletionTokens}
	if sse == nil {
		writeJSON(w, http.StatusOK, out.whole(text.String(), finish, u))
	} else if err := out.streamEnd(sse, finish, u); err != nil {
		log.Info("writing the stream failed", "err", err)
		return
	}
	log.Info("completion", "prompt_tokens", u.PromptTokens, "completion_tokens", u.CompletionTokens,
		"finish_reason", finish, "duration", h.o.Now().Sub(start))
}

// fail reports a Backend error: as the response if nothing was streamed
// yet, else as a last event (and no [DONE]), which the OpenAI SDKs raise.
func (h *handler) fail(w http.ResponseWriter, sse *sseWriter, out *responder, log *slog.Logger, err error) {
	var e *apiError
	if errors.Is(err, ErrContextLength) {
		param := "prompt"
		if out.chat {
			param = "messages"
		}
		e = newAPIError(http.StatusBadRequest, typeInvalidRequest, "context_length_exceeded", param, "%s", strings.TrimPrefix(err.Error(), ErrContextLength.Error()+": "))
		log.Info("rejected by the backend", "err", err)
	} else if errors.Is(err, ErrInvalidRequest) {
		e = invalidParam("", "%v", err)
		log.Info("rejected by the backend", "err", err)
	} else if errors.Is(err, ErrUnavailable) {
		e = newAPIError(http.StatusServiceUnavailable, typeServer, "service_unavailable", "", "%v", err)
		log.Warn("backend unavailable", "err", err)
	} else {
		e = newAPIError(http.StatusInternalServerError, typeServer, "", "", "generation failed: %v", err)
		log.Error("generation failed", "err", err)
	}
	if sse == nil || !sse.started {
		writeError(w, e)
		return
	}
	sse.event(errorBody{e})
}

// responder builds the bodies of one response.
type responder struct {
	id           string
	created      int64
	model        string
	chat         bool
	includeUsage bool
}

// whole is the non-streamed response.
func (o *responder) whole(text, finish string, u usage) any {
	if o.chat {
		return chatCompletion{ID: o.id, Object: "chat.completion", Created: o.created, Model: o.model,
			Choices: []chatChoice{{Message: chatReply{Role: "assistant", Content: text}, FinishReason: finish}},
			Usage:   u}
	}
	return wrap(o, []completionChoice{{Text: text, FinishReason: &finish}}, usageField(true, &u))
}

// streamText sends one piece of text, opening the stream first if needed.
func (o *responder) streamText(s *sseWriter, text string) error {
	if err := o.begin(s); err != nil {
		return err
	}
	if o.chat {
		return s.event(o.chatChunk(chatDelta{Content: &text}, nil))
	}
	return s.event(o.textChunk(text, nil))
}

// streamEnd sends the chunk with the finish reason, the usage chunk if asked
// for, and [DONE].
func (o *responder) streamEnd(s *sseWriter, finish string, u usage) error {
	if err := o.begin(s); err != nil {
		return err
	}
	var err error
	if o.chat {
		err = s.event(o.chatChunk(chatDelta{}, &finish))
	} else {
		err = s.event(o.textChunk("", &finish))
	}
	if err != nil {
		return err
	}
	if o.includeUsage {
		if err := s.event(wrap(o, []struct{}{}, usageField(true, &u))); err != nil {
			return err
		}
	}
	return s.send("[DONE]")
}

// begin opens the stream. It is deferred to the first event so that an
// error before any text can still be answered with its status code.
func (o *responder) begin(s *sseWriter) error {
	if s.started {
		return nil
	}
	s.start()
	if o.chat {
		empty := ""
		return s.event(o.chatChunk(chatDelta{Role: "assistant", Content: &empty}, nil))
	}
	return nil
}

func (o *responder) textChunk(text string, finish *string) envelope[completionChoice] {
	return wrap(o, []completionChoice{{Text: text, FinishReason: finish}}, usageField(o.includeUsage, nil))
}

func (o *responder) chatChunk(d chatDelta, finish *string) envelope[chatChunkChoice] {
	return wrap(o, []chatChunkChoice{{Delta: d, FinishReason: finish}}, usageField(o.includeUsage, nil))
}

// wrap puts choices in the envelope of o's chunks: a chat.completion.chunk
// for chat, else a text_completion (also the whole text response).
func wrap[C any](o *responder, choices []C, u json.RawMessage) envelope[C] {
	object := "text_completion"
	if o.chat {
		object = "chat.completion.chunk"
	}
	return envelope[C]{ID: o.id, Object: object, Created: o.created, Model: o.model, Choices: choices, Usage: u}
}

// sseWriter writes Server-Sent Events as OpenAI does: "data: <json>\n\n"
// per event, flushed at once, ending with "data: [DONE]\n\n".
type sseWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
}

func (s *sseWriter) start() {
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // tell reverse proxies not to buffer
	s.w.WriteHeader(http.StatusOK)
	s.started = true
}

// event sends v as JSON.
func (s *sseWriter) event(v any) error {
	b, err := marshal(v)
	if err != nil {
		return err
	}
	return s.send(string(b))
}

// send writes one data line and flushes it.
func (s *sseWriter) send(data string) error {
	if _, err := io.WriteString(s.w, "data: "+data+"\n\n"); err != nil {
		return err
	}
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}
