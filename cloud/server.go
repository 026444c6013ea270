package cloud

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/internal/words"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/wire"
)

// Config configures a server. LLM is required; the rest has defaults.
type Config struct {
	LLM      model.Model
	Replicas []model.Model // draft models the replica method may use, matched by fingerprint

	AuthToken   string        // required token ("" = none)
	MaxSessions int           // concurrent sessions (default 64); when full, a new one evicts the least recently used session without a connection
	MaxFrame    int           // largest accepted frame (default wire.DefaultMaxFrame)
	MaxContext  int           // positions per session (0: the model's context)
	IdleTimeout time.Duration // a session without traffic is dropped (default 5 min)
	IOTimeout   time.Duration // handshake, and each frame write (default 30 s)
	MaxBatch    int           // sessions evaluated in one pass (default 32; 1 disables batching)
	// MaxHandshakes bounds the connections that have not opened a session
	// yet (default 128): at the bound, a new connection closes the one that
	// has waited longest, so that connections that never introduce
	// themselves hold little memory (a Hello and an Open frame each, read
	// with limits of their own) and cannot lock devices out — a device
	// says Hello and Open within milliseconds of connecting.
	MaxHandshakes int
	// BatchWindow is the longest a batch waits for the other connected
	// devices' uploads to join it (default 1 ms; negative: never wait). The
	// wait ends as soon as every connected device has an upload in the
	// batch, so a lone device never waits.
	BatchWindow time.Duration
	// PrefillChunk is the most tokens of a session's prompt evaluated in
	// one batch (default DefaultPrefillChunk; negative: the whole prompt
	// at once; 1 is refused). A longer prompt is evaluated a chunk per
	// batch, its round finishing in the batch that evaluates the rest, so
	// that the rounds of the other sessions wait for a chunk, not for all
	// of it (a batch keeps a place for them: at most MaxBatch−1 prompts
	// in chunks). Only the prompt is cut: the tokens a device committed
	// without verification go in one pass with its drafts. Each chunk's
	// batch waits for the other connected devices as any batch does (up
	// to BatchWindow), so a long window lengthens a prompt in chunks.
	PrefillChunk int
	// DrainDelay is how long Drain keeps serving normally while the health
	// endpoint answers 503, so that load balancers stop sending new
	// connections before Shutdown closes the listener (default 0).
	DrainDelay time.Duration
	Name       string // server name in the Welcome
	Logger     *slog.Logger
	Metrics    Metrics // optional
}

