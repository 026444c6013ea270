package hybrid

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/channel"
	"github.com/hlmproject/hlm/codec"
	"github.com/hlmproject/hlm/model"
)

// fixedCtl is a controller that alternates between two actions and records
// what it saw.
type fixedCtl struct {
	n      int
	states []ControlState
}

func (f *fixedCtl) Choose(s ControlState) (int, int) {
	f.states = append(f.states, s)
	f.n++
	if f.n%2 == 0 {
		return 2, 20
	}
	return 3, 80
}

// TestControllerRounds: with draft=ddqn the device takes L and ℓ from its
// controller each round, sees the round's rate, stays lossless (ℓ travels in
// the payload), and reports every round to OnRound.
func TestControllerRounds(t *testing.T) {
	llm, slm := openPair(t, stories+"@exit=2")
	prompt := llm.Tokenizer().Encode("Once upon a time", true)
	p := DefaultParams()
	p.Method, p.Seed, p.MaxTokens, p.Draft = QS, 3, 30, "ddqn"
	if err := p.SetAll([]string{"channel=markov", "rate_low_bps=1e5", "rate_high_bps=1e6"}); err != nil {
		t.Fatal(err)
	}
	dev, err := NewDevice(p, slm, llm.Config().Vocab, prompt)
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := NewServer(p, llm, prompt)
	link, _ := channel.New(p.Channel)
	// Without a controller the device refuses.
	if _, err := dev.Step(10); !errors.Is(err, ErrParam) {
		t.Fatalf("draft=ddqn without a policy: err = %v", err)
	}
	ctl := &fixedCtl{}
	dev.SetController(ctl)
	var rounds []RoundInfo
	l := &Local{Server: srv}
	r, err := Run(context.Background(), Config{Device: dev, Verifier: l, Oracle: l, Link: link, Context: 512,
		OnRound: func(ri RoundInfo) { rounds = append(rounds, ri) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Tokens) != 30 || *r.MeanDeviation > 1e-9 {
		t.Errorf("%d tokens, deviation %v", len(r.Tokens), *r.MeanDeviation)
	}
	if len(rounds) != r.Uploads || len(ctl.states) != r.Uploads {
		t.Fatalf("%d rounds reported, %d controller calls, %d uploads", len(rounds), len(ctl.states), r.Uploads)
	}
	done := 0
	for i, ri := range rounds {
		if ri.State.Rate != 1e5 && ri.State.Rate != 1e6 || ri.Seconds <= 0 || ri.Committed != ri.Accepted+1 {
			t.Fatalf("round %d: %+v", i, ri)
		}
		// The controller's L, capped by the room left less the bonus.
		want := min(map[bool]int{true: 2, false: 3}[i%2 == 1], max(1, 30-done-1))
		if ri.L != want && !ri.Done {
			t.Errorf("round %d: L = %d, want %d (%d tokens committed before it)", i, ri.L, want, done)
		}
		done += ri.Committed
	}
	if !rounds[len(rounds)-1].Done {
		t.Error("last round not marked done")
	}
	checkConfidences(t, ctl.states, rounds)
	checkConfidenceValues(t, slm, p, prompt, r.Tokens, ctl.states)
	// Q-S eq. 7's bits, L·(⌈log2 V⌉ + b(ℓ)) a round, plus ℓ once a round
	// (in its first draft's payload), not once a draft.
	V := llm.Config().Vocab
	var want int64
	for _, ri := range rounds {
		b, err := codec.Lattice{L: ri.Ell}.Bits(V)
		if err != nil {
			t.Fatal(err)
		}
		want += int64(ri.L*(codec.IndexBits(V)+b) + bits.Len(uint(codec.MaxL-1)))
	}
	if r.UplinkBits != want {
		t.Errorf("%d uplink bits, want %d: Q-S eq. 7 and one ℓ field a round", r.UplinkBits, want)
	}
}

// TestControllerConfidences: with a draft that agrees with the LLM (the
// LLM itself), blocks end in bonus tokens, and the state still holds an
// entry of f^t for each of them.
func TestControllerConfidences(t *testing.T) {
	llm, slm := openPair(t, stories)
	prompt := llm.Tokenizer().Encode("Once upon a time", true)
	p := DefaultParams()
	p.Method, p.Seed, p.MaxTokens, p.Draft = QS, 5, 40, "ddqn"
	dev, err := NewDevice(p, slm, llm.Config().Vocab, prompt)
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := NewServer(p, llm, prompt)
	link, _ := channel.New(p.Channel)
	ctl := &fixedCtl{}
	dev.SetController(ctl)
	var rounds []RoundInfo
	l := &Local{Server: srv}
	if _, err := Run(context.Background(), Config{Device: dev, Verifier: l, Oracle: l, Link: link, Context: 512,
		OnRound: func(ri RoundInfo) { rounds = append(rounds, ri) }}); err != nil {
		t.Fatal(err)
	}
	bonus := 0
	for _, ri := range rounds {
		if ri.Accepted == ri.L {
			bonus++
		}
	}
	if bonus == 0 {
		t.Fatal("no block ended in a bonus token")
	}
	checkConfidences(t, ctl.states, rounds)
}

// checkConfidences: the state carries an entry of f^t for every committed
// token (bonus tokens included), newest first, each the SLM's own
// probability — not q̂'s, whose entries are multiples of 1/ℓ — and every
// round reports one acceptance probability per draft.
func checkConfidences(t *testing.T, states []ControlState, rounds []RoundInfo) {
	t.Helper()
	offLattice := 0
	for i, s := range states {
		if want := min(s.Generated, ConfWindow); len(s.Conf) != want {
			t.Fatalf("state %d: %d confidences after %d tokens, want %d", i, len(s.Conf), s.Generated, want)
		}
		if i > 0 && len(states[i-1].Conf) > 0 {
			prev := states[i-1]
			if step := s.Generated - prev.Generated; step < len(s.Conf) && s.Conf[step] != prev.Conf[0] {
				t.Errorf("state %d: confidences not shifted by the %d new tokens: %v after %v", i, step, s.Conf, prev.Conf)
			}
		}
		for _, c := range s.Conf {
			if !(c > 0 && c <= 1) {
				t.Fatalf("state %d: confidence %v outside (0, 1]", i, c)
			}
			if r := c * 80; math.Abs(r-math.Round(r)) > 1e-9 {
				offLattice++
			}
		}
		if len(s.Features()) != ControlFeatures {
			t.Fatalf("%d features, want %d", len(s.Features()), ControlFeatures)
		}
	}
	if offLattice == 0 {
		t.Error("every confidence is on the lattice of q̂: f^t is read from q̂, not the SLM")
	}
	for i, ri := range rounds {
		if len(ri.Alpha) != ri.L {
			t.Errorf("round %d: %d acceptance probabilities for %d drafts", i, len(ri.Alpha), ri.L)
		}
	}
}

// checkConfidenceValues checks each state's confidences against the SLM:
// f_i is the probability the SLM's own distribution (at the session's
// sampling settings) gives the committed token i after its prefix (Q-S
// Sec. IV-B) — an accepted draft, a resampled token or a bonus token
// alike. tokens are the run's committed tokens after prompt.
func checkConfidenceValues(t *testing.T, slm model.Model, p Params, prompt, tokens []int, states []ControlState) {
	t.Helper()
	rows, err := slm.NewSession().Eval(append(append([]int(nil), prompt...), tokens...))
	if err != nil {
		t.Fatal(err)
	}
	f := make([]float64, len(tokens)) // f[j]: the SLM's probability of tokens[j]
	for j, tok := range tokens {
		f[j] = p.distOf(nil, rows[len(prompt)+j-1])[tok]
	}
	checked := 0
	for i, s := range states {
		for k, c := range s.Conf { // newest first
			if j := s.Generated - 1 - k; math.Abs(c-f[j]) > 1e-6 {
				t.Fatalf("state %d: confidence of generated token %d is %v, the SLM gives it %v", i, j, c, f[j])
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no confidence checked")
	}
}

// TestSessionControllerRefused: a Controller on a session whose rounds
// cannot change L and ℓ is refused when the session is made, with a reason,
// instead of failing at the first round (q-s with draft=fixed: the codec's
// ℓ is fixed) or being ignored (k-sqs).
func TestSessionControllerRefused(t *testing.T) {
	llm, slm := openPair(t, stories+"@exit=2")
	for _, tc := range []struct {
		method string
		draft  DraftPolicy
		want   string // in the error; "" = accepted
	}{
		{QS, DraftDDQN, ""},
		{SQ, DraftDDQN, ""},
		{QS, DraftFixed, "needs draft=ddqn"},
		{QS, DraftHeuristic, "needs draft=ddqn"},
		{KSQS, DraftFixed, "cannot change (methods s-q, q-s)"},
		{HLM, DraftFixed, "cannot change"},
	} {
		p := DefaultParams()
		p.Method, p.Draft, p.MaxTokens = tc.method, tc.draft, 8
		_, err := NewSession(SessionConfig{Params: p, SLM: slm, Vocab: llm.Config().Vocab, Text: llm.Tokenizer(),
			Prompt: llm.Tokenizer().Encode("Once upon a time", true), Context: 512, Controller: &fixedCtl{}})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s draft=%s: %v", tc.method, tc.draft, err)
		case tc.want != "" && (!errors.Is(err, ErrParam) || !strings.Contains(fmt.Sprint(err), tc.want)):
			t.Errorf("%s draft=%s: err = %v, want ErrParam with %q", tc.method, tc.draft, err, tc.want)
		}
	}
}
