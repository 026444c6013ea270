package ddqn

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("DefaultConfig: %v", err)
	}
	for name, tc := range map[string]struct {
		edit func(*Config)
		want error
	}{
		"zero":          {func(c *Config) { *c = Config{} }, ErrConfig},
		"hidden 0":      {func(c *Config) { c.Hidden = []int{8, 0} }, ErrConfig},
		"hidden wide":   {func(c *Config) { c.Hidden = []int{MaxWidth + 1} }, ErrLimit},
		"hidden deep":   {func(c *Config) { c.Hidden = make([]int, MaxHidden+1) }, ErrLimit},
		"gamma > 1":     {func(c *Config) { c.Gamma = 1.5 }, ErrConfig},
		"gamma NaN":     {func(c *Config) { c.Gamma = math.NaN() }, ErrConfig},
		"lr 0":          {func(c *Config) { c.LearningRate = 0 }, ErrConfig},
		"lr Inf":        {func(c *Config) { c.LearningRate = math.Inf(1) }, ErrConfig},
		"batch 0":       {func(c *Config) { c.BatchSize = 0 }, ErrConfig},
		"batch huge":    {func(c *Config) { c.BatchSize = MaxBatch + 1; c.Replay = MaxReplay }, ErrConfig},
		"replay<batch":  {func(c *Config) { c.Replay = c.BatchSize - 1 }, ErrConfig},
		"replay huge":   {func(c *Config) { c.Replay = MaxReplay + 1 }, ErrConfig},
		"target 0":      {func(c *Config) { c.TargetEvery = 0 }, ErrConfig},
		"eps start":     {func(c *Config) { c.EpsStart = -0.1 }, ErrConfig},
		"eps end":       {func(c *Config) { c.EpsEnd = 1.1 }, ErrConfig},
		"decay < 0":     {func(c *Config) { c.EpsDecaySteps = -1 }, ErrConfig},
		"huber 0":       {func(c *Config) { c.Huber = 0 }, ErrConfig},
		"huber NaN":     {func(c *Config) { c.Huber = math.NaN() }, ErrConfig},
		"clip negative": {func(c *Config) { c.GradClip = -1 }, ErrConfig},
	} {
		c := DefaultConfig()
		tc.edit(&c)
		if err := c.Validate(); !errors.Is(err, tc.want) {
			t.Errorf("%s: Validate() = %v, want %v", name, err, tc.want)
		}
		if _, err := NewAgent(2, 2, c); err == nil {
			t.Errorf("%s: NewAgent accepted the config", name)
		}
	}
	// Allowed edges.
	c := DefaultConfig()
	c.Hidden, c.Gamma, c.EpsDecaySteps, c.Huber, c.GradClip = nil, 1, 0, math.Inf(1), 0
	if err := c.Validate(); err != nil {
		t.Errorf("edge config: %v", err)
	}
	if _, err := NewAgent(0, 2, DefaultConfig()); !errors.Is(err, ErrConfig) {
		t.Errorf("NewAgent with 0 inputs: %v", err)
	}
}

