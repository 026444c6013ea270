package hybrid

import (
	"math"
	"testing"
)

// TestEntropyMeter: for the LLM-only method and for Q-S (lossless by
// Prop. 1: each committed token follows the LLM's distribution exactly)
// the meter's mean entropy equals the mean entropy of the LLM's
// distributions along the output, recomputed here; for S-Q (lossy), whose
// tokens follow another distribution, it does not. Without Params.Entropy
// nothing is measured.
func TestEntropyMeter(t *testing.T) {
	llm, slm := openPair(t, stories+"@exit=2")
	prompt := llm.Tokenizer().Encode("Once upon a time", true)
	cases := []struct {
		method string
		equal  bool
	}{{LLM, true}, {QS, true}, {SQ, false}}
	for _, c := range cases {
		p := DefaultParams()
		p.Method, p.Seed, p.MaxTokens, p.Temperature, p.Entropy = c.method, 2, 40, 1, true
		r := runOnce(t, p, llm, slm, prompt)
		if r.MeanEntropy == nil || r.EntropyTokens < len(r.Tokens) {
			t.Fatalf("%s: entropy %v over %d tokens, %d committed", c.method, r.MeanEntropy, r.EntropyTokens, len(r.Tokens))
		}
		n := min(r.EntropyTokens, len(r.Tokens)) // tokens past MaxTokens are measured but not in r.Tokens
		if r.EntropyTokens != n {
			t.Logf("%s: %d tokens measured, %d kept", c.method, r.EntropyTokens, n)
			continue // the recomputation below needs every measured token
		}
		rows, err := llm.NewSession().Eval(append(append([]int(nil), prompt...), r.Tokens...))
		if err != nil {
			t.Fatal(err)
		}
		h := 0.0
		for i := range n {
			h += entropy(p.distOf(nil, rows[len(prompt)-1+i]))
		}
		h /= float64(n)
		if diff := math.Abs(*r.MeanEntropy - h); (diff < 1e-9) != c.equal {
			t.Errorf("%s: meter %.12f, LLM along the output %.12f (|diff| %.3g, want equal: %v)", c.method, *r.MeanEntropy, h, diff, c.equal)
		}
	}
	p := DefaultParams()
	p.Method, p.MaxTokens = QS, 10
	if r := runOnce(t, p, llm, slm, prompt); r.MeanEntropy != nil || r.EntropyTokens != 0 {
		t.Errorf("entropy measured without Params.Entropy: %v", r.MeanEntropy)
	}
}
