package hybrid

import (
	"fmt"
	"testing"
)

// TestTreeWithinBudget: a token tree's upload — ids, payloads and parent
// indices, as UplinkBits counts them — stays within budget_bits, and a
// tree that fills the budget to the bit fits it: regrown from the same
// seed with the budget set to the bits the first tree spent, it is the
// same tree (each candidate drawn fits the bits left, ≤, so none of them
// is refused, and no other becomes affordable). A tree growing past the
// budget, or refusing a candidate that costs exactly the bits left,
// fails. Dynamic and fixed shapes, both tree methods.
func TestTreeWithinBudget(t *testing.T) {
	llm, slm := openPair(t, stories+"-draft")
	prompt := llm.Tokenizer().Encode("Once upon a time", true)
	round := func(method, shape string, budget int) Step {
		t.Helper()
		p := DefaultParams()
		p.Method, p.Seed = method, 2
		if err := p.SetAll([]string{fmt.Sprintf("budget_bits=%d", budget), "tree_shape=" + shape, "tree_nodes=32", "tree_depth=6", "tau_slm=0"}); err != nil {
			t.Fatal(err)
		}
		dev, err := NewDevice(p, slm, llm.Config().Vocab, prompt)
		if err != nil {
			t.Fatal(err)
		}
		st, err := dev.Step(64)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	grown := 0
	for _, method := range []string{TreeQS, TreeKSQS} {
		for _, shape := range []string{"dynamic", "3,2,1"} {
			for _, budget := range []int{1500, 3000, 6000} {
				st := round(method, shape, budget)
				if st.overBudget {
					continue
				}
				bits := UplinkBits(st.Upload, llm.Config().Vocab)
				if bits > budget {
					t.Errorf("%s %s, budget %d: %d uplink bits", method, shape, budget, bits)
					continue
				}
				if len(st.Upload.Drafts) > 1 {
					grown++
				}
				again := round(method, shape, bits)
				if b := UplinkBits(again.Upload, llm.Config().Vocab); b != bits || len(again.Upload.Drafts) != len(st.Upload.Drafts) {
					t.Errorf("%s %s: the tree of %d bits (%d nodes), regrown with budget %d: %d bits, %d nodes",
						method, shape, bits, len(st.Upload.Drafts), bits, b, len(again.Upload.Drafts))
				}
			}
		}
	}
	if grown == 0 {
		t.Fatal("no tree grew beyond one candidate: the test has no power")
	}
}
