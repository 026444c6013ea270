package cloud

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hlmproject/hlm/edge"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/sim"
	"github.com/hlmproject/hlm/wire"
)

const stories = builtin.DefaultLLM

func models(t testing.TB) *sim.Models {
	t.Helper()
	ms, err := sim.Open(stories, stories+"@exit=2", "")
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// start runs a server on a loopback port and returns it and its address.
func start(t testing.TB, cfg Config) (*Server, string) {
	t.Helper()
	if cfg.Logger == nil && testing.Verbose() {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(context.Background(), ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	return s, ln.Addr().String()
}

func params(method string, seed uint64) hybrid.Params {
	p := hybrid.DefaultParams()
	p.Method, p.Seed, p.MaxTokens = method, seed, 40
	return p
}

func generator(t testing.TB, ms *sim.Models, addr string, p hybrid.Params) *edge.Generator {
	t.Helper()
	g, err := edge.NewGenerator(edge.Config{Addr: addr, Backoff: 20 * time.Millisecond}, ms.SLM, p)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

const prompt = "Once upon a time, there was a little"

// longPrompt is longer than stories260K's context (512): both sides must
// fit it the same way.
var longPrompt = strings.Repeat("Once upon a time there was a little girl who liked to play. ", 60)

// TestSimMatchesNetwork: for the same seed, method and channel, the
// simulator and a real server + device pair over loopback produce the same
// tokens, transmission rate, uplink bits and uplink bytes — also for a
// prompt longer than the context.
func TestSimMatchesNetwork(t *testing.T) {
	ms := models(t)
	if n := len(ms.Tok.Encode(longPrompt, true)); n <= ms.Context() {
		t.Fatalf("the long prompt has %d tokens, the context %d", n, ms.Context())
	}
	_, addr := start(t, Config{LLM: ms.LLM, Replicas: []model.Model{ms.SLM}})
	for _, c := range []struct{ name, prompt string }{{"", prompt}, {"long/", longPrompt}} {
		for _, m := range hybrid.Methods {
			simMatchesNetwork(t, ms, addr, c.name+m, m, c.prompt)
		}
	}
}

func simMatchesNetwork(t *testing.T, ms *sim.Models, addr, name, m, prompt string) {
	t.Run(name, func(t *testing.T) {
		p := params(m, 11)
		p.FitPrompt = prompt == longPrompt
		want, err := sim.One(context.Background(), ms, p, prompt, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, st, err := generator(t, ms, addr, p).One(context.Background(), p, prompt, nil)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got.Tokens) != fmt.Sprint(want.Tokens) {
			t.Fatalf("tokens differ\n net %v\n sim %v", got.Tokens, want.Tokens)
		}
		if got.TransmissionRate != want.TransmissionRate || got.UplinkBits != want.UplinkBits || got.UplinkBytes != want.UplinkBytes ||
			got.Accepted != want.Accepted || got.VirtualSeconds != want.VirtualSeconds {
			t.Errorf("net TR %v bits %d bytes %d accepted %d virtual %v; sim TR %v bits %d bytes %d accepted %d virtual %v",
				got.TransmissionRate, got.UplinkBits, got.UplinkBytes, got.Accepted, got.VirtualSeconds,
				want.TransmissionRate, want.UplinkBits, want.UplinkBytes, want.Accepted, want.VirtualSeconds)
		}
		if st.UploadBytes != got.UplinkBytes {
			t.Errorf("bytes written %d, accounted %d", st.UploadBytes, got.UplinkBytes)
		}
	})
}

// RandomParams is a parameter set of method drawn from the registry's
// own typical ranges (hybrid.Key.Draw): every key that has one, so a new
// key is drawn as soon as it is registered. Combinations no single key can
// check are repaired (l_max below l_min: no cap; sample_from=slm with a
// tree method, which Validate refuses: the method's default).
func RandomParams(rng *rand.Rand, method string) (hybrid.Params, error) {
	p := hybrid.DefaultParams()
	for _, k := range hybrid.Keys() {
		if v := k.Draw(rng); v != "" && k.Name != "method" {
			if err := p.Set(k.Name, v); err != nil {
				return p, err
			}
		}
	}
	p.Method = method
	if p.LMax > 0 && p.LMax < p.LMin {
		p.LMax = 0
	}
	if m, err := hybrid.MethodByName(method); err == nil && m.Tree && p.SampleFrom == hybrid.SampleSLM {
		p.SampleFrom = hybrid.SampleDefault
	}
	return p, p.Validate()
}

// TestSimMatchesNetworkRandomParams: for every method, 13 seeded random
// parameter sets (208 in all) drawn from the registry's ranges — list_k up
// to 4, budgets that end batches, every codec option, draft policies,
// sampling filters, bonus, fit_prompt — on a short prompt and two longer
// than the context (cut to leave just max_tokens of room with fit_prompt,
// refused alike by both without): the
// simulator (whose server reads the parameters from their wire form) and
// a real server + device over loopback give the same tokens and counts.
func TestSimMatchesNetworkRandomParams(t *testing.T) {
	ms := models(t)
	_, addr := start(t, Config{LLM: ms.LLM, Replicas: []model.Model{ms.SLM}})
	rng := rand.New(rand.NewPCG(27, 0x73696d))
	// longPrompt is refused without fit_prompt and cut to leave exactly
	// max_tokens + 8 positions with it (hybrid.FitPrompt): either way the
	// last rounds run against the context.
	// nearFull leaves about a dozen positions: without fit_prompt the
	// generation runs into the context (StopContext).
	ids := ms.Tok.Encode(strings.Repeat("Lily saw a big dog and a little cat in the park. ", 60), false)
	nearFull := ms.Tok.Decode(ids[:ms.Context()-14])
	prompts := []string{prompt, longPrompt, nearFull}
	for _, m := range hybrid.Methods {
		for i := range 13 {
			p, err := RandomParams(rng, m)
			if err != nil {
				t.Fatalf("%s: %v", m, err)
			}
			pr := prompts[i%len(prompts)]
			t.Run(fmt.Sprintf("%s/%d", m, i), func(t *testing.T) {
				want, err := sim.One(context.Background(), ms, p, pr, nil)
				if errors.Is(err, model.ErrContextFull) && !p.FitPrompt {
					// A prompt past the context: both refuse it alike.
					if _, _, nerr := generator(t, ms, addr, p).One(context.Background(), p, pr, nil); nerr == nil || nerr.Error() != err.Error() {
						t.Fatalf("sim refused the prompt (%v), network: %v", err, nerr)
					}
					return
				}
				if err != nil {
					t.Fatalf("sim: %v\n%s", err, p.SessionParams())
				}
				direct, err := directRun(ms, p, pr)
				if err != nil {
					t.Fatalf("direct: %v", err)
				}
				if fmt.Sprint(direct.Tokens) != fmt.Sprint(want.Tokens) || direct.UplinkBits != want.UplinkBits {
					t.Fatalf("a server given the device's own parameters commits other tokens than one given their wire form: a key the server needs does not travel\n direct %v\n    sim %v\nparameters:\n%s",
						direct.Tokens, want.Tokens, p.SessionParams())
				}
				got, _, err := generator(t, ms, addr, p).One(context.Background(), p, pr, nil)
				if err != nil {
					t.Fatalf("network: %v\n%s", err, p.SessionParams())
				}
				if fmt.Sprint(got.Tokens) != fmt.Sprint(want.Tokens) || got.UplinkBits != want.UplinkBits ||
					got.UplinkBytes != want.UplinkBytes || got.Accepted != want.Accepted || got.VirtualSeconds != want.VirtualSeconds {
					t.Fatalf("network and simulator differ:\n net %v bits %d bytes %d accepted %d virtual %v\n sim %v bits %d bytes %d accepted %d virtual %v\nparameters:\n%s",
						got.Tokens, got.UplinkBits, got.UplinkBytes, got.Accepted, got.VirtualSeconds,
						want.Tokens, want.UplinkBits, want.UplinkBytes, want.Accepted, want.VirtualSeconds, p.SessionParams())
				}
			})
		}
	}
}

// directRun is the simulator's run of prompt with a server given the
// device's Params themselves rather than their wire form: what the device
// means the server to do.
func directRun(ms *sim.Models, p hybrid.Params, prompt string) (hybrid.Result, error) {
	s, err := ms.Session(p, prompt, hybrid.SessionConfig{})
	if err != nil {
		return hybrid.Result{}, err
	}
	var slm model.Model
	if ms.SLM != nil {
		slm = ms.SLM
	}
	srv, err := hybrid.NewReplicaServer(p, ms.LLM, slm, s.Device.Sequence())
	if err != nil {
		return hybrid.Result{}, err
	}
	l := &hybrid.Local{Server: srv}
	return s.Run(context.Background(), l, l)
}

// TestSimMatchesNetworkTimeBreakdown: the simulator and the networked pair
// also spend the same virtual time on each part of the rounds (SLM, uplink,
// LLM, downlink; the downlink given a rate so that every verdict takes
// time), for every method.
func TestSimMatchesNetworkTimeBreakdown(t *testing.T) {
	ms := models(t)
	_, addr := start(t, Config{LLM: ms.LLM, Replicas: []model.Model{ms.SLM}})
	parts := func(r hybrid.Result) [5]float64 {
		return [5]float64{r.VirtualSeconds, r.SLMSeconds, r.UplinkSeconds, r.LLMSeconds, r.DownlinkSeconds}
	}
	for _, m := range hybrid.Methods {
		p := params(m, 11)
		p.Channel.DownlinkBps = 1e6
		want, err := sim.One(context.Background(), ms, p, prompt, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := generator(t, ms, addr, p).One(context.Background(), p, prompt, nil)
		if err != nil {
			t.Fatal(err)
		}
		if parts(got) != parts(want) || (want.Uploads > 0) != (want.DownlinkSeconds > 0) {
			t.Errorf("%s: virtual, SLM, uplink, LLM, downlink seconds: net %v, sim %v", m, parts(got), parts(want))
		}
	}
}

// TestConcurrentSessions: 32 devices at once against one server; each gets
// exactly its simulated tokens.
func TestConcurrentSessions(t *testing.T) {
	ms := models(t)
	srv, addr := start(t, Config{LLM: ms.LLM})
	concurrentDevices(t, ms, addr, 32)
	// Close frames are processed asynchronously.
	waitHealth(t, srv, "without sessions after all devices closed", func(h Health) bool { return h.Sessions == 0 })
}

// concurrentDevices runs n devices at once against the server at addr
// (methods hlm, q-s, u-hlm and coupled in turn, seeds 100…) and checks that
// each gets exactly its simulated tokens.
func concurrentDevices(t *testing.T, ms *sim.Models, addr string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		method := []string{hybrid.HLM, hybrid.QS, hybrid.UHLM, hybrid.Coupled}[i%4]
		p := params(method, uint64(100+i))
		g := generator(t, ms, addr, p) // here: it may end the test
		wg.Add(1)
		go func() {
			defer wg.Done()
			want, err := sim.One(context.Background(), ms, p, prompt, nil)
			if err != nil {
				errs <- err
				return
			}
			got, _, err := g.One(context.Background(), p, prompt, nil)
			if err != nil {
				errs <- fmt.Errorf("device %d: %w", i, err)
				return
			}
			if fmt.Sprint(got.Tokens) != fmt.Sprint(want.Tokens) {
				errs <- fmt.Errorf("device %d (%s): tokens differ from the simulator", i, method)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestReconnectAndRestart: dropping the connection mid-generation, and
// replacing the server with a fresh one (all sessions lost), both end with
// the same tokens as an undisturbed run: the first resumes the session,
// the second opens it again with the committed prefix.
func TestReconnectAndRestart(t *testing.T) {
	ms := models(t)
	p := params(hybrid.QS, 5)
	want, err := sim.One(context.Background(), ms, p, prompt, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("drop", func(t *testing.T) {
		_, addr := start(t, Config{LLM: ms.LLM})
		g := generator(t, ms, addr, p)
		got, st := runWithFault(t, g, p, func(r *edge.Remote) { r.Drop() })
		if fmt.Sprint(got.Tokens) != fmt.Sprint(want.Tokens) || st.Reconnects == 0 {
			t.Fatalf("after a dropped connection (reconnects %d):\n got %v\nwant %v", st.Reconnects, got.Tokens, want.Tokens)
		}
		if st.Reopens != 0 {
			t.Errorf("after a dropped connection the session was opened again %d times, want resumed (stats %+v)", st.Reopens, st)
		}
	})
	t.Run("restart", func(t *testing.T) {
		// The second server takes over the first one's listening socket
		// (as a supervisor passing it on would): the test never re-binds
		// a port, which fails by chance when the machine is busy.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		h := newHandoff(ln)
		defer h.Close()
		first, _ := New(Config{LLM: ms.LLM})
		go first.Serve(context.Background(), h.Listener())
		g := generator(t, ms, ln.Addr().String(), p)
		restarted := false
		got, st := runWithFault(t, g, p, func(r *edge.Remote) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			first.Shutdown(ctx)
			second, _ := New(Config{LLM: ms.LLM})
			go second.Serve(context.Background(), h.Listener())
			t.Cleanup(func() { second.Shutdown(context.Background()) })
			restarted = true
		})
		if !restarted || fmt.Sprint(got.Tokens) != fmt.Sprint(want.Tokens) || st.Reconnects == 0 || st.Reopens != 1 {
			t.Fatalf("after a server restart (reconnects %d, reopens %d, want 1):\n got %v\nwant %v", st.Reconnects, st.Reopens, got.Tokens, want.Tokens)
		}
	})
}

// handoff accepts on one listening socket and hands the connections to
// whichever server currently serves one of its Listener views; closing a
// view (a server shutting down) leaves the socket open for the next one.
type handoff struct {
	ln    net.Listener
	conns chan net.Conn
}

func newHandoff(ln net.Listener) *handoff {
	h := &handoff{ln: ln, conns: make(chan net.Conn)}
	go func() {
		defer close(h.conns)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.conns <- c
		}
	}()
	return h
}

// Close closes the socket.
func (h *handoff) Close() error { return h.ln.Close() }

// Listener is a view of the socket for one server.
func (h *handoff) Listener() net.Listener {
	return &handoffView{h: h, done: make(chan struct{})}
}

type handoffView struct {
	h    *handoff
	once sync.Once
	done chan struct{}
}

func (v *handoffView) Accept() (net.Conn, error) {
	select {
	case c, ok := <-v.h.conns:
		if !ok {
			return nil, net.ErrClosed
		}
		return c, nil
	case <-v.done:
		return nil, net.ErrClosed
	}
}

func (v *handoffView) Close() error   { v.once.Do(func() { close(v.done) }); return nil }
func (v *handoffView) Addr() net.Addr { return v.h.ln.Addr() }

// faultVerifier injects a fault before the third upload.
type faultVerifier struct {
	r     *edge.Remote
	n     int
	fault func(*edge.Remote)
}

func (f *faultVerifier) Verify(ctx context.Context, up *wire.Upload) (*wire.Verdict, error) {
	f.n++
	if f.n == 3 {
		f.fault(f.r)
	}
	return f.r.Verify(ctx, up)
}

// TestInterruptedMidRound: a device interrupted while its upload waits
// for the verdict (Ctrl-C on hlm edge) ends with the result so far — the
// tokens of the rounds before, a prefix of the uninterrupted run's — and
// the stop reason "interrupted", not an error; the server ends the
// session when the device closes it.
func TestInterruptedMidRound(t *testing.T) {
	ms := models(t)
	srv, addr := start(t, Config{LLM: ms.LLM})
	p := params(hybrid.QS, 4)
	full, _, err := generator(t, ms, addr, p).One(context.Background(), p, prompt, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := generator(t, ms, addr, p)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g.Wrap = func(r *edge.Remote) hybrid.Verifier {
		return &faultVerifier{r: r, fault: func(*edge.Remote) { cancel() }}
	}
	res, _, err := g.One(ctx, p, prompt, nil)
	if err != nil {
		t.Fatalf("interrupted: %v, want the result so far", err)
	}
	if res.Stop != hybrid.StopInterrupted || len(res.Tokens) == 0 || len(res.Tokens) >= len(full.Tokens) ||
		fmt.Sprint(res.Tokens) != fmt.Sprint(full.Tokens[:len(res.Tokens)]) {
		t.Errorf("interrupted run: stop %q, tokens %v; the whole run %v", res.Stop, res.Tokens, full.Tokens)
	}
	waitHealth(t, srv, "without sessions after the interrupted device", func(h Health) bool { return h.Sessions == 0 })
}

func runWithFault(t *testing.T, g *edge.Generator, p hybrid.Params, fault func(*edge.Remote)) (hybrid.Result, edge.Stats) {
	t.Helper()
	g.Wrap = func(r *edge.Remote) hybrid.Verifier { return &faultVerifier{r: r, fault: fault} }
	res, st, err := g.One(context.Background(), p, prompt, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res, st
}

// TestHostilePeers: garbage, an oversized frame, a wrong token and a client
// that never reads each get an error or a closed connection, and a regular
// session running at the same time is untouched.
func TestHostilePeers(t *testing.T) {
	ms := models(t)
	_, addr := start(t, Config{LLM: ms.LLM, AuthToken: "secret", IOTimeout: 2 * time.Second, MaxFrame: 1 << 16})
	p := params(hybrid.HLM, 3)
	want, err := sim.One(context.Background(), ms, p, prompt, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := edge.NewGenerator(edge.Config{Addr: addr, Token: "secret"}, ms.SLM, p)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	var good hybrid.Result
	var goodErr error
	go func() {
		defer wg.Done()
		good, _, goodErr = g.One(context.Background(), p, prompt, nil)
	}()

	expectError := func(name string, send []byte, code uint16) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write(send)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		typ, body, err := wire.ReadFrame(c, wire.DefaultMaxFrame)
		if err != nil {
			t.Errorf("%s: no error frame: %v", name, err)
			return
		}
		e, perr := wire.ParseError(body)
		if typ != wire.FrameError || perr != nil || e.Code != code {
			t.Errorf("%s: got %v %+v %v, want error code %d", name, typ, e, perr, code)
		}
	}
	expectError("an HTTP request", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), wire.ErrCodeBad)
	expectError("garbage", []byte("\xff\xff\xff\x7fjunk"), wire.ErrCodeLimit)
	expectError("unknown frame type", []byte{2, 0, 0, 0, 200, 0}, wire.ErrCodeBad)
	expectError("bad type", wire.AppendFrame(nil, wire.FrameUpload, []byte{1, 2, 3}), wire.ErrCodeBad)
	expectError("oversized", wire.AppendFrame(nil, wire.FrameHello, make([]byte, 1<<17)), wire.ErrCodeLimit)
	expectError("wrong token", wire.AppendFrame(nil, wire.FrameHello, wire.AppendHello(nil, &wire.Hello{Version: wire.ProtocolVersion, Token: "guess"})), wire.ErrCodeAuth)
	expectError("old version", wire.AppendFrame(nil, wire.FrameHello, wire.AppendHello(nil, &wire.Hello{Version: 0, Token: "secret"})), wire.ErrCodeVersion)

	// A client that handshakes, then stalls; and one that opens a session,
	// pipelines uploads and never reads a verdict. Neither may disturb
	// the regular session (each connection has its own goroutine and write
	// deadline; verification never writes to a connection).
	stall, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stall.Close()
	wire.WriteFrame(stall, wire.FrameHello, wire.AppendHello(nil, &wire.Hello{Version: wire.ProtocolVersion, Token: "secret"}))
	deaf, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer deaf.Close()
	cp := params(hybrid.Coupled, 9)
	pj := cp.SessionParams()
	var flood []byte
	flood = wire.AppendFrame(flood, wire.FrameHello, wire.AppendHello(nil, &wire.Hello{Version: wire.ProtocolVersion, Token: "secret"}))
	flood = wire.AppendFrame(flood, wire.FrameOpen, wire.AppendOpen(nil, &wire.Open{Params: pj, SLM: ms.SLM.Fingerprint(), Tokenizer: ms.Tok.Fingerprint(), Prefix: []int32{1, 5}}))
	for r := 1; r <= 40; r++ {
		flood = wire.AppendFrame(flood, wire.FrameUpload, wire.AppendUpload(nil, &wire.Upload{Round: uint32(r), Drafts: []wire.Draft{{Token: 7}, {Token: 9}}}))
	}
	go deaf.Write(flood)

	// The edge client refuses a wrong token with a clear error.
	wrong, err := edge.NewGenerator(edge.Config{Addr: addr, Token: "wrong"}, ms.SLM, p)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = wrong.One(context.Background(), p, prompt, nil)
	var we *wire.Error
	if !errors.As(err, &we) || we.Code != wire.ErrCodeAuth {
		t.Errorf("wrong token: err = %v", err)
	}

	wg.Wait()
	if goodErr != nil || fmt.Sprint(good.Tokens) != fmt.Sprint(want.Tokens) {
		t.Errorf("the regular session was disturbed: %v\n got %v\nwant %v", goodErr, good.Tokens, want.Tokens)
	}
}

// TestPrometheusMetrics: the counters follow a session.
func TestPrometheusMetrics(t *testing.T) {
	ms := models(t)
	prom := NewPrometheus()
	_, addr := start(t, Config{LLM: ms.LLM, Metrics: prom})
	p := params(hybrid.QS, 1)
	r, _, err := generator(t, ms, addr, p).One(context.Background(), p, prompt, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	prom.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		fmt.Sprintf("hlm_rounds_total %d", r.Uploads),
		fmt.Sprintf("hlm_drafts_total %d", r.Verified),
		fmt.Sprintf("hlm_uplink_bytes_total %d", r.UplinkBytes),
		fmt.Sprintf("hlm_uplink_bits_total %d", r.UplinkBits),
		fmt.Sprintf("hlm_downlink_bits_total %d", r.DownlinkBits),
		"hlm_sessions_total 1",
		`hlm_accepted_tokens_total{position="0"}`,
		"hlm_verify_seconds_bucket",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// TestHostileSessions: 200 seeded conversations that handshake, open a
// session and then send frames of every type with random bodies (and
// uploads that are valid but for the wrong round, or with drafts outside
// the vocabulary), and 50 continuations of those sessions that keep more
// tokens than they hold or other ones, and of sessions that are not there,
// must each end with an error frame or a closed connection, never a
// server crash, while a regular session completes undisturbed.
func TestHostileSessions(t *testing.T) {
	ms := models(t)
	srv, addr := start(t, Config{LLM: ms.LLM, IOTimeout: time.Second})
	p := params(hybrid.QS, 21)
	want, err := sim.One(context.Background(), ms, p, prompt, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := generator(t, ms, addr, p)
	done := make(chan error, 1)
	go func() {
		got, _, err := g.One(context.Background(), p, prompt, nil)
		if err == nil && fmt.Sprint(got.Tokens) != fmt.Sprint(want.Tokens) {
			err = errors.New("tokens differ from the simulator")
		}
		done <- err
	}()
	rng := rand.New(rand.NewPCG(5, 6))
	pj := params(hybrid.HLM, 1).SessionParams()
	open := wire.AppendFrame(nil, wire.FrameHello, wire.AppendHello(nil, &wire.Hello{Version: wire.ProtocolVersion}))
	open = wire.AppendFrame(open, wire.FrameOpen, wire.AppendOpen(nil, &wire.Open{Params: pj, SLM: ms.SLM.Fingerprint(), Tokenizer: ms.Tok.Fingerprint(), Prefix: []int32{1, 9}}))
	var ids []uint64 // the hostile sessions the server opened
	for i := 0; i < 200; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		msg := append([]byte(nil), open...)
		for k := 0; k < 1+rng.IntN(3); k++ {
			var body []byte
			switch rng.IntN(4) {
			case 0: // random bytes
				body = make([]byte, rng.IntN(64))
				for j := range body {
					body[j] = byte(rng.UintN(256))
				}
			case 1: // a well-formed upload for a wrong round
				body = wire.AppendUpload(nil, &wire.Upload{Round: uint32(2 + rng.IntN(5)), Drafts: []wire.Draft{{Token: 3, Bits: 1, Payload: []byte{0}}}})
			case 2: // a draft payload that is not a distribution
				body = wire.AppendUpload(nil, &wire.Upload{Round: 1, Drafts: []wire.Draft{{Token: 3, Bits: 16, Payload: []byte{0xff, 0xff}}}})
			case 3: // an upload naming a token beyond the vocabulary
				body = append(wire.AppendUpload(nil, &wire.Upload{Round: 1}), 0)
				body[5] = 1
				body = append(body[:6], 0xff, 0xff, 0x7f)
			}
			msg = wire.AppendFrame(msg, wire.FrameType(1+rng.IntN(9)), body)
		}
		c.Write(msg)
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		for { // until the server closes or the deadline
			ft, body, err := wire.ReadFrame(c, wire.DefaultMaxFrame)
			if err != nil {
				break
			}
			if op, err := wire.ParseOpened(body); ft == wire.FrameOpened && err == nil {
				ids = append(ids, op.Session)
			}
		}
		c.Close()
	}
	if len(ids) == 0 {
		t.Fatal("the server opened none of the hostile sessions: their frames never reached a session")
	}
	// Continuations of the hostile sessions (those still there) that keep
	// more tokens than they hold, or others (hashes of nothing), within
	// the context; and of sessions that are not there.
	for i := 0; i < 50; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		o := &wire.Open{Resume: rng.Uint64() | 1, Params: pj, Keep: uint32(1 + rng.IntN(1<<12)), KeepHash: rng.Uint64(), Prefix: []int32{int32(rng.IntN(512))}}
		if i%2 == 0 {
			o.Resume, o.Keep = ids[rng.IntN(len(ids))], uint32(1+rng.IntN(srv.Context()-2))
		}
		msg := wire.AppendFrame(nil, wire.FrameHello, wire.AppendHello(nil, &wire.Hello{Version: wire.ProtocolVersion}))
		c.Write(wire.AppendFrame(msg, wire.FrameOpen, wire.AppendOpen(nil, o)))
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		io.Copy(io.Discard, c)
		c.Close()
	}
	if err := receive(t, done, "end of the regular session"); err != nil {
		t.Fatalf("regular session: %v", err)
	}
	// The hostile sessions stay until they idle out; the server is alive.
	if srv.Sessions() > 200 {
		t.Errorf("%d sessions", srv.Sessions())
	}
}

// reusedBufferLLM is an LLM evaluated into the server's reused buffer, as
// model/llamacpp's EvalBatchInto does, that first overwrites the whole
// buffer with NaN: a row of an earlier batch that the server still reads
// (hybrid's cache keeps the logits after the last evaluated token for a
// round that sends nothing) is then wrong.
type reusedBufferLLM struct{ model.Model }

func (m reusedBufferLLM) EvalBatchInto(buf []float32, sessions []model.Session, tokens [][]int, skip []int) ([][][]float32, error) {
	for i := range buf {
		buf[i] = float32(math.NaN())
	}
	vocab := m.Config().Vocab
	out := make([][][]float32, len(sessions))
	for i, s := range sessions {
		rows, err := model.EvalSkip(s, tokens[i], skip[i])
		if err != nil {
			return nil, err
		}
		for _, r := range rows[skip[i]:] {
			out[i] = append(out[i], append(buf[:0:vocab], r...))
			buf = buf[vocab:]
		}
	}
	return out, nil
}

// TestSimMatchesNetworkReusedBuffer: with the logits in a buffer that the
// next batch overwrites, every method still commits the simulator's tokens
// (hybrid's cache copies the row it keeps before the buffer is reused).
func TestSimMatchesNetworkReusedBuffer(t *testing.T) {
	ms := models(t)
	_, addr := start(t, Config{LLM: reusedBufferLLM{ms.LLM}, Replicas: []model.Model{ms.SLM}})
	for _, m := range hybrid.Methods {
		simMatchesNetwork(t, ms, addr, m, m, prompt)
	}
}

// viewLLM is an LLM whose batches leave their rows in one buffer of its
// own, as model/llamacpp's EvalBatchView leaves them in llama.cpp's, and
// whose every evaluation — a batch or any session's Eval or Prefill — and
// ReleaseView first overwrite that buffer with NaN: a row read after the
// release or after the LLM evaluated again is then wrong.
type viewLLM struct {
	model.Model
	mu  sync.Mutex
	out []float32
}

func (m *viewLLM) scribble() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.out {
		m.out[i] = float32(math.NaN())
	}
}

func (m *viewLLM) NewSession() model.Session { return &viewSession{m.Model.NewSession(), m} }

func (m *viewLLM) EvalBatchInto(buf []float32, sessions []model.Session, tokens [][]int, skip []int) ([][][]float32, error) {
	m.scribble()
	return reusedBufferLLM{m.Model}.EvalBatchInto(buf, innerSessions(sessions), tokens, skip)
}

// innerSessions are the model's own sessions inside viewLLM's.
func innerSessions(sessions []model.Session) []model.Session {
	inner := make([]model.Session, len(sessions))
	for i, s := range sessions {
		inner[i] = s.(*viewSession).Session
	}
	return inner
}

func (m *viewLLM) EvalBatchView(buf []float32, sessions []model.Session, tokens [][]int, skip []int) ([][][]float32, error) {
	n := 0
	for i, t := range tokens {
		n += len(t) - skip[i]
	}
	m.scribble()
	m.mu.Lock()
	if len(m.out) < n*m.Config().Vocab {
		m.out = make([]float32, n*m.Config().Vocab)
	}
	m.mu.Unlock()
	return reusedBufferLLM{m.Model}.EvalBatchInto(m.out, innerSessions(sessions), tokens, skip)
}

// ReleaseView overwrites the rows too: none may be read after it.
func (m *viewLLM) ReleaseView() { m.scribble() }

type viewSession struct {
	model.Session
	m *viewLLM
}

func (s *viewSession) Eval(tokens []int) ([][]float32, error) {
	s.m.scribble()
	return s.Session.Eval(tokens)
}

func (s *viewSession) Prefill(tokens []int) ([]float32, error) {
	s.m.scribble()
	return s.Session.Prefill(tokens)
}

// TestSimMatchesNetworkViewedRows: with rows that the LLM's next
// evaluation overwrites (EvalBatchView), every method still commits the
// simulator's tokens — the batcher does not view the rows of a batch
// whose jobs evaluate the LLM while they finish (trees, list matching).
func TestSimMatchesNetworkViewedRows(t *testing.T) {
	ms := models(t)
	llm := &viewLLM{Model: ms.LLM}
	_, addr := start(t, Config{LLM: llm, Replicas: []model.Model{ms.SLM}})
	for _, m := range hybrid.Methods {
		simMatchesNetwork(t, ms, addr, m, m, prompt)
	}
}

// TestTokenToAnOpenServer: a server without --auth-token lets in a device
// that presents one (its log says any client can open sessions); a server
// with one says whether the token was missing or wrong.
func TestTokenToAnOpenServer(t *testing.T) {
	ms := models(t)
	hello := func(addr, token string) (wire.FrameType, []byte) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		wire.WriteFrame(c, wire.FrameHello, wire.AppendHello(nil, &wire.Hello{Version: wire.ProtocolVersion, Token: token}))
		typ, body, err := wire.ReadFrame(c, wire.DefaultMaxFrame)
		if err != nil {
			t.Fatal(err)
		}
		return typ, body
	}
	_, open := start(t, Config{LLM: ms.LLM})
	if typ, _ := hello(open, "abc"); typ != wire.FrameWelcome {
		t.Errorf("a token to a server without one: %v, want Welcome", typ)
	}
	_, closed := start(t, Config{LLM: ms.LLM, AuthToken: "secret"})
	for token, want := range map[string]string{"": "wants a token", "guess": "wrong token"} {
		typ, body := hello(closed, token)
		e, err := wire.ParseError(body)
		if typ != wire.FrameError || err != nil || e.Code != wire.ErrCodeAuth || !strings.Contains(e.Message, want) {
			t.Errorf("token %q: %v %+v %v; want an auth error saying %q", token, typ, e, err, want)
		}
	}
}

// TestCloseAfterWelcome: a device that reads the Welcome and leaves (its
// draft cannot share the server's vocabulary) ends the connection quietly,
// without an error frame (it was logged as a protocol violation).
func TestCloseAfterWelcome(t *testing.T) {
	ms := models(t)
	_, addr := start(t, Config{LLM: ms.LLM})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	wire.WriteFrame(c, wire.FrameHello, wire.AppendHello(nil, &wire.Hello{Version: wire.ProtocolVersion}))
	if typ, _, err := wire.ReadFrame(c, wire.DefaultMaxFrame); err != nil || typ != wire.FrameWelcome {
		t.Fatalf("Hello: %v, %v", typ, err)
	}
	wire.WriteFrame(c, wire.FrameClose, nil)
	if typ, body, err := wire.ReadFrame(c, wire.DefaultMaxFrame); err == nil {
		t.Errorf("after Close: a %v frame %q, want the connection closed", typ, body)
	}
}

// TestResumeWhileUploadWaits: a device resuming its session while the
// session's old connection has an upload waiting for its batch must not
// hold the server's lock while it waits for the session's: the batcher
// takes the server's lock to gather the batch that upload waits for, and
// the whole server hung (a hostile-client walk found it; an honest device
// that reconnects during a busy batch could too). The upload in flight is
// stood for by holding the session's lock; the server's lock must stay
// free, and the resume completes once the upload is done.
func TestResumeWhileUploadWaits(t *testing.T) {
	ms := models(t)
	srv, addr := start(t, Config{LLM: ms.LLM})
	p := params(hybrid.QS, 2)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	prefix := []int32{int32(ms.Tok.BOS()), 100, 200}
	wire.WriteFrame(c, wire.FrameHello, wire.AppendHello(nil, &wire.Hello{Version: wire.ProtocolVersion}))
	if ft, _, err := wire.ReadFrame(c, wire.DefaultMaxFrame); err != nil || ft != wire.FrameWelcome {
		t.Fatalf("welcome: %v %v", ft, err)
	}
	wire.WriteFrame(c, wire.FrameOpen, wire.AppendOpen(nil, &wire.Open{Params: p.SessionParams(), SLM: ms.SLM.Fingerprint(), Tokenizer: ms.Tok.Fingerprint(), Prefix: prefix}))
	ft, body, err := wire.ReadFrame(c, wire.DefaultMaxFrame)
	if err != nil || ft != wire.FrameOpened {
		t.Fatalf("opened: %v %v", ft, err)
	}
	op, err := wire.ParseOpened(body)
	if err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	ss := srv.sessions[op.Session]
	srv.mu.Unlock()

	ss.mu.Lock() // an upload of the old connection, waiting for its batch
	resumed := resumeAside(srv, &wire.Open{Resume: op.Session, Params: p.SessionParams(), SLM: ms.SLM.Fingerprint(), Tokenizer: ms.Tok.Fingerprint(), Prefix: prefix})
	free := make(chan struct{})
	go func() { srv.connected(); close(free) }() // what the batcher does between batches
	select {
	case <-free:
	case <-time.After(5 * time.Second):
		ss.mu.Unlock()
		t.Fatal("a resume waiting for its session holds the server's lock: the batcher cannot gather the batch the session's upload waits for")
	}
	ss.mu.Unlock() // the upload is done
	select {
	case err := <-resumed:
		if err != nil {
			t.Errorf("resume after the upload: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the resume did not complete after the upload")
	}
}

// TestHandshakeLimits: before it opens a session a connection is
// nobody, so it may not hold much: a Hello frame larger than wire.MaxHello
// is refused from its header alone (the server waited for 4 MiB of body,
// allocated up front), and so is an Open beyond wire.MaxOpen of the
// context. At MaxHandshakes connections without a session, a new one
// closes the one that waited longest, so that silent connections can
// neither pile up nor lock devices out.
func TestHandshakeLimits(t *testing.T) {
	ms := models(t)
	srv, addr := start(t, Config{LLM: ms.LLM, MaxHandshakes: 2, IOTimeout: 10 * time.Second})
	readError := func(c net.Conn, within time.Duration) (*wire.Error, error) {
		c.SetReadDeadline(time.Now().Add(within))
		typ, body, err := wire.ReadFrame(c, wire.DefaultMaxFrame)
		if err != nil {
			return nil, err
		}
		if typ != wire.FrameError {
			return nil, fmt.Errorf("a %v frame", typ)
		}
		return wire.ParseError(body)
	}
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	big := dial()
	defer big.Close()
	big.Write([]byte{0, 0, 0x40, 0, byte(wire.FrameHello)}) // a Hello of 4 MiB, and no body
	if e, err := readError(big, 2*time.Second); err != nil || e.Code != wire.ErrCodeLimit {
		t.Errorf("a 4 MiB Hello: %+v, %v; want a limit error at once", e, err)
	}
	open := dial()
	defer open.Close()
	wire.WriteFrame(open, wire.FrameHello, wire.AppendHello(nil, &wire.Hello{Version: wire.ProtocolVersion}))
	if typ, _, err := wire.ReadFrame(open, wire.DefaultMaxFrame); err != nil || typ != wire.FrameWelcome {
		t.Fatalf("welcome: %v %v", typ, err)
	}
	n := wire.MaxOpen(srv.Context()) + 2 // the type byte and one byte too many
	open.Write([]byte{byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24), byte(wire.FrameOpen)})
	if e, err := readError(open, 2*time.Second); err != nil || e.Code != wire.ErrCodeLimit {
		t.Errorf("an Open beyond wire.MaxOpen: %+v, %v; want a limit error at once", e, err)
	}

	first, second := dial(), dial()
	defer first.Close()
	defer second.Close()
	time.Sleep(100 * time.Millisecond) // both accepted and counted
	p := params(hybrid.QS, 6)
	if _, _, err := generator(t, ms, addr, p).One(context.Background(), p, prompt, nil); err != nil {
		t.Fatalf("a device while two silent connections fill MaxHandshakes: %v", err)
	}
	if e, err := readError(first, 2*time.Second); err == nil && e.Code != wire.ErrCodeLimit {
		t.Errorf("the silent connection that waited longest: %+v; want it closed to make room", e)
	} else if err != nil && !errors.Is(err, io.EOF) {
		t.Errorf("the silent connection that waited longest is still open: %v", err)
	}
	// The connections that ended and the device's, which opened a session,
	// left the count: second is the only one waiting now, and a new silent
	// connection does not close it.
	third := dial()
	defer third.Close()
	time.Sleep(100 * time.Millisecond) // accepted and counted
	if e, err := readError(second, 200*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("a silent connection, one of two waiting under MaxHandshakes 2: %+v, %v; want it left open", e, err)
	}
}

// failingListener fails its first n Accepts as a process out of file
// descriptors does.
type failingListener struct {
	net.Listener
	n atomic.Int32
}

func (l *failingListener) Accept() (net.Conn, error) {
	if l.n.Add(-1) >= 0 {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

// TestAcceptErrorsDoNotStopTheServer: running out of file descriptors
// (accept4: too many open files) made Serve return and hlm serve exit,
// taking every session with it; the server now waits and accepts again.
func TestAcceptErrorsDoNotStopTheServer(t *testing.T) {
	ms := models(t)
	s, err := New(Config{LLM: ms.LLM})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fl := &failingListener{Listener: ln}
	fl.n.Store(4)
	served := make(chan error, 1)
	go func() { served <- s.Serve(context.Background(), fl) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	}()
	p := params(hybrid.QS, 8)
	if _, _, err := generator(t, ms, ln.Addr().String(), p).One(context.Background(), p, prompt, nil); err != nil {
		t.Fatalf("a device after four failed accepts: %v", err)
	}
	select {
	case err := <-served:
		t.Fatalf("Serve returned: %v", err)
	default:
	}
}

// TestSlowDecodeDoesNotStallOthers: an upload's decoding (here the replica
// method's, which recomputes the drafts' distributions with the server's
// copy of the draft model) runs on its session's goroutine, not in the
// batcher: while one session's decoding is held, another session's
// generation completes. Decoding in the batcher let one device's payloads
// (hundreds of wide-support K-SQS drafts) stall every other device.
func TestSlowDecodeDoesNotStallOthers(t *testing.T) {
	ms := models(t)
	g := newGate()
	_, addr := start(t, Config{LLM: ms.LLM, Replicas: []model.Model{gatedModel{ms.SLM, g}}})
	slow := generator(t, ms, addr, params(hybrid.Replica, 1))
	slow.Wrap = func(r *edge.Remote) hybrid.Verifier {
		return &faultVerifier{r: r, fault: func(*edge.Remote) { g.hold() }}
	}
	slowDone := make(chan error, 1)
	go func() {
		_, _, err := slow.One(context.Background(), params(hybrid.Replica, 1), prompt, nil)
		slowDone <- err
	}()
	select {
	case <-g.entered: // the slow session's third upload is decoding, held
	case <-time.After(10 * time.Second):
		g.open()
		t.Fatal("the replica's decoding never reached the gate")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p := params(hybrid.QS, 2)
	res, _, err := generator(t, ms, addr, p).One(ctx, p, prompt, nil)
	g.open()
	if err != nil || res.Stop == hybrid.StopInterrupted {
		t.Errorf("another session while one upload's decoding is held: %v (%s after %d tokens)", err, res.Stop, len(res.Tokens))
	}
	if err := <-slowDone; err != nil {
		t.Errorf("the slow session: %v", err)
	}
}

// dropCommitted drops the connection (when drop is set) before the first
// upload that carries tokens the device committed on its own, and records
// whether it met one.
type dropCommitted struct {
	r          *edge.Remote
	drop, seen bool
}

func (v *dropCommitted) Verify(ctx context.Context, up *wire.Upload) (*wire.Verdict, error) {
	if !v.seen && len(up.Committed) > 0 {
		v.seen = true
		if v.drop {
			v.r.Drop()
		}
	}
	return v.r.Verify(ctx, up)
}

// TestReconnectWithCommittedTokens: a connection dropped before an upload
// that carries tokens the device committed on its own resumes the session
// with the prefix before them (the server has not seen them: the upload
// brings them), and the generation ends with an undisturbed run's tokens.
func TestReconnectWithCommittedTokens(t *testing.T) {
	ms := models(t)
	_, addr := start(t, Config{LLM: ms.LLM})
	p := params(hybrid.HLM, 5)
	run := func(drop bool) (hybrid.Result, edge.Stats) {
		t.Helper()
		g := generator(t, ms, addr, p)
		g.Uploader = &skipFirst{n: 2}
		v := &dropCommitted{drop: drop}
		g.Wrap = func(r *edge.Remote) hybrid.Verifier { v.r = r; return v }
		res, st, err := g.One(context.Background(), p, prompt, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !v.seen {
			t.Fatal("no upload carried tokens committed on the device: the test does not test that")
		}
		return res, st
	}
	want, _ := run(false)
	got, st := run(true)
	if fmt.Sprint(got.Tokens) != fmt.Sprint(want.Tokens) || st.Reconnects == 0 || st.Reopens != 0 {
		t.Errorf("after a drop before an upload with committed tokens (stats %+v, want resumed):\n got %v\nwant %v", st, got.Tokens, want.Tokens)
	}
}
