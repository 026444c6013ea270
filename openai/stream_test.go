package openai

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// backendFunc adapts a function to Backend.
type backendFunc func(ctx context.Context, req Request, onText func(string)) (Result, error)

func (f backendFunc) Generate(ctx context.Context, req Request, onText func(string)) (Result, error) {
	return f(ctx, req, onText)
}
func (backendFunc) Model() string { return "fake-model" }

// nextEvent reads one "data: …" event from a live stream.
func nextEvent(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	data, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "data: ")
	if !ok {
		t.Fatalf("line %q", line)
	}
	if blank, err := r.ReadString('\n'); err != nil || blank != "\n" {
		t.Fatalf("no blank line after %q: %q %v", data, blank, err)
	}
	return data
}

// TestStreamFlushesEachPiece checks over a real connection that every piece
// reaches the client before the backend produces the next one.
func TestStreamFlushesEachPiece(t *testing.T) {
	pieces := []string{"one", " two", " three"}
	next := make(chan struct{})
	b := backendFunc(func(ctx context.Context, req Request, onText func(string)) (Result, error) {
		for i, p := range pieces {
			if i > 0 {
				select {
				case <-next:
				case <-ctx.Done():
					return Result{}, ctx.Err()
				case <-time.After(5 * time.Second):
					return Result{}, context.DeadlineExceeded
				}
			}
			onText(p)
		}
		return Result{PromptTokens: 1, CompletionTokens: 3, FinishReason: "length"}, nil
	})
	srv := httptest.NewServer(NewHandler(b, Options{}))
	defer srv.Close()
	for _, m := range []mode{{false, true}, {true, true}} {
		t.Run(m.String(), func(t *testing.T) {
			resp, err := srv.Client().Post(srv.URL+m.path(), "application/json", strings.NewReader(m.body("")))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("%d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			r := bufio.NewReader(resp.Body)
			if m.chat {
				if ev := nextEvent(t, r); !strings.Contains(ev, `"role":"assistant"`) {
					t.Fatalf("first chunk %s", ev)
				}
			}
			for i, p := range pieces {
				ev := nextEvent(t, r)
				want, _ := json.Marshal(p)
				if !strings.Contains(ev, string(want)) {
					t.Fatalf("chunk %d = %s, want the text %s", i, ev, want)
				}
				if i < len(pieces)-1 {
					next <- struct{}{}
				}
			}
			if ev := nextEvent(t, r); !strings.Contains(ev, `"finish_reason":"length"`) {
				t.Errorf("final chunk %s", ev)
			}
			if ev := nextEvent(t, r); ev != "[DONE]" {
				t.Errorf("got %s, want [DONE]", ev)
			}
		})
	}
}

// TestClientDisconnect checks that a client going away cancels the
// backend's generation, streaming or not.
func TestClientDisconnect(t *testing.T) {
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			b := &fakeBackend{pieces: []string{"Hello"}, block: true, started: make(chan struct{}, 1)}
			srv := httptest.NewServer(NewHandler(b, Options{}))
			defer srv.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+m.path(), strings.NewReader(m.body("")))
			if !m.stream {
				// The response never comes: leave while the backend works.
				done := make(chan error, 1)
				go func() {
					resp, err := srv.Client().Do(req)
					if err == nil {
						resp.Body.Close()
					}
					done <- err
				}()
				<-b.started
				cancel()
				if err := <-done; err == nil {
					t.Error("the request succeeded")
				}
			} else {
				resp, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				r := bufio.NewReader(resp.Body)
				ev := nextEvent(t, r)
				if m.chat {
					ev = nextEvent(t, r)
				}
				if !strings.Contains(ev, "Hello") {
					t.Errorf("chunk %s", ev)
				}
				cancel() // leave in the middle of the stream
			}
			if err := b.waitEnded(t); err == nil {
				t.Error("the generation was not cancelled")
			}
		})
	}
}

// TestLatePiecesIgnored checks that pieces the backend sends after a stop
// string are dropped, and that the usage is the backend's.
func TestLatePiecesIgnored(t *testing.T) {
	b := backendFunc(func(ctx context.Context, req Request, onText func(string)) (Result, error) {
		onText("a.b")
		onText("c") // ignores the cancellation
		return Result{PromptTokens: 2, CompletionTokens: 2}, ctx.Err()
	})
	w := do(t, NewHandler(b, Options{Now: fixedClock}), "POST", "/v1/completions", `{"prompt":"p","stop":"."}`)
	g := readResponse(t, mode{}, w, false)
	if g.text != "a" || g.finish != "stop" || *g.usage != (wireUsage{2, 2, 4, nil}) {
		t.Errorf("got %q %q %+v", g.text, g.finish, *g.usage)
	}
}

// TestClientNeverReads: a client that sends its request and then stops
// reading (its receive window full, the connection alive) holds its
// generation slot only until a write has waited writeTimeout: the
// generation is cancelled, the slot freed, and the next request is
// served. A write once waited for such a client forever, and with it the
// generation, its slot and its session on hlm serve: --openai-concurrency
// such clients stopped the endpoint for everyone.
func TestClientNeverReads(t *testing.T) {
	defer func(d time.Duration) { writeTimeout = d }(writeTimeout)
	writeTimeout = 200 * time.Millisecond
	piece := strings.Repeat("x", 1024)
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			// 16 MiB of text, far more than the socket buffers hold.
			b := &fakeBackend{pieces: slices.Repeat([]string{piece}, 16<<10), started: make(chan struct{}, 2)}
			if !m.stream {
				b.noStream = true
			}
			srv := httptest.NewServer(NewHandler(b, Options{MaxConcurrent: 1}))
			defer srv.Close()
			c, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.(*net.TCPConn).SetReadBuffer(4096)
			body := m.body(`,"max_tokens":100000`)
			fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", m.path(), len(body), body)
			<-b.started
			if err := b.waitEnded(t); err == nil && m.stream {
				t.Error("the generation was not cancelled")
			}
			// The slot is free once the handler gives up on the client.
			var status int
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				b.pieces = []string{"a"}
				resp, err := srv.Client().Post(srv.URL+m.path(), "application/json", strings.NewReader(m.body("")))
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if status = resp.StatusCode; status != http.StatusTooManyRequests || time.Now().After(deadline) {
					break
				}
			}
			if status != http.StatusOK {
				t.Errorf("a request while a client does not read its response: status %d, want 200 (the slot freed)", status)
			}
		})
	}
}
