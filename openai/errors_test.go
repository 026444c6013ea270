package openai

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// checkError checks an error response: status, OpenAI's shape, type, param
// and code ("" for null).
// noSentinel checks that an error response's message is the backend's
// reason only, without the sentinel's text ("openai: invalid request: "),
// which says what the status code does in words of this package.
func noSentinel(t *testing.T, w *httptest.ResponseRecorder, sentinel error) {
	t.Helper()
	var e wireError
	json.Unmarshal(w.Body.Bytes(), &e)
	if strings.Contains(e.Error.Message, sentinel.Error()) || e.Error.Message == "" {
		t.Errorf("message %q: want the backend's reason without %q", e.Error.Message, sentinel.Error())
	}
}

func checkError(t *testing.T, w *httptest.ResponseRecorder, status int, typ, param, code string) {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d: %s", w.Code, status, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var top struct{ Error json.RawMessage }
	if err := json.Unmarshal(w.Body.Bytes(), &top); err != nil {
		t.Fatalf("%s: %v", w.Body, err)
	}
	checkKeys(t, "response", w.Body.Bytes(), "error")
	checkKeys(t, "error", top.Error, "message", "type", "param", "code")
	var e wireError
	json.Unmarshal(w.Body.Bytes(), &e)
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	if e.Error.Message == "" || e.Error.Type != typ || str(e.Error.Param) != param || str(e.Error.Code) != code {
		t.Errorf("error %s, want type %q param %q code %q", top.Error, typ, param, code)
	}
}

