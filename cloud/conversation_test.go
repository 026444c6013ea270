package cloud

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hlmproject/hlm/edge"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/policy"
	"github.com/hlmproject/hlm/sim"
	"github.com/hlmproject/hlm/wire"
)

// turns runs a conversation of two generations on g: the first with
// prompt, the second with the first's sequence and more text after it
// (seed+1). It returns the second prompt, result and stats.
func turns(t *testing.T, ms *sim.Models, g *edge.Generator, p hybrid.Params, more string) ([]int, hybrid.Result, edge.Stats) {
	t.Helper()
	next := firstTurn(t, ms, g, p, more)
	p.Seed++
	r2, st, err := g.OneTokens(context.Background(), p, next, nil)
	if err != nil {
		t.Fatal(err)
	}
	return next, r2, st
}

// countingModel counts the tokens its sessions evaluate.
type countingModel struct {
	model.Model
	n atomic.Int64
}

func (m *countingModel) NewSession() model.Session {
	return &countingSession{m.Model.NewSession(), &m.n}
}

type countingSession struct {
	model.Session
	n *atomic.Int64
}

func (s *countingSession) Eval(tokens []int) ([][]float32, error) {
	s.n.Add(int64(len(tokens)))
	return s.Session.Eval(tokens)
}

func (s *countingSession) Prefill(tokens []int) ([]float32, error) {
	s.n.Add(int64(len(tokens)))
	return s.Session.Prefill(tokens)
}

// firstTurn runs a conversation's first turn, prompt, on g and returns
// the second turn's prompt: the first's sequence and then more.
func firstTurn(t *testing.T, ms *sim.Models, g *edge.Generator, p hybrid.Params, more string) []int {
	t.Helper()
	ids := ms.Tok.Encode(prompt, true)
	r1, _, err := g.OneTokens(context.Background(), p, ids, nil)
	if err != nil {
		t.Fatal(err)
	}
	return append(append(append([]int(nil), ids...), r1.Tokens...), ms.Tok.Encode(more, false)...)
}

