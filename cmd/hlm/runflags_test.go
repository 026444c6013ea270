package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/hybrid"
)

// TestFlagsAndSet: a flag and --set for the same key must agree; the
// sampling flags of hlm generate work in hlm sim and mean the --set keys.
func TestFlagsAndSet(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // "" : runs
	}{
		{[]string{"--max-tokens", "5", "--set", "max_tokens=7"}, "disagree"},
		{[]string{"--method", "q-s", "--set", "method=u-hlm"}, "disagree"},
		{[]string{"--temperature", "0.5", "--set", "temperature=0.7"}, "disagree"},
		{[]string{"--seed", "3", "--set", "seed=3"}, ""},
		{[]string{"--set", "method=u-hlm"}, ""},
		{[]string{"--top-k", "5", "--set", "top_k=5"}, ""},
	} {
		args := append([]string{"sim", "--prompt", "Once", "--max-tokens", "4", "--json"}, c.args...)
		_, stderr, err := runHLM(t, args...)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v\n%s", c.args, err, stderr)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: err = %v, want %q", c.args, err, c.want)
		}
	}
	// --temperature 0 is --set temperature=0: the same greedy tokens.
	a, _, err := runHLM(t, "sim", "--prompt", "Once", "--max-tokens", "12", "--json", "--temperature", "0", "--method", "q-s")
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := runHLM(t, "sim", "--prompt", "Once", "--max-tokens", "12", "--json", "--set", "temperature=0", "--method", "q-s")
	if err != nil {
		t.Fatal(err)
	}
	var ra, rb struct{ Tokens []int }
	if json.Unmarshal([]byte(a), &ra) != nil || json.Unmarshal([]byte(b), &rb) != nil || len(ra.Tokens) == 0 {
		t.Fatalf("outputs %q %q", a, b)
	}
	if len(ra.Tokens) != len(rb.Tokens) {
		t.Fatalf("--temperature 0 gave %v, --set temperature=0 %v", ra.Tokens, rb.Tokens)
	}
	for i := range ra.Tokens {
		if ra.Tokens[i] != rb.Tokens[i] {
			t.Fatalf("--temperature 0 gave %v, --set temperature=0 %v", ra.Tokens, rb.Tokens)
		}
	}
}

// TestSimTreeSummary: a tree run's summary counts its drafts as sent (all
// of a tree's nodes go, the walk checks a few) and says what its trees
// were; --json carries the same report; a chain's summary keeps "drafts
// verified".
func TestSimTreeSummary(t *testing.T) {
	_, out, err := runHLM(t, "sim", "--prompt", "Once upon a time", "--max-tokens", "12", "--method", "tree-q-s")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"drafts sent ", "(tree nodes)", "trees: ", "nodes/round", "SLM passes", "tree bits: payload "} {
		if !strings.Contains(out, want) {
			t.Errorf("tree-q-s summary lacks %q:\n%s", want, out)
		}
	}
	js, _, err := runHLM(t, "sim", "--prompt", "Once upon a time", "--max-tokens", "12", "--method", "tree-k-sqs", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Verified int `json:"verified"`
		Tree     *struct {
			Trees int `json:"trees"`
			Nodes int `json:"nodes"`
		} `json:"tree"`
	}
	if err := json.Unmarshal([]byte(js), &r); err != nil || r.Tree == nil || r.Tree.Trees == 0 || r.Tree.Nodes != r.Verified {
		t.Errorf("tree-k-sqs --json: tree %+v, verified %d (%v)", r.Tree, r.Verified, err)
	}
	_, out, err = runHLM(t, "sim", "--prompt", "Once upon a time", "--max-tokens", "12", "--method", "q-s")
	if err != nil || !strings.Contains(out, "drafts verified ") || strings.Contains(out, "trees: ") {
		t.Errorf("q-s summary (%v):\n%s", err, out)
	}
	// u-hlm skips rounds: its accepted drafts are per verified round
	// (accepted / uploads), which the summary called "accepted/round"
	// (0.77 for 10 accepted in 24 rounds, 13 of them uploaded).
	_, out, err = runHLM(t, "sim", "--prompt", "Once upon a time", "--max-tokens", "24", "--seed", "7", "--method", "u-hlm")
	if err != nil || !strings.Contains(out, "uploads 13 ") || !strings.Contains(out, "accepted 10,") || !strings.Contains(out, "accepted/verified round 0.77") {
		t.Errorf("u-hlm summary (%v):\n%s", err, out)
	}
}

