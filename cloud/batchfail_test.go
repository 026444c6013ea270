package cloud

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hlmproject/hlm/edge"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/sim"
	"github.com/hlmproject/hlm/wire"
)

// failingLLM is an LLM whose sessions whose prompt holds the poison token
// fail every evaluation, alone or in a batch, as an engine error or a full
// context would.
type failingLLM struct {
	model.Model
	poison int
}

type failingSession struct {
	model.Session
	poison    int
	seen, bad bool
}

var errPoisoned = errors.New("poisoned session")

func (f *failingLLM) NewSession() model.Session {
	return &failingSession{Session: f.Model.NewSession(), poison: f.poison}
}

// check decides at the session's first evaluation (its prompt).
func (s *failingSession) check(tokens []int) bool {
	if !s.seen {
		s.seen, s.bad = true, slices.Contains(tokens, s.poison)
	}
	return s.bad
}

func (s *failingSession) Eval(tokens []int) ([][]float32, error) {
	if s.check(tokens) {
		return nil, errPoisoned
	}
	return s.Session.Eval(tokens)
}

func (f *failingLLM) EvalBatch(sessions []model.Session, tokens [][]int) ([][][]float32, error) {
	inner := make([]model.Session, len(sessions))
	bad := false
	for i, s := range sessions {
		fs := s.(*failingSession)
		bad = fs.check(tokens[i]) || bad
		inner[i] = fs.Session
	}
	if bad {
		return nil, errPoisoned
	}
	return f.Model.(model.Batcher).EvalBatch(inner, tokens)
}

// firstUploadHook calls before ahead of its device's first upload.
type firstUploadHook struct {
	r      *edge.Remote
	once   sync.Once
	before func()
}

func (g *firstUploadHook) Verify(ctx context.Context, up *wire.Upload) (*wire.Verdict, error) {
	g.once.Do(g.before)
	return g.r.Verify(ctx, up)
}

// TestBatchFailureStaysWithItsSession: a session whose evaluation fails,
// batched with another device's, fails its own round only; the other
// device finishes with the simulator's tokens.
func TestBatchFailureStaysWithItsSession(t *testing.T) {
	ms := models(t)
	healthy, poisoned := prompt, "Zoe and the zebra"
	hIDs, pIDs := ms.Tok.Encode(healthy, true), ms.Tok.Encode(poisoned, true)
	poison := -1
	for _, id := range pIDs {
		if !slices.Contains(hIDs, id) {
			poison = id
			break
		}
	}
	if poison < 0 {
		t.Fatal("no token of the poisoned prompt is missing from the healthy one")
	}
	sizes := &batchSizes{}
	srv, addr := start(t, Config{LLM: &failingLLM{Model: ms.LLM, poison: poison}, BatchWindow: 2 * time.Second, Metrics: sizes})
	p := params(hybrid.QS, 40)
	gh, gp := generator(t, ms, addr, p), generator(t, ms, addr, p)
	// The poisoned session fails at every try (an internal error, which a
	// device retries): one retry shows it, more only take time.
	gp.Conn.Retries = 1
	second := make(chan struct{})
	// The poisoned device uploads first, once both devices are connected:
	// a batch waits only for the devices connected when it starts (on a
	// loaded machine the healthy device could still be dialling).
	bothConnected := func() {
		for deadline := time.Now().Add(10 * time.Second); srv.connected() < 2 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		close(second)
	}
	gh.Wrap = func(r *edge.Remote) hybrid.Verifier { return &firstUploadHook{r: r, before: func() { <-second }} }
	gp.Wrap = func(r *edge.Remote) hybrid.Verifier { return &firstUploadHook{r: r, before: bothConnected} }
	var wg sync.WaitGroup
	var herr, perr error
	var got hybrid.Result
	wg.Add(2)
	go func() { defer wg.Done(); got, _, herr = gh.One(context.Background(), p, healthy, nil) }()
	go func() { defer wg.Done(); _, _, perr = gp.One(context.Background(), p, poisoned, nil) }()
	wg.Wait()
	if perr == nil {
		t.Fatal("the poisoned session finished")
	}
	if herr != nil {
		t.Fatalf("the healthy session failed with its batch: %v", herr)
	}
	sizes.mu.Lock()
	batched := slices.Contains(sizes.sizes, 2)
	sizes.mu.Unlock()
	if !batched {
		t.Fatalf("the two devices were never batched together (batches %v)", sizes.sizes)
	}
	want, err := sim.One(context.Background(), ms, p, healthy, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got.Tokens) != fmt.Sprint(want.Tokens) {
		t.Errorf("the healthy session's tokens differ from the simulator's")
	}
}

// flakyLLM's sessions fail their second evaluation once, as an engine
// error (llama.cpp's decode failing) would: the server's fault.
type flakyLLM struct{ model.Model }

type flakySession struct {
	model.Session
	evals int
}

var errFlaky = errors.New("decode failed (test)")

func (f flakyLLM) NewSession() model.Session { return &flakySession{Session: f.Model.NewSession()} }

func (s *flakySession) Eval(tokens []int) ([][]float32, error) {
	if s.evals++; s.evals == 2 {
		return nil, errFlaky
	}
	return s.Session.Eval(tokens)
}

// errorCodes records the Error frames the server sends.
type errorCodes struct {
	NopMetrics
	mu    sync.Mutex
	codes []uint16
}

func (m *errorCodes) Error(code uint16) {
	m.mu.Lock()
	m.codes = append(m.codes, code)
	m.mu.Unlock()
}

// TestEngineFailureIsInternal: the LLM failing on the server is the
// server's fault, reported as internal (not bad: the device did nothing
// wrong), and the device retries the round on its session, which the
// failure left as it was: the run ends with the simulator's tokens.
func TestEngineFailureIsInternal(t *testing.T) {
	ms := models(t)
	codes := &errorCodes{}
	_, addr := start(t, Config{LLM: flakyLLM{ms.LLM}, Metrics: codes})
	p := params(hybrid.QS, 24)
	got, _, err := generator(t, ms, addr, p).One(context.Background(), p, prompt, nil)
	if err != nil {
		t.Fatalf("the device did not retry past the server's failure: %v", err)
	}
	codes.mu.Lock()
	defer codes.mu.Unlock()
	if !slices.Equal(codes.codes, []uint16{wire.ErrCodeInternal}) {
		t.Errorf("error codes sent %v, want one internal (%d)", codes.codes, wire.ErrCodeInternal)
	}
	want, err := sim.One(context.Background(), ms, p, prompt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got.Tokens) != fmt.Sprint(want.Tokens) {
		t.Errorf("tokens after the retry differ from the simulator's")
	}
}