func TestErrors(t *testing.T) {
	const inv = "invalid_request_error"
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	cases := []struct {
		name         string
		method, path string
		body         string
		status       int
		param, code  string
	}{
		{"unknown path", "POST", "/v1/edits", `{}`, 404, "", ""},
		{"trailing slash", "POST", "/v1/completions/", `{}`, 404, "", ""},
		{"unknown model", "GET", "/v1/models/gpt-4", "", 404, "model", "model_not_found"},
		{"GET completions", "GET", "/v1/completions", "", 405, "", "method_not_allowed"},
		{"GET chat", "GET", "/v1/chat/completions", "", 405, "", "method_not_allowed"},
		{"POST models", "POST", "/v1/models", "{}", 405, "", "method_not_allowed"},
		{"DELETE model", "DELETE", "/v1/models/fake-model", "", 405, "", "method_not_allowed"},
		{"POST healthz", "POST", "/healthz", "", 405, "", "method_not_allowed"},

		{"empty body", "POST", "/v1/completions", "", 400, "", ""},
		{"invalid JSON", "POST", "/v1/completions", `{"prompt":`, 400, "", ""},
		{"trailing data", "POST", "/v1/completions", `{"prompt":"a"} {}`, 400, "", ""},
		{"not an object", "POST", "/v1/completions", `["a"]`, 400, "", ""},
		{"missing prompt", "POST", "/v1/completions", `{"model":"m"}`, 400, "prompt", ""},
		{"null prompt", "POST", "/v1/completions", `{"prompt":null}`, 400, "prompt", ""},
		{"two prompts", "POST", "/v1/completions", `{"prompt":["a","b"]}`, 400, "prompt", ""},
		{"no prompts", "POST", "/v1/completions", `{"prompt":[]}`, 400, "prompt", ""},
		{"token prompt", "POST", "/v1/completions", `{"prompt":[1,2,3]}`, 400, "prompt", ""},
		{"token prompts", "POST", "/v1/completions", `{"prompt":[[1,2]]}`, 400, "prompt", ""},
		{"prompt object", "POST", "/v1/completions", `{"prompt":{}}`, 400, "prompt", ""},
		{"n 2", "POST", "/v1/completions", `{"prompt":"a","n":2}`, 400, "n", ""},
		{"n 0", "POST", "/v1/completions", `{"prompt":"a","n":0}`, 400, "n", ""},
		{"echo", "POST", "/v1/completions", `{"prompt":"a","echo":true}`, 400, "echo", ""},
		{"best_of", "POST", "/v1/completions", `{"prompt":"a","best_of":3}`, 400, "best_of", ""},
		{"suffix", "POST", "/v1/completions", `{"prompt":"a","suffix":"z"}`, 400, "suffix", ""},
		{"logprobs", "POST", "/v1/completions", `{"prompt":"a","logprobs":2}`, 400, "logprobs", ""},
		{"logit_bias", "POST", "/v1/completions", `{"prompt":"a","logit_bias":{"50256":-100}}`, 400, "logit_bias", ""},
		{"five stops", "POST", "/v1/completions", `{"prompt":"a","stop":["a","b","c","d","e"]}`, 400, "stop", ""},
		{"stop number", "POST", "/v1/completions", `{"prompt":"a","stop":5}`, 400, "stop", ""},
		{"stop too long", "POST", "/v1/completions", `{"prompt":"a","stop":"` + strings.Repeat("x", maxStopBytes+1) + `"}`, 400, "stop", ""},
		{"temperature high", "POST", "/v1/completions", `{"prompt":"a","temperature":2.5}`, 400, "temperature", ""},
		{"temperature negative", "POST", "/v1/completions", `{"prompt":"a","temperature":-0.1}`, 400, "temperature", ""},
		{"temperature string", "POST", "/v1/completions", `{"prompt":"a","temperature":"hot"}`, 400, "temperature", ""},
		{"top_p", "POST", "/v1/completions", `{"prompt":"a","top_p":1.5}`, 400, "top_p", ""},
		{"top_k negative", "POST", "/v1/completions", `{"prompt":"a","top_k":-1}`, 400, "top_k", ""},
		{"max_token typo", "POST", "/v1/completions", `{"prompt":"a","max_token":5}`, 400, "max_token", ""},
		{"temprature typo", "POST", "/v1/chat/completions", `{` + msgs + `,"temprature":0}`, 400, "temprature", ""},
		{"stream_option typo", "POST", "/v1/completions", `{"prompt":"a","stream_option":{}}`, 400, "stream_option", ""},
		// encoding/json matches names case-insensitively (with Unicode
		// folding): these were applied as max_tokens and stream.
		{"MAX_TOKENS", "POST", "/v1/completions", `{"prompt":"a","MAX_TOKENS":5}`, 400, "MAX_TOKENS", ""},
		{"ſtream", "POST", "/v1/completions", `{"prompt":"a","ſtream":true}`, 400, "ſtream", ""},
		{"Messages", "POST", "/v1/chat/completions", `{"Messages":[{"role":"user","content":"hi"}]}`, 400, "Messages", ""},
		{"max_tokens 0", "POST", "/v1/completions", `{"prompt":"a","max_tokens":0}`, 400, "max_tokens", ""},
		{"max_tokens negative", "POST", "/v1/completions", `{"prompt":"a","max_tokens":-5}`, 400, "max_tokens", ""},
		{"max_tokens fraction", "POST", "/v1/completions", `{"prompt":"a","max_tokens":1.5}`, 400, "max_tokens", ""},
		{"max_tokens string", "POST", "/v1/completions", `{"prompt":"a","max_tokens":"10"}`, 400, "max_tokens", ""},
		{"seed fraction", "POST", "/v1/completions", `{"prompt":"a","seed":1.5}`, 400, "seed", ""},
		{"seed too large", "POST", "/v1/completions", `{"prompt":"a","seed":18446744073709551616}`, 400, "seed", ""},
		{"seed bool", "POST", "/v1/completions", `{"prompt":"a","seed":true}`, 400, "seed", ""},
		{"seed string", "POST", "/v1/completions", `{"prompt":"a","seed":"abc"}`, 400, "seed", ""},
		{"seed numeric string", "POST", "/v1/completions", `{"prompt":"a","seed":"42"}`, 400, "seed", ""},
		{"stream string", "POST", "/v1/completions", `{"prompt":"a","stream":"yes"}`, 400, "stream", ""},
		{"stream_options without stream", "POST", "/v1/completions", `{"prompt":"a","stream_options":{"include_usage":true}}`, 400, "stream_options", ""},

		{"chat no messages", "POST", "/v1/chat/completions", `{"model":"m"}`, 400, "messages", ""},
		{"chat empty messages", "POST", "/v1/chat/completions", `{"messages":[]}`, 400, "messages", ""},
		{"chat messages object", "POST", "/v1/chat/completions", `{"messages":{}}`, 400, "messages", ""},
		{"chat tool role", "POST", "/v1/chat/completions", `{"messages":[{"role":"tool","content":"x"}]}`, 400, "messages[0].role", ""},
		{"chat no role", "POST", "/v1/chat/completions", `{"messages":[{"content":"x"}]}`, 400, "messages[0].role", ""},
		{"chat null user content", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":null}]}`, 400, "messages[0].content", ""},
		{"chat content number", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":5}]}`, 400, "messages[0].content", ""},
		{"chat image part", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`, 400, "messages[0].content", ""},
		{"chat part not object", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":["x"]}]}`, 400, "messages[0].content", ""},
		{"chat tools", "POST", "/v1/chat/completions", `{` + msgs + `,"tools":[{"type":"function"}]}`, 400, "tools", ""},
		{"chat functions", "POST", "/v1/chat/completions", `{` + msgs + `,"functions":[{"name":"f"}]}`, 400, "functions", ""},
		{"chat json mode", "POST", "/v1/chat/completions", `{` + msgs + `,"response_format":{"type":"json_object"}}`, 400, "response_format", ""},
		{"chat logprobs", "POST", "/v1/chat/completions", `{` + msgs + `,"logprobs":true}`, 400, "logprobs", ""},
		{"chat max_completion_tokens 0", "POST", "/v1/chat/completions", `{` + msgs + `,"max_completion_tokens":0}`, 400, "max_completion_tokens", ""},
		{"chat n 3", "POST", "/v1/chat/completions", `{` + msgs + `,"n":3}`, 400, "n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := &fakeBackend{pieces: []string{"x"}}
			w := do(t, NewHandler(b, Options{}), c.method, c.path, c.body)
			checkError(t, w, c.status, inv, c.param, c.code)
			if c.status == 405 && w.Header().Get("Allow") == "" {
				t.Error("405 without Allow")
			}
			if len(b.reqs) != 0 {
				t.Error("the backend was called")
			}
		})
	}
}

// TestChatTemplateError: a chat template that raises (Gemma's "System role
// not supported") is the client's error, 400, with the template's message.
func TestChatTemplateError(t *testing.T) {
	b := &fakeBackend{pieces: []string{"x"}}
	o := Options{ChatTemplate: func([]Message) (string, error) { return "", errors.New("System role not supported") }}
	w := do(t, NewHandler(b, o), "POST", "/v1/chat/completions", `{"messages":[{"role":"system","content":"x"},{"role":"user","content":"hi"}]}`)
	checkError(t, w, 400, "invalid_request_error", "messages", "")
	if !strings.Contains(w.Body.String(), "System role not supported") {
		t.Errorf("body %s does not carry the template's message", w.Body)
	}
	if len(b.reqs) != 0 {
		t.Error("the backend was called")
	}
}

func TestBodyTooLarge(t *testing.T) {
	h := NewHandler(&fakeBackend{}, Options{MaxBodyBytes: 64})
	big := `{"prompt":"` + strings.Repeat("x", 100) + `"}`
	checkError(t, do(t, h, "POST", "/v1/completions", big), 413, "invalid_request_error", "", "request_too_large")

	// Without a Content-Length the limit is found while reading.
	r := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(big))
	r.ContentLength = -1
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	checkError(t, w, 413, "invalid_request_error", "", "request_too_large")

	if w := do(t, h, "POST", "/v1/completions", `{"prompt":"small"}`); w.Code != 200 {
		t.Errorf("small body: %d %s", w.Code, w.Body)
	}
}