// TestConversationContinues: with Conversations, a generation whose prompt
// extends the last one's sequence continues its parked session and sends
// only the new tokens, and takes over the last one's draft-model session —
// and, on hlm's engine, generates exactly what a new session with the
// whole prompt generates (tokens, bits, acceptance), for every method,
// with at least the first prompt's tokens fewer evaluated by the draft.
func TestConversationContinues(t *testing.T) {
	ms := models(t)
	prom := NewPrometheus()
	srv, addr := start(t, Config{LLM: ms.LLM, Replicas: []model.Model{ms.SLM}, Metrics: prom})
	prom.AddParked(srv.Parked)
	prom.AddKVBytes(srv.KVBytes)
	kept := 0
	for _, m := range hybrid.Methods {
		t.Run(m, func(t *testing.T) {
			p := params(m, 3)
			slm := &countingModel{Model: ms.SLM}
			g, err := edge.NewGenerator(edge.Config{Addr: addr}, slm, p)
			if err != nil {
				t.Fatal(err)
			}
			g.Conversations = &edge.Conversations{}
			var before int64
			g.Wrap = func(r *edge.Remote) hybrid.Verifier { before = slm.n.Load(); return r }
			next, got, st := turns(t, ms, g, p, " The end. One day, a dog")
			drafted := slm.n.Load() - before
			if st.Continued != 1 || st.Kept < len(ms.Tok.Encode(prompt, true)) {
				t.Fatalf("the second turn continued %d sessions, kept %d tokens of %d", st.Continued, st.Kept, len(next))
			}
			kept += st.Kept
			p.Seed++
			freshSLM := &countingModel{Model: ms.SLM}
			fg, err := edge.NewGenerator(edge.Config{Addr: addr}, freshSLM, p)
			if err != nil {
				t.Fatal(err)
			}
			want, fresh, err := fg.OneTokens(context.Background(), p, next, nil)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(ms.Tok.Encode(prompt, true)); freshSLM.n.Load() > 0 && freshSLM.n.Load()-drafted < int64(n) {
				t.Errorf("the draft model evaluated %d tokens in the continued turn, %d in a new session: the first prompt's %d were evaluated again", drafted, freshSLM.n.Load(), n)
			}
			if fmt.Sprint(got.Tokens) != fmt.Sprint(want.Tokens) || got.UplinkBits != want.UplinkBits || got.Accepted != want.Accepted {
				t.Fatalf("continued: bits %d accepted %d %v\nnew session: bits %d accepted %d %v", got.UplinkBits, got.Accepted, got.Tokens, want.UplinkBits, want.Accepted, want.Tokens)
			}
			// The continuing Open carries the parameters, the kept count
			// and hash, and the new tokens: nothing else.
			o := &wire.Open{Resume: 1, Params: p.SessionParams(), Keep: uint32(st.Kept), KeepHash: 1}
			for _, id := range next[st.Kept:] {
				o.Prefix = append(o.Prefix, int32(id))
			}
			if want := int64(len(wire.AppendOpen(nil, o)) + wire.FrameHeader); st.OpenBytes != want || st.OpenBytes >= fresh.OpenBytes {
				t.Errorf("the continuing Open took %d bytes, want %d (a new session's: %d)", st.OpenBytes, want, fresh.OpenBytes)
			}
			if g.Conversations.Len() != 1 {
				t.Errorf("%d sessions parked after two turns, want 1 (the continued one, parked again)", g.Conversations.Len())
			}
		})
	}
	// Each conversation's last turn is parked (the server reads the Park
	// frame after the device has gone on).
	for deadline := time.Now().Add(5 * time.Second); srv.Parked() != len(hybrid.Methods) && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	rec := httptest.NewRecorder()
	prom.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{fmt.Sprintf("hlm_sessions_continued_total %d", len(hybrid.Methods)), fmt.Sprintf("hlm_kept_positions_total %d", kept),
		fmt.Sprintf("hlm_sessions_parked %d", len(hybrid.Methods))} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if m := regexp.MustCompile(`(?m)^hlm_kv_cache_bytes (\S+)$`).FindStringSubmatch(rec.Body.String()); m == nil || m[1] == "0" {
		t.Errorf("hlm_kv_cache_bytes: %q, want the parked sessions' bytes", m)
	}
}

// TestConversationFallsBack: a parked session the server no longer has
// (another server), or whose tokens are not the device's, is refused, and
// the generation opens a new session with its whole prompt — the same
// tokens as without Conversations. A refused parked session is ended, not
// left on the server until its idle timeout.
func TestConversationFallsBack(t *testing.T) {
	ms := models(t)
	p := params(hybrid.QS, 8)
	for _, c := range []struct {
		name   string
		tamper func(g *edge.Generator, next []int, other string)
	}{
		{"server lost it", func(g *edge.Generator, _ []int, other string) { g.Conn.Addr = other }},
		{"other tokens", func(g *edge.Generator, next []int, _ string) {
			pk := g.Conversations.Take(next)
			pk.Tokens[2]++ // the server holds what the device sent, not this
			next[2]++
			g.Conversations.Put(pk)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, addr := start(t, Config{LLM: ms.LLM})
			_, other := start(t, Config{LLM: ms.LLM})
			g := generator(t, ms, addr, p)
			g.Conversations = &edge.Conversations{}
			next := firstTurn(t, ms, g, p, " The end.")
			// The server reads the Park frame after the device has gone
			// on: a session it has not yet seen parked is still attached,
			// and a refused continuation leaves an attached one alone.
			for deadline := time.Now().Add(5 * time.Second); srv.Parked() != 1 && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			c.tamper(g, next, other)
			q := p
			q.Seed++
			got, st, err := g.OneTokens(context.Background(), q, next, nil)
			if err != nil {
				t.Fatal(err)
			}
			if c.name == "other tokens" && srv.Sessions() != 1 {
				t.Errorf("%d sessions on the server, want 1: the new one, parked (the refused one ended)", srv.Sessions())
			}
			want, wst, err := generator(t, ms, addr, q).OneTokens(context.Background(), q, next, nil)
			if err != nil {
				t.Fatal(err)
			}
			if st.Continued != 0 || fmt.Sprint(got.Tokens) != fmt.Sprint(want.Tokens) {
				t.Fatalf("continued %d\n got %v\nwant %v", st.Continued, got.Tokens, want.Tokens)
			}
			if st.OpenBytes <= wst.OpenBytes {
				t.Errorf("a refused continuation and a new session took %d bytes of Open, a new session alone %d", st.OpenBytes, wst.OpenBytes)
			}
		})
	}
}

