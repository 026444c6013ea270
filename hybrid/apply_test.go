package hybrid

import "testing"

// TestApplyTakesTheRoundInFlight: Apply commits a verdict on the Step that
// made the upload in flight; a step of an earlier round, a skipped step or
// a second verdict on the same round is refused, and the refused calls
// leave the device able to go on.
func TestApplyTakesTheRoundInFlight(t *testing.T) {
	llm, slm := openPair(t, stories+"@exit=2")
	prompt := llm.Tokenizer().Encode("Once upon a time", true)
	p := DefaultParams()
	p.Method, p.Seed, p.MaxTokens = QS, 1, 20
	dev, err := NewDevice(p, slm, llm.Config().Vocab, prompt)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(p, llm, prompt)
	if err != nil {
		t.Fatal(err)
	}
	round := func() (Step, []int) {
		t.Helper()
		st, err := dev.Step(100)
		if err != nil || st.Upload == nil {
			t.Fatalf("step: %v (upload %v)", err, st.Upload != nil)
		}
		v, _, err := srv.Verify(st.Upload)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dev.Apply(Step{}, v); err == nil {
			t.Error("a step without an upload was applied")
		}
		got, err := dev.Apply(st, v)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dev.Apply(st, v); err == nil {
			t.Error("a second verdict on the same round was applied")
		}
		return st, got
	}
	first, got := round()
	if len(got) == 0 {
		t.Fatal("the first round committed nothing")
	}
	st, err := dev.Step(100)
	if err != nil || st.Upload == nil {
		t.Fatalf("step: %v", err)
	}
	v, _, err := srv.Verify(st.Upload)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dev.Apply(first, v); err == nil {
		t.Error("the first round's step was applied to the second round's verdict")
	}
	if _, err := dev.Apply(st, v); err != nil {
		t.Errorf("after the refusals: %v", err)
	}
}
