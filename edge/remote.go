package edge

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"syscall"
	"time"

	"github.com/hlmproject/hlm/channel"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/wire"
)

// Config is how to reach the server.
type Config struct {
	Addr        string
	LocalAddr   string // local IP to dial from ("": any): e.g. one loopback address per emulated device, for balancers that hash the source
	Token       string
	TLS         *tls.Config     // nil: plain TCP
	Shape       *channel.Config // nil: no traffic shaping
	MaxFrame    int             // default wire.DefaultMaxFrame
	Retries     int             // reconnection attempts per round (default 10)
	Backoff     time.Duration   // first retry delay, doubling up to 5 s (default 100 ms)
	DialTimeout time.Duration   // default 10 s
	IOTimeout   time.Duration   // per frame (default 2 min: a verification may queue)
	Logger      *slog.Logger
}

func (c *Config) defaults() {
	if c.MaxFrame <= 0 {
		c.MaxFrame = wire.DefaultMaxFrame
	}
	if c.Retries <= 0 {
		c.Retries = 10
	}
	if c.Backoff <= 0 {
		c.Backoff = 100 * time.Millisecond
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = 10 * time.Second
	}
	if c.IOTimeout <= 0 {
		c.IOTimeout = 2 * time.Minute
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
}

// Session describes the session to open.
type Session struct {
	Params    hybrid.Params
	SLM       string // draft model fingerprint
	Tokenizer string // tokenizer fingerprint
	LLM       string // required server model fingerprint ("" = any)
	// Prefix returns the device's committed sequence (prompt included); the
	// remote uses it to reopen a session after a failure.
	Prefix func() []int
	// Continue, when set, is a session parked by an earlier generation
	// (Remote.Park) whose first tokens Prefix() shares: Open continues it
	// (wire.Open.Keep), sending the tokens after the shared ones only, and
	// opens a new session with the whole prefix when the server no longer
	// has it.
	Continue *Parked
}

// Parked is a session that a generation left on the server (Remote.Park)
// for a later one to continue.
type Parked struct {
	ID     uint64
	Tokens []int // what the server holds of it: the prompt and the verified output
	// Prompt is how many of Tokens were its last generation's prompt (0:
	// not known): a new prompt that keeps them all continues the same
	// conversation (Conversations).
	Prompt int
	// Draft, when not nil, is the device's draft-model session of the
	// generation (Generator with Conversations sets it), which the next
	// one takes over.
	Draft *hybrid.DraftSession
}

// Keep is how many tokens of prefix a continuation of p keeps: the length
// of their common prefix (all of prefix when a generation is asked again
// with its prompt).
func (p *Parked) Keep(prefix []int) int { return hybrid.CommonPrefix(p.Tokens, prefix) }

// Stats counts what crossed the connection.
type Stats struct {
	UploadBytes  int64 // Upload frames written (including re-sends)
	VerdictBytes int64 // Verdict frames read
	Reconnects   int
	Resent       int // uploads sent again after a failure
	// Reopens counts sessions opened again with the committed prefix
	// because the server did not have the session (another replica behind
	// a balancer, a restart, an expiry); Reprefill sums those prefixes:
	// the positions the server evaluated again.
	Reopens   int
	Reprefill int
	// OpenBytes counts the Open frames written: the prompts sent.
	OpenBytes int64
	// Continued counts sessions continued from a parked one
	// (Session.Continue), Kept the prompt tokens they did not send.
	Continued int
	Kept      int
}

// Cached is how many of the prompt's tokens the server neither received
// nor evaluated again: those a continuation kept (Kept), none once the
// session was reopened with the whole committed prefix (Reopens).
func (s Stats) Cached() int {
	if s.Reopens > 0 {
		return 0
	}
	return s.Kept
}

// Remote is a hybrid.Verifier that sends uploads to an hlm server.
type Remote struct {
	cfg     Config
	sess    Session
	params  string
	conn    net.Conn
	link    channel.Link
	id      uint64
	cont    *Parked // the parked session the next Open tries to continue
	acked   uint32
	opened  wire.Opened
	welcome wire.Welcome
	Stats   Stats
}

var _ hybrid.Verifier = (*Remote)(nil)

// Connect dials the server and opens a session (Dial, then Open).
func Connect(ctx context.Context, cfg Config, sess Session) (*Remote, error) {
	r, err := Dial(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := r.Open(ctx, sess); err != nil {
		r.Drop()
		return nil, err
	}
	return r, nil
}

// Dial connects to the server and completes the handshake, retrying a few
// times (behind a balancer, the first replica tried may be going away; a
// server that is simply not there fails fast). Welcome then describes the
// server's model: its context is what a prompt must fit in.
func Dial(ctx context.Context, cfg Config) (*Remote, error) {
	cfg.defaults()
	r := &Remote{cfg: cfg}
	var err error
	if cfg.Shape != nil {
		if r.link, err = channel.New(*cfg.Shape); err != nil {
			return nil, err
		}
	}
	err = r.retry(ctx, func() error {
		c, err := r.dialHello(ctx)
		if err == nil {
			r.conn = c
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Open opens the session on the dialed connection (reconnecting if it
// broke meanwhile).
func (r *Remote) Open(ctx context.Context, sess Session) error {
	if err := sess.Params.Validate(); err != nil {
		return fatal{err}
	}
	r.sess, r.params, r.cont = sess, sess.Params.SessionParams(), sess.Continue
	if r.conn != nil {
		err := r.open(ctx, r.conn, sess.Prefix())
		if err == nil || errors.As(err, new(fatal)) {
			return err
		}
		r.conn.Close()
		r.conn = nil
	}
	return r.retry(ctx, func() error { return r.connect(ctx, sess.Prefix()) })
}

// retry runs f up to connectAttempts times with the configured backoff,
// stopping at a fatal error.
func (r *Remote) retry(ctx context.Context, f func() error) error {
	backoff := r.cfg.Backoff
	for attempt := 1; ; attempt++ {
		err := f()
		if err == nil {
			return nil
		}
		if errors.As(err, new(fatal)) || attempt >= min(r.cfg.Retries+1, connectAttempts) {
			return err
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return ctx.Err()
		}
		backoff *= 2
	}
}

// Welcome is the server's answer to the last handshake.
func (r *Remote) Welcome() wire.Welcome { return r.welcome }

// connectAttempts bounds the attempts of the first connection.
const connectAttempts = 3

// Opened is the server's answer to the last Open (vocabulary, context, its
// model's fingerprint).
func (r *Remote) Opened() wire.Opened { return r.opened }

// fatal marks errors that retrying cannot fix.
type fatal struct{ error }

func (f fatal) Unwrap() error { return f.error }

// connect dials, handshakes and opens (or resumes) the session with prefix.
// A server that does not have the session (another replica behind a
// balancer, a restart, an expiry) refuses the resume and ends the
// connection: the session is then opened anew, from the committed prefix,
// on a fresh connection.
func (r *Remote) connect(ctx context.Context, prefix []int) error {
	err := r.dialOpen(ctx, prefix)
	if errors.Is(err, errNoSession) {
		err = r.dialOpen(ctx, prefix)
	}
	return err
}

// errNoSession: the server does not know the session to resume.
var errNoSession = errors.New("session unknown to the server")

// dialOpen dials, handshakes and opens (or resumes) the session with prefix.
func (r *Remote) dialOpen(ctx context.Context, prefix []int) error {
	c, err := r.dialHello(ctx)
	if err != nil {
		return err
	}
	if err := r.open(ctx, c, prefix); err != nil {
		c.Close()
		return err
	}
	r.conn = c
	return nil
}

// dialHello dials and handshakes.
func (r *Remote) dialHello(ctx context.Context) (net.Conn, error) {
	d := net.Dialer{Timeout: r.cfg.DialTimeout}
	if r.cfg.LocalAddr != "" {
		ip := net.ParseIP(r.cfg.LocalAddr)
		if ip == nil {
			return nil, fatal{fmt.Errorf("local address %q is not an IP address", r.cfg.LocalAddr)}
		}
		d.LocalAddr = &net.TCPAddr{IP: ip}
	}
	c, err := d.DialContext(ctx, "tcp", r.cfg.Addr)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			err = fmt.Errorf("%w (%v)", ErrNoServer, err)
		}
		return nil, err
	}
	if r.cfg.TLS != nil {
		tc := tls.Client(c, r.cfg.TLS)
		tc.SetDeadline(time.Now().Add(r.cfg.DialTimeout))
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			if errors.As(err, new(tls.RecordHeaderError)) {
				return nil, fatal{fmt.Errorf("%w (%v)", ErrNotTLS, err)}
			}
			err = fmt.Errorf("TLS: %w", err)
			if errors.As(err, new(*tls.CertificateVerificationError)) || errors.As(err, new(tls.AlertError)) {
				return nil, fatal{err}
			}
			return nil, err // the connection broke (e.g. a replica going away)
		}
		tc.SetDeadline(time.Time{})
		c = tc
	}
	if r.link != nil {
		c = channel.Shape(c, r.link, nil)
	}
	if err := r.hello(ctx, c); err != nil {
		c.Close()
		if r.cfg.TLS == nil && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)) {
			err = fmt.Errorf("%w (%v)", ErrClosedAtHandshake, err)
		}
		return nil, err
	}
	return c, nil
}

// Errors of the handshake that usually mean that the device and the server
// disagree on TLS.
var (
	// ErrNotTLS: the server answered the TLS handshake with something
	// that is not TLS (a server without TLS).
	ErrNotTLS = errors.New("the server does not speak TLS")
	// ErrClosedAtHandshake: the server closed a connection without TLS
	// before answering the handshake, as a TLS server does.
	ErrClosedAtHandshake = errors.New("the server closed the connection at the handshake, as a TLS server does to a device that connects without TLS")
	// ErrUnreachable wraps the failures to reach the server that retrying
	// did not mend (nothing listening, a connection lost for good), as
	// opposed to a refusal (TLS, token, a model mismatch).
	ErrUnreachable = errors.New("the server cannot be reached")
	// ErrNoServer: nothing listens at the address.
	ErrNoServer = errors.New("nothing listens there: start hlm serve on that machine, or give its address with --server HOST:PORT")
)

// roundTrip sends a frame and reads the answer, within IOTimeout; a
// cancelled ctx ends the wait at once (a fatal error: no retry).
func (r *Remote) roundTrip(ctx context.Context, c net.Conn, t wire.FrameType, body []byte, want wire.FrameType) ([]byte, error) {
	c.SetDeadline(time.Now().Add(r.cfg.IOTimeout))
	// The deadline a cancellation moves to the past must be in place when
	// roundTrip returns: moved later, it would end the connection's next
	// write too (Close's Close frame, the session then left on the server
	// until its idle timeout).
	moved := make(chan struct{})
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)); close(moved) })
	defer func() {
		if !stop() {
			<-moved
		}
	}()
	b, err := r.exchange(c, t, body, want)
	if err != nil && ctx.Err() != nil {
		return nil, fatal{ctx.Err()}
	}
	return b, err
}