// TestLlamaCppConversations: on the llama.cpp backend with fewer slots
// than conversations, each conversation's second turn continues its parked
// session (whose sequence was moved out of its slot meanwhile) and
// completes. Its tokens may differ in the last bits of a logit from a new
// session's (llama.cpp's logits depend on how the prefix was evaluated:
// model/llamacpp's determinism contract), so only completion is checked.
func TestLlamaCppConversations(t *testing.T) {
	ms, lc := lcModels(t, "@c=256@np=2")
	_, addr := start(t, Config{LLM: ms.LLM})
	const n = 3
	gens := make([]*edge.Generator, n)
	seqs := make([][]int, n)
	for i := range gens {
		p := params(hybrid.QS, uint64(20+i))
		gens[i] = generator(t, ms, addr, p)
		gens[i].Conversations = &edge.Conversations{}
		ids := ms.Tok.Encode(fmt.Sprintf("Story %d: %s", i, prompt), true)
		r, _, err := gens[i].OneTokens(context.Background(), p, ids, nil)
		if err != nil {
			t.Fatal(err)
		}
		seqs[i] = append(append(append([]int(nil), ids...), r.Tokens...), ms.Tok.Encode(" The end.", false)...)
	}
	for i, g := range gens {
		p := params(hybrid.QS, uint64(40+i))
		r, st, err := g.OneTokens(context.Background(), p, seqs[i], nil)
		if err != nil {
			t.Fatal(err)
		}
		if st.Continued != 1 || len(r.Tokens) == 0 {
			t.Errorf("conversation %d: continued %d, %d tokens", i, st.Continued, len(r.Tokens))
		}
	}
	if s := lc.Stats(); s.Evictions == 0 {
		t.Errorf("no session was moved out of its slot (%+v): the test does not test that", s)
	}
}

// skipFirst is an upload rule that commits its first n drafts on the
// device and uploads the rest.
type skipFirst struct {
	n    int
	seen atomic.Int64
}

func (u *skipFirst) Upload(policy.Token, *rand.Rand) bool { return u.seen.Add(1) > int64(u.n) }

// interrupting cancels its generation in the first round whose upload
// carries tokens committed on the device: before sending it (verify
// false), or after the server verified it but before the device applies
// the verdict (verify true).
type interrupting struct {
	r      *edge.Remote
	cancel context.CancelFunc
	verify bool
}

func (v *interrupting) Verify(ctx context.Context, up *wire.Upload) (*wire.Verdict, error) {
	if len(up.Committed) == 0 {
		return v.r.Verify(ctx, up)
	}
	if v.verify {
		if _, err := v.r.Verify(ctx, up); err != nil {
			return nil, err
		}
	}
	v.cancel()
	return nil, ctx.Err()
}

