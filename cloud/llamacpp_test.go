package cloud

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hlmproject/hlm/codec"
	"github.com/hlmproject/hlm/edge"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/internal/stattest"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/model/llamacpp"
	"github.com/hlmproject/hlm/sim"
	"github.com/hlmproject/hlm/tensor"
	"github.com/hlmproject/hlm/wire"
)

// The tests of hlm serve with its LLM on llama.cpp (model/llamacpp): a
// tiny Qwen3 of the committed family models on llama.cpp verifies, its
// one-layer early exit on hlm's engine drafts. They skip without a
// libllama (internal/libllama/build.sh builds one).

var lcFile = filepath.Join("..", "model", "llama", "testdata", "families", "qwen3.gguf")

// lcModels opens the pair with the llama.cpp options opts (after
// "@llama.cpp"), closing the LLM at the end of the test.
func lcModels(t testing.TB, opts string) (*sim.Models, *llamacpp.Model) {
	t.Helper()
	if _, ok := llamacpp.LibraryPath(); !ok {
		t.Skip("no libllama: run internal/libllama/build.sh (about 4 minutes on 2 cores; CI does) or set HLM_LLAMA_LIB")
	}
	ms, err := sim.Open(lcFile+"@llama.cpp"+onDevice()+opts, lcFile+"@exit=1", "")
	if err != nil {
		t.Fatal(err)
	}
	lc := ms.LLM.(*llamacpp.Model)
	t.Cleanup(func() { lc.Close() })
	return ms, lc
}

// onDevice is "@ngl=0" (the CPU, where model/llamacpp's determinism
// contract holds, also with a library built for a GPU), or "@ngl=N" with
// HLM_TEST_NGL=N (bench/gpu.sh: the tests measure the GPU), as in
// model/llamacpp's tests.
func onDevice() string {
	if n := os.Getenv("HLM_TEST_NGL"); n != "" {
		return "@ngl=" + n
	}
	return "@ngl=0"
}

// TestLlamaCppSimMatchesNetwork: with the LLM on llama.cpp, every method
// completes through hlm serve over TCP with the tokens, rates and bits of
// the simulator on the same models (whose LLM evaluates each session
// alone: batching does not change its logits), also for a prompt longer
// than the context.
func TestLlamaCppSimMatchesNetwork(t *testing.T) {
	ms, _ := lcModels(t, "@c=256@np=4")
	long := strings.Repeat("Once upon a time there was a little model. ", 30)
	if n := len(ms.Tok.Encode(long, true)); n <= ms.Context() {
		t.Fatalf("the long prompt has %d tokens, the context %d", n, ms.Context())
	}
	_, addr := start(t, Config{LLM: ms.LLM, Replicas: []model.Model{ms.SLM}})
	for _, c := range []struct{ name, prompt string }{{"", prompt}, {"long/", long}} {
		for _, m := range hybrid.Methods {
			t.Run(c.name+m, func(t *testing.T) {
				p := params(m, 11)
				p.FitPrompt = c.prompt == long
				want, err := sim.One(context.Background(), ms, p, c.prompt, nil)
				if err != nil {
					t.Fatal(err)
				}
				got, _, err := generator(t, ms, addr, p).One(context.Background(), p, c.prompt, nil)
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(got.Tokens) != fmt.Sprint(want.Tokens) {
					t.Fatalf("tokens differ\n net %v\n sim %v", got.Tokens, want.Tokens)
				}
				if got.UplinkBits != want.UplinkBits || got.Accepted != want.Accepted {
					t.Errorf("net bits %d accepted %d; sim bits %d accepted %d", got.UplinkBits, got.Accepted, want.UplinkBits, want.Accepted)
				}
			})
		}
	}
}

// TestLlamaCppMoreDevicesThanSlots: eight devices at once on a server
// whose llama.cpp context holds four sessions all finish, with the
// simulator's tokens; the server evicted and restored sessions.
func TestLlamaCppMoreDevicesThanSlots(t *testing.T) {
	ms, lc := lcModels(t, "@c=256@np=4")
	_, addr := start(t, Config{LLM: ms.LLM})
	concurrentDevices(t, ms, addr, 8)
	if st := lc.Stats(); st.Evictions == 0 {
		t.Errorf("no session was evicted (%+v): the test did not exercise more sessions than slots", st)
	}
}