func (r *Remote) exchange(c net.Conn, t wire.FrameType, body []byte, want wire.FrameType) ([]byte, error) {
	if err := wire.WriteFrame(c, t, body); err != nil {
		return nil, err
	}
	rt, rb, err := wire.ReadFrame(c, r.cfg.MaxFrame)
	if err != nil {
		return nil, err
	}
	if rt == wire.FrameError {
		e, err := wire.ParseError(rb)
		if err != nil {
			return nil, fatal{err}
		}
		return nil, e
	}
	if rt != want {
		return nil, fatal{fmt.Errorf("expected %v, got %v", want, rt)}
	}
	return rb, nil
}

// hello sends Hello and reads the Welcome.
func (r *Remote) hello(ctx context.Context, c net.Conn) error {
	b, err := r.roundTrip(ctx, c, wire.FrameHello, wire.AppendHello(nil, &wire.Hello{Version: wire.ProtocolVersion, Token: r.cfg.Token}), wire.FrameWelcome)
	if errors.Is(err, wire.ErrHTTP) {
		return fatal{fmt.Errorf("%w: is %s hlm serve's --health or --metrics address? Devices connect to its --listen address", err, r.cfg.Addr)}
	}
	if err != nil {
		return classify(err)
	}
	w, err := wire.ParseWelcome(b)
	if err != nil {
		return fatal{err}
	}
	r.welcome = *w
	return nil
}