// TestConversationAfterInterruptedRound: a generation interrupted in a
// round whose upload carries tokens the device committed on its own is
// parked with what the server holds whether or not the upload reached it,
// so that the next turn, whose prompt holds those tokens, continues it.
func TestConversationAfterInterruptedRound(t *testing.T) {
	ms := models(t)
	_, addr := start(t, Config{LLM: ms.LLM})
	for _, verified := range []bool{false, true} {
		t.Run(fmt.Sprintf("verified=%v", verified), func(t *testing.T) {
			p := params(hybrid.HLM, 5)
			g := generator(t, ms, addr, p)
			g.Conversations = &edge.Conversations{}
			g.Uploader = &skipFirst{n: 2}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			g.Wrap = func(r *edge.Remote) hybrid.Verifier { return &interrupting{r: r, cancel: cancel, verify: verified} }
			ids := ms.Tok.Encode(prompt, true)
			r1, _, err := g.OneTokens(ctx, p, ids, nil)
			if err != nil || r1.Stop != hybrid.StopInterrupted || len(r1.Tokens) != 2 {
				t.Fatalf("first turn: %v, stop %q, %d tokens; want interrupted after the 2 committed on the device", err, r1.Stop, len(r1.Tokens))
			}
			g.Wrap = nil
			next := append(append(append([]int(nil), ids...), r1.Tokens...), ms.Tok.Encode(" The end.", false)...)
			p.Seed++
			_, st, err := g.OneTokens(context.Background(), p, next, nil)
			if err != nil {
				t.Fatal(err)
			}
			if st.Continued != 1 {
				t.Errorf("the next turn continued %d sessions, want 1", st.Continued)
			}
		})
	}
}

// TestConversationKeptWhenUnreachable: a turn that cannot reach the server
// leaves the conversation parked, and the next turn continues it.
func TestConversationKeptWhenUnreachable(t *testing.T) {
	ms := models(t)
	_, addr := start(t, Config{LLM: ms.LLM})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := ln.Addr().String()
	ln.Close() // nothing listens there now
	p := params(hybrid.QS, 4)
	g := generator(t, ms, addr, p)
	g.Conversations = &edge.Conversations{}
	next := firstTurn(t, ms, g, p, " The end.")
	g.Conn.Addr, g.Conn.Retries = gone, 1
	if _, _, err := g.OneTokens(context.Background(), p, next, nil); err == nil {
		t.Fatal("a turn against nothing listening succeeded")
	}
	if g.Conversations.Len() != 1 {
		t.Fatalf("%d sessions parked after the failed turn, want 1", g.Conversations.Len())
	}
	g.Conn.Addr = addr
	if _, st, err := g.OneTokens(context.Background(), p, next, nil); err != nil || st.Continued != 1 {
		t.Errorf("the turn after: continued %d, %v", st.Continued, err)
	}
}

// staleUpload is a Verifier that, before the round numbered at, has the
// server verify an upload for that round as a connection of the session's
// generation gen would (one whose goroutine read it and was held up while
// the device parked the session and continued it elsewhere).
type staleUpload struct {
	r   *edge.Remote
	srv *Server
	ss  *session
	gen uint64
	at  uint32
	err error
}

func (v *staleUpload) Verify(ctx context.Context, up *wire.Upload) (*wire.Verdict, error) {
	if up.Round == v.at {
		_, v.err = v.srv.upload(v.ss, v.gen, wire.AppendUpload(nil, &wire.Upload{Round: v.at}))
	}
	return v.r.Verify(ctx, up)
}

// TestStaleUploadAfterContinuation: a continuation counts its rounds from
// the start again, and an upload of the generation before it, verified
// late, is refused instead of being taken as the continuation's round —
// which would have the device's own round refused as "re-sent with
// different content" and its turn fail.
func TestStaleUploadAfterContinuation(t *testing.T) {
	ms := models(t)
	srv, addr := start(t, Config{LLM: ms.LLM})
	p := params(hybrid.QS, 6)
	g := generator(t, ms, addr, p)
	g.Conversations = &edge.Conversations{}
	next := firstTurn(t, ms, g, p, " The end.")
	for deadline := time.Now().Add(5 * time.Second); srv.Parked() != 1 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	srv.mu.Lock()
	var ss *session
	for _, s := range srv.sessions {
		ss = s
	}
	srv.mu.Unlock()
	ss.mu.Lock()
	gen := ss.gen
	ss.mu.Unlock()
	var stale *staleUpload
	g.Wrap = func(r *edge.Remote) hybrid.Verifier {
		stale = &staleUpload{r: r, srv: srv, ss: ss, gen: gen, at: 2}
		return stale
	}
	p.Seed++
	_, st, err := g.OneTokens(context.Background(), p, next, nil)
	if err != nil {
		t.Fatalf("the continued turn failed: %v", err)
	}
	if st.Continued != 1 {
		t.Fatalf("the turn continued %d sessions, want 1", st.Continued)
	}
	var pe *protoError
	if !errors.As(stale.err, &pe) || pe.code != wire.ErrCodeNoSession {
		t.Errorf("the last generation's upload for round %d: %v, want refused (no session)", stale.at, stale.err)
	}
}

