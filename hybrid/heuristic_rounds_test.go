package hybrid

import "testing"

// TestHeuristicDraftLengthRounds: with draft=heuristic a block method
// drafts, round by round, the length of Q-S Sec. V-A's rule — "starting
// with a fixed initial draft length L¹, the algorithm increases the draft
// length by 1 if all generated tokens are accepted, while it sets the next
// draft length to the number of accepted tokens N^t if only a subset of
// tokens is accepted" — kept in [l_min, l_max] (policy.Heuristic), as the
// device counts the drafts sent and accepted (not the committed tokens,
// which include the server's resampled or bonus token). The room is never
// the limit here. Both branches of the rule must occur for the test to
// have power.
func TestHeuristicDraftLengthRounds(t *testing.T) {
	llm, slm := openPair(t, stories+"@exit=2")
	prompt := llm.Tokenizer().Encode("Once upon a time", true)
	for _, method := range []string{QS, SQ} {
		p := DefaultParams()
		p.Method, p.Seed = method, 5
		if err := p.SetAll([]string{"draft=heuristic", "l=3", "l_min=1", "l_max=6"}); err != nil {
			t.Fatal(err)
		}
		dev, err := NewDevice(p, slm, llm.Config().Vocab, prompt)
		if err != nil {
			t.Fatal(err)
		}
		srv, err := NewServer(p, llm, prompt)
		if err != nil {
			t.Fatal(err)
		}
		want, all, part := 3, 0, 0
		for round := 0; round < 40 && (all < 2 || part < 2); round++ {
			st, err := dev.Step(1000)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(st.Upload.Drafts); got != want {
				t.Fatalf("%s round %d: %d drafts, want %d (Q-S Sec. V-A's heuristic)", method, round, got, want)
			}
			v, _, err := srv.Verify(st.Upload)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := dev.Apply(st, v); err != nil {
				t.Fatal(err)
			}
			if v.Accepted == want {
				want, all = want+1, all+1
			} else {
				want, part = v.Accepted, part+1
			}
			want = min(max(want, 1), 6)
		}
		if all < 2 || part < 2 {
			t.Fatalf("%s: %d fully and %d partly accepted rounds: the test needs both", method, all, part)
		}
	}
}