// TestUthAdvice: calibrate suggests Theorem 1's risk-prone threshold only
// inside (0, 1), where u-hlm both uploads and skips; outside, it says why
// it gives none (before, 1.19 was clamped to u_th=1: never upload).
func TestUthAdvice(t *testing.T) {
	for _, c := range []struct {
		degenerate      bool
		prone           float64
		uth, noteSubstr string
	}{
		{false, 0.42, " --set u_th=0.4200", ""},
		{false, 1.1936, "", "never upload"},
		{false, 1, "", "never upload"},
		{false, -0.3, "", "upload every draft"},
		{false, 0, "", "upload every draft"},
		{true, 0.5, "", ""},
	} {
		uth, note := uthAdvice(c.degenerate, c.prone)
		if uth != c.uth || (c.noteSubstr == "") != (note == "") || !strings.Contains(note, c.noteSubstr) {
			t.Errorf("uthAdvice(%v, %g) = %q, %q; want %q and a note with %q", c.degenerate, c.prone, uth, note, c.uth, c.noteSubstr)
		}
	}
}

// TestSimBudgetTests: a C-SQS run's summary says how many SLM passes
// tested a draft that did not fit the budget (charged, not sent), and
// --json carries the count; K-SQS, whose draft size is known beforehand,
// has none.
func TestSimBudgetTests(t *testing.T) {
	_, out, err := runHLM(t, "sim", "--prompt", "Once upon a time", "--max-tokens", "64", "--seed", "1", "--method", "c-sqs")
	if err != nil || !strings.Contains(out, "budget tests (") {
		t.Errorf("c-sqs summary (%v) lacks the budget tests:\n%s", err, out)
	}
	for _, c := range []struct {
		method string
		some   bool
	}{{"c-sqs", true}, {"k-sqs", false}} {
		js, _, err := runHLM(t, "sim", "--prompt", "Once upon a time", "--max-tokens", "64", "--seed", "1", "--method", c.method, "--json")
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Probed int `json:"probed"`
		}
		if err := json.Unmarshal([]byte(js), &r); err != nil || (r.Probed > 0) != c.some {
			t.Errorf("%s --json: probed %d (%v), want some: %v", c.method, r.Probed, err, c.some)
		}
	}
}

// TestUnusedKeyWarnings: a --set or --sweep key that the run does not
// read (rate_bps on the default Shannon link, budget_bits for q-s) is
// named in a warning by sim and eval, and in eval's report; a key it
// reads is not.
func TestUnusedKeyWarnings(t *testing.T) {
	_, stderr, err := runHLM(t, "sim", "--prompt", "Once", "--max-tokens", "4", "--method", "q-s", "--set", "rate_bps=1e3", "--set", "l=2")
	if err != nil || !strings.Contains(stderr, "warning: --set rate_bps=1e3 has no effect: it sets the fixed link, and channel=shannon") || strings.Contains(stderr, "l=2 has no effect") {
		t.Errorf("sim (%v): stderr\n%s", err, stderr)
	}
	out := t.TempDir()
	_, stderr, err = runHLM(t, "eval", "--out", out, "--methods", "q-s,k-sqs", "--sweep", "budget_bits=400,1600", "--n", "1", "--max-tokens", "4", "--no-nll")
	if err != nil || !strings.Contains(stderr, "warning: q-s: --sweep budget_bits has no effect: method q-s does not read it") || strings.Contains(stderr, "k-sqs: --sweep budget_bits") {
		t.Errorf("eval (%v): stderr\n%s", err, stderr)
	}
	if rep, _ := os.ReadFile(filepath.Join(out, "report.md")); !strings.Contains(string(rep), "q-s: --sweep budget_bits has no effect") {
		t.Errorf("eval's report does not carry the warning:\n%s", rep)
	}
}