// TestRefusedContinuationBeforePark: a continuation refused (its tokens
// differ) while the session's connection still holds it — the server has
// not yet read the Park the device sent — ends the session when the Park
// comes, rather than keeping it parked until the idle timeout.
func TestRefusedContinuationBeforePark(t *testing.T) {
	ms := models(t)
	srv, addr := start(t, Config{LLM: ms.LLM})
	pj := params(hybrid.QS, 1).SessionParams()
	prefix := []int32{1, 9, 14, 27}
	c, opened := mustOpen(t, addr, &wire.Open{Params: pj, SLM: ms.SLM.Fingerprint(), Tokenizer: ms.Tok.Fingerprint(), Prefix: prefix})
	wrong := []int{1, 9, 14, 28}
	if ft, body := func() (wire.FrameType, []byte) {
		_, ft, body := rawOpen(t, addr, &wire.Open{Resume: opened.Session, Params: pj, Keep: 4, KeepHash: wire.HashTokens(wrong), Prefix: []int32{5}})
		return ft, body
	}(); ft != wire.FrameError {
		t.Fatalf("a continuation with other tokens: %v frame %q, want refused", ft, body)
	}
	if n := srv.Sessions(); n != 1 {
		t.Fatalf("%d sessions while the first connection holds its own, want 1", n)
	}
	if err := wire.WriteFrame(c, wire.FramePark, nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for srv.Sessions() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n, p := srv.Sessions(), srv.Parked(); n != 0 {
		t.Errorf("%d sessions (%d parked) after the Park of the session its device gave up, want 0", n, p)
	}
}

// TestKVBytes: the server counts the KV cache of a parked session (its
// LLM's, on hlm's engine: between its length's and twice that) and not
// that of a closed one.
func TestKVBytes(t *testing.T) {
	ms := models(t)
	llm := ms.LLM.(*llama.Model)
	srv, addr := start(t, Config{LLM: ms.LLM})
	p := params(hybrid.QS, 2)
	closing := generator(t, ms, addr, p)
	if _, _, err := closing.One(context.Background(), p, prompt, nil); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); srv.Sessions() != 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if n := srv.KVBytes(); n != 0 {
		t.Fatalf("%d bytes of KV cache after the only session closed", n)
	}
	g := generator(t, ms, addr, p)
	g.Conversations = &edge.Conversations{}
	ids := ms.Tok.Encode(prompt, true)
	r, _, err := g.OneTokens(context.Background(), p, ids, nil)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); srv.Parked() != 1 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	n := len(ids) + len(r.Tokens)
	lo, hi := llm.KVBytes(n-2), llm.KVBytes(min(2*n, llm.Config().SeqLen))
	if got := srv.KVBytes(); got < lo || got > hi {
		t.Errorf("a parked session of %d tokens holds %d bytes of KV cache, want %d…%d", n, got, lo, hi)
	}
}

