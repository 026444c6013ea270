package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

// mode is one of the four ways to ask for a generation.
type mode struct{ chat, stream bool }

func (m mode) String() string {
	s := map[bool]string{false: "completions", true: "chat"}[m.chat]
	if m.stream {
		s += "-stream"
	}
	return s
}

var modes = []mode{{false, false}, {false, true}, {true, false}, {true, true}}

// body builds a request for mode m with extra JSON fields (",…" or "").
func (m mode) body(extra string) string {
	if m.chat {
		return fmt.Sprintf(`{"model":"x","messages":[{"role":"user","content":"Say hi"}],"stream":%t%s}`, m.stream, extra)
	}
	return fmt.Sprintf(`{"model":"x","prompt":"Say hi","stream":%t%s}`, m.stream, extra)
}

func (m mode) path() string {
	if m.chat {
		return "/v1/chat/completions"
	}
	return "/v1/completions"
}

// generated is what a response said, whole or streamed.
type generated struct {
	text   string
	finish string
	usage  *wireUsage
}

// readResponse checks the shape of a response of mode m, whole or streamed,
// and returns what it said.
func readResponse(t *testing.T, m mode, w *httptest.ResponseRecorder, includeUsage bool) generated {
	t.Helper()
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	if m.stream {
		if ct := w.Header().Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("Content-Type %q", ct)
		}
		return readStream(t, m, parseSSE(t, w.Body), includeUsage)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
	raw := w.Body.Bytes()
	checkKeys(t, "response", raw, "id", "object", "created", "model", "choices", "usage")
	var top struct {
		Choices []json.RawMessage `json:"choices"`
		Usage   json.RawMessage   `json:"usage"`
	}
	json.Unmarshal(raw, &top)
	if len(top.Choices) != 1 {
		t.Fatalf("%d choices", len(top.Choices))
	}
	usageKeys := []string{"prompt_tokens", "completion_tokens", "total_tokens"}
	var u wireUsage
	json.Unmarshal(top.Usage, &u)
	if u.Details != nil { // only for a backend that kept some of the prompt
		usageKeys = append(usageKeys, "prompt_tokens_details")
		if u.Details.CachedTokens == 0 {
			t.Errorf("usage %s: prompt_tokens_details with no cached tokens", top.Usage)
		}
	}
	checkKeys(t, "usage", top.Usage, usageKeys...)
	if m.chat {
		checkKeys(t, "choice", top.Choices[0], "index", "message", "logprobs", "finish_reason")
		var r wireChat
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		checkHeader(t, r.ID, "chatcmpl-", r.Object, "chat.completion", r.Created, r.Model)
		c := r.Choices[0]
		if c.Index != 0 || string(c.Logprobs) != "null" || c.FinishReason == nil || c.Message == nil || c.Message.Role != "assistant" {
			t.Fatalf("choice %s", top.Choices[0])
		}
		return generated{c.Message.Content, *c.FinishReason, r.Usage}
	}
	checkKeys(t, "choice", top.Choices[0], "text", "index", "logprobs", "finish_reason")
	var r wireCompletion
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	checkHeader(t, r.ID, "cmpl-", r.Object, "text_completion", r.Created, r.Model)
	c := r.Choices[0]
	if c.Index != 0 || string(c.Logprobs) != "null" || c.FinishReason == nil {
		t.Fatalf("choice %s", top.Choices[0])
	}
	return generated{c.Text, *c.FinishReason, r.Usage}
}

// checkHeader checks the fields every response and chunk has.
func checkHeader(t *testing.T, id, idPrefix, object, wantObject string, created int64, model string) {
	t.Helper()
	if !strings.HasPrefix(id, idPrefix) || len(id) < len(idPrefix)+16 {
		t.Errorf("id %q, want %s…", id, idPrefix)
	}
	if object != wantObject {
		t.Errorf("object %q, want %q", object, wantObject)
	}
	if created != fixedClock().Unix() {
		t.Errorf("created %d, want %d", created, fixedClock().Unix())
	}
	if model != "fake-model" {
		t.Errorf("model %q", model)
	}
}

