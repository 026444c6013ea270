package hybrid

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/channel"
	"github.com/hlmproject/hlm/internal/stattest"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/sampling"
)

// TestCoupledIsDrafterInvariant: on the real pair, for each seed, coupled
// decoding commits exactly the tokens of LLM-only decoding with the same
// keyed noise, whichever draft model the device runs (a 2-layer early exit,
// a Q8_0 copy, the LLM itself).
func TestCoupledIsDrafterInvariant(t *testing.T) {
	llm, _ := openPair(t, stories)
	prompt := llm.Tokenizer().Encode("Lily wanted to play", true)
	drafts := map[string]string{"exit2": stories + "@exit=2", "q8": stories + "@q8", "self": stories}
	for seed := uint64(0); seed < 5; seed++ {
		p := DefaultParams()
		p.Method, p.Seed, p.MaxTokens, p.Sampler = LLM, seed, 48, "gumbel"
		want := fmt.Sprint(runOnce(t, p, llm, nil, prompt).Tokens)
		for name, spec := range drafts {
			_, slm := openPair(t, spec)
			p.Method = Coupled
			got := runOnce(t, p, llm, slm, prompt)
			if fmt.Sprint(got.Tokens) != want {
				t.Errorf("seed %d, draft %s: coupled committed\n%v\nLLM-only gumbel\n%s", seed, name, got.Tokens, want)
			}
			if got.CodecBits != 0 {
				t.Errorf("coupled sent %d distribution bits", got.CodecBits)
			}
		}
	}
}