// noGC switches the garbage collector off for the test: a sequence must
// be freed by the server, not by a session's cleanup when the collector
// finds it (as it was, until 2026-11-30: metrics showed finished
// sessions' slots as used, and new sessions evicted them).
func noGC(t *testing.T) {
	old := debug.SetGCPercent(-1)
	t.Cleanup(func() { debug.SetGCPercent(old) })
}

// waitSequences waits until the LLM holds no sequence, without collecting
// garbage.
func waitSequences(t *testing.T, lc *llamacpp.Model, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if used, _ := lc.Sequences(); used == 0 {
			return
		}
		if time.Now().After(deadline) {
			used, total := lc.Sequences()
			t.Fatalf("%s: %d of %d llama.cpp sequences still used", what, used, total)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLlamaCppClosedSessionFreesSequence: a device that finishes closes
// its session, and the server frees its llama.cpp sequence at once: after
// four devices, every slot is free and a fifth evicts nothing.
func TestLlamaCppClosedSessionFreesSequence(t *testing.T) {
	noGC(t)
	ms, lc := lcModels(t, "@c=256@np=4")
	_, addr := start(t, Config{LLM: ms.LLM})
	p := params(hybrid.QS, 5)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := p
			q.Seed += uint64(i)
			if _, _, err := generator(t, ms, addr, q).One(context.Background(), q, prompt, nil); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	waitSequences(t, lc, "four finished sessions")
	before := lc.Stats().Evictions
	if _, _, err := generator(t, ms, addr, p).One(context.Background(), p, prompt, nil); err != nil {
		t.Fatal(err)
	}
	if ev := lc.Stats().Evictions - before; ev != 0 {
		t.Errorf("a fifth device on four free slots evicted %d sessions", ev)
	}
	waitSequences(t, lc, "the fifth session")
}

// TestLlamaCppKilledSessionFreesSequence: a device that goes away for
// good leaves a detached session; when the server drops it (idle timeout)
// its llama.cpp sequence is free again.
func TestLlamaCppKilledSessionFreesSequence(t *testing.T) {
	noGC(t)
	ms, lc := lcModels(t, "@c=256@np=2")
	srv, addr := start(t, Config{LLM: ms.LLM, IdleTimeout: 200 * time.Millisecond})
	p := params(hybrid.QS, 3)
	g := generator(t, ms, addr, p)
	g.Conn.Retries = 1
	killed := errors.New("device killed")
	ctx, cancel := context.WithCancelCause(context.Background())
	g.Wrap = func(r *edge.Remote) hybrid.Verifier {
		return &faultVerifier{r: r, fault: func(r *edge.Remote) { r.Drop(); cancel(killed) }}
	}
	if res, _, err := g.One(ctx, p, prompt, nil); err == nil && res.Stop != hybrid.StopInterrupted {
		t.Fatalf("the killed device finished (%s)", res.Stop)
	}
	if used, _ := lc.Sequences(); used == 0 {
		t.Fatal("the killed device's session holds no sequence: nothing to free")
	}
	waitHealth(t, srv, "without sessions after the idle timeout", func(h Health) bool { return h.Sessions == 0 })
	waitSequences(t, lc, "the dropped session")
}

// lcChiPositions tokens per run are tested, each position at
// lcChiAlpha/lcChiPositions (Bonferroni).
const (
	lcChiPositions = 5
	lcChiAlpha     = 0.001
)

// TestLlamaCppLossless: through hlm serve over TCP with the LLM on
// llama.cpp, the first tokens of N runs (seeds 0…N−1, eight devices at a
// time, so the server batches them) follow the llama.cpp LLM's conditional
// distributions, position by position (stattest.Conditional; N = 1,000,
// 400 with -short; α = 0.001 per case) for q-s blocks, k-sqs, hlm and
// coupled; the lossy control s-q must fail against them (the test's
// power). The reference distributions come from the same llama.cpp model,
// each run's prefix evaluated in one block.
func TestLlamaCppLossless(t *testing.T) {
	ms, _ := lcModels(t, "@c=256@np=8")
	_, addr := start(t, Config{LLM: ms.LLM})
	n := 1000
	if testing.Short() {
		n = 400
	}
	vocab := ms.LLM.Config().Vocab
	kBits, err := codec.KSQS{K: 4, L: 10}.Bits(vocab)
	if err != nil {
		t.Fatal(err)
	}
	promptIDs := ms.Tok.Encode("She was", true)
	for _, tc := range []struct {
		name   string
		method string
		sets   []string
		lossy  bool
	}{
		{"q-s l=3", hybrid.QS, []string{"l=3", "ell=20"}, false},
		{"k-sqs budget", hybrid.KSQS, []string{"sqs_k=4", "ell=10", "budget_bits=" + fmt.Sprint(3*kBits)}, false},
		{"hlm", hybrid.HLM, nil, false},
		{"coupled l=3", hybrid.Coupled, []string{"l=3"}, false},
		{"s-q l=3 ℓ=4 (lossy control)", hybrid.SQ, []string{"l=3", "ell=4"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := hybrid.DefaultParams()
			p.Method, p.MaxTokens = tc.method, lcChiPositions
			if err := p.SetAll(tc.sets); err != nil {
				t.Fatal(err)
			}
			runs := make([][]int, n)
			var wg sync.WaitGroup
			var mu sync.Mutex
			var firstErr error
			next := 0
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						mu.Lock()
						i := next
						next++
						mu.Unlock()
						if i >= n {
							return
						}
						q := p
						q.Seed = uint64(i)
						g, err := edge.NewGenerator(edge.Config{Addr: addr, Backoff: 20 * time.Millisecond}, ms.SLM, q)
						var res hybrid.Result
						if err == nil {
							res, _, err = g.OneTokens(context.Background(), q, promptIDs, nil)
						}
						if err == nil && len(res.Tokens) == 0 {
							err = fmt.Errorf("seed %d: no token", i)
						}
						mu.Lock()
						if err != nil && firstErr == nil {
							firstErr = err
						}
						if err == nil {
							// A run that ended (end of generation) early
							// counts at the positions it reached: whether
							// it reached j depends on its prefix only.
							runs[i] = res.Tokens[:min(len(res.Tokens), lcChiPositions)]
						}
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if firstErr != nil {
				t.Fatal(firstErr)
			}
			worst := lcWorstP(t, ms.LLM, &p, promptIDs, runs)
			bound := lcChiAlpha / lcChiPositions
			switch {
			case !tc.lossy && worst < bound:
				t.Errorf("%s deviates from the LLM through hlm serve on llama.cpp: smallest p-value %.3g < %.3g", tc.name, worst, bound)
			case tc.lossy && worst >= bound:
				t.Errorf("%s is lossy but passed against the LLM (smallest p-value %.3g): the test has no power", tc.name, worst)
			}
		})
	}
}

// lcWorstP tests the runs' tokens position by position against the LLM's
// distribution after each run's own prefix and returns the smallest
// p-value (0 when a token of probability 0 was drawn).
func lcWorstP(t *testing.T, llm model.Model, p *hybrid.Params, prompt []int, runs [][]int) float64 {
	t.Helper()
	s := llm.NewSession()
	y0, err := s.Prefill(prompt)
	if err != nil {
		t.Fatal(err)
	}
	first := p.Dist(nil, y0)
	tests := make([]stattest.Conditional, lcChiPositions)
	for _, toks := range runs {
		if err := s.Truncate(len(prompt)); err != nil {
			t.Fatal(err)
		}
		ys := [][]float64{first}
		rows, err := [][]float32(nil), error(nil)
		if len(toks) > 1 {
			rows, err = s.Eval(toks[:len(toks)-1])
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			ys = append(ys, p.Dist(nil, r))
		}
		for j, tok := range toks {
			tests[j].Add(tok, ys[j])
		}
	}
	worst := 1.0
	for j := range tests {
		w, df, impossible, err := tests[j].Test()
		if err != nil {
			t.Fatalf("position %d: %v", j+1, err)
		}
		pv := stattest.Survival(df, w)
		if impossible > 0 {
			pv = 0
		}
		t.Logf("position %d: W %.1f on %d df, p = %.3g (%d tokens of probability 0)", j+1, w, df, pv, impossible)
		worst = math.Min(worst, pv)
	}
	return worst
}

// TestLlamaCppServerRefusals: a replica of the draft on the server is
// hlm's engine (the replica method needs bit-identical draft
// distributions on both sides); without one the method is refused with
// the reason, and the server keeps serving.
func TestLlamaCppServerRefusals(t *testing.T) {
	ms, _ := lcModels(t, "@c=256@np=2")
	_, addr := start(t, Config{LLM: ms.LLM})
	p := params(hybrid.Replica, 1)
	_, _, err := generator(t, ms, addr, p).One(context.Background(), p, prompt, nil)
	if err == nil || !strings.Contains(err.Error(), "replica") {
		t.Errorf("replica without a server copy: %v, want a refusal naming it", err)
	}
	var se *wire.Error
	if errors.As(err, &se) && se.Code != wire.ErrCodeRefused {
		t.Errorf("refusal code %d, want %d", se.Code, wire.ErrCodeRefused)
	}
	p = params(hybrid.QS, 2)
	if _, _, err := generator(t, ms, addr, p).One(context.Background(), p, prompt, nil); err != nil {
		t.Errorf("a session after the refusal: %v", err)
	}
}

// TestLlamaCppCoupledIsDrafterInvariant: through hlm serve with a Q8_0 LLM
// on llama.cpp, coupled decoding commits exactly the tokens of LLM-only
// decoding with the same keyed noise, whichever draft the device runs —
// which needs the llama.cpp LLM's logits at a position to be the same from
// a one-token pass (LLM-only) and from a block (coupled): true for Q8_0
// here (the package doc of model/llamacpp).
func TestLlamaCppCoupledIsDrafterInvariant(t *testing.T) {
	if _, ok := llamacpp.LibraryPath(); !ok {
		t.Skip("no libllama: run internal/libllama/build.sh (about 4 minutes on 2 cores; CI does) or set HLM_LLAMA_LIB")
	}
	hlmLLM, err := llama.OpenSpec(lcFile, "")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := llama.WriteGGUF(&buf, hlmLLM, tensor.Q8_0, "qwen3 q8"); err != nil {
		t.Fatal(err)
	}
	q8 := filepath.Join(t.TempDir(), "qwen3-q8_0.gguf")
	if err := os.WriteFile(q8, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	llm, err := llamacpp.OpenSpec(q8+"@llama.cpp"+onDevice()+"@c=256@np=4", "")
	if err != nil {
		t.Fatal(err)
	}
	defer llm.Close()
	_, addr := start(t, Config{LLM: llm})
	drafts := []string{lcFile + "@exit=1", filepath.Join(filepath.Dir(lcFile), "llama32.gguf"), lcFile}
	run := func(p hybrid.Params, draft string) []int {
		slm, err := llama.OpenSpec(draft, "")
		if err != nil {
			t.Fatal(err)
		}
		g, err := edge.NewGenerator(edge.Config{Addr: addr, Backoff: 20 * time.Millisecond}, slm, p)
		if err != nil {
			t.Fatal(err)
		}
		r, _, err := g.One(context.Background(), p, "Lily wanted to play", nil)
		if err != nil {
			t.Fatal(err)
		}
		return r.Tokens
	}
	for seed := uint64(0); seed < 5; seed++ {
		p := hybrid.DefaultParams()
		p.Method, p.Seed, p.MaxTokens, p.Sampler = hybrid.LLM, seed, 48, "gumbel"
		want := fmt.Sprint(run(p, drafts[0]))
		p.Method = hybrid.Coupled
		for _, d := range drafts {
			if got := fmt.Sprint(run(p, d)); got != want {
				t.Errorf("seed %d, draft %s: coupled committed\n%s\nLLM-only gumbel\n%s", seed, d, got, want)
			}
		}
	}
}