func (c *Config) defaults() {
	if c.MaxSessions <= 0 {
		c.MaxSessions = 64
	}
	if c.MaxFrame <= 0 {
		c.MaxFrame = wire.DefaultMaxFrame
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 5 * time.Minute
	}
	if c.IOTimeout <= 0 {
		c.IOTimeout = 30 * time.Second
	}
	if c.MaxBatch <= 0 {
		c.MaxBatch = 32
	}
	if c.MaxHandshakes <= 0 {
		c.MaxHandshakes = 128
	}
	if c.BatchWindow == 0 {
		c.BatchWindow = DefaultBatchWindow
	}
	if c.PrefillChunk == 0 {
		c.PrefillChunk = DefaultPrefillChunk
	}
	if c.Name == "" {
		c.Name = "hlm"
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Metrics == nil {
		c.Metrics = NopMetrics{}
	}
}

// DefaultBatchWindow is Config.BatchWindow's default: about a third of a
// small model's verification pass, enough for devices that answer a
// verdict at once to catch the next pass.
const DefaultBatchWindow = time.Millisecond

// DefaultPrefillChunk is Config.PrefillChunk's default. On two cores of a
// Zen 5 (Qwen3-0.6B Q8_0, 8 devices whose sessions reopen with a prompt
// of 256 tokens every 64 positions; bench/capacity, docs/BENCHMARKS.md)
// chunks of 64 cut the rounds' p99 latency from 0.33 s to 0.17–0.23 s,
// with the same positions per second; chunks of 128 did not.
const DefaultPrefillChunk = 64

// Server serves device sessions.
type Server struct {
	cfg    Config
	ctxLen int
	llmFP  string
	origin string // model.OriginOf(LLM), in the Welcome
	tokFP  string
	jobs   chan *job
	// connGone wakes a batch that waits for connected devices when one
	// disconnects.
	connGone chan struct{}
	// logits is the batches' buffer for an intoBatcher LLM; only the
	// batcher goroutine (runBatch) touches it.
	logits []float32
	// view is the LLM when the batcher may read its rows in place
	// (viewOf), else nil.
	view viewBatcher

	mu       sync.Mutex
	sessions map[uint64]*session
	conns    map[net.Conn]*connState
	serving  bool      // Serve is accepting
	draining time.Time // when Drain was first called (zero: not draining)
	closing  bool      // Shutdown was called
	// handshakes counts the connections that have not opened a session.
	handshakes int

	wg      sync.WaitGroup
	stopped chan struct{}
	// abort is closed when Shutdown's context ends: the batcher stops the
	// prompts it evaluates a chunk at a time (errStopped) instead of
	// finishing them, so that Shutdown does not wait for a long prompt.
	abort   chan struct{}
	batcher sync.WaitGroup
	// ends counts the goroutines that end sessions outside a connection
	// (the janitor, an eviction's end): Shutdown waits for them, so that
	// no session is still being freed in the LLM when it returns.
	ends sync.WaitGroup
}

// connState is what Shutdown needs to know of a connection. Guarded by
// Server.mu.
type connState struct {
	inRound bool // an upload was read and its verdict is not written yet
	closing bool // close the connection at the end of the round
	// handshaking: accepted at since, no session opened yet (counted in
	// Server.handshakes).
	handshaking bool
	since       time.Time
}

// session is one device session.
type session struct {
	id    uint64
	vocab int
	slmFP string // the device's draft model, as its Open named it

	// mu serialises uploads: after a resume, the stale connection's
	// goroutine may still be finishing one while the new connection sends.
	mu     sync.Mutex
	hs     *hybrid.Server
	lastUp []byte        // body of the last verified upload
	lastV  *wire.Verdict // its verdict (answered again if the upload is re-sent)
	ended  bool          // end has freed hs's sequences
	// gen counts the session's generations: a continuation starts the
	// next, whose rounds count from the Open's again. An upload read on a
	// connection of an earlier generation (its goroutine held up while the
	// device parked and continued elsewhere) would otherwise be taken as
	// a round of the new one.
	gen uint64
	// kv is what hs's KV caches held after its last round (hybrid's
	// Server.KVBytes), for Server.KVBytes to sum without waiting for a
	// session's verification.
	kv atomic.Int64

	// Guarded by Server.mu.
	lastUsed time.Time
	conn     net.Conn // attached connection, nil when detached
	parked   bool     // detached by its device's Park, for a continuation
	// givenUp: its device's continuation was refused while a connection
	// still held it (the server had not yet read the Park): it ends when
	// that connection lets go rather than at the idle timeout.
	givenUp bool
}

// end frees what the session holds in the models (its llama.cpp
// sequence, at once rather than when the garbage collector finds it),
// after any upload of it still being verified. The session must already
// be out of Server.sessions; a stale connection's upload that comes later
// is refused.
func (ss *session) end() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if !ss.ended {
		ss.ended = true
		ss.hs.Close()
	}
}

// New makes a server.
func New(cfg Config) (*Server, error) {
	if cfg.LLM == nil {
		return nil, errors.New("cloud: no LLM")
	}
	if cfg.PrefillChunk == 1 {
		return nil, errors.New("cloud: a prefill chunk of 1 token: at least 2 (llama.cpp decodes one token by another path than a block, so a prompt fed a token at a time leaves other bits in the cache)")
	}
	cfg.defaults()
	s := &Server{cfg: cfg, ctxLen: cfg.LLM.Config().SeqLen, llmFP: cfg.LLM.Fingerprint(), origin: model.OriginOf(cfg.LLM),
		jobs: make(chan *job, 4*cfg.MaxBatch), connGone: make(chan struct{}, 1), sessions: map[uint64]*session{}, conns: map[net.Conn]*connState{},
		stopped: make(chan struct{}), abort: make(chan struct{}), view: viewOf(cfg)}
	if cfg.MaxContext > 0 && cfg.MaxContext < s.ctxLen {
		s.ctxLen = cfg.MaxContext
	}
	if t := cfg.LLM.Tokenizer(); t != nil {
		s.tokFP = t.Fingerprint()
	}
	s.batcher.Add(1)
	go s.runBatcher()
	return s, nil
}

