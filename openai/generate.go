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
	"time"
	"unicode"
)

// generate runs one checked request on the Backend and writes the response,
// whole or as a stream.
//
// Text flows Backend → stopFilter → (chat: leading white space trimmed) →
// client (textSink). The context given to the Backend is cancelled when a
// stop string is found, when a stream write fails and when the client goes
// away.
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
	sink := &textSink{out: out, trim: req.Chat, filter: stopFilter{stops: req.Stop}, cancel: cancel}
	if req.stream {
		sink.sse = &sseWriter{w: w, rc: http.NewResponseController(w)}
	}

	res, err := h.b.Generate(ctx, req.Request, sink.onText)
	sink.end(res.Text, err)

	log := h.o.Logger.With("path", r.URL.Path, "id", out.id, "stream", req.stream)
	finish := res.FinishReason
	switch {
	case sink.stopped:
		finish = FinishStop
	case r.Context().Err() != nil:
		log.Info("client went away", "err", context.Cause(r.Context()))
		return
	case sink.writeErr != nil:
		log.Info("writing the stream failed", "err", sink.writeErr)
		return
	case err != nil:
		h.fail(w, sink.sse, out, log, err)
		return
	default:
		sink.release(sink.filter.flush())
		if finish == "" {
			finish = FinishStop
		}
	}
	u := usage{PromptTokens: res.PromptTokens, CompletionTokens: res.CompletionTokens,
		TotalTokens: res.PromptTokens + res.CompletionTokens}
	if res.CachedTokens > 0 {
		u.PromptTokensDetails = &promptDetails{CachedTokens: res.CachedTokens}
	}
	if sink.sse == nil {
		if err := sendJSON(w, out.whole(sink.text.String(), finish, u)); err != nil {
			log.Info("writing the response failed", "err", err)
			return
		}
	} else if err := out.streamEnd(sink.sse, finish, u); err != nil {
		log.Info("writing the stream failed", "err", err)
		return
	}
	log.Info("completion", "prompt_tokens", u.PromptTokens, "cached_tokens", res.CachedTokens, "completion_tokens", u.CompletionTokens,
		"finish_reason", finish, "duration", h.o.Now().Sub(start))
}

// textSink takes a generation's text as the Backend hands it out: it holds
// back what may begin a stop string (filter), trims a chat answer's leading
// white space, keeps the text and, for a stream, writes each piece. It
// cancels the generation when a stop string is found or a write fails.
type textSink struct {
	out    *responder
	sse    *sseWriter // nil: the whole response at the end
	filter stopFilter
	cancel context.CancelFunc

	// mu only guards against a Backend that breaks its contract and calls
	// onText from elsewhere or too late.
	mu       sync.Mutex
	done     bool // Generate returned: later pieces are dropped
	got      bool // some piece arrived
	stopped  bool // a stop string was found
	trim     bool // leading white space is still to be trimmed
	text     strings.Builder
	writeErr error
}

// onText is the Backend's callback.
func (t *textSink) onText(piece string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.push(piece)
}

// end takes the Backend's result: its whole text when it streamed none
// (a Backend that does not stream), then no more pieces.
func (t *textSink) end(text string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.got && err == nil && text != "" {
		t.push(text)
	}
	t.done = true
}

func (t *textSink) push(piece string) {
	if t.done || t.stopped {
		return
	}
	t.got = t.got || piece != ""
	s, hit := t.filter.push(piece)
	t.release(s)
	if hit {
		t.stopped = true
		t.cancel()
	}
}

// release passes on text the stop filter let through.
func (t *textSink) release(s string) {
	if t.trim {
		if s = strings.TrimLeftFunc(s, unicode.IsSpace); s == "" {
			return
		}
		t.trim = false
	}
	if s == "" {
		return
	}
	t.text.WriteString(s)
	if t.sse != nil && t.writeErr == nil {
		if t.writeErr = t.out.streamText(t.sse, s); t.writeErr != nil {
			t.cancel()
		}
	}
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
		param := ""
		if pe := (*ParamError)(nil); errors.As(err, &pe) {
			param = pe.Param
		}
		e = invalidParam(param, "%s", clientMessage(err, ErrInvalidRequest))
		log.Info("rejected by the backend", "err", err)
	} else if errors.Is(err, ErrUnavailable) {
		e = newAPIError(http.StatusServiceUnavailable, typeServer, "service_unavailable", "", "%s", clientMessage(err, ErrUnavailable))
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

// clientMessage is err's text for the client, without the sentinel's
// ("openai: invalid request: …") that only says what the status code
// already does.
func clientMessage(err, sentinel error) string {
	return strings.TrimPrefix(err.Error(), sentinel.Error()+": ")
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

// send writes one data line and flushes it, waiting at most writeTimeout
// for the client to take it.
func (s *sseWriter) send(data string) error {
	defer writeDeadline(s.rc)()
	if _, err := io.WriteString(s.w, "data: "+data+"\n\n"); err != nil {
		return err
	}
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// sendJSON sends v as a whole 200 response and flushes it, waiting at most
// writeTimeout for the client to take it.
func sendJSON(w http.ResponseWriter, v any) error {
	rc := http.NewResponseController(w)
	defer writeDeadline(rc)()
	writeJSON(w, http.StatusOK, v)
	if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// writeDeadline makes the writes to rc's connection fail after
// writeTimeout, so that a client that stops reading does not hold its
// generation forever, and returns the function that lifts the deadline
// again (a keep-alive connection's next request is not to inherit it). A
// ResponseWriter that cannot set deadlines, as in tests, writes as is.
func writeDeadline(rc *http.ResponseController) (lift func()) {
	rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	return func() { rc.SetWriteDeadline(time.Time{}) }
}
