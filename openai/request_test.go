package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzRequest feeds arbitrary bodies to both parsers and to the whole
// handler: no panic, a 200 or an OpenAI-shaped 400, and a checked request.
func FuzzRequest(f *testing.F) {
	for _, s := range []string{
		`{"prompt":"Hello","max_tokens":5,"stop":["\n","o w"],"temperature":0.7,"top_p":0.9,"seed":-3,"stream":true,"stream_options":{"include_usage":true}}`,
		`{"prompt":["one"],"n":1,"echo":false,"best_of":1,"logprobs":null,"suffix":""}`,
		`{"prompt":[[1,2]]}`,
		`{"messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"assistant","content":null}],"max_completion_tokens":3}`,
		`{"messages":[{"role":"developer","content":"x"}],"tools":[],"response_format":{"type":"text"},"logprobs":false}`,
		`{"messages":{}}`, `[]`, `null`, `""`, `{"prompt":1e400}`, `{"seed":"12"}`, `{"max_tokens":1e9}`,
	} {
		f.Add([]byte(s))
	}
	h := NewHandler(backendFunc(func(_ context.Context, req Request, onText func(string)) (Result, error) {
		onText(req.Prompt)
		return Result{FinishReason: FinishLength}, nil
	}), Options{})
	o := Options{}.withDefaults()
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, parse := range []func([]byte, *Options) (genRequest, *apiError){parseCompletion, parseChat} {
			g, err := parse(body, &o)
			if err != nil {
				if err.status != http.StatusBadRequest || err.Message == "" || err.Type != typeInvalidRequest {
					t.Fatalf("%q: error %+v", body, err)
				}
				continue
			}
			if g.MaxTokens < 1 {
				t.Fatalf("%q: MaxTokens %d", body, g.MaxTokens)
			}
			if p := g.Temperature; p != nil && (*p < 0 || *p > 2) {
				t.Fatalf("%q: temperature %v", body, *p)
			}
			if p := g.TopP; p != nil && (*p < 0 || *p > 1) {
				t.Fatalf("%q: top_p %v", body, *p)
			}
			if len(g.Stop) > maxClientStops+len(o.ChatStop) {
				t.Fatalf("%q: %d stops", body, len(g.Stop))
			}
			for _, s := range g.Stop {
				if s == "" || len(s) > maxStopBytes {
					t.Fatalf("%q: stop %q", body, s)
				}
			}
			if g.includeUsage && !g.stream {
				t.Fatalf("%q: include_usage without stream", body)
			}
		}
		for _, path := range []string{"/v1/completions", "/v1/chat/completions"} {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("POST", path, strings.NewReader(string(body))))
			if w.Code != 200 && w.Code != 400 {
				t.Fatalf("%s %q: status %d", path, body, w.Code)
			}
			if w.Header().Get("Content-Type") == "application/json" && !json.Valid(w.Body.Bytes()) {
				t.Fatalf("%s %q: invalid JSON %q", path, body, w.Body)
			}
		}
	})
}

func TestDefaultChatTemplate(t *testing.T) {
	got, _ := DefaultChatTemplate([]Message{
		{"system", "You are terse."}, {"user", "Hi"}, {"assistant", "Hello."}, {"user", "Name a colour."},
	})
	want := "You are terse.\n\nUser: Hi\nAssistant: Hello.\nUser: Name a colour.\nAssistant:"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