// TestContinuationRules: a parked session is continued by an Open that
// keeps tokens it holds (their hash) and adds a prompt that fits the
// context; the continuation's rounds count from the Open's again, the
// last generation's verdicts left behind (its round 1 with other drafts is
// verified, not taken as round 1 sent again). An Open that keeps other
// tokens, or more than the session holds, or of a session not there, is
// refused (ErrCodeNoSession: the device sends its whole prompt to a new
// session); one whose prompt fills the context, as a new session's would
// (ErrCodeLimit) — the server's context (Config.MaxContext), which may be
// shorter than its LLM's.
func TestContinuationRules(t *testing.T) {
	const ctx = 48 // tinyLLM's is 64
	for _, c := range []struct {
		name string
		// open is the continuation of session id, which holds seq.
		open func(id uint64, seq []int) *wire.Open
		code uint16 // 0: continued
	}{
		{"the tokens it holds and more", func(id uint64, seq []int) *wire.Open {
			return &wire.Open{Resume: id, Keep: uint32(len(seq)), KeepHash: wire.HashTokens(seq), Prefix: []int32{5}}
		}, 0},
		{"other tokens", func(id uint64, seq []int) *wire.Open {
			other := slices.Clone(seq)
			other[len(other)-1]++
			return &wire.Open{Resume: id, Keep: uint32(len(seq)), KeepHash: wire.HashTokens(other), Prefix: []int32{5}}
		}, wire.ErrCodeNoSession},
		{"more tokens than it holds", func(id uint64, seq []int) *wire.Open {
			more := append(slices.Clone(seq), make([]int, ctx-2-len(seq))...)
			return &wire.Open{Resume: id, Keep: uint32(len(more)), KeepHash: wire.HashTokens(more), Prefix: []int32{5}}
		}, wire.ErrCodeNoSession},
		{"a session not here", func(id uint64, seq []int) *wire.Open {
			return &wire.Open{Resume: id + 1, Keep: uint32(len(seq)), KeepHash: wire.HashTokens(seq), Prefix: []int32{5}}
		}, wire.ErrCodeNoSession},
		{"a prompt that fills the context", func(id uint64, seq []int) *wire.Open {
			return &wire.Open{Resume: id, Keep: uint32(len(seq)), KeepHash: wire.HashTokens(seq), Prefix: make([]int32, ctx-len(seq))}
		}, wire.ErrCodeLimit},
	} {
		t.Run(c.name, func(t *testing.T) {
			llm := tinyLLM(t)
			srv, addr := start(t, Config{LLM: llm, MaxContext: ctx})
			if srv.Context() != ctx {
				t.Fatalf("the server's context is %d, not %d", srv.Context(), ctx)
			}
			pj := coupledParams()
			seq := []int{1, 9, 14, 27}
			conn, op := mustOpen(t, addr, &wire.Open{Params: pj, Prefix: []int32{1, 9, 14, 27}})
			drafts := []wire.Draft{{Token: 7}, {Token: 9}}
			ft, body := exchange(t, conn, wire.FrameUpload, wire.AppendUpload(nil, &wire.Upload{Round: 1, Drafts: drafts}))
			v, err := wire.ParseVerdict(body, llm.Config().Vocab)
			if ft != wire.FrameVerdict || err != nil {
				t.Fatalf("round 1: a %v frame %q", ft, body)
			}
			for _, d := range drafts[:v.Accepted] {
				seq = append(seq, int(d.Token))
			}
			seq = append(seq, int(v.Token))
			if err := wire.WriteFrame(conn, wire.FramePark, nil); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(waitLimit); srv.Parked() != 1 && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			o := c.open(op.Session, seq)
			o.Params = pj
			next, ft, body := rawOpen(t, addr, o)
			if c.code != 0 {
				if code := errorCode(ft, body); code != c.code {
					t.Fatalf("a %v frame %q, want refused (error %d)", ft, body, c.code)
				}
				return
			}
			if cont, err := wire.ParseOpened(body); ft != wire.FrameOpened || err != nil || cont.Session != op.Session || cont.Round != 0 {
				t.Fatalf("a %v frame %q, want session %d continued at round 0", ft, body, op.Session)
			}
			ft, body = exchange(t, next, wire.FrameUpload, wire.AppendUpload(nil, &wire.Upload{Round: 1, Drafts: []wire.Draft{{Token: 11}}}))
			if v, err := wire.ParseVerdict(body, llm.Config().Vocab); ft != wire.FrameVerdict || err != nil || v.Round != 1 {
				t.Errorf("the continuation's round 1: a %v frame %q, want its verdict", ft, body)
			}
		})
	}
}