// Serve accepts connections on ln until Shutdown or ctx ends. It closes ln
// when it returns.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	returned := make(chan struct{})
	defer close(returned)
	go func() {
		select {
		case <-ctx.Done():
		case <-s.stopped:
		case <-returned: // the listener failed: nothing to wait for
		}
		ln.Close()
	}()
	s.mu.Lock()
	if !s.closing {
		s.ends.Add(1)
		go s.janitor()
	}
	s.serving = true
	s.mu.Unlock()
	s.cfg.Logger.Info("serving", "addr", ln.Addr().String(), "llm", s.cfg.LLM.Name(), "fingerprint", short(s.llmFP), "origin", short(s.origin), "max_sessions", s.cfg.MaxSessions)
	var delay time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			select {
			case <-s.stopped:
				return nil
			default:
			}
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			// Out of file descriptors (EMFILE, ENFILE), an aborted
			// connection, a timeout: the listener is still good, and the
			// sessions it serves must go on. Back off and accept again
			// (as net/http does) instead of ending the server.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			s.cfg.Logger.Warn("accepting a connection failed; trying again", "error", err, "in", delay)
			select {
			case <-time.After(delay):
			case <-s.stopped:
				return nil
			case <-ctx.Done():
				return nil
			}
			continue
		}
		delay = 0
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			c.Close()
			continue
		}
		if s.handshakes >= s.cfg.MaxHandshakes {
			s.closeOldestHandshake()
		}
		s.handshakes++
		s.conns[c] = &connState{handshaking: true, since: time.Now()}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.handle(c)
			s.handshakeDone(c) // counted once, whatever ended the connection
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			select { // a batch waiting for this device stops waiting
			case s.connGone <- struct{}{}:
			default:
			}
		}()
	}
}

// Shutdown stops accepting and ends every connection at a round boundary:
// an idle connection is told (Error shutdown) and closed at once; one whose
// upload is being verified gets its verdict first. Devices reconnect (to
// another replica behind a load balancer) and continue without losing a
// token. Shutdown waits for the connections to end; when ctx ends first it
// closes the rest abruptly (the devices re-send their upload elsewhere),
// and the prompts being evaluated a chunk at a time (PrefillChunk) stop at
// the chunk in progress. Then it stops the batcher.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil
	}
	s.closing = true
	if s.draining.IsZero() {
		s.draining = time.Now()
	}
	close(s.stopped)
	var idle []net.Conn
	for c, st := range s.conns {
		st.closing = true
		if !st.inRound {
			idle = append(idle, c)
		}
	}
	s.mu.Unlock()
	for _, c := range idle {
		go func() {
			sendError(c, time.Second, wire.ErrCodeShutdown, "server shutting down")
			c.Close()
		}()
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
		close(s.abort)
		s.mu.Lock()
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		<-done
	}
	// Every connection goroutine has returned: nothing sends jobs anymore,
	// and nothing evicts; the janitor has seen stopped.
	close(s.jobs)
	s.batcher.Wait()
	s.ends.Wait()
	s.mu.Lock()
	sessions := s.sessions
	s.sessions = map[uint64]*session{}
	s.mu.Unlock()
	for _, ss := range sessions {
		ss.end()
	}
	return err
}

// beginRound marks c as verifying an upload; false when the server is
// shutting down and the upload must not be started.
func (s *Server) beginRound(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.conns[c]
	if st == nil || st.closing {
		return false
	}
	st.inRound = true
	return true
}

// endRound marks c's round as finished; false when the connection must now
// close (the server is shutting down).
func (s *Server) endRound(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.conns[c]
	if st == nil {
		return false
	}
	st.inRound = false
	return !st.closing
}

// Context is the positions a session may use: the LLM's context, or
// Config.MaxContext when that is smaller.
func (s *Server) Context() int { return s.ctxLen }

// Sessions is the number of live sessions.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// KVBytes is the memory the sessions' KV caches hold in this process, as
// of each one's last round (hybrid.Server.KVBytes: 0 on llama.cpp, whose
// cache is allocated when it loads). Sessions parked for a conversation
// and those whose device went away hold theirs until they end.
func (s *Server) KVBytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, ss := range s.sessions {
		n += ss.kv.Load()
	}
	return n
}

// Parked is the number of sessions their devices parked for a
// conversation's next turn (wire.FramePark) that no connection has taken
// up again.
func (s *Server) Parked() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, ss := range s.sessions {
		if ss.parked && ss.conn == nil {
			n++
		}
	}
	return n
}

// janitor drops sessions idle for longer than IdleTimeout.
func (s *Server) janitor() {
	defer s.ends.Done()
	t := time.NewTicker(min(s.cfg.IdleTimeout/4, 10*time.Second))
	defer t.Stop()
	for {
		select {
		case <-s.stopped:
			return
		case now := <-t.C:
			var expired []*session
			s.mu.Lock()
			for id, ss := range s.sessions {
				if ss.conn == nil && now.Sub(ss.lastUsed) > s.cfg.IdleTimeout {
					delete(s.sessions, id)
					expired = append(expired, ss)
					s.cfg.Metrics.SessionEnded()
					s.cfg.Logger.Info("session expired: no device for the idle timeout", "session", id, "idle_timeout", s.cfg.IdleTimeout)
				}
			}
			s.mu.Unlock()
			for _, ss := range expired {
				ss.end()
			}
		}
	}
}

