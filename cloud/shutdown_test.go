package cloud

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hlmproject/hlm/edge"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model"
)

// closingModel counts its sessions' Close calls; the first session's
// Close waits at g while g is held.
type closingModel struct {
	model.Model
	g            *gate
	made, closed atomic.Int32
}

func (m *closingModel) NewSession() model.Session {
	return &closingSession{Session: m.Model.NewSession(), m: m, first: m.made.Add(1) == 1}
}

type closingSession struct {
	model.Session
	m     *closingModel
	first bool
}

func (s *closingSession) Close() error {
	if s.first {
		s.m.g.pass()
	}
	s.m.closed.Add(1)
	return nil
}

// TestShutdownEndsDroppedSessions: Shutdown returns once every session it
// had is freed in the LLM — also one evicted just before, or expired, whose
// end ran in a goroutine of its own (an eviction's, the janitor) that
// nothing waited for: Shutdown returned while the session's sequence was
// still being freed, and its caller could close the LLM under it.
func TestShutdownEndsDroppedSessions(t *testing.T) {
	for _, evict := range []bool{true, false} {
		name := "expired"
		if evict {
			name = "evicted"
		}
		t.Run(name, func(t *testing.T) {
			llm := &closingModel{Model: tinyLLM(t), g: newGate()}
			defer llm.g.open()
			cfg := Config{LLM: llm, MaxSessions: 1}
			if !evict {
				cfg.IdleTimeout = 40 * time.Millisecond
			}
			srv, addr := start(t, cfg)
			p := hybrid.DefaultParams()
			p.Method = hybrid.Coupled
			open := func() *edge.Remote {
				t.Helper()
				r, err := edge.Connect(context.Background(), edge.Config{Addr: addr, Retries: 1, Backoff: 10 * time.Millisecond},
					edge.Session{Params: p, Prefix: func() []int { return []int{1, 5} }})
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			a := open()
			if !evict {
				llm.g.hold() // the janitor's end of a's session waits at the gate
			}
			a.Drop() // a's session stays, detached
			waitHealth(t, srv, "a's connection gone", func(h Health) bool { return h.Connections == 0 })
			if evict {
				llm.g.hold()
				b := open() // evicts a's session: its end waits at the gate
				defer b.Close()
			}
			receive(t, llm.g.entered, "the end of a's session")
			shut := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
				defer cancel()
				shut <- srv.Shutdown(ctx)
			}()
			select {
			case err := <-shut:
				t.Fatalf("Shutdown returned (%v) while a's session was still being freed", err)
			case <-time.After(200 * time.Millisecond):
			}
			llm.g.open()
			if err := receive(t, shut, "return from Shutdown"); err != nil {
				t.Fatal(err)
			}
			if made, closed := llm.made.Load(), llm.closed.Load(); closed != made {
				t.Errorf("after Shutdown, %d of the %d sessions made in the LLM are closed", closed, made)
			}
		})
	}
}

// failedListener is a listener that has failed: Accept reports it closed.
// It records its Close.
type failedListener struct {
	net.Listener // its address
	closed       chan struct{}
	once         sync.Once
}

func (l *failedListener) Accept() (net.Conn, error) { return nil, net.ErrClosed }
func (l *failedListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

// TestServeReturnsClosingItsListener: Serve ending on its listener's error
// closes the listener and leaves nothing waiting for ctx or Shutdown (the
// goroutine that closes the listener waited for one of them: with neither
// coming, it stayed for the process's life).
func TestServeReturnsClosingItsListener(t *testing.T) {
	ms := models(t)
	srv, err := New(Config{LLM: ms.LLM})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	ln := &failedListener{Listener: inner, closed: make(chan struct{})}
	if err := srv.Serve(context.Background(), ln); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Serve on a failed listener: %v, want net.ErrClosed", err)
	}
	select {
	case <-ln.closed:
	case <-time.After(2 * time.Second):
		t.Fatal("the listener is still open 2 s after Serve returned")
	}
}
