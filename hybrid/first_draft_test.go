package hybrid

import "testing"

// TestBudgetRoundCarriesFirstDraft: a K-SQS or C-SQS round whose bit budget
// is smaller than one draft's payload still sends that one draft (and says
// it went over the budget), as batchFill documents. This is hlm's rule,
// not the paper's: SQS's L^t = max{L ∈ ℕ₀ : Σ_{n≤L} b_n^t ≤ B} (its
// evaluation setup) is 0 here, and a round of no drafts makes no
// progress toward using the draft. K-SQS knows its payload size
// before the SLM pass (fixedBits), so it is the case where skipping the
// pass for draft 0 would send an empty batch.
func TestBudgetRoundCarriesFirstDraft(t *testing.T) {
	llm, slm := openPair(t, stories+"@exit=2")
	prompt := llm.Tokenizer().Encode("Once upon a time", true)
	for _, method := range []string{KSQS, CSQS} {
		p := DefaultParams()
		p.Method, p.Seed = method, 1
		if err := p.SetAll([]string{"budget_bits=8"}); err != nil {
			t.Fatal(err)
		}
		dev, err := NewDevice(p, slm, llm.Config().Vocab, prompt)
		if err != nil {
			t.Fatal(err)
		}
		st, err := dev.Step(100)
		if err != nil {
			t.Fatal(err)
		}
		if st.Upload == nil || len(st.Upload.Drafts) != 1 || st.Drafted != 1 {
			t.Fatalf("%s, budget 8 bits: upload %v, %d drafted; want one draft", method, st.Upload, st.Drafted)
		}
		if !st.overBudget || st.CodecBits <= 8 {
			t.Errorf("%s, budget 8 bits: overBudget %v with %d codec bits, want true and > 8", method, st.overBudget, st.CodecBits)
		}
	}
}
