package cloud

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/hlmproject/hlm/edge"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model"
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

// waitLimit bounds every wait of these tests for the server's own state.
const waitLimit = 30 * time.Second

// waitHealth waits until cond holds for srv's health, failing the test
// after waitLimit. The server offers no event for its state, so it is
// polled every millisecond.
func waitHealth(t *testing.T, srv *Server, what string, cond func(Health) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond(srv.Health()) {
		select {
		case <-ctx.Done():
			t.Fatalf("after %v, still not %s: health %+v", waitLimit, what, srv.Health())
		case <-tick.C:
		}
	}
}

// receive returns what c sends, failing the test after waitLimit.
func receive[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("after %v, still no %s", waitLimit, what)
		panic("unreachable")
	}
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
	// An LLM whose passes can be held at a gate: a round in flight.
	gate := newGate()
	defer gate.open() // before the server's cleanup: a failed test may leave a pass held
	srv, addr := start(t, Config{LLM: gatedModel{ms.LLM, gate}, DrainDelay: 200 * time.Millisecond})
	waitHealth(t, srv, "serving", func(h Health) bool { return h.Status != "starting" }) // Serve starts in its goroutine
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
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		_, err := rem.Verify(ctx, &wire.Upload{Round: r, Drafts: []wire.Draft{{Token: 7}, {Token: 9}}})
		return err
	}

	drained := make(chan time.Time, 1)
	began := time.Now()
	go func() { srv.Drain(context.Background()); drained <- time.Now() }()
	waitHealth(t, srv, "draining", func(h Health) bool { return h.Status == "draining" })
	if code, h := getHealth(t, hs.URL); code != http.StatusServiceUnavailable || h.Status != "draining" || h.Sessions != 1 {
		t.Errorf("draining: %d %+v", code, h)
	}
	if err := round(1); err != nil {
		t.Fatalf("a round while draining: %v", err)
	}
	if d := receive(t, drained, "return from Drain").Sub(began); d < 200*time.Millisecond {
		t.Errorf("Drain returned after %v, before its delay", d)
	}

	// Round 2 is held in the LLM's pass while Shutdown begins.
	waitHealth(t, srv, "done with round 1", func(h Health) bool { return h.InRound == 0 }) // it ends just after its verdict is written
	gate.hold()
	errc := make(chan error, 1)
	go func() { errc <- round(2) }()
	receive(t, gate.entered, "pass of round 2")
	if h := srv.Health(); h.InRound != 1 {
		t.Fatalf("round 2 in its pass: health %+v", h)
	}
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		shut <- srv.Shutdown(ctx)
	}()
	waitHealth(t, srv, "stopped", func(h Health) bool { return h.Status == "stopped" })
	select {
	case err := <-errc:
		t.Fatalf("round 2 ended while its pass was held: %v", err)
	case err := <-shut:
		t.Fatalf("Shutdown returned while round 2 was in its pass: %v", err)
	default:
	}
	gate.open()
	if err := receive(t, shut, "return from Shutdown"); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := receive(t, errc, "verdict of round 2"); err != nil {
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
	waitHealth(t, srv, "a's connection gone", func(h Health) bool { return h.Connections <= 1 })
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

// gatedModel is a model whose sessions' Eval waits at g while g is held.
type gatedModel struct {
	model.Model
	g *gate
}

func (m gatedModel) NewSession() model.Session { return gatedSession{m.Model.NewSession(), m.g} }

type gatedSession struct {
	model.Session
	g *gate
}

func (s gatedSession) Eval(tokens []int) ([][]float32, error) {
	s.g.pass()
	return s.Session.Eval(tokens)
}

// gate holds the passes of a gatedModel: while held, a pass tells entered
// that it waits and waits until open.
type gate struct {
	entered chan struct{}

	mu      sync.Mutex
	release chan struct{} // nil: not held
}

func newGate() *gate { return &gate{entered: make(chan struct{}, 1)} }

func (g *gate) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.release == nil {
		g.release = make(chan struct{})
	}
}

func (g *gate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.release != nil {
		close(g.release)
		g.release = nil
	}
}

func (g *gate) pass() {
	g.mu.Lock()
	release := g.release
	g.mu.Unlock()
	if release == nil {
		return
	}
	select {
	case g.entered <- struct{}{}:
	default: // one waiting pass is enough to report
	}
	<-release
}