// open opens (or resumes, or continues) the session with prefix on c.
func (r *Remote) open(ctx context.Context, c net.Conn, prefix []int) error {
	o := &wire.Open{Resume: r.id, Round: r.acked, Params: r.params, SLM: r.sess.SLM, Tokenizer: r.sess.Tokenizer, LLM: r.sess.LLM}
	send := prefix
	if cont := r.cont; cont != nil && r.id == 0 {
		if k := cont.Keep(prefix); k > 0 {
			o.Resume, o.Keep, o.KeepHash = cont.ID, uint32(k), wire.HashTokens(prefix[:k])
			// The session's fingerprints were checked when it opened.
			o.SLM, o.Tokenizer, o.LLM = "", "", ""
			send = prefix[k:]
		}
	}
	for _, t := range send {
		o.Prefix = append(o.Prefix, int32(t))
	}
	body := wire.AppendOpen(nil, o)
	r.Stats.OpenBytes += int64(len(body) + wire.FrameHeader)
	b, err := r.roundTrip(ctx, c, wire.FrameOpen, body, wire.FrameOpened)
	var we *wire.Error
	if o.Keep > 0 && errors.As(err, &we) && we.Code == wire.ErrCodeNoSession {
		// The parked session is gone (expired, evicted, another replica)
		// or holds other tokens: open a new one with the whole prefix. The
		// error ended this connection.
		r.cfg.Logger.Info("parked session not continued; opening a new one with the whole prompt", "session", o.Resume, "error", we.Message)
		r.cont = nil
		return errNoSession
	}
	if r.id != 0 && errors.As(err, &we) && we.Code == wire.ErrCodeNoSession {
		// The server lost the session (restart, expiry) or never had it
		// (another replica): open a new one that starts from the
		// committed prefix. The error ended this connection.
		r.cfg.Logger.Info("session unknown to the server; reopening with the committed prefix", "session", r.id, "prefix", len(prefix))
		r.id = 0
		return errNoSession
	}
	if err != nil {
		return classify(err)
	}
	op, err := wire.ParseOpened(b)
	if err != nil {
		return fatal{err}
	}
	if o.Resume == 0 && r.opened.Session != 0 {
		r.Stats.Reopens++
		r.Stats.Reprefill += len(prefix)
	}
	if o.Keep > 0 {
		r.Stats.Continued++
		r.Stats.Kept += int(o.Keep)
	}
	r.id, r.opened, r.cont = op.Session, *op, nil
	return nil
}

