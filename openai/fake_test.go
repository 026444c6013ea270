package openai

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeBackend sends fixed pieces, one token each, and records what it got.
type fakeBackend struct {
	model    string
	pieces   []string
	prompt   int    // prompt tokens to report
	cached   int    // of which cached
	finish   string // finish reason to report
	err      error  // returned after errAfter pieces
	errAfter int
	block    bool          // after the pieces, wait for the context to end
	noStream bool          // return Result.Text without calling onText
	delay    time.Duration // before each piece

	started chan struct{} // if set, receives once Generate has started

	mu     sync.Mutex
	reqs   []Request
	sent   int   // pieces passed to onText
	ctxErr error // ctx.Err() when Generate returned
	ended  chan struct{}
}

var _ Backend = (*fakeBackend)(nil)

func (f *fakeBackend) Model() string {
	if f.model == "" {
		return "fake-model"
	}
	return f.model
}

func (f *fakeBackend) Generate(ctx context.Context, req Request, onText func(string)) (res Result, err error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	if f.ended == nil {
		f.ended = make(chan struct{}, 16)
	}
	ended := f.ended
	f.mu.Unlock()
	if f.started != nil {
		f.started <- struct{}{}
	}
	defer func() {
		f.mu.Lock()
		f.ctxErr = ctx.Err()
		f.mu.Unlock()
		select {
		case ended <- struct{}{}:
		default: // nobody is waiting
		}
	}()
	res = Result{PromptTokens: f.prompt, CachedTokens: f.cached, FinishReason: f.finish}
	if f.noStream {
		res.Text = strings.Join(f.pieces, "")
		res.CompletionTokens = len(f.pieces)
		return res, f.err
	}
	// A builder, not +=: TestClientNeverReads sends megabytes in 1 KiB
	// pieces before the socket fills, and concatenation would copy them
	// quadratically (seconds on a loaded machine).
	var text strings.Builder
	defer func() { res.Text = text.String() }()
	for i, p := range f.pieces {
		if f.err != nil && i == f.errAfter {
			return res, f.err
		}
		if f.delay > 0 {
			select {
			case <-time.After(f.delay):
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		onText(p)
		f.mu.Lock()
		f.sent++
		f.mu.Unlock()
		text.WriteString(p)
		res.CompletionTokens++
	}
	if f.err != nil {
		return res, f.err
	}
	if f.block {
		<-ctx.Done()
		return res, ctx.Err()
	}
	return res, nil
}

// lastRequest is the last Request the backend got.
func (f *fakeBackend) lastRequest(t *testing.T) Request {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) == 0 {
		t.Fatal("the backend was not called")
	}
	return f.reqs[len(f.reqs)-1]
}

// waitEnded waits for Generate to return and reports its context's error.
func (f *fakeBackend) waitEnded(t *testing.T) error {
	t.Helper()
	f.mu.Lock()
	if f.ended == nil {
		f.ended = make(chan struct{}, 16)
	}
	ended := f.ended
	f.mu.Unlock()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("Generate did not return")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ctxErr
}

// fixedClock is the Options.Now of the tests.
func fixedClock() time.Time { return time.Unix(1767225600, 0) }

// do sends one request to h and returns the recorded response.
func do(t *testing.T, h http.Handler, method, path, body string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// parseSSE reads a whole event stream and returns the data of each event.
// Every event must be exactly one "data: " line followed by a blank line.
func parseSSE(t *testing.T, r io.Reader) []string {
	t.Helper()
	var events []string
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("line %q: want \"data: …\"", line)
		}
		if !sc.Scan() || sc.Text() != "" {
			t.Fatalf("event %q is not followed by a blank line", data)
		}
		events = append(events, data)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return events
}

// keysOf returns the sorted keys of a JSON object.
func keysOf(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return slices.Sorted(maps.Keys(m))
}

// checkKeys fails unless the JSON object raw has exactly the keys want.
func checkKeys(t *testing.T, what string, raw json.RawMessage, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := keysOf(t, raw); !slices.Equal(got, want) {
		t.Errorf("%s keys = %v, want %v (%s)", what, got, want, raw)
	}
}

// The response shapes as OpenAI documents them, decoded independently of
// the package's own types.
type (
	wireUsage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
		Details          *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	}
	wireCompletion struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		Model   string `json:"model"`
		Choices []struct {
			Text         string          `json:"text"`
			Index        int             `json:"index"`
			Logprobs     json.RawMessage `json:"logprobs"`
			FinishReason *string         `json:"finish_reason"`
		} `json:"choices"`
		Usage *wireUsage `json:"usage"`
	}
	wireChat struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		Model   string `json:"model"`
		Choices []struct {
			Index   int `json:"index"`
			Message *struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"message"`
			Delta *struct {
				Role    *string `json:"role"`
				Content *string `json:"content"`
			} `json:"delta"`
			Logprobs     json.RawMessage `json:"logprobs"`
			FinishReason *string         `json:"finish_reason"`
		} `json:"choices"`
		Usage *wireUsage `json:"usage"`
	}
	wireError struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
)
