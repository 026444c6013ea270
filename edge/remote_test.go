package edge

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/wire"
)

// TestDialCancelledWhileServerSilent: a peer that accepts the connection
// and never answers the handshake holds the device only until its context
// is cancelled (Ctrl-C), not for the 2-minute I/O timeout.
func TestDialCancelledWhileServerSilent(t *testing.T) {
	addr := peer(t, func(c net.Conn) {}) // held open, never answered
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err := Dial(ctx, Config{Addr: addr, IOTimeout: 30 * time.Second})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Dial = %v; want context.Canceled", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Dial returned %v after the cancellation, want at once", d)
	}
}

// TestDialHTTPPeer: pointed at a web endpoint (hlm serve's --health or
// --metrics address), the device says so instead of a frame length.
func TestDialHTTPPeer(t *testing.T) {
	addr := peer(t, func(c net.Conn) {
		// What a web server answers to bytes that are no request.
		c.Write([]byte("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n"))
	})
	_, err := Dial(context.Background(), Config{Addr: addr, Retries: 1})
	if !errors.Is(err, wire.ErrHTTP) || !strings.Contains(err.Error(), "--listen") {
		t.Fatalf("Dial = %v; want wire.ErrHTTP and the --listen hint", err)
	}
}

// TestUnreachableIsMarked: a generation whose server cannot be reached
// (nothing listens) fails with ErrUnreachable — what the OpenAI endpoint
// answers with 503 and Retry-After — and a refusal does not.
func TestUnreachableIsMarked(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	slm, err := llama.OpenSpec(builtin.DefaultLLM+"@exit=2", "")
	if err != nil {
		t.Fatal(err)
	}
	p := hybrid.DefaultParams()
	p.MaxTokens = 4
	g, err := NewGenerator(Config{Addr: addr, Retries: 1, Backoff: time.Millisecond}, slm, p)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = g.One(context.Background(), p, "Once", nil)
	if !errors.Is(err, ErrUnreachable) || !errors.Is(err, ErrNoServer) {
		t.Errorf("nothing listening: %v; want ErrUnreachable and ErrNoServer", err)
	}
	_, err = Dial(context.Background(), Config{Addr: addr, TLS: nil, LocalAddr: "not-an-ip"})
	if err == nil || errors.Is(err, ErrUnreachable) {
		t.Errorf("a refusal (a bad local address): %v; want an error that is not ErrUnreachable", err)
	}
}

// peer listens on loopback until the test ends and runs answer on every
// connection it accepts; a connection stays open until then.
func peer(t *testing.T, answer func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			answer(c)
		}
	}()
	return ln.Addr().String()
}

// TestTraceRuns: with TraceRuns each generation's trace lines start with
// its number, so that concurrent generations' lines can be told apart; the
// line is otherwise the same JSON.
func TestTraceRuns(t *testing.T) {
	var b strings.Builder
	g := &Generator{Trace: &b, TraceRuns: true}
	first, second := g.trace(), g.trace()
	second.Write([]byte(`{"round":1,"kind":"skip"}` + "\n"))
	first.Write([]byte(`{"round":2}` + "\n"))
	first.Write([]byte("{}\n"))
	if want := `{"run":2,"round":1,"kind":"skip"}` + "\n" + `{"run":1,"round":2}` + "\n" + `{"run":1}` + "\n"; b.String() != want {
		t.Errorf("trace:\n%s\nwant:\n%s", b.String(), want)
	}
	plain := &Generator{Trace: &b}
	if plain.trace() != &b {
		t.Error("without TraceRuns the trace is not the writer itself")
	}
}

// TestVerdictOfAnotherRound: a verdict that answers another round than
// the upload's (a server out of step with its device) is an error, not
// applied to the device's sequence.
func TestVerdictOfAnotherRound(t *testing.T) {
	addr := peer(t, func(c net.Conn) {
		answers := []struct {
			t    wire.FrameType
			body []byte
		}{
			{wire.FrameWelcome, wire.AppendWelcome(nil, &wire.Welcome{Version: wire.ProtocolVersion, MaxFrame: 1 << 20, Vocab: 512, Context: 512})},
			{wire.FrameOpened, wire.AppendOpened(nil, &wire.Opened{Session: 1, Vocab: 512, Context: 512})},
			{wire.FrameVerdict, wire.AppendVerdict(nil, &wire.Verdict{Round: 2, Accepted: 1, Token: 3})},
		}
		for _, a := range answers {
			if _, _, err := wire.ReadFrame(c, 1<<20); err != nil {
				return
			}
			wire.WriteFrame(c, a.t, a.body)
		}
	})
	r, err := Connect(context.Background(), Config{Addr: addr, Retries: 1, Backoff: time.Millisecond},
		Session{Params: hybrid.DefaultParams(), Prefix: func() []int { return []int{1, 2} }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Drop()
	if v, err := r.Verify(context.Background(), &wire.Upload{Round: 1, Drafts: []wire.Draft{{Token: 7}}}); err == nil {
		t.Errorf("a verdict for round %d of an upload for round 1 was taken", v.Round)
	}
}