// protoError is sent to the peer as an Error frame.
type protoError struct {
	code uint16
	msg  string
}

func (e *protoError) Error() string { return e.msg }

func perr(code uint16, format string, args ...any) *protoError {
	return &protoError{code, fmt.Sprintf(format, args...)}
}

// errShutdown ends a connection at a round boundary during Shutdown.
var errShutdown = &protoError{wire.ErrCodeShutdown, "server shutting down"}

// handshakeDone ends c's handshake in the count MaxHandshakes bounds
// (once): it opened a session, or it ended.
func (s *Server) handshakeDone(c net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.conns[c]; st != nil && st.handshaking {
		st.handshaking = false
		s.handshakes--
	}
}

// closeOldestHandshake makes room for a new connection at MaxHandshakes:
// the connection that has waited longest without opening a session is
// told and closed (it leaves the count when its goroutine sees the close).
// Called with s.mu held.
func (s *Server) closeOldestHandshake() {
	var oldest net.Conn
	var since time.Time
	for c, st := range s.conns {
		if st.handshaking && (oldest == nil || st.since.Before(since)) {
			oldest, since = c, st.since
		}
	}
	if oldest == nil {
		return
	}
	s.conns[oldest].since = time.Now().Add(time.Hour) // not chosen again while it closes
	s.cfg.Metrics.Error(wire.ErrCodeLimit)
	go func() {
		sendError(oldest, 100*time.Millisecond, wire.ErrCodeLimit, fmt.Sprintf("closed to make room: %d connections had not opened a session", s.cfg.MaxHandshakes))
		oldest.Close()
	}()
}

// handle runs one connection.
func (s *Server) handle(c net.Conn) {
	log := s.cfg.Logger.With("remote", c.RemoteAddr().String())
	var ss *session
	err := s.converse(c, log, &ss)
	if ss != nil {
		s.mu.Lock()
		givenUp := false
		if ss.conn == c {
			ss.conn = nil
			ss.lastUsed = time.Now()
			givenUp = ss.givenUp
		}
		s.mu.Unlock()
		if givenUp && s.giveUp(ss) {
			log.Info("session ended: its device gave it up (a continuation it did not match)", "session", ss.id)
		}
	}
	var pe *protoError
	switch {
	case errors.Is(err, errShutdown):
		log.Info("closing connection at a round boundary: shutting down")
		sendError(c, time.Second, errShutdown.code, errShutdown.msg)
	case errors.As(err, &pe):
		s.cfg.Metrics.Error(pe.code)
		switch pe.code {
		case wire.ErrCodeInternal:
			// The server's own failure (its LLM), not the device's.
			log.Error("closing connection: the LLM failed; the device may retry the round", "code", pe.code, "error", pe.msg)
		case wire.ErrCodeNoSession:
			// The normal failover path (an expired session, or one kept by
			// another replica): the device reopens from its committed prefix.
			log.Info("closing connection: the session to resume is not here; the device reopens it", "code", pe.code, "error", pe.msg)
		default:
			log.Warn("closing connection", "code", pe.code, "error", pe.msg)
		}
		sendError(c, s.cfg.IOTimeout, pe.code, pe.msg)
	case err != nil && ss != nil:
		// The device went without closing its session (killed, or its
		// network dropped): it may come back and resume.
		log.Info("device gone without closing its session: kept for a resume until the idle timeout", "session", ss.id, "idle_timeout", s.cfg.IdleTimeout, "error", err)
	case err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed):
		log.Info("connection ended", "error", err)
	}
	c.Close()
}

func (s *Server) readFrame(c net.Conn, timeout time.Duration) (wire.FrameType, []byte, error) {
	return s.readFrameMax(c, timeout, s.cfg.MaxFrame)
}

// readFrameMax is readFrame with a frame limit of its own (the Hello's).
func (s *Server) readFrameMax(c net.Conn, timeout time.Duration, max int) (wire.FrameType, []byte, error) {
	c.SetReadDeadline(time.Now().Add(timeout))
	t, body, err := wire.ReadFrame(c, max)
	switch {
	case errors.Is(err, wire.ErrHTTPRequest), errors.Is(err, wire.ErrFrameType):
		return 0, nil, perr(wire.ErrCodeBad, "%v", err)
	case errors.Is(err, wire.ErrFrame):
		return 0, nil, perr(wire.ErrCodeLimit, "%v", err)
	}
	return t, body, err
}

