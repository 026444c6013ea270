package cloud

import (
	"bytes"
	"errors"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/wire"
)

// rawOpen dials addr, says Hello and sends o, as a device that speaks the
// protocol frame by frame: for the rules an honest device (edge.Remote)
// never puts to the test. It returns the connection and the server's
// answer to the Open (Opened or Error).
func rawOpen(t *testing.T, addr string, o *wire.Open) (net.Conn, wire.FrameType, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(waitLimit))
	msg := wire.AppendFrame(nil, wire.FrameHello, wire.AppendHello(nil, &wire.Hello{Version: wire.ProtocolVersion}))
	if _, err := c.Write(wire.AppendFrame(msg, wire.FrameOpen, wire.AppendOpen(nil, o))); err != nil {
		t.Fatal(err)
	}
	for {
		ft, body, err := wire.ReadFrame(c, wire.DefaultMaxFrame)
		if err != nil {
			t.Fatal(err)
		}
		if ft != wire.FrameWelcome {
			return c, ft, body
		}
	}
}

// mustOpen is rawOpen of a session the server must open.
func mustOpen(t *testing.T, addr string, o *wire.Open) (net.Conn, *wire.Opened) {
	t.Helper()
	c, ft, body := rawOpen(t, addr, o)
	op, err := wire.ParseOpened(body)
	if ft != wire.FrameOpened || err != nil {
		t.Fatalf("open %+v: a %v frame %q", o, ft, body)
	}
	return c, op
}

// exchange sends a frame on c and reads the answer (nil body and type 0
// when the connection ended instead).
func exchange(t *testing.T, c net.Conn, ft wire.FrameType, body []byte) (wire.FrameType, []byte) {
	t.Helper()
	if err := wire.WriteFrame(c, ft, body); err != nil {
		t.Fatal(err)
	}
	at, ab, err := wire.ReadFrame(c, wire.DefaultMaxFrame)
	if err != nil {
		return 0, nil
	}
	return at, ab
}

// errorCode is the code of an Error frame (0: not an Error frame).
func errorCode(ft wire.FrameType, body []byte) uint16 {
	if ft != wire.FrameError {
		return 0
	}
	e, err := wire.ParseError(body)
	if err != nil {
		return 0
	}
	return e.Code
}

// coupledParams are the wire parameters of the raw-protocol tests: the
// coupled method verifies drafts without payloads.
func coupledParams() string {
	p := hybrid.DefaultParams()
	p.Method = hybrid.Coupled
	return p.SessionParams()
}

// TestUploadRounds: after round 1, a session verifies round 2; answers
// round 1 sent again (its verdict lost) with the same verdict, from its
// cache, without verifying it again; and refuses round 1 again with other
// content, a round skipped and a round before the last.
func TestUploadRounds(t *testing.T) {
	_, addr := start(t, Config{LLM: tinyLLM(t)})
	pj := coupledParams()
	first := wire.AppendUpload(nil, &wire.Upload{Round: 1, Drafts: []wire.Draft{{Token: 7}, {Token: 9}}})
	for _, c := range []struct {
		name  string
		up    *wire.Upload
		round uint32 // of the verdict; 0: refused (ErrCodeBad)
	}{
		{"the next round", &wire.Upload{Round: 2, Drafts: []wire.Draft{{Token: 7}}}, 2},
		{"the last round again", &wire.Upload{Round: 1, Drafts: []wire.Draft{{Token: 7}, {Token: 9}}}, 1},
		{"the last round with other drafts", &wire.Upload{Round: 1, Drafts: []wire.Draft{{Token: 7}, {Token: 8}}}, 0},
		{"a round skipped", &wire.Upload{Round: 3, Drafts: []wire.Draft{{Token: 7}}}, 0},
		{"a round before the last", &wire.Upload{Round: 0, Drafts: []wire.Draft{{Token: 7}}}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, _ := mustOpen(t, addr, &wire.Open{Params: pj, Prefix: []int32{1, 5}})
			ft, v1 := exchange(t, conn, wire.FrameUpload, first)
			if ft != wire.FrameVerdict {
				t.Fatalf("round 1: a %v frame %q", ft, v1)
			}
			ft, body := exchange(t, conn, wire.FrameUpload, wire.AppendUpload(nil, c.up))
			if c.round == 0 {
				if code := errorCode(ft, body); code != wire.ErrCodeBad {
					t.Fatalf("a %v frame %q, want refused (error %d)", ft, body, wire.ErrCodeBad)
				}
				return
			}
			v, err := wire.ParseVerdict(body, 32000)
			if ft != wire.FrameVerdict || err != nil || v.Round != c.round {
				t.Fatalf("a %v frame %q (%v), want the verdict of round %d", ft, body, err, c.round)
			}
			if c.round == 1 && !bytes.Equal(body, v1) {
				t.Errorf("round 1 again: verdict %x, the first time %x", body, v1)
			}
		})
	}
}