func TestAuth(t *testing.T) {
	h := NewHandler(&fakeBackend{pieces: []string{"x"}}, Options{APIKey: "s3cret"})
	body := `{"prompt":"a"}`
	for _, c := range []struct {
		name, header string
		ok           bool
	}{
		{"none", "", false},
		{"wrong key", "Bearer nope", false},
		{"prefix of the key", "Bearer s3cre", false},
		{"not bearer", "Basic s3cret", false},
		{"no scheme", "s3cret", false},
		{"right key", "Bearer s3cret", true},
		{"lower-case scheme", "bearer s3cret", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var hdr []string
			if c.header != "" {
				hdr = []string{"Authorization", c.header}
			}
			for _, p := range []string{"/v1/completions", "/v1/models", "/v1/unknown"} {
				method := "POST"
				if p == "/v1/models" {
					method = "GET"
				}
				w := do(t, h, method, p, body, hdr...)
				if c.ok {
					if w.Code == 401 {
						t.Errorf("%s: 401", p)
					}
					continue
				}
				checkError(t, w, 401, "invalid_request_error", "", "invalid_api_key")
				if w.Header().Get("WWW-Authenticate") == "" {
					t.Error("401 without WWW-Authenticate")
				}
			}
		})
	}
	if w := do(t, h, "GET", "/healthz", ""); w.Code != 200 {
		t.Errorf("/healthz needs no key: %d", w.Code)
	}
}