// TestEvalSweepConflicts: a key swept twice, or both set and swept, is
// refused (before, the later value won silently).
func TestEvalSweepConflicts(t *testing.T) {
	out := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--sweep", "temperature=0.5", "--sweep", "temperature=1"}, "given twice"},
		{[]string{"--sweep", "budget_bits=400", "--set", "budget_bits=800"}, "give one"},
	} {
		args := append([]string{"eval", "--out", out, "--methods", "k-sqs", "--n", "1", "--max-tokens", "4", "--no-nll"}, c.args...)
		if _, _, err := runHLM(t, args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error saying %q", c.args, err, c.want)
		}
	}
}

// TestEvalPaperQuickRefusals: --quick on a paper without a small rerun,
// or with size flags it would ignore, is refused (before, the first ran
// the full rerun and the second ignored the sizes). The refusal of --quick
// names the sizes that rerun reads (it suggested --n-cal to ui-hlm and
// coupling, which then refused it).
func TestEvalPaperQuickRefusals(t *testing.T) {
	out := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"u-hlm", "--quick"}, "has no small rerun"},
		{[]string{"coupling", "--quick"}, "has no small rerun (sqs, qs, trees have one); give --n, --n-curve to make it smaller"},
		{[]string{"ui-hlm", "--quick"}, "give --n, --n-curve to make it smaller"},
		{[]string{"cu-hlm", "--quick"}, "give --n, --n-curve, --n-cal, --n-measure to make it smaller"},
		{[]string{"sqs", "--quick", "--n", "2"}, "--n would be ignored"},
		{[]string{"trees", "--quick", "--n-curve", "1", "--n-cal", "1"}, "--n-cal, --n-curve would be ignored"},
		{[]string{"--quick", "sqs"}, "the paper's name goes first"},
		{[]string{"qs", "--n", "2"}, "the qs rerun does not read --n"},
		{[]string{"sqs", "--n", "2", "--n-cal", "2", "--n-curve", "2"}, "the sqs rerun does not read --n, --n-cal"},
		{[]string{"sqs", "--quick", "--ablation", "x=builtin:stories260K-draft"}, "the sqs rerun has no such table"},
	} {
		args := append(append([]string{"eval", "paper"}, c.args...), "--out", out)
		if _, _, err := runHLM(t, args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error saying %q", c.args, err, c.want)
		}
	}
}

// TestEvalPlotsTwoSweeps: with two swept keys, the plots against the
// first have a line per method and value of the second (before, a line
// per method joined points of different rates).
func TestEvalPlotsTwoSweeps(t *testing.T) {
	out := t.TempDir()
	if _, _, err := runHLM(t, "eval", "--out", out, "--methods", "q-s", "--sweep", "l=1,2", "--sweep", "rate_bps=64e3,1e6", "--set", "channel=fixed", "--n", "1", "--max-tokens", "4", "--no-nll"); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(filepath.Join(out, "throughput_tps.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"q-s rate_bps=64e3", "q-s rate_bps=1e6"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("throughput_tps.svg has no line %q", want)
		}
	}
}