func (s *Server) writeFrame(c net.Conn, t wire.FrameType, body []byte) error {
	c.SetWriteDeadline(time.Now().Add(s.cfg.IOTimeout))
	return wire.WriteFrame(c, t, body)
}

// sendError writes an Error frame with code and msg to c, with a write
// deadline timeout from now (Shutdown gives each connection one second,
// not IOTimeout).
func sendError(c net.Conn, timeout time.Duration, code uint16, msg string) error {
	c.SetWriteDeadline(time.Now().Add(timeout))
	return wire.WriteFrame(c, wire.FrameError, wire.AppendError(nil, &wire.Error{Code: code, Message: msg}))
}

// converse runs the handshake, the session open and the upload loop.
func (s *Server) converse(c net.Conn, log *slog.Logger, out **session) error {
	// Before the Hello nobody is known: its frame is small (MaxHello), so
	// that a connection that declares a large one cannot hold much memory.
	t, body, err := s.readFrameMax(c, s.cfg.IOTimeout, min(s.cfg.MaxFrame, wire.MaxHello))
	if err != nil {
		return err
	}
	if t != wire.FrameHello {
		return perr(wire.ErrCodeBad, "expected Hello, got %v", t)
	}
	h, err := wire.ParseHello(body)
	if err != nil {
		return perr(wire.ErrCodeBad, "%v", err)
	}
	if h.Version != wire.ProtocolVersion {
		return perr(wire.ErrCodeVersion, "protocol version %d, server speaks %d", h.Version, wire.ProtocolVersion)
	}
	// Without a token of its own the server lets every device in, one
	// that presents a token too.
	if s.cfg.AuthToken != "" && subtle.ConstantTimeCompare([]byte(h.Token), []byte(s.cfg.AuthToken)) != 1 {
		if h.Token == "" {
			return perr(wire.ErrCodeAuth, "authentication failed: this server wants a token (hlm edge --auth-token or $HLM_AUTH_TOKEN)")
		}
		return perr(wire.ErrCodeAuth, "authentication failed: wrong token")
	}
	if err := s.writeFrame(c, wire.FrameWelcome, wire.AppendWelcome(nil, &wire.Welcome{Version: wire.ProtocolVersion, MaxFrame: uint32(s.cfg.MaxFrame), Server: s.cfg.Name,
		Vocab: uint32(s.cfg.LLM.Config().Vocab), Context: uint32(s.ctxLen), LLM: s.llmFP, Origin: s.origin})); err != nil {
		return err
	}
	// The Open carries at most a context of tokens: read it with that
	// limit, not the uploads' (a connection without a session holds little).
	t, body, err = s.readFrameMax(c, s.cfg.IOTimeout, min(s.cfg.MaxFrame, wire.MaxOpen(s.ctxLen)))
	if err != nil {
		return err
	}
	if t == wire.FrameClose {
		return nil // a device that looked at the Welcome and left (a vocabulary it cannot share)
	}
	if t != wire.FrameOpen {
		return perr(wire.ErrCodeBad, "expected Open, got %v", t)
	}
	ss, err := s.open(c, body)
	if err != nil {
		return err
	}
	*out = ss
	s.handshakeDone(c)
	log = log.With("session", ss.id)
	ss.mu.Lock()
	round, gen := ss.hs.Round(), ss.gen
	ss.mu.Unlock()
	if err := s.writeFrame(c, wire.FrameOpened, wire.AppendOpened(nil, &wire.Opened{Session: ss.id, Round: round,
		Vocab: uint32(ss.vocab), Context: uint32(s.ctxLen), LLM: s.llmFP})); err != nil {
		return err
	}
	for {
		t, body, err := s.readFrame(c, s.cfg.IdleTimeout)
		if err != nil {
			return err
		}
		switch t {
		case wire.FrameUpload:
			if !s.beginRound(c) {
				return errShutdown
			}
			v, err := s.upload(ss, gen, body)
			if err != nil {
				s.endRound(c)
				return err
			}
			vb := wire.AppendVerdict(nil, v)
			// Count before sending: a client that has its verdict must find
			// it in the metrics.
			s.cfg.Metrics.Bytes(len(body)+wire.FrameHeader, len(vb)+wire.FrameHeader)
			err = s.writeFrame(c, wire.FrameVerdict, vb)
			if !s.endRound(c) && err == nil {
				return errShutdown
			}
			if err != nil {
				return err
			}
		case wire.FramePark:
			// The device is done for now and may continue the session
			// with its next prompt: handle detaches it, and it stays
			// until the idle timeout or an eviction.
			s.mu.Lock()
			ss.parked = true
			s.mu.Unlock()
			log.Info("session parked for a continuation", "idle_timeout", s.cfg.IdleTimeout)
			return nil
		case wire.FrameClose:
			s.mu.Lock()
			delete(s.sessions, ss.id)
			s.mu.Unlock()
			ss.end()
			s.cfg.Metrics.SessionEnded()
			log.Info("session closed")
			*out = nil
			return nil
		default:
			return perr(wire.ErrCodeBad, "unexpected %v frame", t)
		}
	}
}

