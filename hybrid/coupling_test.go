package hybrid

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/hlmproject/hlm/channel"
	"github.com/hlmproject/hlm/model/llama"
)

// TestCoupledIsDrafterInvariant: on the real pair, for each seed, coupled
// decoding commits exactly the tokens of LLM-only decoding with the same
// keyed noise, whichever draft model the device runs (a 2-layer early exit,
// a Q8_0 copy, the LLM itself).
func TestCoupledIsDrafterInvariant(t *testing.T) {
	llm, _ := openPair(t, stories)
	prompt := llm.Tokenizer().Encode("Lily wanted to play", true, false)
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
	prompt := llm.Tokenizer().Encode("Tom had a red car", true, false)
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
		_, err = Run(context.Background(), Config{Device: dev, Verifier: &Local{Server: srv}, Link: link, EOS: -1, Context: llm.Config().SeqLen})
		return err
	}
	if err := run(slm); err != nil {
		t.Fatalf("identical replica: %v", err)
	}
	// A separate copy of the weights with one value nudged by 1e-6.
	w, err := llama.LoadLlama2C(stories)
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
