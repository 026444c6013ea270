package hybrid

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
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
		// The measure is over the output's tokens: none past MaxTokens,
		// which a last round's bonus can commit (they were counted before).
		if r.MeanEntropy == nil || r.Stop != StopMaxTokens || r.EntropyTokens != len(r.Tokens) {
			t.Fatalf("%s: entropy %v over %d tokens, %d in the output (stop %s)", c.method, r.MeanEntropy, r.EntropyTokens, len(r.Tokens), r.Stop)
		}
		n := len(r.Tokens)
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
	// Blocks that overrun MaxTokens (seeds and sizes where the last round
	// commits past it): still exactly the output's tokens.
	for seed := range uint64(8) {
		for _, m := range []string{SQ, QS} {
			p := DefaultParams()
			p.Method, p.Seed, p.MaxTokens, p.Temperature, p.Entropy, p.L = m, seed, 16, 1, true, 4
			if r := runOnce(t, p, llm, slm, prompt); r.Stop == StopMaxTokens && r.EntropyTokens != len(r.Tokens) {
				t.Errorf("%s seed %d: %d tokens measured, %d in the output", m, seed, r.EntropyTokens, len(r.Tokens))
			}
		}
	}
	p := DefaultParams()
	p.Method, p.MaxTokens = QS, 10
	if r := runOnce(t, p, llm, slm, prompt); r.MeanEntropy != nil || r.EntropyTokens != 0 {
		t.Errorf("entropy measured without Params.Entropy: %v", r.MeanEntropy)
	}
}

// TestTraceFieldsDocumented: docs/design.md's table of the trace lists
// every field a trace line has, and run.
func TestTraceFieldsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(doc), "## The per-token trace")
	if !ok {
		t.Fatal("docs/design.md has no section on the trace")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	fields := []string{"run"}
	ty := reflect.TypeOf(traceEvent{})
	for i := range ty.NumField() {
		name, _, _ := strings.Cut(ty.Field(i).Tag.Get("json"), ",")
		fields = append(fields, name)
	}
	for _, f := range fields {
		if !strings.Contains(sec, "| `"+f+"` |") {
			t.Errorf("the trace's field %q is not in docs/design.md's table", f)
		}
	}
}

// TestAggregateTrueSkipRate: a run's true skip rate is a mean over its
// checked skips, so runs pool by those, not by all their skips (a run whose
// last skips were never checked weighed as if they had been).
// TestAggregateStop: a summary over several runs says "aggregate", unless
// its last run was interrupted (RunPrompts stops there, so the prompts
// after it never ran): then it says "interrupted", as hlm edge's does.
func TestAggregateStop(t *testing.T) {
	for _, c := range []struct {
		stops []Stop
		want  Stop
	}{
		{[]Stop{StopMaxTokens, StopEnd}, StopAggregate},
		{[]Stop{StopMaxTokens, StopInterrupted}, StopInterrupted},
		{[]Stop{StopInterrupted}, StopInterrupted},
		{[]Stop{StopContext}, StopContext},
	} {
		runs := make([]Result, len(c.stops))
		for i, s := range c.stops {
			runs[i].Stop = s
		}
		if got := Aggregate(runs).Stop; got != c.want {
			t.Errorf("Aggregate of runs stopped by %q: stop %q, want %q", c.stops, got, c.want)
		}
	}
}

func TestAggregateTrueSkipRate(t *testing.T) {
	one, zero := 1.0, 0.0
	s := Aggregate([]Result{
		{Skipped: 10, SkipChecks: 1, TrueSkipRate: &one},
		{Skipped: 1, SkipChecks: 1, TrueSkipRate: &zero},
	})
	if s.TrueSkipRate == nil || *s.TrueSkipRate != 0.5 || s.SkipChecks != 2 {
		t.Errorf("pooled true skip rate %v over %d checks, want 0.5 over 2", s.TrueSkipRate, s.SkipChecks)
	}
}