// open creates or resumes a session from an Open body.
func (s *Server) open(c net.Conn, body []byte) (*session, error) {
	vocab := s.cfg.LLM.Config().Vocab
	o, err := wire.ParseOpen(body, vocab)
	if err != nil {
		return nil, perr(wire.ErrCodeBad, "%v", err)
	}
	if o.LLM != "" && o.LLM != s.llmFP {
		return nil, perr(wire.ErrCodeRefused, "this server runs LLM %s…, the device wants %s…", short(s.llmFP), short(o.LLM))
	}
	// A continuation may leave the fingerprints out: they were checked
	// when its session opened.
	if s.tokFP != "" && o.Tokenizer != s.tokFP && !(o.Keep > 0 && o.Tokenizer == "") {
		return nil, perr(wire.ErrCodeRefused, "tokenizer mismatch: the device's tokenizer is not the server's (%s… vs %s…)", short(o.Tokenizer), short(s.tokFP))
	}
	prefix := make([]int, len(o.Prefix))
	for i, t := range o.Prefix {
		prefix[i] = int(t)
	}
	if o.Keep > 0 {
		return s.continueSession(c, o, prefix)
	}
	if o.Resume != 0 {
		unknown := perr(wire.ErrCodeNoSession, "unknown session %d (expired or lost in a restart): open a new one with the committed prefix", o.Resume)
		ss := s.session(o.Resume)
		if ss == nil {
			return nil, unknown
		}
		// Never wait for a session's lock while holding the server's: an
		// upload of the session's old connection may hold it until its
		// batch is verified, and the batcher takes the server's lock.
		ss.mu.Lock()
		seq := append([]int(nil), ss.hs.Sequence()...)
		round, ended := ss.hs.Round(), ss.ended
		ss.mu.Unlock()
		// The device may be one round behind (its verdict was lost): then
		// the server's sequence extends the device's prefix.
		if !ended && (!(round == o.Round || round == o.Round+1) || len(seq) < len(prefix) || !slices.Equal(seq[:len(prefix)], prefix)) {
			return nil, perr(wire.ErrCodeNoSession, "session %d is out of sync with the device (server round %d, device round %d): open a new one", o.Resume, round, o.Round)
		}
		if ended || !s.attach(ss, c) {
			return nil, unknown
		}
		s.cfg.Metrics.SessionResumed()
		return ss, nil
	}
	if len(prefix) == 0 {
		return nil, perr(wire.ErrCodeBad, "empty prefix")
	}
	p, slm, err := s.sessionParams(o)
	if err != nil {
		return nil, err
	}
	hs, err := hybrid.NewReplicaServer(p, s.cfg.LLM, slm, prefix)
	if err == nil {
		if err = hs.LimitContext(s.ctxLen); err != nil {
			hs.Close()
		}
	}
	if err != nil {
		return nil, coreError(err)
	}
	hs.SetRound(o.Round)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.sessions) >= s.cfg.MaxSessions && !s.evictDetached() {
		hs.Close()
		return nil, perr(wire.ErrCodeLimit, "server full (%s)", words.Plural(s.cfg.MaxSessions, "session"))
	}
	ss := &session{id: newID(), hs: hs, vocab: vocab, slmFP: o.SLM, conn: c, lastUsed: time.Now()}
	for s.sessions[ss.id] != nil {
		ss.id = newID()
	}
	s.sessions[ss.id] = ss
	s.cfg.Metrics.SessionStarted(len(prefix), o.Round > 0)
	s.cfg.Logger.Info("session opened", "session", ss.id, "method", p.Method, "prefix", len(prefix), "round", o.Round)
	return ss, nil
}