// TestResumeInStep: a device that reconnects resumes its session when its
// committed prefix and round are the server's, or a round behind (the
// verdict of its last upload was lost: it sends the upload again and gets
// that verdict); a session out of step with the device — a round ahead of
// it, other tokens, more tokens than it holds — is refused
// (ErrCodeNoSession: the device opens a new one).
func TestResumeInStep(t *testing.T) {
	_, addr := start(t, Config{LLM: tinyLLM(t)})
	pj := coupledParams()
	drafts := []wire.Draft{{Token: 7}, {Token: 9}}
	first := wire.AppendUpload(nil, &wire.Upload{Round: 1, Drafts: drafts})
	for _, c := range []struct {
		name  string
		round uint32
		// prefix is the device's, given the session's tokens after round 1
		// (before: the prompt).
		prefix func(before, after []int32) []int32
		ok     bool
	}{
		{"in step", 1, func(_, after []int32) []int32 { return after }, true},
		{"a verdict behind", 0, func(before, _ []int32) []int32 { return before }, true},
		{"a round ahead", 2, func(_, after []int32) []int32 { return after }, false},
		{"other tokens", 1, func(_, after []int32) []int32 {
			other := slices.Clone(after)
			other[1]++
			return other
		}, false},
		{"more tokens than it holds", 1, func(_, after []int32) []int32 { return append(slices.Clone(after), 3) }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := []int32{1, 5}
			conn, op := mustOpen(t, addr, &wire.Open{Params: pj, Prefix: before})
			ft, v1 := exchange(t, conn, wire.FrameUpload, first)
			v, err := wire.ParseVerdict(v1, 32000)
			if ft != wire.FrameVerdict || err != nil {
				t.Fatalf("round 1: a %v frame %q", ft, v1)
			}
			conn.Close()
			after := slices.Clone(before)
			for _, d := range drafts[:v.Accepted] {
				after = append(after, d.Token)
			}
			after = append(after, v.Token)
			back, ft, body := rawOpen(t, addr, &wire.Open{Resume: op.Session, Round: c.round, Params: pj, Prefix: c.prefix(before, after)})
			if !c.ok {
				if code := errorCode(ft, body); code != wire.ErrCodeNoSession {
					t.Fatalf("resume: a %v frame %q, want refused (error %d)", ft, body, wire.ErrCodeNoSession)
				}
				return
			}
			resumed, err := wire.ParseOpened(body)
			if ft != wire.FrameOpened || err != nil || resumed.Session != op.Session || resumed.Round != 1 {
				t.Fatalf("resume: a %v frame %q, want session %d opened at round 1", ft, body, op.Session)
			}
			next := wire.AppendUpload(nil, &wire.Upload{Round: c.round + 1, Drafts: []wire.Draft{{Token: 7}}})
			if c.round == 0 {
				next = first
			}
			ft, body = exchange(t, back, wire.FrameUpload, next)
			if ft != wire.FrameVerdict || (c.round == 0 && !bytes.Equal(body, v1)) {
				t.Errorf("round %d after the resume: a %v frame %q (round 1's verdict: %q)", c.round+1, ft, body, v1)
			}
		})
	}
}

