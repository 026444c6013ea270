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