// giveUp ends ss, whose device has given it up, if it has no connection
// and is still on the server, and says whether it did; one that still has
// a connection ends when the connection lets go of it (handle).
func (s *Server) giveUp(ss *session) bool {
	s.mu.Lock()
	if s.sessions[ss.id] != ss {
		s.mu.Unlock()
		return false
	}
	if ss.conn != nil {
		ss.givenUp = true
		s.mu.Unlock()
		return false
	}
	delete(s.sessions, ss.id)
	s.mu.Unlock()
	ss.end()
	s.cfg.Metrics.SessionEnded()
	return true
}

// session is the session of that id (nil: none).
func (s *Server) session(id uint64) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

// attach makes c the connection of ss, closing the one it had (dead or
// stale: the device moved, or it is a connection of the device's last
// generation); false when ss has left the server meanwhile (ended while
// the caller looked at it).
func (s *Server) attach(ss *session, c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions[ss.id] != ss {
		return false
	}
	if ss.conn != nil && ss.conn != c {
		ss.conn.Close()
	}
	ss.conn, ss.parked, ss.givenUp = c, false, false
	ss.lastUsed = time.Now()
	return true
}

// sessionParams are an Open's session parameters, and the draft model its
// method needs on the server (the replica method; nil otherwise).
func (s *Server) sessionParams(o *wire.Open) (hybrid.Params, model.Model, error) {
	p, err := hybrid.ParseSessionParams(o.Params)
	if err != nil {
		return p, nil, perr(wire.ErrCodeBad, "%v", err)
	}
	if m, _ := hybrid.MethodByName(p.Method); !m.ServerDraft {
		return p, nil, nil
	}
	for _, r := range s.cfg.Replicas {
		if r.Fingerprint() == o.SLM {
			return p, r, nil
		}
	}
	return p, nil, perr(wire.ErrCodeRefused, "replica: this server has no copy of the device's draft model %s… (start it with --replica SPEC)", short(o.SLM))
}

// continueSession starts a new generation on a parked session (an Open
// with Keep: a conversation's next turn): its prompt is the session's
// first Keep tokens, which must hash to the Open's KeepHash, and the
// Open's prefix after them; its parameters are the Open's. The LLM keeps
// what it holds of the kept tokens (hybrid.Server.Continue). A session
// this server does not have, or whose tokens differ, is refused with
// ErrCodeNoSession: the device then opens a new one with its whole prompt.
func (s *Server) continueSession(c net.Conn, o *wire.Open, more []int) (*session, error) {
	unknown := perr(wire.ErrCodeNoSession, "unknown session %d (expired, evicted or lost in a restart): open a new one with the whole prompt", o.Resume)
	ss := s.session(o.Resume)
	if ss == nil {
		return nil, unknown
	}
	if o.SLM == "" {
		o.SLM = ss.slmFP
	}
	p, slm, err := s.sessionParams(o)
	if err != nil {
		return nil, err
	}
	keep := int(o.Keep)
	if n := keep + len(more); n >= s.ctxLen {
		return nil, coreError(fmt.Errorf("%w: prompt of %d tokens, context %d", model.ErrContextFull, n, s.ctxLen))
	}
	// As in a resume, the session's lock is never awaited with the
	// server's held.
	ss.mu.Lock()
	if ss.ended {
		ss.mu.Unlock()
		return nil, unknown
	}
	if seq := ss.hs.Sequence(); keep > len(seq) || wire.HashTokens(seq[:keep]) != o.KeepHash {
		ss.mu.Unlock()
		// The device gives the session up and opens a new one: a parked
		// session is of no use to anyone else, and is ended now (or, if
		// the server has not yet read its Park, when it does) rather than
		// holding its cache until the idle timeout.
		if s.giveUp(ss) {
			s.cfg.Logger.Info("parked session ended: the device's continuation does not match it", "session", ss.id)
		}
		return nil, perr(wire.ErrCodeNoSession, "session %d does not hold the %d tokens the device keeps: open a new one with the whole prompt", o.Resume, keep)
	}
	hs, err := ss.hs.Continue(p, s.cfg.LLM, slm, keep, more)
	if err != nil {
		ss.mu.Unlock()
		return nil, coreError(err)
	}
	hs.LimitContext(s.ctxLen) // the prompt fits: checked above
	hs.SetRound(o.Round)
	ss.hs, ss.lastUp, ss.lastV = hs, nil, nil
	ss.kv.Store(hs.KVBytes())
	ss.gen++
	ss.mu.Unlock()
	if !s.attach(ss, c) {
		return nil, unknown
	}
	s.cfg.Metrics.SessionContinued(keep, len(more))
	s.cfg.Logger.Info("session continued", "session", ss.id, "method", p.Method, "kept", keep, "added", len(more), "round", o.Round)
	return ss, nil
}

