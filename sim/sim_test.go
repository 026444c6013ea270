package sim

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/codec"
	"github.com/hlmproject/hlm/ddqn"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/speculative"
	"github.com/hlmproject/hlm/uncertainty"
)

const stories = builtin.DefaultLLM

func pair(t *testing.T, slm string) *Models {
	t.Helper()
	ms, err := Open(stories, slm, "")
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// TestTheorem1OnCalibratedData: on real calibration data (the stories260K
// pair with a 4-layer early-exit draft, whose fitted slope is positive) the
// rejection risk R of U-HLM Theorem 1 stays below its Hölder bound.
func TestTheorem1OnCalibratedData(t *testing.T) {
	ms := pair(t, stories+"@exit=4")
	p := hybrid.DefaultParams()
	p.MaxTokens = 48
	prompts := []string{"Once upon a time", "Lily saw a big dog", "Tom had a red car", "The sun was hot", "Ben and Mia went to the park", "One day, a little bird"}
	log, err := Collect(context.Background(), ms, p, prompts, 50, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, density := range []string{uncertainty.DensityKDE, uncertainty.DensityHistogram} {
		res, err := Analyze(log, 0.1, uncertainty.Options{M: p.M, Density: density})
		if err != nil {
			t.Fatal(err)
		}
		if res.Degenerate {
			t.Fatalf("slope %v: expected a positive slope for this pair", res.Fit.A)
		}
		t.Logf("%s: n=%d a=%.3f b=%.3f Δ=%.3f R=%.4g bound=%.4g k*=%d", density, res.N, res.Fit.A, res.Fit.B, res.Delta, res.Risk, res.RiskBound, res.KOffline)
		if !(res.Risk <= res.RiskBound+1e-12) {
			t.Errorf("%s: R = %g exceeds the Hölder bound %g", density, res.Risk, res.RiskBound)
		}
	}
}

// TestAggregate: counts add up and rates are recomputed from the sums.
func TestAggregate(t *testing.T) {
	a := hybrid.Result{Tokens: []int{1, 2}, Rounds: 2, Uploads: 1, VirtualSeconds: 1, UplinkBits: 10, Accepted: 1, Resampled: 1}
	b := hybrid.Result{Tokens: []int{3, 4, 5, 6}, Rounds: 2, Uploads: 2, VirtualSeconds: 1, UplinkBits: 30, Accepted: 3, Resampled: 0}
	s := hybrid.Aggregate([]hybrid.Result{a, b})
	if len(s.Tokens) != 6 || s.Rounds != 4 || s.Uploads != 3 || s.TransmissionRate != 0.75 || s.ThroughputTPS != 3 || s.BitsPerToken != 40.0/6 || *s.RejectionRate != 0.2 {
		t.Errorf("aggregate %+v", s.Result)
	}
}

// TestAggregateTimeBreakdown: the parts of the virtual time add up over
// the prompts like the total, on made-up runs and on real ones (three
// prompts of q-s and u-hlm on the stories260K pair: the aggregate's parts
// are the runs' sums and still add up to its virtual time).
func TestAggregateTimeBreakdown(t *testing.T) {
	a := hybrid.Result{Tokens: []int{1}, VirtualSeconds: 1.5, SLMSeconds: 0.25, UplinkSeconds: 0.5, LLMSeconds: 0.625, DownlinkSeconds: 0.125}
	b := hybrid.Result{Tokens: []int{2}, VirtualSeconds: 2, SLMSeconds: 1, UplinkSeconds: 0.25, LLMSeconds: 0.5, DownlinkSeconds: 0.25}
	s := hybrid.Aggregate([]hybrid.Result{a, b})
	if s.VirtualSeconds != 3.5 || s.SLMSeconds != 1.25 || s.UplinkSeconds != 0.75 || s.LLMSeconds != 1.125 || s.DownlinkSeconds != 0.375 {
		t.Errorf("aggregate: virtual %v = SLM %v + uplink %v + LLM %v + downlink %v, want 3.5 = 1.25 + 0.75 + 1.125 + 0.375",
			s.VirtualSeconds, s.SLMSeconds, s.UplinkSeconds, s.LLMSeconds, s.DownlinkSeconds)
	}

	ms := pair(t, stories+"@exit=2")
	for _, m := range []string{hybrid.QS, hybrid.UHLM} {
		p := hybrid.DefaultParams()
		p.Method, p.MaxTokens, p.UTh = m, 16, 0.4
		p.Channel.DownlinkBps = 1e6 // every part takes time
		s, err := RunModels(context.Background(), ms, Config{Params: p, Prompts: []string{"Once upon a time", "Tom had a red car", "The sun was hot"}})
		if err != nil {
			t.Fatal(err)
		}
		var want [4]float64
		for _, r := range s.Runs {
			for i, x := range []float64{r.SLMSeconds, r.UplinkSeconds, r.LLMSeconds, r.DownlinkSeconds} {
				want[i] += x
			}
		}
		got := [4]float64{s.SLMSeconds, s.UplinkSeconds, s.LLMSeconds, s.DownlinkSeconds}
		sum := got[0] + got[1] + got[2] + got[3]
		if got != want || math.Abs(sum-s.VirtualSeconds) > 1e-12*s.VirtualSeconds || len(s.Runs) != 3 {
			t.Errorf("%s: parts %v, runs sum to %v; parts sum %v, virtual %v", m, got, want, sum, s.VirtualSeconds)
		}
		for i, x := range got {
			if !(x > 0) {
				t.Errorf("%s: part %d of the time is %v", m, i, x)
			}
		}
	}
}

// TestBoundsOnRealDistributions checks CU-HLM's bounds on real next-token
// distributions of the stories260K pair (SLM = 2-layer exit): Prop. 1
// (D_TV(p, q) ≤ U_TV(k)) and Prop. 2 (Û_TV < Ū_TV) for every k. SQS's
// lattice bound and Theorem 2 are checked where their bounds are below 1
// and close to the measured values, in sqs_bounds_test.go (here they were
// K/(4ℓ) = 1.28 with K = V and a Theorem 2 bound ≥ 8.3 against a dropped
// mass ≤ 1: checks that could not fail).
func TestBoundsOnRealDistributions(t *testing.T) {
	ms := pair(t, stories+"@exit=2")
	p := hybrid.DefaultParams()
	p.MaxTokens = 40
	log, err := Collect(context.Background(), ms, p, []string{"Once upon a time", "Tom had a red car", "The little bird"}, 120, nil)
	if err != nil {
		t.Fatal(err)
	}
	const eta = 1.0
	for n, pr := range log.Pairs {
		x, y := pr.X, pr.Y
		V := len(x)
		order := make([]int, V)
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return x[order[a]] > x[order[b]] })
		tvxy := speculative.TV(x, y)
		for _, k := range []int{1, 2, 5, 10, 30, 100, 300} {
			// x̂: top-k kept, residual spread uniformly (CU-HLM eq. 15).
			xh := make([]float64, V)
			var kept float64
			for _, i := range order[:k] {
				xh[i] = x[i]
				kept += x[i]
			}
			for _, i := range order[k:] {
				xh[i] = (1 - kept) / float64(V-k)
			}
			pd, qd := resid(y, x), resid(y, xh)
			if tvxy > 1e-9 {
				if tv, u := speculative.TV(pd, qd), codec.UTV(x, y, k); tv > u+1e-9 {
					t.Fatalf("pair %d, k=%d: D_TV(p,q) = %g > U_TV = %g (Prop. 1)", n, k, tv, u)
				}
			}
			// Prop. 2 with a draft d = argmax and β from the exact ratio.
			d := order[0]
			b := math.Max(0, 1-y[d]/x[d])
			var num, den float64
			for _, i := range order[k:] {
				num += math.Abs(x[i] - xh[i])
			}
			for i := range x {
				den += x[i] * codec.Softplus(y[i]/x[i]-1, eta)
			}
			if uhat, ubar := num/den, codec.UBar(x, d, k, b, eta); !(uhat < ubar+1e-12) {
				t.Fatalf("pair %d, k=%d: Û_TV %g ≥ Ū_TV %g (Prop. 2)", n, k, uhat, ubar)
			}
		}
	}
	t.Logf("checked %d real distribution pairs (V = %d)", len(log.Pairs), len(log.Pairs[0].X))
}