func TestBackendErrors(t *testing.T) {
	boom := errors.New("the link is down")
	tooLong := fmt.Errorf("%w: the prompt has 5000 tokens, the context 2048", ErrInvalidRequest)
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			// Failing before any text: a plain error response, streaming or not.
			b := &fakeBackend{pieces: []string{"a"}, err: boom}
			w := do(t, NewHandler(b, Options{}), "POST", m.path(), m.body(""))
			checkError(t, w, 500, "server_error", "", "")
			if !strings.Contains(w.Body.String(), boom.Error()) {
				t.Errorf("the message does not say why: %s", w.Body)
			}
			b = &fakeBackend{err: tooLong}
			w = do(t, NewHandler(b, Options{}), "POST", m.path(), m.body(""))
			checkError(t, w, 400, "invalid_request_error", "", "")
			noSentinel(t, w, ErrInvalidRequest)

			// A field the backend refuses is named, as the handler's own
			// checks name theirs.
			b = &fakeBackend{err: &ParamError{Param: "top_k", Err: errors.New("invalid parameter: top_k=9999999: more than the vocabulary")}}
			w = do(t, NewHandler(b, Options{}), "POST", m.path(), m.body(""))
			checkError(t, w, 400, "invalid_request_error", "top_k", "")
			noSentinel(t, w, ErrInvalidRequest)

			// A backend that may serve later (its verifier unreachable):
			// 503 with Retry-After, so that clients and balancers retry.
			b = &fakeBackend{err: fmt.Errorf("%w: the verifier cannot be reached", ErrUnavailable)}
			w = do(t, NewHandler(b, Options{}), "POST", m.path(), m.body(""))
			checkError(t, w, 503, "server_error", "", "service_unavailable")
			noSentinel(t, w, ErrUnavailable)
			if w.Header().Get("Retry-After") == "" {
				t.Error("503 without Retry-After")
			}

			// max_tokens beyond Options.MaxTokens names the parameter.
			w = do(t, NewHandler(&fakeBackend{}, Options{MaxTokens: 100}), "POST", m.path(), strings.Replace(m.body(""), "{", `{"max_tokens":101,`, 1))
			checkError(t, w, 400, "invalid_request_error", "max_tokens", "")

			// Failing after some text.
			b = &fakeBackend{pieces: []string{"a", "b", "c"}, err: boom, errAfter: 2}
			w = do(t, NewHandler(b, Options{}), "POST", m.path(), m.body(""))
			if !m.stream {
				checkError(t, w, 500, "server_error", "", "")
				return
			}
			if w.Code != 200 {
				t.Fatalf("status %d", w.Code)
			}
			events := parseSSE(t, w.Body)
			last := events[len(events)-1]
			var e wireError
			if err := json.Unmarshal([]byte(last), &e); err != nil || e.Error.Type != "server_error" {
				t.Errorf("last event %q, want an error", last)
			}
			for _, ev := range events {
				if ev == "[DONE]" {
					t.Error("[DONE] after an error")
				}
			}
		})
	}
}

