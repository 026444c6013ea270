package hybrid

import (
	"slices"
	"testing"

	"github.com/hlmproject/hlm/model"
)

// TestJobPrefilled: a first round's job skips the prompt's rows (Skip is
// the prompt but its last token); Prefilled takes a chunk of them off the
// front of Tokens, refuses more than Skip, and the round verified from
// the rest gives the verdict of the round verified whole — the same
// tokens committed by a server fed its prompt a chunk at a time.
func TestJobPrefilled(t *testing.T) {
	llm, slm := openPair(t, stories+"@exit=2")
	prompt := llm.Tokenizer().Encode("Once upon a time there was a little girl who liked to play in the park with her dog", true)
	p := DefaultParams()
	p.Method, p.Seed, p.MaxTokens = QS, 3, 20
	dev, err := NewDevice(p, slm, llm.Config().Vocab, prompt)
	if err != nil {
		t.Fatal(err)
	}
	st, err := dev.Step(100)
	if err != nil || st.Upload == nil {
		t.Fatalf("step: %v", err)
	}
	whole, err := NewServer(p, llm, prompt)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := whole.Verify(st.Upload)
	if err != nil {
		t.Fatal(err)
	}

	srv, err := NewServer(p, llm, prompt)
	if err != nil {
		t.Fatal(err)
	}
	j, err := srv.Prepare(st.Upload)
	if err != nil {
		t.Fatal(err)
	}
	if j.Skip() != len(prompt)-1 || len(j.Tokens()) != len(prompt)+len(st.Upload.Drafts) {
		t.Fatalf("first round: skip %d of %d tokens; want %d of %d", j.Skip(), len(j.Tokens()), len(prompt)-1, len(prompt)+len(st.Upload.Drafts))
	}
	if err := j.Prefilled(j.Skip() + 1); err == nil {
		t.Error("Prefilled took more tokens than the job may skip")
	}
	for j.Skip() > 5 {
		chunk := j.Tokens()[:5]
		if _, err := model.EvalSkip(j.Session(), chunk, len(chunk)); err != nil {
			t.Fatal(err)
		}
		before := slices.Clone(j.Tokens())
		if err := j.Prefilled(5); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(j.Tokens(), before[5:]) {
			t.Fatalf("after a chunk, Tokens %v, want %v", j.Tokens(), before[5:])
		}
	}
	rows, err := model.EvalSkip(j.Session(), j.Tokens(), j.Skip())
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := j.Finish(rows)
	if err != nil {
		t.Fatal(err)
	}
	if got.Accepted != want.Accepted || got.Token != want.Token || got.Resampled != want.Resampled {
		t.Errorf("verdict in chunks %+v, whole %+v", got, want)
	}
	if !slices.Equal(srv.Sequence(), whole.Sequence()) {
		t.Errorf("sequence in chunks %v, whole %v", srv.Sequence(), whole.Sequence())
	}
}