// resid is norm((y − x)^+) (the residual distribution; y when it is empty).
func resid(y, x []float64) []float64 {
	r := make([]float64, len(y))
	var s float64
	for i := range y {
		r[i] = math.Max(0, y[i]-x[i])
		s += r[i]
	}
	if s == 0 {
		return append(r[:0], y...)
	}
	for i := range r {
		r[i] /= s
	}
	return r
}

// TestTrainDDQN: training is reproducible from its seed, and the saved
// policy drives draft=ddqn losslessly.
func TestTrainDDQN(t *testing.T) {
	ms := pair(t, stories+"@exit=2")
	p := hybrid.DefaultParams()
	p.Method, p.MaxTokens = hybrid.QS, 24
	if err := p.SetAll([]string{"channel_preset=qs"}); err != nil {
		t.Fatal(err)
	}
	train := func() []byte {
		cfg := ddqn.DefaultConfig()
		cfg.Seed, cfg.BatchSize = 7, 8
		agent, log, err := TrainDDQN(context.Background(), ms, TrainConfig{Params: p, Prompts: []string{"Once upon a time", "Tom had a red car"}, Episodes: 6, Agent: cfg,
			Temperatures: []float64{0.5, 1}, EvalEvery: 4, EvalPrompts: []string{"Lily saw a bird"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(log.Episodes) != 6 || agent.Updates() == 0 {
			t.Fatalf("%d episodes, %d updates", len(log.Episodes), agent.Updates())
		}
		for i, e := range log.Episodes {
			if want := []float64{0.5, 1}[i%2]; e.Temperature != want || !(e.MeanReward > 0) {
				t.Errorf("episode %d: %+v, want temperature %v and a positive reward", i, e, want)
			}
		}
		if len(log.Curve) != 3 || log.Curve[0].Episode != 0 || log.Curve[1].Episode != 4 || log.Curve[2].Episode != 6 || !(log.Curve[2].Throughput > 0) {
			t.Errorf("learning curve %+v, want checkpoints after episodes 0, 4 and 6", log.Curve)
		}
		var buf bytes.Buffer
		if err := agent.Save(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	a, b := train(), train()
	if !bytes.Equal(a, b) {
		t.Fatal("two trainings with the same seed saved different policies")
	}
	pol, err := ddqn.Load(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	if m := pol.Metadata(); m["llm"] != ms.LLM.Name() || m["slm"] != ms.SLM.Name() {
		t.Errorf("the policy names LLM %q and SLM %q, want %q and %q", m["llm"], m["slm"], ms.LLM.Name(), ms.SLM.Name())
	}
	path := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(path, a, 0o644); err != nil {
		t.Fatal(err)
	}
	p.Draft, p.DDQNModel = "ddqn", path
	r, err := One(context.Background(), ms, p, "Lily saw a bird", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Tokens) != 24 || *r.MeanDeviation > 1e-9 {
		t.Errorf("%d tokens, deviation %v", len(r.Tokens), *r.MeanDeviation)
	}
}

// TestCollectUsesSamplingSettings: calibration measures the distributions
// the run samples from, its top-k filter included.
func TestCollectUsesSamplingSettings(t *testing.T) {
	ms := pair(t, stories+"@exit=2")
	p := hybrid.DefaultParams()
	p.MaxTokens, p.TopK = 16, 5
	log, err := Collect(context.Background(), ms, p, []string{"Once upon a time"}, 20, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, pr := range log.Pairs {
		for _, d := range [][]float64{pr.X, pr.Y} {
			nz := 0
			for _, v := range d {
				if v > 0 {
					nz++
				}
			}
			if nz > p.TopK {
				t.Fatalf("pair %d: %d tokens with mass under top_k %d", i, nz, p.TopK)
			}
		}
	}
}

// TestCollectObservesTheHLMRun: calibration observes the ordinary rounds of
// method hlm — the same tokens as `hlm sim --method hlm` with the same
// parameters, one record per verified draft, each with a measured
// uncertainty — whatever method the parameters name.
func TestCollectObservesTheHLMRun(t *testing.T) {
	ms := pair(t, "")
	p := hybrid.DefaultParams()
	p.MaxTokens, p.Method = 24, hybrid.QS
	prompts := []string{"Once upon a time", "Tom had a red car", "The little bird"}
	log, err := Collect(context.Background(), ms, p, prompts, 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Method = hybrid.HLM
	sum, err := RunModels(context.Background(), ms, Config{Prompts: prompts, Params: p})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Verified == 0 || len(log.Records) != sum.Verified {
		t.Fatalf("%d records, the hlm run verified %d drafts", len(log.Records), sum.Verified)
	}
	if len(log.Pairs) != len(log.Records) {
		t.Fatalf("%d pairs kept of %d (max 1000)", len(log.Pairs), len(log.Records))
	}
	accepted := 0
	for i, r := range log.Records {
		if math.IsNaN(r.U) || r.U < 0 || r.U > 1 {
			t.Fatalf("record %d: uncertainty %v", i, r.U)
		}
		pr := log.Pairs[i]
		if pr.X[pr.Draft] != r.XD || pr.Y[pr.Draft] != r.YD {
			t.Fatalf("record %d: x_d, y_d %v, %v; pair %v, %v", i, r.XD, r.YD, pr.X[pr.Draft], pr.Y[pr.Draft])
		}
		if r.YD >= r.XD {
			accepted++ // a draft with y_d ≥ x_d is always accepted
		}
	}
	if accepted > sum.Accepted {
		t.Errorf("%d drafts with y_d ≥ x_d, only %d accepted", accepted, sum.Accepted)
	}
}

// TestQuantizedCopyFindsTheShippedDraft: a quantized copy of a shipped
// model (builtin:stories260K@q8, @q4) opens with the draft hlm ships for
// the model it was made from (model.OriginOf), not "no draft".
func TestQuantizedCopyFindsTheShippedDraft(t *testing.T) {
	want, err := Open(builtin.DefaultLLM, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"@q8", "@q4"} {
		ms, err := Open(builtin.DefaultLLM+q, "", "")
		if err != nil {
			t.Fatal(err)
		}
		if err := ms.RequireDraft(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if ms.SLM.Fingerprint() != want.SLM.Fingerprint() {
			t.Errorf("%s: draft %s, want %s", q, ms.SLM.Name(), want.SLM.Name())
		}
	}
}

// TestNoDraftSuggestsOwnEngine: for an LLM on llama.cpp the "no draft"
// error suggests an early exit and a distillation teacher on hlm's engine
// (llama.cpp has neither), and every suggested spec parses.
func TestNoDraftSuggestsOwnEngine(t *testing.T) {
	for _, tc := range []struct{ llm, slm, teacher string }{
		{"m.gguf", "--slm 'm.gguf@exit=1'", "--teacher 'm.gguf'"},
		{"m.gguf@llama.cpp@ngl=99@np=4@ts=3,1", "--slm 'm.gguf@exit=1'", "--teacher 'm.gguf'"},
		{"dir@x/m.gguf@llama.cpp", "--slm 'dir@x/m.gguf@exit=1'", "--teacher 'dir@x/m.gguf'"},
	} {
		msg := noDraft(tc.llm).Error()
		for _, want := range []string{tc.slm, tc.teacher} {
			if !strings.Contains(msg, want) {
				t.Errorf("noDraft(%q) = %q; want %q in it", tc.llm, msg, want)
			}
		}
		for _, s := range []string{tc.slm, tc.teacher} {
			spec := strings.Trim(s[strings.IndexByte(s, ' ')+1:], "'")
			if _, err := model.ParseSpec(spec); err != nil {
				t.Errorf("the suggested spec %q does not parse: %v", spec, err)
			}
		}
	}
}

// TestTrainDDQNInterrupted: cancelled after two episodes (Ctrl-C), training
// stops there and returns the agent and the two episodes' record with the
// context's error — not the remaining episodes run empty.
func TestTrainDDQNInterrupted(t *testing.T) {
	ms := pair(t, stories+"@exit=2")
	p := hybrid.DefaultParams()
	p.Method, p.MaxTokens = hybrid.QS, 8
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	agent, log, err := TrainDDQN(ctx, ms, TrainConfig{Params: p, Prompts: []string{"Once upon a time"}, Episodes: 50, Agent: ddqn.DefaultConfig(),
		Progress: func(ep int, _, _ float64) {
			if ep == 2 {
				cancel()
			}
		}})
	if !errors.Is(err, context.Canceled) || agent == nil || len(log.Episodes) != 2 {
		t.Fatalf("TrainDDQN cancelled after episode 2: agent %v, %d episodes, %v; want the agent, 2 episodes and context.Canceled", agent != nil, len(log.Episodes), err)
	}
	for i, e := range log.Episodes {
		if !(e.Throughput > 0) {
			t.Errorf("episode %d: %+v, want a real episode", i, e)
		}
	}
}