func TestEpsilonSchedule(t *testing.T) {
	cfg := DefaultConfig()
	cfg.EpsStart, cfg.EpsEnd, cfg.EpsDecaySteps = 1, 0.2, 4
	a, err := NewAgent(1, 3, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range []float64{1, 0.8, 0.6, 0.4, 0.2, 0.2, 0.2} {
		if got := a.Epsilon(); math.Abs(got-want) > 1e-15 {
			t.Errorf("after %d Acts: ε = %v, want %v", k, got, want)
		}
		a.Act([]float64{0})
	}
	if a.Steps() != 7 {
		t.Errorf("Steps() = %d, want 7", a.Steps())
	}
}

// TestActFrequencies checks ε-greedy's action frequencies: with ε = 0.3
// and 3 actions, the greedy action has probability 0.7 + 0.1 and each
// other 0.1. n = 30000 draws (seed 9); each frequency within 0.01 (about
// 5 standard errors).
func TestActFrequencies(t *testing.T) {
	cfg := DefaultConfig()
	cfg.EpsStart, cfg.EpsEnd, cfg.EpsDecaySteps, cfg.Seed = 0.3, 0.3, 0, 9
	a, err := NewAgent(1, 3, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := []float64{0.5}
	greedy := a.Greedy(s)
	const n = 30000
	var count [3]int
	for range n {
		count[a.Act(s)]++
	}
	for k, c := range count {
		want := 0.1
		if k == greedy {
			want = 0.8
		}
		if f := float64(c) / n; math.Abs(f-want) > 0.01 {
			t.Errorf("action %d: frequency %.4f, want %.2f ± 0.01", k, f, want)
		}
	}
}

func TestGreedyTiesLowestIndex(t *testing.T) {
	a, err := NewAgent(2, 4, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	a.online.zero()
	a.online.B[len(a.online.B)-1][2] = 1
	a.online.B[len(a.online.B)-1][3] = 1
	if g := a.Greedy([]float64{1, 2}); g != 2 {
		t.Fatalf("Greedy = %d, want 2 (lowest of the tied maxima)", g)
	}
	a.online.zero()
	if g := a.Greedy([]float64{1, 2}); g != 0 {
		t.Fatalf("Greedy = %d with all Q equal, want 0", g)
	}
}

func TestReplayRing(t *testing.T) {
	b := replay{capacity: 3, inputs: 1}
	for k := range 5 {
		b.add([]float64{float64(k)}, k, float64(10*k), []float64{float64(k + 1)}, k%2 == 0)
	}
	if b.len() != 3 {
		t.Fatalf("len = %d, want 3", b.len())
	}
	seen := map[int]bool{}
	for k := range 3 {
		a := b.a[k]
		seen[a] = true
		if b.state(k)[0] != float64(a) || b.nextState(k)[0] != float64(a+1) || b.r[k] != float64(10*a) || b.done[k] != (a%2 == 0) {
			t.Errorf("slot %d holds an inconsistent transition (a=%d)", k, a)
		}
	}
	if !seen[2] || !seen[3] || !seen[4] {
		t.Errorf("buffer holds actions %v, want the last three {2,3,4}", b.a)
	}
}

func TestTrainNeedsBatch(t *testing.T) {
	cfg := DefaultConfig()
	cfg.BatchSize = 4
	a, _ := NewAgent(1, 2, cfg)
	for k := range 3 {
		a.Observe([]float64{float64(k)}, 0, 1, nil, true)
		if _, ok := a.Train(); ok {
			t.Fatalf("Train ran with %d transitions", k+1)
		}
	}
	a.Observe([]float64{3}, 1, 0, []float64{4}, false)
	if loss, ok := a.Train(); !ok || !(loss > 0) {
		t.Fatalf("Train() = %v, %v with a full batch", loss, ok)
	}
	if a.Updates() != 1 || a.Transitions() != 4 {
		t.Fatalf("Updates %d, Transitions %d", a.Updates(), a.Transitions())
	}
}

func TestTargetCopy(t *testing.T) {
	cfg := DefaultConfig()
	cfg.BatchSize, cfg.TargetEvery, cfg.Hidden = 2, 3, []int{4}
	a, _ := NewAgent(1, 2, cfg)
	for k := range 4 {
		a.Observe([]float64{float64(k)}, k%2, float64(k), []float64{1}, false)
	}
	same := func() bool {
		var x, y bytes.Buffer
		save(&x, a.online, nil, nil, nil)
		save(&y, a.target, nil, nil, nil)
		return bytes.Equal(x.Bytes(), y.Bytes())
	}
	if !same() {
		t.Fatal("target differs from online at start")
	}
	for u := 1; u <= 7; u++ {
		a.Train()
		if want := u%3 == 0; same() != want {
			t.Fatalf("after update %d: target equals online = %v, want %v", u, !want, want)
		}
	}
}

func TestGradClip(t *testing.T) {
	// One transition with a huge reward: the unclipped step would still be
	// lr-sized per parameter (Adam), so check the clipped gradient itself.
	cfg := DefaultConfig()
	cfg.BatchSize, cfg.GradClip, cfg.Huber, cfg.Hidden = 1, 0.5, math.Inf(1), []int{3}
	a, _ := NewAgent(2, 2, cfg)
	a.Observe([]float64{1, -1}, 0, 1e3, nil, true)
	a.Train()
	if n := a.grad.norm(); math.Abs(n-0.5) > 1e-12 {
		t.Fatalf("clipped gradient norm %v, want 0.5", n)
	}
}

// runScript drives an agent through a fixed mixture of every call that
// touches its state, with environment randomness from its own seed.
func runScript(t *testing.T, seed uint64) (*Agent, []int) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Hidden, cfg.BatchSize, cfg.TargetEvery, cfg.EpsDecaySteps, cfg.Seed = []int{16, 8}, 8, 10, 100, seed
	a, err := NewAgent(3, 5, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.SetNormalization([]float64{0, 1e6, 0.5}, []float64{1, 2e5, 0.25}); err != nil {
		t.Fatal(err)
	}
	if err := a.SetMetadata("actions", `[{"L":2,"l":4}]`); err != nil {
		t.Fatal(err)
	}
	env := rand.New(rand.NewPCG(42, 42))
	state := func() []float64 { return []float64{env.NormFloat64(), 1e6 + 2e5*env.NormFloat64(), env.Float64()} }
	var acts []int
	s := state()
	for range 300 {
		act := a.Act(s)
		next := state()
		a.Observe(s, act, env.Float64()*float64(act), next, env.IntN(10) == 0)
		a.Train()
		acts = append(acts, act, a.Greedy(next))
		s = next
	}
	return a, acts
}

func TestDeterminism(t *testing.T) {
	a1, acts1 := runScript(t, 7)
	a2, acts2 := runScript(t, 7)
	a3, _ := runScript(t, 8)
	var b1, b2, b3 bytes.Buffer
	for _, c := range []struct {
		a *Agent
		b *bytes.Buffer
	}{{a1, &b1}, {a2, &b2}, {a3, &b3}} {
		if err := c.a.Save(c.b); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
		t.Error("same seed and calls, different Save output")
	}
	for k := range acts1 {
		if acts1[k] != acts2[k] {
			t.Fatalf("same seed and calls, action %d differs: %d vs %d", k, acts1[k], acts2[k])
		}
	}
	if bytes.Equal(b1.Bytes(), b3.Bytes()) {
		t.Error("seeds 7 and 8 give identical models")
	}
}

// TestNormalizationEquivalence: an agent fed raw states with a
// normalisation must behave bit for bit like one fed states normalised by
// the caller.
func TestNormalizationEquivalence(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Hidden, cfg.BatchSize, cfg.Seed = []int{8}, 4, 5
	raw, _ := NewAgent(2, 3, cfg)
	pre, _ := NewAgent(2, 3, cfg)
	mean, std := []float64{5e6, -3}, []float64{1e6, 0.5}
	if err := raw.SetNormalization(mean, std); err != nil {
		t.Fatal(err)
	}
	norm := func(x []float64) []float64 {
		return []float64{(x[0] - mean[0]) / std[0], (x[1] - mean[1]) / std[1]}
	}
	env := rand.New(rand.NewPCG(1, 1))
	for range 100 {
		s := []float64{5e6 + 1e6*env.NormFloat64(), -3 + 0.5*env.NormFloat64()}
		s2 := []float64{5e6 + 1e6*env.NormFloat64(), -3 + 0.5*env.NormFloat64()}
		ar, ap := raw.Act(s), pre.Act(norm(s))
		if ar != ap {
			t.Fatalf("actions differ: %d vs %d", ar, ap)
		}
		r := env.Float64()
		raw.Observe(s, ar, r, s2, false)
		pre.Observe(norm(s), ap, r, norm(s2), false)
		lr, _ := raw.Train()
		lp, _ := pre.Train()
		if lr != lp {
			t.Fatalf("losses differ: %v vs %v", lr, lp)
		}
	}
	for l := range raw.online.W {
		for k := range raw.online.W[l] {
			if raw.online.W[l][k] != pre.online.W[l][k] {
				t.Fatalf("weights differ at layer %d index %d", l, k)
			}
		}
	}
	for _, c := range []struct{ mean, std []float64 }{
		{[]float64{1}, []float64{1, 1}},
		{[]float64{1, 1}, []float64{1, 0}},
		{[]float64{math.NaN(), 1}, []float64{1, 1}},
		{[]float64{1, 1}, []float64{math.Inf(1), 1}},
		{nil, []float64{1, 1}},
	} {
		if err := raw.SetNormalization(c.mean, c.std); !errors.Is(err, ErrConfig) {
			t.Errorf("SetNormalization(%v, %v) = %v", c.mean, c.std, err)
		}
	}
	if err := raw.SetNormalization(nil, nil); err != nil || raw.mean != nil {
		t.Errorf("clearing the normalisation: %v", err)
	}
}

func TestSetMetadataLimits(t *testing.T) {
	a, _ := NewAgent(1, 2, DefaultConfig())
	if err := a.SetMetadata("k", "\xff"); !errors.Is(err, ErrConfig) {
		t.Errorf("invalid UTF-8: %v", err)
	}
	if err := a.SetMetadata("big", strings.Repeat("x", MaxMetadataBytes)); !errors.Is(err, ErrLimit) {
		t.Errorf("oversized: %v", err)
	}
	if err := a.SetMetadata("ok", "fine"); err != nil || len(a.meta) != 1 {
		t.Errorf("after rejected entries: %v, %d entries", err, len(a.meta))
	}
}

func TestObservePanics(t *testing.T) {
	a, _ := NewAgent(2, 3, DefaultConfig())
	ok := []float64{0, 0}
	for name, f := range map[string]func(){
		"short state":  func() { a.Observe([]float64{0}, 0, 0, ok, false) },
		"short next":   func() { a.Observe(ok, 0, 0, []float64{0}, false) },
		"nil next":     func() { a.Observe(ok, 0, 0, nil, false) },
		"action":       func() { a.Observe(ok, 3, 0, ok, false) },
		"NaN reward":   func() { a.Observe(ok, 0, math.NaN(), ok, false) },
		"Inf feature":  func() { a.Observe([]float64{math.Inf(1), 0}, 0, 0, ok, false) },
		"Act width":    func() { a.Act([]float64{0}) },
		"Greedy width": func() { a.Greedy([]float64{0, 0, 0}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
	a.Observe(ok, 2, 1, nil, true) // nil next is fine when done
}

// TestDoubleDQNTarget: the bootstrap target is double DQN's (van Hasselt,
// Guez, Silver 2016, eq. 4; Q-S Sec. V),
//
//	y = r + γ·Q_target(s', argmax_a' Q_online(s', a')),
//
// the online network choosing the next action and the target network
// valuing it — not DQN's max_a' Q_target(s', a'). The two networks are
// made to prefer different next actions; with one transition, a squared
// loss (Huber κ = ∞) and no clipping, the output bias gradient of the
// taken action is Q_online(s, a) − y, which gives y back.
func TestDoubleDQNTarget(t *testing.T) {
	cfg := DefaultConfig()
	cfg.BatchSize, cfg.Huber, cfg.GradClip, cfg.Hidden, cfg.Gamma = 1, math.Inf(1), 0, []int{4}, 0.9
	a, err := NewAgent(2, 3, cfg)
	if err != nil {
		t.Fatal(err)
	}
	last := len(a.online.B) - 1
	a.online.B[last][0] += 50 // the online network prefers action 0
	a.target.B[last][0] -= 50 // the target network values it lowest
	s, next := []float64{0.3, -0.2}, []float64{-0.5, 0.7}
	const action, r = 2, 1.5
	a.Observe(s, action, r, next, false)
	qs := a.Q(s, nil)
	qOnline := a.Q(next, nil)
	qTarget := slices.Clone(a.target.forward(normalize(make([]float64, 2), next, a.mean, a.std), a.tr))
	choice := argmax(qOnline)
	if choice != 0 || argmax(qTarget) == 0 {
		t.Fatalf("setup: online argmax %d, target argmax %d: want 0 and another", choice, argmax(qTarget))
	}
	want := r + cfg.Gamma*qTarget[choice]
	if _, ok := a.Train(); !ok {
		t.Fatal("no update")
	}
	y := qs[action] - a.grad.B[last][action]
	if math.Abs(y-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("target y = %v, want r + γ·Q_target(s', argmax Q_online) = %v (DQN's max would be %v)",
			y, want, r+cfg.Gamma*slices.Max(qTarget))
	}
}