// TestReplicaRefusesMismatch: the replica server recomputes the draft
// distributions; with bit-identical draft weights it verifies, with one
// weight perturbed on the server side it refuses instead of biasing.
func TestReplicaRefusesMismatch(t *testing.T) {
	llm, slm := openPair(t, stories+"@exit=2")
	prompt := llm.Tokenizer().Encode("Tom had a red car", true)
	p := DefaultParams()
	p.Method, p.Seed, p.MaxTokens = Replica, 1, 32
	run := func(serverSLM *llama.Model) error {
		dev, err := NewDevice(p, slm, llm.Config().Vocab, prompt)
		if err != nil {
			t.Fatal(err)
		}
		srv, err := NewReplicaServer(p, llm, serverSLM, prompt)
		if err != nil {
			t.Fatal(err)
		}
		link, _ := channel.New(p.Channel)
		_, err = Run(context.Background(), Config{Device: dev, Verifier: &Local{Server: srv}, Link: link, Context: llm.Config().SeqLen})
		return err
	}
	if err := run(slm); err != nil {
		t.Fatalf("identical replica: %v", err)
	}
	// A separate copy of the weights with one value nudged by 1e-6.
	path, err := builtin.Path(stories)
	if err != nil {
		t.Fatal(err)
	}
	w, err := llama.LoadLlama2C(path)
	if err != nil {
		t.Fatal(err)
	}
	q := append([]float32(nil), w.Layers[1].Wq.F32...)
	q[17] += 1e-6
	w.Layers[1].Wq.F32 = q
	m, err := llama.New(w, llm.Tokenizer(), "perturbed")
	if err != nil {
		t.Fatal(err)
	}
	bad, err := m.EarlyExit(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := run(bad); !errors.Is(err, ErrReplicaMismatch) {
		t.Fatalf("perturbed replica: err = %v, want ErrReplicaMismatch", err)
	}
}

// TestCoupledListWiring: on the real pair, list_k = 1 commits exactly what
// coupled commits; with the LLM itself as the draft every round accepts all
// its drafts whichever of the K drafts wins (so the server follows the
// winner's branch with the right target distributions); with K = 3 the
// uplink carries 3 ids per drafted position and no distribution.
func TestCoupledListWiring(t *testing.T) {
	llm, slm := openPair(t, stories+"@exit=2")
	_, self := openPair(t, stories)
	prompt := llm.Tokenizer().Encode("Lily wanted to play", true)
	for seed := uint64(0); seed < 4; seed++ {
		p := DefaultParams()
		p.Method, p.Seed, p.MaxTokens = Coupled, seed, 40
		want := runOnce(t, p, llm, slm, prompt)
		p.Method, p.ListK = CoupledList, 1
		if got := runOnce(t, p, llm, slm, prompt); fmt.Sprint(got.Tokens) != fmt.Sprint(want.Tokens) {
			t.Errorf("seed %d: list_k=1 committed\n%v\ncoupled\n%v", seed, got.Tokens, want.Tokens)
		}
		p.ListK = 3
		r := runOnce(t, p, llm, self, prompt)
		if r.Resampled != 0 || r.Accepted+r.Bonus < 40 {
			t.Errorf("seed %d: self-draft with K=3: %d resampled, %d accepted + %d bonus", seed, r.Resampled, r.Accepted, r.Bonus)
		}
		r = runOnce(t, p, llm, slm, prompt)
		if r.CodecBits != 0 || r.Drafted != r.Verified || r.Verified%3 != 0 {
			t.Errorf("seed %d: K=3 sent %d codec bits, drafted %d, verified %d", seed, r.CodecBits, r.Drafted, r.Verified)
		}
	}
}

// TestCoupledListSecondToken: the second committed token, given the most
// likely first one, follows the LLM's conditional distribution (chi-square
// at 0.001 over the runs, of seeds 0…2999, whose first token is that one;
// K = 3, L = 3). Exercises the server's evaluation of the winning branch.
func TestCoupledListSecondToken(t *testing.T) {
	llm, slm := openPair(t, stories+"@exit=2")
	prompt := llm.Tokenizer().Encode("The sun was", true)
	logits, err := llm.NewSession().Prefill(prompt)
	if err != nil {
		t.Fatal(err)
	}
	y0 := sampling.Softmax(nil, logits, 1)
	mode := 0
	for i, v := range y0 {
		if v > y0[mode] {
			mode = i
		}
	}
	logits, err = llm.NewSession().Prefill(append(slices.Clone(prompt), mode))
	if err != nil {
		t.Fatal(err)
	}
	y1 := sampling.Softmax(nil, logits, 1)
	counts := make([]int, len(y1))
	n := 0
	for seed := 0; seed < 3000; seed++ {
		p := DefaultParams()
		p.Method, p.Seed, p.MaxTokens, p.ListK, p.L = CoupledList, uint64(seed), 2, 3, 3
		r := runOnce(t, p, llm, slm, prompt)
		if r.Tokens[0] == mode {
			counts[r.Tokens[1]]++
			n++
		}
	}
	chi, df := stattest.ChiSquare(counts, y1)
	crit := stattest.Critical(df)
	t.Logf("y(first) = %.3f: %d runs; chi-square %.1f on %d df (critical %.1f)", y0[mode], n, chi, df, crit)
	if chi > crit {
		t.Errorf("second token deviates from the LLM: chi-square %.1f > %.1f", chi, crit)
	}
}

// blockVariantModel is a draft model that says its logits depend on the
// evaluation's shape (as llama.cpp's backend does).
type blockVariantModel struct{ model.Model }

func (blockVariantModel) BlockVariant() string { return "a test model: draft on hlm's engine" }

// TestReplicaRefusesBlockVariantDraft: a replica server is refused before
// any round when its draft model's logits depend on one-token vs block
// evaluation, with the model's own reason, instead of failing at the
// first round's hash.
func TestReplicaRefusesBlockVariantDraft(t *testing.T) {
	llm, slm := openPair(t, stories+"@exit=2")
	prompt := llm.Tokenizer().Encode("Tom had a red car", true)
	p := DefaultParams()
	p.Method = Replica
	_, err := NewReplicaServer(p, llm, blockVariantModel{slm}, prompt)
	if !errors.Is(err, ErrParam) || !strings.Contains(err.Error(), "a test model: draft on hlm's engine") {
		t.Fatalf("err = %v, want ErrParam with the model's reason", err)
	}
	p.Method = QS // only the replica method runs the draft on the server
	if _, err := NewReplicaServer(p, llm, blockVariantModel{slm}, prompt); err != nil {
		t.Fatalf("q-s with the same draft: %v", err)
	}
}

// attentionlessModel is a draft model whose sessions cannot capture
// attention (as llama.cpp's backend).
type attentionlessModel struct{ model.Model }

func (attentionlessModel) NoAttention() error {
	return fmt.Errorf("%w: a test model without attention", model.ErrUnsupported)
}

// TestCheckDraft: the methods that need the draft's attention refuse a
// model without it, the replica method a block-variant one, before a
// device or server is made; other methods take either.
func TestCheckDraft(t *testing.T) {
	llm, slm := openPair(t, stories+"@exit=2")
	prompt := llm.Tokenizer().Encode("Tom had a red car", true)
	for _, c := range []struct {
		method string
		slm    model.Model
		want   string
	}{
		{UIHLM, attentionlessModel{slm}, "a test model without attention"},
		{IHLM, attentionlessModel{slm}, "a test model without attention"},
		{Replica, blockVariantModel{slm}, "a test model: draft on hlm's engine"},
		{UHLM, attentionlessModel{slm}, ""},
		{QS, blockVariantModel{slm}, ""},
		{UIHLM, slm, ""},
	} {
		p := DefaultParams()
		p.Method = c.method
		err := CheckDraft(p, c.slm)
		_, devErr := NewDevice(p, c.slm, llm.Config().Vocab, prompt)
		for _, e := range []error{err, devErr} {
			if c.want == "" && e != nil || c.want != "" && (e == nil || !strings.Contains(e.Error(), c.want)) {
				t.Errorf("%s with %T: %v, want %q", c.method, c.slm, e, c.want)
			}
		}
	}
}
