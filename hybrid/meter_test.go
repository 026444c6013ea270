package hybrid

import (
	"slices"
	"testing"
)

// TestDraftAccepts: a round's α_l (Q-S g(x), the DDQN reward of eq. 13–14)
// is the server's acceptance rule for every draft, min(1, y/x̂), with a
// draft of x̂ = 0 accepted outright (S-Q sends the lattice point of the x
// it sampled from, where ℓ·x < ½ rounds to 0): the list used to stop there,
// counting a two-draft block whose drafts are both surely accepted as one
// token instead of three.
func TestDraftAccepts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tokens []int
		xhat   [][]float64
		y      [][]float64
		want   []float64
	}{
		{"x̂ = 0 is accepted", []int{0, 1}, [][]float64{{0, 1}, {0.5, 0.5}}, [][]float64{{0.5, 0.5}, {0.25, 0.75}, {0.5, 0.5}}, []float64{1, 1}},
		{"ratio below 1", []int{1, 0}, [][]float64{{0.2, 0.8}, {0.5, 0.5}}, [][]float64{{0.6, 0.4}, {0.25, 0.75}}, []float64{0.5, 0.5}},
		{"y = 0", []int{1}, [][]float64{{0.5, 0.5}}, [][]float64{{1, 0}}, []float64{0}},
		{"no distribution for the second", []int{0, 1}, [][]float64{{0.5, 0.5}, nil}, [][]float64{{0.5, 0.5}, {0.5, 0.5}}, []float64{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &round{server: &Trace{XHat: tc.xhat, DraftY: tc.y}}
			for _, tok := range tc.tokens {
				r.drafts = append(r.drafts, drafted{token: tok})
			}
			got := r.draftAccepts()
			if !slices.Equal(got, tc.want) {
				t.Fatalf("α = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestContextFullSameLength: near a full context every method stops at the
// same length, the context less one position, with stop "context full",
// and streams exactly the tokens it returns — a block's bonus after the
// one draft of a round with room for one token used to carry some methods
// one token further (a tree, coupled, k-sqs: 512 of 512 where llm and q-s
// stopped at 511).
func TestContextFullSameLength(t *testing.T) {
	llm, slm := openPair(t, stories+"-draft")
	C := llm.Config().SeqLen
	prompt := llm.Tokenizer().Encode("Once upon a time", true)
	for len(prompt) < C-11 {
		prompt = append(prompt, prompt[1:min(len(prompt), C-11-len(prompt)+1)]...)
	}
	prompt = prompt[:C-11]
	for _, m := range []string{LLM, QS, KSQS, Coupled, TreeQS, HLM} {
		for seed := range uint64(6) {
			p := DefaultParams()
			p.Method, p.Seed, p.MaxTokens = m, seed, 400
			c := inProcess(t, p, llm, slm, prompt)
			var streamed []int
			c.OnTokens = func(toks []int) { streamed = append(streamed, toks...) }
			r, err := Run(t.Context(), c)
			if err != nil {
				t.Fatal(err)
			}
			if r.Stop == StopEnd {
				continue
			}
			if got := len(prompt) + len(r.Tokens); got != C-1 || r.Stop != StopContext {
				t.Errorf("%s seed %d: %d positions, stop %q; want %d, %q", m, seed, got, r.Stop, C-1, StopContext)
			}
			if !slices.Equal(streamed, r.Tokens) {
				t.Errorf("%s seed %d: streamed %d tokens, returned %d", m, seed, len(streamed), len(r.Tokens))
			}
		}
	}
}