// TestEvalPlotsNumericSweep: the plots are against the first swept key
// whose values are numbers (a tree shape such as "3,2,1" is not; it was
// plotted at x = 3), and a sweep of no numbers gets no plots and a notice.
func TestEvalPlotsNumericSweep(t *testing.T) {
	out := t.TempDir()
	if _, _, err := runHLM(t, "eval", "--out", out, "--methods", "tree-q-s", "--sweep", "tree_shape=2,1;3", "--sweep", "temperature=0.5,1", "--n", "1", "--max-tokens", "4", "--no-nll"); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(filepath.Join(out, "throughput_tps.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"vs temperature", "tree-q-s tree_shape=2,1", "tree-q-s tree_shape=3"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("throughput_tps.svg has no %q", want)
		}
	}
	out = t.TempDir()
	_, stderr, err := runHLM(t, "eval", "--out", out, "--methods", "tree-q-s", "--sweep", "tree_shape=2,1;3", "--n", "1", "--max-tokens", "4", "--no-nll")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "throughput_tps.svg")); err == nil {
		t.Error("a plot against tree_shape")
	}
	if !strings.Contains(stderr, "no plots") {
		t.Errorf("no notice of the missing plots:\n%s", stderr)
	}
}

// TestEvalPaperNotices: what a rerun's report says it left out or
// replaced (the built-in stories for a missing TinyStories sample, a pair
// not measured) is also said on the terminal.
func TestEvalPaperNotices(t *testing.T) {
	t.Setenv("HLM_SHARED", t.TempDir())
	_, stderr, err := runHLM(t, "eval", "paper", "trees", "--quick", "--out", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"the tinystories prompts are hlm's built-in", "pair 2 is not measured"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr has no %q:\n%s", want, stderr)
		}
	}
}

// TestEvalCosineNotice: without GloVe's vectors the cosine column is
// empty, and hlm eval says so on the terminal and in the report.
func TestEvalCosineNotice(t *testing.T) {
	t.Setenv("HLM_SHARED", t.TempDir())
	out := t.TempDir()
	_, stderr, err := runHLM(t, "eval", "--out", out, "--methods", "q-s", "--n", "1", "--max-tokens", "4", "--no-nll")
	if err != nil {
		t.Fatal(err)
	}
	report, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for what, text := range map[string]string{"stderr": stderr, "report.md": string(report)} {
		if !strings.Contains(text, "the cosine column is empty") {
			t.Errorf("%s does not say why cosine is empty:\n%s", what, text)
		}
	}
}

// TestCalibrateJSONSource: calibrate --out records what the calibration
// was made from beside its result (fields at the top level as before).
func TestCalibrateJSONSource(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cal.json")
	if _, _, err := runHLM(t, "calibrate", "--n", "2", "--max-tokens", "8", "--seed", "3", "--temperature", "0.7", "--out", out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Delta  *float64 `json:"delta"`
		Source struct {
			LLM         string  `json:"llm"`
			Prompts     int     `json:"prompts"`
			Seed        uint64  `json:"seed"`
			Temperature float64 `json:"temperature"`
			MaxTokens   int     `json:"max_tokens"`
		} `json:"source"`
	}
	if err := json.Unmarshal(b, &f); err != nil || f.Delta == nil || f.Source.LLM == "" || f.Source.Prompts != 2 || f.Source.Seed != 3 || f.Source.Temperature != 0.7 || f.Source.MaxTokens != 8 {
		t.Errorf("calibrate --out (%v):\n%s", err, b)
	}
}

// TestUnusedSetsBeforePreset: a channel key given before a later
// channel_preset is reported as reset by it (the preset replaced the
// channel silently, and the warning blamed another key); one given after
// it is not.
func TestUnusedSetsBeforePreset(t *testing.T) {
	sets := []string{"channel=fixed", "rate_bps=1000", "channel_preset=uhlm", "snr_db=5", "temperature=0.5"}
	p := hybrid.DefaultParams()
	p.Method = "q-s"
	if err := p.SetAll(sets); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, u := range unusedSets("--set", sets, p) {
		got[u.key] = u.why
	}
	for _, k := range []string{"channel", "rate_bps"} {
		if !strings.Contains(got[k], "channel_preset=uhlm resets the channel") {
			t.Errorf("%s before the preset: %q", k, got[k])
		}
	}
	for _, k := range []string{"snr_db", "temperature"} {
		if strings.Contains(got[k], "channel_preset") {
			t.Errorf("%s after the preset, or no channel key: %q", k, got[k])
		}
	}
}
