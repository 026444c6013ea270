package cloud

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/hlmproject/hlm/model"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hlmproject/hlm/edge"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/wire"
)

func getHealth(t *testing.T, url string) (int, Health) {
	t.Helper()
	resp, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h Health
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, h
}

// TestHealthDrainShutdown: /healthz answers 503 "loading" before the server
// exists and 200 while it serves; after Drain it answers 503 while rounds
// still verify; Shutdown lets the round being verified finish (its verdict
// arrives) and then closes the connection with a shutdown error.
func TestHealthDrainShutdown(t *testing.T) {
	ms := models(t)
	var srv *Server
	hs := httptest.NewServer(HealthHandler(func() *Server { return srv }))
	defer hs.Close()
	if code, h := getHealth(t, hs.URL); code != http.StatusServiceUnavailable || h.Status != "loading" {
		t.Errorf("before the server: %d %+v", code, h)
	}
	// An LLM that takes 300 ms per pass: a round in flight.
	srv, addr := start(t, Config{LLM: slowModel{ms.LLM, 300 * time.Millisecond}, DrainDelay: 200 * time.Millisecond})
	for deadline := time.Now().Add(5 * time.Second); srv.Health().Status == "starting" && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond) // Serve is starting in its goroutine
	}
	if code, h := getHealth(t, hs.URL); code != http.StatusOK || h.Status != "ok" {
		t.Errorf("serving: %d %+v", code, h)
	}
	p := hybrid.DefaultParams()
	p.Method = hybrid.Coupled
	rem, err := edge.Connect(context.Background(), edge.Config{Addr: addr, Retries: 1, Backoff: 10 * time.Millisecond},
		edge.Session{Params: p, Tokenizer: ms.Tok.Fingerprint(), Prefix: func() []int { return []int{1, 5} }})
	if err != nil {
		t.Fatal(err)
	}
	defer rem.Close()
	round := func(r uint32) error {
		_, err := rem.Verify(context.Background(), &wire.Upload{Round: r, Drafts: []wire.Draft{{Token: 7}, {Token: 9}}})
		return err
	}

	drained := make(chan time.Time)
	began := time.Now()
	go func() { srv.Drain(context.Background()); drained <- time.Now() }()
	for srv.Health().Status != "draining" {
		time.Sleep(time.Millisecond)
	}
	if code, h := getHealth(t, hs.URL); code != http.StatusServiceUnavailable || h.Status != "draining" || h.Sessions != 1 {
		t.Errorf("draining: %d %+v", code, h)
	}
	if err := round(1); err != nil {
		t.Fatalf("a round while draining: %v", err)
	}
	if d := (<-drained).Sub(began); d < 200*time.Millisecond {
		t.Errorf("Drain returned after %v, before its delay", d)
	}

	for srv.Health().InRound != 0 { // round 1 ends just after its verdict is written
		time.Sleep(time.Millisecond)
	}
	errc := make(chan error, 1)
	go func() { errc <- round(2) }()
	for srv.Health().InRound == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("the round being verified at Shutdown did not get its verdict: %v", err)
	}
	if h := srv.Health(); h.Status != "stopped" || h.Connections != 0 {
		t.Errorf("after Shutdown: %+v", h)
	}
	// The next round finds the connection closed and no server to go to.
	if err := round(3); err == nil {
		t.Error("a round after Shutdown succeeded")
	} else if errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("round after Shutdown: %v", err)
	}
}

// TestEvictDetached: a full server makes room for a new session by dropping
// the least recently used session without a connection, and refuses one
// only when every session has a connection.
func TestEvictDetached(t *testing.T) {
	ms := models(t)
	srv, addr := start(t, Config{LLM: ms.LLM, MaxSessions: 2})
	p := hybrid.DefaultParams()
	p.Method = hybrid.Coupled
	open := func() (*edge.Remote, error) {
		return edge.Connect(context.Background(), edge.Config{Addr: addr, Retries: 1, Backoff: 10 * time.Millisecond},
			edge.Session{Params: p, Tokenizer: ms.Tok.Fingerprint(), Prefix: func() []int { return []int{1, 5} }})
	}
	a, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := open(); err == nil {
		t.Fatal("a third session on a full server with every session attached was opened")
	}
	if h := srv.Health(); h.Status != "full" {
		t.Errorf("health of a full server: %+v", h)
	}
	a.Drop() // a's session stays, detached
	for deadline := time.Now().Add(5 * time.Second); srv.Health().Connections > 1 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if h := srv.Health(); h.Status != "ok" || h.Sessions != 2 {
		t.Errorf("after a detached: %+v", h)
	}
	c, err := open()
	if err != nil {
		t.Fatalf("no room made for a new session: %v", err)
	}
	defer c.Close()
	if n := srv.Sessions(); n != 2 {
		t.Errorf("%d sessions, want 2 (a's evicted)", n)
	}
	// a comes back: its session is gone, it reopens (evicting nothing: b
	// and c are attached, so it is refused) — the device sees the limit.
	if _, err := a.Verify(context.Background(), &wire.Upload{Round: 1, Drafts: []wire.Draft{{Token: 7}}}); err == nil {
		t.Error("a's round went through on a full server whose sessions all have connections")
	}
}

// slowModel is a model whose sessions take delay longer for every Eval.
type slowModel struct {
	model.Model
	delay time.Duration
}

func (m slowModel) NewSession() model.Session { return slowSession{m.Model.NewSession(), m.delay} }

type slowSession struct {
	model.Session
	delay time.Duration
}

func (s slowSession) Eval(tokens []int) ([][]float32, error) {
	time.Sleep(s.delay)
	return s.Session.Eval(tokens)
}