// classify makes protocol refusals fatal and leaves I/O errors retryable,
// and the server's own failures (shutdown; internal: its LLM failed, the
// session left as it was) too.
func classify(err error) error {
	var we *wire.Error
	if errors.As(err, &we) && we.Code != wire.ErrCodeShutdown && we.Code != wire.ErrCodeNoSession && we.Code != wire.ErrCodeInternal {
		return fatal{we}
	}
	return err
}

// Verify sends an upload and waits for its verdict, reconnecting and
// re-sending as needed.
func (r *Remote) Verify(ctx context.Context, up *wire.Upload) (*wire.Verdict, error) {
	body := wire.AppendUpload(nil, up)
	backoff := r.cfg.Backoff
	var last error
	for attempt := 0; attempt <= r.cfg.Retries; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if attempt > 0 {
			r.Stats.Resent++
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			backoff = min(2*backoff, 5*time.Second)
		}
		if r.conn == nil {
			// The server's view ends before this upload's committed tokens.
			full := r.sess.Prefix()
			if err := r.connect(ctx, full[:len(full)-len(up.Committed)]); err != nil {
				if errors.As(err, new(fatal)) {
					return nil, err
				}
				last = err
				r.cfg.Logger.Warn("reconnect failed", "attempt", attempt+1, "error", err)
				continue
			}
			r.Stats.Reconnects++
		}
		vb, err := r.roundTrip(ctx, r.conn, wire.FrameUpload, body, wire.FrameVerdict)
		r.Stats.UploadBytes += int64(len(body) + wire.FrameHeader)
		if err == nil {
			v, perr := wire.ParseVerdict(vb, int(r.opened.Vocab))
			if perr != nil {
				return nil, perr
			}
			if v.Round != up.Round {
				return nil, fmt.Errorf("verdict for round %d, sent %d", v.Round, up.Round)
			}
			r.Stats.VerdictBytes += int64(len(vb) + wire.FrameHeader)
			r.acked = up.Round
			return v, nil
		}
		if err = classify(err); errors.As(err, new(fatal)) {
			return nil, err
		}
		last = err
		r.cfg.Logger.Warn("connection lost; will reconnect and re-send", "round", up.Round, "error", err)
		r.conn.Close()
		r.conn = nil
	}
	return nil, fmt.Errorf("%w: gave up after %d attempts: %w", ErrUnreachable, r.cfg.Retries+1, last)
}

// Close ends the session (best effort) and the connection.
func (r *Remote) Close() error {
	if r.conn == nil {
		return nil
	}
	r.conn.SetWriteDeadline(time.Now().Add(time.Second))
	wire.WriteFrame(r.conn, wire.FrameClose, nil)
	err := r.conn.Close()
	r.conn = nil
	return err
}

// Continuing is the parked session that the next Open still tries to
// continue (Session.Continue): nil once the session was continued, or
// refused by the server.
func (r *Remote) Continuing() *Parked { return r.cont }

// Park ends the connection but leaves the session on the server, for a
// later generation whose prompt begins with tokens to continue
// (Session.Continue). tokens are what the server holds of the session:
// the device's sequence after its last verified round, without what it
// committed on its own since (hybrid.Device.Synced). Without an open
// session Park is Close and returns nil.
func (r *Remote) Park(tokens []int) *Parked {
	if r.id == 0 {
		r.Close()
		return nil
	}
	if r.conn != nil {
		r.conn.SetWriteDeadline(time.Now().Add(time.Second))
		wire.WriteFrame(r.conn, wire.FramePark, nil)
		r.conn.Close()
		r.conn = nil
	}
	return &Parked{ID: r.id, Tokens: slices.Clone(tokens)}
}

// Drop closes the connection abruptly without ending the session (for
// tests and fault injection).
func (r *Remote) Drop() {
	if r.conn != nil {
		r.conn.Close()
	}
}