// readStream checks a stream's events, as OpenAI's SDKs would read them.
func readStream(t *testing.T, m mode, events []string, includeUsage bool) generated {
	t.Helper()
	if len(events) == 0 || events[len(events)-1] != "[DONE]" {
		t.Fatalf("the stream does not end with [DONE]: %q", events)
	}
	events = events[:len(events)-1]
	var g generated
	if includeUsage {
		if len(events) == 0 {
			t.Fatal("no usage chunk")
		}
		last := json.RawMessage(events[len(events)-1])
		events = events[:len(events)-1]
		checkKeys(t, "usage chunk", last, "id", "object", "created", "model", "choices", "usage")
		var u struct {
			Choices []json.RawMessage `json:"choices"`
			Usage   *wireUsage        `json:"usage"`
		}
		json.Unmarshal(last, &u)
		if u.Choices == nil || len(u.Choices) != 0 || u.Usage == nil {
			t.Fatalf("usage chunk %s: want empty choices and a usage", last)
		}
		g.usage = u.Usage
	}
	var id string
	for i, ev := range events {
		raw := json.RawMessage(ev)
		chunkKeys := []string{"id", "object", "created", "model", "choices"}
		if includeUsage {
			chunkKeys = append(chunkKeys, "usage")
			var u struct{ Usage json.RawMessage }
			json.Unmarshal(raw, &u)
			if string(u.Usage) != "null" {
				t.Errorf("chunk %d: usage %s, want null", i, u.Usage)
			}
		}
		checkKeys(t, fmt.Sprintf("chunk %d", i), raw, chunkKeys...)
		last := i == len(events)-1
		var finish *string
		if m.chat {
			var c wireChat
			if err := json.Unmarshal(raw, &c); err != nil {
				t.Fatal(err)
			}
			checkHeader(t, c.ID, "chatcmpl-", c.Object, "chat.completion.chunk", c.Created, c.Model)
			if len(c.Choices) != 1 || c.Choices[0].Delta == nil || c.Choices[0].Message != nil {
				t.Fatalf("chunk %d: %s", i, ev)
			}
			if id == "" {
				id = c.ID
			} else if c.ID != id {
				t.Errorf("chunk %d: id %q, the first was %q", i, c.ID, id)
			}
			d := c.Choices[0].Delta
			var dm struct {
				Choices []struct{ Delta json.RawMessage } `json:"choices"`
			}
			json.Unmarshal(raw, &dm)
			switch {
			case i == 0:
				if d.Role == nil || *d.Role != "assistant" || d.Content == nil || *d.Content != "" {
					t.Errorf("first chunk %s: want delta {role: assistant, content: \"\"}", ev)
				}
			case last:
				checkKeys(t, "last delta", dm.Choices[0].Delta)
			default:
				checkKeys(t, fmt.Sprintf("chunk %d delta", i), dm.Choices[0].Delta, "content")
				if *d.Content == "" {
					t.Errorf("chunk %d: empty content", i)
				}
				g.text += *d.Content
			}
			finish = c.Choices[0].FinishReason
		} else {
			var c wireCompletion
			if err := json.Unmarshal(raw, &c); err != nil {
				t.Fatal(err)
			}
			checkHeader(t, c.ID, "cmpl-", c.Object, "text_completion", c.Created, c.Model)
			if len(c.Choices) != 1 || c.Choices[0].Index != 0 || string(c.Choices[0].Logprobs) != "null" {
				t.Fatalf("chunk %d: %s", i, ev)
			}
			if id == "" {
				id = c.ID
			} else if c.ID != id {
				t.Errorf("chunk %d: id %q, the first was %q", i, c.ID, id)
			}
			if last && c.Choices[0].Text != "" || !last && c.Choices[0].Text == "" {
				t.Errorf("chunk %d: text %q", i, c.Choices[0].Text)
			}
			if !utf8.ValidString(c.Choices[0].Text) {
				t.Errorf("chunk %d: text %q is not whole UTF-8", i, c.Choices[0].Text)
			}
			g.text += c.Choices[0].Text
			finish = c.Choices[0].FinishReason
		}
		switch {
		case last && finish == nil:
			t.Fatalf("the last chunk has no finish_reason: %s", ev)
		case last:
			g.finish = *finish
		case finish != nil:
			t.Errorf("chunk %d has finish_reason %q before the end", i, *finish)
		}
	}
	return g
}