func TestConcurrencyLimit(t *testing.T) {
	b := &fakeBackend{pieces: []string{"a"}, block: true, started: make(chan struct{}, 1)}
	h := NewHandler(b, Options{MaxConcurrent: 1})
	// completed receives once a /v1/completions handler has returned (and
	// so released its slot; the client may see its request end earlier).
	completed := make(chan struct{}, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		if r.URL.Path == "/v1/completions" {
			completed <- struct{}{}
		}
	}))
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/completions", strings.NewReader(`{"prompt":"a"}`))
		resp, err := srv.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		first <- err
	}()
	<-b.started // the first request holds the only slot

	resp, err := srv.Client().Post(srv.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e wireError
	json.NewDecoder(resp.Body).Decode(&e)
	if resp.StatusCode != 429 || e.Error.Type != "rate_limit_error" || resp.Header.Get("Retry-After") == "" {
		t.Errorf("second request: %d %+v (Retry-After %q)", resp.StatusCode, e, resp.Header.Get("Retry-After"))
	}
	// Other endpoints are not limited.
	if r, err := srv.Client().Get(srv.URL + "/v1/models"); err != nil || r.StatusCode != 200 {
		t.Errorf("/v1/models while busy: %v %v", r, err)
	} else {
		r.Body.Close()
	}

	cancel() // the first client leaves; its slot frees
	<-first
	if err := b.waitEnded(t); err == nil {
		t.Error("the first generation was not cancelled")
	}
	select {
	case <-completed:
	case <-time.After(5 * time.Second):
		t.Fatal("the first request's handler did not return within 5 s of its generation")
	}
	b.block = false
	// The slot is free: the next request is served at once.
	resp, err = srv.Client().Post(srv.URL+"/v1/completions", "application/json", strings.NewReader(`{"prompt":"a"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("a request after the slot was released: status %d", resp.StatusCode)
	}
	<-b.started
}

// TestSlowBody: a body that arrives a byte at a time is cut off after
// bodyTimeout with a 400 (it held its connection and buffer for as long
// as the client kept sending), while a generation that takes longer than
// bodyTimeout after its body arrived is not cut.
func TestSlowBody(t *testing.T) {
	defer func(d time.Duration) { bodyTimeout = d }(bodyTimeout)
	bodyTimeout = 300 * time.Millisecond
	srv := httptest.NewServer(NewHandler(&fakeBackend{pieces: []string{"a", "b"}, delay: 200 * time.Millisecond}, Options{}))
	defer srv.Close()

	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"prompt\":")
	start := time.Now()
	go func() {
		for range 20 { // a byte every 100 ms: 2 s in all
			time.Sleep(100 * time.Millisecond)
			if _, err := c.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a slow body: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || time.Since(start) > 1500*time.Millisecond {
		t.Errorf("slow body: status %d after %v; want 408 near %v", resp.StatusCode, time.Since(start), bodyTimeout)
	}
	if strings.Contains(string(b), "127.0.0.1") {
		t.Errorf("slow body: %s; the client is told the timeout, not the server's addresses", b)
	}

	// Two pieces 200 ms apart: 400 ms of generation, past bodyTimeout.
	r, err := http.Post(srv.URL+"/v1/completions", "application/json", strings.NewReader(`{"prompt":"hi","stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, err = io.ReadAll(r.Body)
	if err != nil || r.StatusCode != http.StatusOK || !strings.Contains(string(b), "[DONE]") {
		t.Errorf("a generation longer than the body timeout: status %d, %v, %q", r.StatusCode, err, b)
	}
}

// TestNumberOutOfRange: a number too large for its field is refused as out
// of range, naming the field; it was "invalid type for 'temperature': got
// number 1e309, want number".
func TestNumberOutOfRange(t *testing.T) {
	cases := []struct{ field, value, want string }{
		{"max_tokens", "99999999999999999999", "'max_tokens' is out of range"},
		{"top_k", "-99999999999999999999", "'top_k' is out of range"},
		{"temperature", "1e309", "'temperature' is out of range"},
		{"top_p", "-1e400", "'top_p' is out of range"},
		{"max_tokens", "1.5", "want integer"}, // a fraction is the wrong type
		{"max_tokens", "1e3", "want integer"},
	}
	for _, c := range cases {
		t.Run(c.field+"="+c.value, func(t *testing.T) {
			w := do(t, NewHandler(&fakeBackend{}, Options{}), "POST", "/v1/completions", `{"prompt":"a","`+c.field+`":`+c.value+`}`)
			checkError(t, w, 400, "invalid_request_error", c.field, "")
			if !strings.Contains(w.Body.String(), c.want) {
				t.Errorf("%s, want a message with %q", w.Body, c.want)
			}
		})
	}
}