// TestIdleTimeout: the janitor drops a session that has had no connection
// for IdleTimeout, and only such a session: one whose device reconnects
// sooner is resumed, and one whose connection waits longer than
// IdleTimeout for a round's verdict is kept (the device is there). A
// dropped session costs the device a reopen with its committed prefix
// (edge.Stats.Reopens), which is how each case is told.
func TestIdleTimeout(t *testing.T) {
	const idle = time.Second // the janitor looks every 250 ms
	for _, c := range []struct {
		name string
		// before runs before round 2, round 2 then goes.
		before func(r *edge.Remote, g *gate)
		reopen bool // the device finds its session gone at round 2 or 3
	}{
		{"detached for less", func(r *edge.Remote, _ *gate) { r.Drop(); time.Sleep(idle / 5) }, false},
		{"detached for longer", func(r *edge.Remote, _ *gate) { r.Drop(); time.Sleep(idle * 5 / 2) }, true},
		{"in a long round", func(_ *edge.Remote, g *gate) { g.hold(); time.AfterFunc(idle*8/5, g.open) }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newGate()
			defer g.open()
			_, addr := start(t, Config{LLM: gatedModel{tinyLLM(t), g}, IdleTimeout: idle})
			p := hybrid.DefaultParams()
			p.Method = hybrid.Coupled
			r, err := edge.Connect(context.Background(), edge.Config{Addr: addr, Retries: 2, Backoff: 10 * time.Millisecond},
				edge.Session{Params: p, Prefix: func() []int { return []int{1, 5} }})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for round := uint32(1); round <= 3; round++ {
				if round == 2 {
					c.before(r, g)
				}
				ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
				_, err := r.Verify(ctx, &wire.Upload{Round: round, Drafts: []wire.Draft{{Token: 7}, {Token: 9}}})
				cancel()
				if err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
			}
			if reopened := r.Stats.Reopens > 0; reopened != c.reopen {
				t.Errorf("the device reopened its session %d times (stats %+v); want a reopen: %v", r.Stats.Reopens, r.Stats, c.reopen)
			}
		})
	}
}

// TestStaleConnectionLetsGo: a device that resumes its session on a new
// connection while the old one still stands (its network changed; the
// server saw no end of the old one) keeps it attached when the server
// closes the old one: the session is neither counted detached nor evicted
// to make room for another device's.
func TestStaleConnectionLetsGo(t *testing.T) {
	srv, addr := start(t, Config{LLM: tinyLLM(t), MaxSessions: 1})
	p := hybrid.DefaultParams()
	p.Method = hybrid.Coupled
	_, first := mustOpen(t, addr, &wire.Open{Params: p.SessionParams(), Prefix: []int32{1, 5}})
	moved, _ := mustOpen(t, addr, &wire.Open{Resume: first.Session, Params: p.SessionParams(), Prefix: []int32{1, 5}})
	waitHealth(t, srv, "the stale connection closed", func(h Health) bool { return h.Connections == 1 })
	if h := srv.Health(); h.Status != "full" {
		t.Errorf("health with its one session attached to the resumed connection: %+v, want full", h)
	}
	if r, err := edge.Connect(context.Background(), edge.Config{Addr: addr, Retries: 1, Backoff: 10 * time.Millisecond},
		edge.Session{Params: p, Prefix: func() []int { return []int{1, 6} }}); err == nil {
		r.Close()
		t.Error("another device's session was opened on a full server: the resumed session was evicted while its connection used it")
	}
	wire.WriteFrame(moved, wire.FrameUpload, wire.AppendUpload(nil, &wire.Upload{Round: 1, Drafts: []wire.Draft{{Token: 7}}}))
	if ft, body, err := wire.ReadFrame(moved, wire.DefaultMaxFrame); err != nil || ft != wire.FrameVerdict {
		t.Errorf("a round on the resumed connection: %v frame %q, %v", ft, body, err)
	}
}

// TestEvictLeastRecentlyUsed: of the sessions without a connection, a full
// server evicts the one detached longest ago: the device that left last
// still resumes its session.
func TestEvictLeastRecentlyUsed(t *testing.T) {
	srv, addr := start(t, Config{LLM: tinyLLM(t), MaxSessions: 3})
	p := hybrid.DefaultParams()
	p.Method = hybrid.Coupled
	open := func(first int) *edge.Remote {
		t.Helper()
		r, err := edge.Connect(context.Background(), edge.Config{Addr: addr, Retries: 1, Backoff: 10 * time.Millisecond},
			edge.Session{Params: p, Prefix: func() []int { return []int{first, 5} }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	older, newer, _ := open(1), open(2), open(3)
	for i, r := range []*edge.Remote{older, newer} {
		r.Drop()
		waitHealth(t, srv, "the connection dropped", func(h Health) bool { return h.Connections == 2-i })
		time.Sleep(10 * time.Millisecond) // newer leaves strictly later
	}
	open(4) // evicts older's session
	if _, err := newer.Verify(context.Background(), &wire.Upload{Round: 1, Drafts: []wire.Draft{{Token: 7}}}); err != nil {
		t.Fatal(err)
	}
	if newer.Stats.Reopens != 0 {
		t.Errorf("the session detached last was evicted (its device reopened it: stats %+v), want the one detached first", newer.Stats)
	}
}