func TestGenerate(t *testing.T) {
	cases := []struct {
		name       string
		pieces     []string
		finish     string
		noStream   bool
		extra      string // more request fields
		want       string
		wantChat   string // if the chat reply differs (leading space trimmed)
		wantFinish string
		wantSent   int  // pieces the backend delivered
		wantCancel bool // the backend's context was cancelled by a stop
	}{
		{name: "plain", pieces: []string{"Hel", "lo", " world"}, finish: "length",
			want: "Hello world", wantFinish: "length", wantSent: 3},
		{name: "no finish reason", pieces: []string{"a"},
			want: "a", wantFinish: "stop", wantSent: 1},
		{name: "empty", finish: "stop", want: "", wantFinish: "stop"},
		{name: "stop across pieces", pieces: []string{"Hel", "lo wor", "ld", "!"}, extra: `,"stop":"o w"`,
			want: "Hell", wantFinish: "stop", wantSent: 2, wantCancel: true},
		{name: "stop prefix released at the end", pieces: []string{"ab", "c"}, finish: "length", extra: `,"stop":["cd"]`,
			want: "abc", wantFinish: "length", wantSent: 2},
		{name: "stop completed first wins", pieces: []string{"xa", "bcd", "e"}, extra: `,"stop":["bcd","ab"]`,
			want: "x", wantFinish: "stop", wantSent: 2, wantCancel: true},
		{name: "stop at the start", pieces: []string{"STOP", "more"}, extra: `,"stop":["STOP"]`,
			want: "", wantFinish: "stop", wantSent: 1, wantCancel: true},
		{name: "stop null and empty strings", pieces: []string{"a", "b"}, extra: `,"stop":["",""]`,
			want: "ab", wantFinish: "stop", wantSent: 2},
		{name: "utf-8 split across pieces", pieces: []string{"caf", "\xc3", "\xa9!"}, finish: "length",
			want: "café!", wantFinish: "length", wantSent: 3},
		{name: "leading space", pieces: []string{" ", " Hi", " there"}, finish: "length",
			want: "  Hi there", wantChat: "Hi there", wantFinish: "length", wantSent: 3},
		{name: "backend that does not stream", pieces: []string{"one two ", "three"}, noStream: true, extra: `,"stop":"two"`,
			want: "one ", wantFinish: "stop"},
	}
	for _, c := range cases {
		for _, m := range modes {
			t.Run(c.name+"/"+m.String(), func(t *testing.T) {
				b := &fakeBackend{pieces: c.pieces, finish: c.finish, prompt: 3, noStream: c.noStream}
				h := NewHandler(b, Options{Now: fixedClock})
				w := do(t, h, "POST", m.path(), m.body(c.extra))
				g := readResponse(t, m, w, false)
				want := c.want
				if m.chat && c.wantChat != "" {
					want = c.wantChat
				}
				if g.text != want || g.finish != c.wantFinish {
					t.Errorf("text %q finish %q, want %q %q", g.text, g.finish, want, c.wantFinish)
				}
				ctxErr := b.waitEnded(t)
				if b.sent != c.wantSent || (ctxErr != nil) != c.wantCancel {
					t.Errorf("the backend sent %d pieces (cancelled: %v), want %d (%v)", b.sent, ctxErr, c.wantSent, c.wantCancel)
				}
				if !m.stream {
					tokens := c.wantSent
					if c.noStream {
						tokens = len(c.pieces)
					}
					if *g.usage != (wireUsage{3, tokens, 3 + tokens, nil}) {
						t.Errorf("usage %+v, want %d prompt and %d completion tokens", *g.usage, 3, tokens)
					}
				}
			})
		}
	}
}

func TestStreamIncludeUsage(t *testing.T) {
	for _, m := range modes {
		if !m.stream {
			continue
		}
		t.Run(m.String(), func(t *testing.T) {
			b := &fakeBackend{pieces: []string{"a", "b"}, prompt: 4, finish: "length"}
			h := NewHandler(b, Options{Now: fixedClock})
			w := do(t, h, "POST", m.path(), m.body(`,"stream_options":{"include_usage":true}`))
			g := readResponse(t, m, w, true)
			if g.text != "ab" || g.finish != "length" || *g.usage != (wireUsage{4, 2, 6, nil}) {
				t.Errorf("got %q %q %+v", g.text, g.finish, *g.usage)
			}
		})
	}
}