// TestOpenRefusals: a session is opened only for a device that shares the
// server's tokenizer, wants its LLM (or any), sends a prompt and its
// parameters in their wire form, and, for the replica method, drafts with
// a model the server has; the rest is refused at the Open.
func TestOpenRefusals(t *testing.T) {
	ms := models(t)
	_, addr := start(t, Config{LLM: ms.LLM, Replicas: []model.Model{ms.SLM}})
	pj := params(hybrid.QS, 1).SessionParams()
	for _, c := range []struct {
		name string
		edit func(o *wire.Open)
		code uint16 // 0: opened
	}{
		{"the server's models", func(o *wire.Open) { o.LLM = ms.LLM.Fingerprint() }, 0},
		{"the replica method", func(o *wire.Open) { o.Params = params(hybrid.Replica, 1).SessionParams() }, 0},
		{"another tokenizer", func(o *wire.Open) { o.Tokenizer = "other" }, wire.ErrCodeRefused},
		{"no tokenizer", func(o *wire.Open) { o.Tokenizer = "" }, wire.ErrCodeRefused},
		{"another LLM", func(o *wire.Open) { o.LLM = "other" }, wire.ErrCodeRefused},
		{"the replica method with another draft", func(o *wire.Open) {
			o.Params, o.SLM = params(hybrid.Replica, 1).SessionParams(), "other"
		}, wire.ErrCodeRefused},
		{"an empty prompt", func(o *wire.Open) { o.Prefix = nil }, wire.ErrCodeBad},
		{"parameters in JSON", func(o *wire.Open) { o.Params = `{"method":"q-s","seed":1}` }, wire.ErrCodeBad},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := &wire.Open{Params: pj, SLM: ms.SLM.Fingerprint(), Tokenizer: ms.Tok.Fingerprint(), Prefix: []int32{1, 9}}
			c.edit(o)
			_, ft, body := rawOpen(t, addr, o)
			if c.code == 0 {
				if ft != wire.FrameOpened {
					t.Errorf("a %v frame %q, want opened", ft, body)
				}
			} else if code := errorCode(ft, body); code != c.code {
				t.Errorf("a %v frame %q, want refused (error %d)", ft, body, c.code)
			}
		})
	}
}

// TestUploadOfAnEndedSession: an upload that a connection read before its
// session ended (closed on another connection the device resumed it on,
// or expired, or evicted), verified after, is refused (ErrCodeNoSession):
// the session's sequences are freed in the LLM.
func TestUploadOfAnEndedSession(t *testing.T) {
	srv, addr := start(t, Config{LLM: tinyLLM(t)})
	conn, op := mustOpen(t, addr, &wire.Open{Params: coupledParams(), Prefix: []int32{1, 5}})
	ss := srv.session(op.Session)
	if err := wire.WriteFrame(conn, wire.FrameClose, nil); err != nil {
		t.Fatal(err)
	}
	ended := func() bool {
		ss.mu.Lock()
		defer ss.mu.Unlock()
		return ss.ended
	}
	for deadline := time.Now().Add(waitLimit); !ended() && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	_, err := srv.upload(ss, ss.gen, wire.AppendUpload(nil, &wire.Upload{Round: 1, Drafts: []wire.Draft{{Token: 7}}}))
	var pe *protoError
	if !errors.As(err, &pe) || pe.code != wire.ErrCodeNoSession {
		t.Errorf("an upload of a closed session: %v, want refused (no session)", err)
	}
}

// TestResumeOfASessionThatLeft: a resume that found its session and waits
// for it (an upload of the old connection holds it) while the session
// leaves the server (evicted or expired meanwhile) is refused as unknown
// when it gets the session, not attached to one whose end is under way.
func TestResumeOfASessionThatLeft(t *testing.T) {
	srv, addr := start(t, Config{LLM: tinyLLM(t)})
	pj := coupledParams()
	_, op := mustOpen(t, addr, &wire.Open{Params: pj, Prefix: []int32{1, 5}})
	ss := srv.session(op.Session)
	ss.mu.Lock() // an upload of the old connection, waiting for its batch
	resumed := resumeAside(srv, &wire.Open{Resume: op.Session, Params: pj, Prefix: []int32{1, 5}})
	srv.mu.Lock()
	delete(srv.sessions, ss.id) // as an eviction takes it out
	srv.mu.Unlock()
	ss.mu.Unlock()
	err := receive(t, resumed, "answer to the resume")
	var pe *protoError
	if !errors.As(err, &pe) || pe.code != wire.ErrCodeNoSession {
		t.Errorf("a resume of a session that left the server while the resume waited: %v, want refused (no session)", err)
	}
}

// resumeAside has srv open o (a resume) on a connection of its own, in a
// goroutine, and returns the answer's channel after 50 ms: time for the
// resume to find its session and wait for the session's lock, which the
// caller holds (as an upload of the old connection does).
func resumeAside(srv *Server, o *wire.Open) <-chan error {
	resumed := make(chan error, 1)
	go func() {
		a, b := net.Pipe()
		defer a.Close()
		defer b.Close()
		_, err := srv.open(a, wire.AppendOpen(nil, o))
		resumed <- err
	}()
	time.Sleep(50 * time.Millisecond)
	return resumed
}