// evictDetached drops the least recently used session that has no
// connection, making room for a new one; false when every session is
// attached. Behind a round-robin balancer a device that reconnects usually
// opens a new session on another replica and leaves its old one detached
// here until the idle timeout; should it come back, it reopens from its
// committed prefix (no token is lost). Called with s.mu held.
func (s *Server) evictDetached() bool {
	var victim *session
	for _, ss := range s.sessions {
		if ss.conn == nil && (victim == nil || ss.lastUsed.Before(victim.lastUsed)) {
			victim = ss
		}
	}
	if victim == nil {
		return false
	}
	delete(s.sessions, victim.id)
	// s.mu is held; an upload still finishing on it holds victim.mu. Called
	// from a connection's goroutine, which Shutdown waits for before it
	// waits for s.ends.
	s.ends.Add(1)
	go func() {
		defer s.ends.Done()
		victim.end()
	}()
	s.cfg.Metrics.SessionEnded()
	s.cfg.Logger.Info("session evicted to make room (detached, least recently used)", "session", victim.id)
	return true
}

// upload verifies one upload body (or answers a repeated round from cache)
// of the session's generation gen.
func (s *Server) upload(ss *session, gen uint64, body []byte) (*wire.Verdict, error) {
	up, err := wire.ParseUpload(body, ss.vocab)
	if err != nil {
		return nil, perr(wire.ErrCodeBad, "%v", err)
	}
	s.mu.Lock()
	ss.lastUsed = time.Now()
	s.mu.Unlock()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.ended {
		return nil, perr(wire.ErrCodeNoSession, "session %d has ended (closed, expired or evicted): open a new one with the committed prefix", ss.id)
	}
	if ss.gen != gen {
		return nil, perr(wire.ErrCodeNoSession, "session %d was continued with its next prompt on another connection: this connection's generation is over", ss.id)
	}
	if ss.lastV != nil && up.Round == ss.lastV.Round {
		if !bytes.Equal(body, ss.lastUp) {
			return nil, perr(wire.ErrCodeBad, "round %d re-sent with different content", up.Round)
		}
		return ss.lastV, nil
	}
	if up.Round != ss.hs.Round()+1 {
		return nil, perr(wire.ErrCodeBad, "upload for round %d, expected %d", up.Round, ss.hs.Round()+1)
	}
	start := time.Now()
	// Decode the payloads here, on the session's own goroutine: what they
	// cost is the device's choice, and in the batcher it delayed every
	// session's verification (hundreds of wide-support drafts in one
	// upload stalled the others for most of a second).
	hj, err := ss.hs.Decode(up)
	if err != nil {
		return nil, coreError(fmt.Errorf("round %d: %w", up.Round, err))
	}
	v, err := s.verify(ss, hj)
	if err != nil {
		return nil, coreError(fmt.Errorf("round %d: %w", up.Round, err))
	}
	s.cfg.Metrics.Round(len(up.Drafts), v.Accepted, v.Resampled, time.Since(start))
	s.cfg.Metrics.Bits(hybrid.UplinkBits(up, ss.vocab), ss.hs.VerdictBits(len(up.Drafts)))
	ss.lastUp = append(ss.lastUp[:0], body...)
	ss.lastV = v
	ss.kv.Store(ss.hs.KVBytes())
	return v, nil
}

// coreError is the protocol error for an error of the hybrid core: the
// core checks every request (context, vocabulary, parameters, the replica's
// hash) and says which rule it broke by the error it wraps; the LLM's own
// failure (hybrid.ErrEngine) is the server's, internal, not the device's.
func coreError(err error) error {
	switch {
	case errors.Is(err, errStopped):
		return perr(wire.ErrCodeShutdown, "%v", err)
	case errors.Is(err, model.ErrContextFull):
		return perr(wire.ErrCodeLimit, "%v", err)
	case errors.Is(err, hybrid.ErrReplicaMismatch):
		return perr(wire.ErrCodeRefused, "%v", err)
	case errors.Is(err, hybrid.ErrEngine):
		return perr(wire.ErrCodeInternal, "%v", err)
	}
	return perr(wire.ErrCodeBad, "%v", err)
}

func newID() uint64 {
	var b [8]byte
	for {
		rand.Read(b[:])
		if id := binary.LittleEndian.Uint64(b[:]); id != 0 {
			return id
		}
	}
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