func TestRequestFields(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	u := func(v uint64) *uint64 { return &v }
	chatPrompt := "User: Say hi\nAssistant:"
	cases := []struct {
		name string
		chat bool
		body string
		opts Options
		want Request
	}{
		{name: "defaults", body: `{"prompt":"p"}`,
			want: Request{Prompt: "p", MaxTokens: 128}},
		{name: "option default max tokens", body: `{"prompt":"p"}`, opts: Options{DefaultMaxTokens: 9},
			want: Request{Prompt: "p", MaxTokens: 9}},
		{name: "all fields", body: `{"prompt":["p"],"max_tokens":7,"temperature":0.5,"top_p":0.9,"seed":42,"stop":"x","n":1,"echo":false,"user":"u","best_of":1,"logprobs":null,"presence_penalty":0.1}`,
			want: Request{Prompt: "p", MaxTokens: 7, Temperature: f(0.5), TopP: f(0.9), Seed: u(42), Stop: []string{"x"}}},
		{name: "top_k, and other servers' fields ignored", body: `{"prompt":"p","top_k":5,"min_p":0.1,"repetition_penalty":1.1,"ignore_eos":true,"my_app_field":1}`,
			want: Request{Prompt: "p", MaxTokens: 128, TopK: func(v int) *int { return &v }(5)}},
		{name: "negative seed", body: `{"prompt":"p","seed":-1,"temperature":0}`,
			want: Request{Prompt: "p", MaxTokens: 128, Seed: u(1<<64 - 1), Temperature: f(0)}},
		{name: "largest seed", body: `{"prompt":"p","seed":18446744073709551615}`,
			want: Request{Prompt: "p", MaxTokens: 128, Seed: u(1<<64 - 1)}},
		{name: "chat", chat: true, body: `{"messages":[{"role":"user","content":"Say hi"}],"max_tokens":5,"stop":["a","b"]}`,
			want: Request{Chat: true, Prompt: chatPrompt, MaxTokens: 5, Stop: []string{"a", "b", "\nUser:"}}},
		{name: "chat max_completion_tokens wins", chat: true, body: `{"messages":[{"role":"user","content":"Say hi"}],"max_tokens":5,"max_completion_tokens":6,"logprobs":false,"tools":[],"response_format":{"type":"text"}}`,
			want: Request{Chat: true, Prompt: chatPrompt, MaxTokens: 6, Stop: []string{"\nUser:"}}},
		{name: "chat template", chat: true,
			body: `{"messages":[{"role":"system","content":"Be terse."},{"role":"user","content":[{"type":"text","text":"Hi"},{"type":"text","text":" you"}]},{"role":"assistant","content":"Hello."},{"role":"developer","content":"Rule."},{"role":"user","content":"Two\nlines"}]}`,
			want: Request{Chat: true, Prompt: "Be terse.\n\nUser: Hi you\nAssistant: Hello.\nRule.\n\nUser: Two\nlines\nAssistant:", MaxTokens: 128, Stop: []string{"\nUser:"}}},
		{name: "custom template has no chat stop", chat: true, body: `{"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":null}]}`,
			opts: Options{ChatTemplate: func(ms []Message) (string, error) { return fmt.Sprint(ms), nil }},
			want: Request{Chat: true, Prompt: "[{user Hi} {assistant }]", MaxTokens: 128}},
		{name: "custom chat stop", chat: true, body: `{"messages":[{"role":"user","content":"Hi"}]}`,
			opts: Options{ChatStop: []string{"###"}},
			want: Request{Chat: true, Prompt: "User: Hi\nAssistant:", MaxTokens: 128, Stop: []string{"###"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := &fakeBackend{pieces: []string{"ok"}}
			path := "/v1/completions"
			if c.chat {
				path = "/v1/chat/completions"
			}
			w := do(t, NewHandler(b, c.opts), "POST", path, c.body)
			if w.Code != http.StatusOK {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			if got := b.lastRequest(t); fmt.Sprint(deref(got)) != fmt.Sprint(deref(c.want)) {
				t.Errorf("request\n%+v\nwant\n%+v", deref(got), deref(c.want))
			}
		})
	}
}

// deref makes a Request printable by value.
func deref(r Request) any {
	f := func(p *float64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	var seed any
	if r.Seed != nil {
		seed = *r.Seed
	}
	return struct {
		Prompt            string
		Chat              bool
		MaxTokens         int
		Temperature, TopP any
		Seed              any
		Stop              []string
	}{r.Prompt, r.Chat, r.MaxTokens, f(r.Temperature), f(r.TopP), seed, r.Stop}
}

func TestModelsAndHealth(t *testing.T) {
	h := NewHandler(&fakeBackend{}, Options{Now: fixedClock, APIKey: "k"})
	w := do(t, h, "GET", "/v1/models", "", "Authorization", "Bearer k")
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	var list struct {
		Object string `json:"object"`
		Data   []struct {
			ID      string `json:"id"`
			Object  string `json:"object"`
			Created int64  `json:"created"`
			OwnedBy string `json:"owned_by"`
		} `json:"data"`
	}
	json.Unmarshal(w.Body.Bytes(), &list)
	if list.Object != "list" || len(list.Data) != 1 || list.Data[0].ID != "fake-model" || list.Data[0].Object != "model" ||
		list.Data[0].Created != fixedClock().Unix() || list.Data[0].OwnedBy == "" {
		t.Errorf("models %s", w.Body)
	}
	if w := do(t, h, "GET", "/v1/models/fake-model", "", "Authorization", "Bearer k"); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"id":"fake-model"`) {
		t.Errorf("model: %d %s", w.Code, w.Body)
	}
	for _, method := range []string{"GET", "HEAD"} {
		if w := do(t, h, method, "/healthz", ""); w.Code != http.StatusOK {
			t.Errorf("%s /healthz: %d %s", method, w.Code, w.Body)
		}
	}
	// HEAD is answered wherever GET is (RFC 9110, 9.3.2), as a monitor
	// checking that the API is there sends it.
	for _, path := range []string{"/v1/models", "/v1/models/fake-model"} {
		get := do(t, h, "GET", path, "", "Authorization", "Bearer k")
		head := do(t, h, "HEAD", path, "", "Authorization", "Bearer k")
		if head.Code != http.StatusOK || head.Header().Get("Content-Length") != get.Header().Get("Content-Length") {
			t.Errorf("HEAD %s: %d, Content-Length %q; GET: Content-Length %q", path, head.Code, head.Header().Get("Content-Length"), get.Header().Get("Content-Length"))
		}
	}
	// Not ready (the verifier unreachable): 503, so that a balancer stops
	// sending requests that would fail.
	down := NewHandler(&fakeBackend{}, Options{Ready: func(context.Context) error { return errors.New("hlm serve is down") }})
	if w := do(t, down, "GET", "/healthz", ""); w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "hlm serve is down") || w.Header().Get("Retry-After") == "" {
		t.Errorf("/healthz, not ready: %d %s", w.Code, w.Body)
	}
	up := NewHandler(&fakeBackend{}, Options{Ready: func(context.Context) error { return nil }})
	if w := do(t, up, "GET", "/healthz", ""); w.Code != http.StatusOK {
		t.Errorf("/healthz, ready: %d %s", w.Code, w.Body)
	}
	h = NewHandler(&fakeBackend{}, Options{ModelName: "renamed"})
	if w := do(t, h, "GET", "/v1/models", ""); !strings.Contains(w.Body.String(), `"id":"renamed"`) {
		t.Errorf("ModelName: %s", w.Body)
	}
	if w := do(t, h, "POST", "/v1/completions", `{"prompt":""}`); !strings.Contains(w.Body.String(), `"model":"renamed"`) {
		t.Errorf("ModelName: %s", w.Body)
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []Options{{MaxBodyBytes: -1}, {MaxConcurrent: -1}, {DefaultMaxTokens: -1}, {ChatStop: []string{""}}} {
		if err := o.Validate(); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	if err := (Options{}).Validate(); err != nil {
		t.Error(err)
	}
	defer func() {
		if recover() == nil {
			t.Error("NewHandler(nil) did not panic")
		}
	}()
	NewHandler(nil, Options{})
}

// TestCachedTokens: prompt tokens the backend kept from an earlier request
// are reported as OpenAI reports its prompt caching, in every mode.
func TestCachedTokens(t *testing.T) {
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			b := &fakeBackend{pieces: []string{"a", "b"}, prompt: 9, cached: 7, finish: "length"}
			h := NewHandler(b, Options{Now: fixedClock})
			w := do(t, h, "POST", m.path(), m.body(`,"stream_options":{"include_usage":true}`))
			if !m.stream {
				w = do(t, h, "POST", m.path(), m.body(""))
			}
			g := readResponse(t, m, w, m.stream)
			if u := g.usage; u == nil || u.PromptTokens != 9 || u.Details == nil || u.Details.CachedTokens != 7 {
				t.Errorf("usage %+v, want 9 prompt tokens of which 7 cached", u)
			}
		})
	}
}
