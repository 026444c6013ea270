package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hlmproject/hlm/cloud"
	"github.com/hlmproject/hlm/edge"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/model/llama"
)

// slowLLM is a model whose every evaluation takes at least d: a long
// generation on the fastest model.
type slowLLM struct {
	model.Model
	d time.Duration
}

func (m slowLLM) NewSession() model.Session { return slowSession{m.Model.NewSession(), m.d} }

type slowSession struct {
	model.Session
	d time.Duration
}

func (s slowSession) Eval(tokens []int) ([][]float32, error) {
	time.Sleep(s.d)
	return s.Session.Eval(tokens)
}

// TestOpenAIShutdownInterruptsGenerations: when hlm edge --openai is told
// to stop, the generations still running after the grace period are
// interrupted — their sessions closed on hlm serve, their clients answered
// 503 (an error event for a stream) — and the endpoint returns without an
// error. Nothing told them to stop: http.Server.Shutdown waited the grace
// period for them, then serveOpenAI failed with "context deadline
// exceeded" (hlm edge exiting with status 1) and left them running, their
// sessions open on hlm serve until its idle timeout. With conversations
// (hlm edge --openai's default) too: an interrupted generation would
// otherwise park its session there for a conversation nobody continues.
func TestOpenAIShutdownInterruptsGenerations(t *testing.T) {
	for _, conv := range []bool{false, true} {
		t.Run(fmt.Sprintf("conversations=%v", conv), func(t *testing.T) { testOpenAIShutdown(t, conv) })
	}
}

func testOpenAIShutdown(t *testing.T, conversations bool) {
	defer func(g time.Duration) { openaiGrace = g }(openaiGrace)
	openaiGrace = 200 * time.Millisecond
	llm, err := llama.OpenSpec(builtin.DefaultLLM, "")
	if err != nil {
		t.Fatal(err)
	}
	slm, err := llama.OpenSpec(builtin.DefaultLLM+"@exit=2", "")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := cloud.New(cloud.Config{LLM: slowLLM{llm, 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(context.Background(), ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	p := hybrid.DefaultParams()
	p.Method, p.MaxTokens = hybrid.QS, 400
	g, err := edge.NewGenerator(edge.Config{Addr: ln.Addr().String()}, slm, p)
	if err != nil {
		t.Fatal(err)
	}
	if conversations {
		g.Conversations = &edge.Conversations{}
	}
	f, err := newChatFormat(g.Tok, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var say lockedBuffer
	served := make(chan error, 1)
	go func() {
		served <- serveOpenAI(ctx, g, f, "127.0.0.1:0", "", 4, slog.New(slog.NewTextHandler(io.Discard, nil)), &say)
	}()
	api := endpointAddr(t, &say)
	// A whole response and a stream, both far longer than the grace.
	whole := make(chan *http.Response, 1)
	go func() {
		resp, err := http.Post("http://"+api+"/v1/completions", "application/json",
			strings.NewReader(`{"prompt":"Once upon a time","max_tokens":400}`))
		if err != nil {
			t.Error(err)
		}
		whole <- resp
	}()
	resp, err := http.Post("http://"+api+"/v1/completions", "application/json",
		strings.NewReader(`{"prompt":"Once upon a time","max_tokens":400,"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "data: ") {
		t.Fatalf("first line of the stream: %q, %v", line, err)
	}
	for deadline := time.Now().Add(10 * time.Second); srv.Sessions() != 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions on the server during the two generations, want 2", srv.Sessions())
		}
	}
	began := time.Now()
	stop() // the signal
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("the endpoint ended with %v after %v", err, time.Since(began))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the endpoint did not end within 30 s of the signal")
	}
	rest, _ := io.ReadAll(r)
	if !strings.Contains(string(rest), "shutting down") || strings.Contains(string(rest), "[DONE]") {
		t.Errorf("the interrupted stream ended with %q, want an error event that says the endpoint is shutting down (and no [DONE])", lastLine(string(rest)))
	}
	if w := <-whole; w != nil {
		b, _ := io.ReadAll(w.Body)
		w.Body.Close()
		if w.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "shutting down") {
			t.Errorf("the interrupted whole response: %s %s, want 503 saying the endpoint is shutting down", w.Status, b)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); srv.Sessions() != 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions still open on the server 10 s after the endpoint ended: the generation was not interrupted", srv.Sessions())
		}
	}
	if !strings.HasSuffix(say.String(), "hlm edge: stopped\n") {
		t.Errorf("the endpoint's last words: %q, want \"hlm edge: stopped\" (no session was parked)", lastLine(say.String()))
	}
}

// endpointAddr waits for serveOpenAI to say where it listens, and returns
// that address.
func endpointAddr(t *testing.T, say *lockedBuffer) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if m := regexp.MustCompile(`http://(\S+)/v1`).FindStringSubmatch(say.String()); m != nil {
			return m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("the endpoint did not start: %q", say.String())
		}
	}
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// TestOpenAIIdleConnections: a keep-alive connection that sends no next
// request is closed after openaiIdleTimeout. Nothing closed it: a client
// that opened connections, made a request on each and kept them idle held
// a descriptor and a goroutine of hlm edge for each, for good, until the
// process ran out of descriptors (and could dial hlm serve no more).
func TestOpenAIIdleConnections(t *testing.T) {
	defer func(d time.Duration) { openaiIdleTimeout = d }(openaiIdleTimeout)
	openaiIdleTimeout = 300 * time.Millisecond
	slm, err := llama.OpenSpec(builtin.DefaultLLM+"@exit=2", "")
	if err != nil {
		t.Fatal(err)
	}
	g, err := edge.NewGenerator(edge.Config{Addr: "127.0.0.1:1"}, slm, hybrid.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	f, err := newChatFormat(g.Tok, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	var say lockedBuffer
	served := make(chan error, 1)
	go func() {
		served <- serveOpenAI(ctx, g, f, "127.0.0.1:0", "", 4, slog.New(slog.NewTextHandler(io.Discard, nil)), &say)
	}()
	defer func() { stop(); <-served }()
	api := endpointAddr(t, &say)
	c, err := net.Dial("tcp", api)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n")
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	if _, err := r.ReadByte(); err != io.EOF {
		t.Errorf("an idle keep-alive connection: %v after %v, want it closed (EOF) after %v", err, time.Since(start), openaiIdleTimeout)
	}
}

// TestStopHTTPClosesStuckConnections: a handler that ends only when its
// connection closes (as one writing to a client that stopped reading, for
// up to openai's write timeout) does not make a stop fail: after the wait,
// stopHTTP closes the connection and returns without an error. It used to
// return "context deadline exceeded", and hlm edge exit with status 1.
func TestStopHTTPClosesStuckConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	inside := make(chan struct{})
	ended := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(ended)
		close(inside)
		<-r.Context().Done()
	})}
	go srv.Serve(ln)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	<-inside
	began := time.Now()
	forced, err := stopHTTP(srv, 100*time.Millisecond)
	if err != nil || !forced {
		t.Fatalf("stopHTTP: forced %v, %v; want the stuck connection closed and no error", forced, err)
	}
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the stuck handler still runs 5 s after its connection was closed")
	}
	if d := time.Since(began); d > 3*time.Second {
		t.Errorf("stopping took %v", d)
	}
}
