package distill

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/metrics"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/model/llama"
)

func TestAgree(t *testing.T) {
	path := sharedPath(t, "models/stories260K/stories260K.bin")
	llm, err := llama.OpenSpec(path, "")
	if err != nil {
		t.Fatal(err)
	}
	exit, _ := llama.OpenSpec(path+"@exit=2", "")
	tok := llm.Tokenizer()
	prompts := [][]int{tok.Encode("Once upon a time", true), tok.Encode("Tom had a red car.", true), {tok.BOS()}}
	self, err := Agree(context.Background(), llm, llm, prompts, 20, 1, 1, tok.EOG())
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(self.Accept-1) > 1e-12 || self.Tokens != 60 {
		t.Fatalf("a model against itself: acceptance %v over %d tokens, want 1 over 60", self.Accept, self.Tokens)
	}
	a, err := Agree(context.Background(), llm, exit, prompts, 20, 1, 1, tok.EOG())
	if err != nil {
		t.Fatal(err)
	}
	if !(a.Accept > 0 && a.Accept < 0.9) || !(a.Accept95 > 0) || a.SLMMACs >= a.LLMMACs || len(a.ByStep) != 2 {
		t.Fatalf("early exit: %+v", a)
	}
	// The same seed measures the same text: deterministic.
	b, _ := Agree(context.Background(), llm, exit, prompts, 20, 1, 1, tok.EOG())
	if a.Accept != b.Accept {
		t.Fatalf("two runs with one seed: %v and %v", a.Accept, b.Accept)
	}
	other, _ := llama.OpenSpec(sharedPath(t, "models/tinystories-656k"), "")
	if _, err := Agree(context.Background(), llm, other, prompts, 20, 1, 1, nil); err == nil || !strings.Contains(err.Error(), "vocabulary") {
		t.Fatalf("vocabulary mismatch: %v", err)
	}
}

// TestAgreeSaysWhichInputIsWrong: each impossible input is named alone.
func TestAgreeSaysWhichInputIsWrong(t *testing.T) {
	llm, err := llama.OpenSpec(builtin.DefaultLLM, "")
	if err != nil {
		t.Fatal(err)
	}
	prompts := [][]int{{1, 403}}
	for _, c := range []struct {
		prompts   [][]int
		maxTokens int
		temp      float64
		want      string
	}{{prompts, 8, 0, "temperature above 0 (got 0)"}, {prompts, 0, 1, "max tokens above 0 (got 0)"}, {nil, 8, 1, "prompts (got none)"}} {
		_, err := Agree(context.Background(), llm, llm, c.prompts, c.maxTokens, c.temp, 1, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Agree(%d prompts, %d tokens, T %g) = %v; want %q", len(c.prompts), c.maxTokens, c.temp, err, c.want)
		}
	}
}

// TestAgreementJSON: one prompt's agreement, whose interval is not
// defined, is written with null there ("hlm acceptance --n 1 --json"
// failed with "json: unsupported value: NaN").
func TestAgreementJSON(t *testing.T) {
	a := Agreement{Accept: 0.73, Accept95: math.NaN(), PerPrompt: metrics.Summarize([]float64{0.73}), Tokens: 16, Prompts: 1}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["accept"] != 0.73 || m["accept_ci95"] != nil || m["prompts"] != 1.0 {
		t.Errorf("%s", b)
	}
	if _, ok := m["accept_ci95"]; !ok {
		t.Errorf("%s: accept_ci95 left out, want null", b)
	}
}
