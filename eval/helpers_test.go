package eval

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/dataset"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/sim"
)

// storiesPair opens the built-in stories260K against its 2-layer early exit
// and returns the model's spec too.
func storiesPair(t *testing.T) (*sim.Models, string) {
	t.Helper()
	stories := builtin.DefaultLLM
	ms, err := sim.Open(stories, stories+"@exit=2", "")
	if err != nil {
		t.Fatal(err)
	}
	return ms, stories
}

// twoStories are two prompts of two sentences each.
const twoStories = "Once upon a time there was a cat. It liked milk.\n\nTom had a red car. He drove it fast."

// evalFixture is the built-in pair, the prompts of text (each its own
// reference, so that the quality metrics are measured) and the default
// parameters with maxTokens.
func evalFixture(t *testing.T, text string, maxTokens int) (*sim.Models, []dataset.Example, hybrid.Params) {
	t.Helper()
	ms, _ := storiesPair(t)
	ex, err := dataset.SplitStories(text, "t")
	if err != nil {
		t.Fatal(err)
	}
	for i := range ex {
		ex[i].Reference = ex[i].Text
	}
	base := hybrid.DefaultParams()
	base.MaxTokens = maxTokens
	return ms, ex, base
}

// runQuickPaper runs cfg's rerun and checks its report: every file of
// files is written, every PNG among them is shown in report.md, and every
// phrase is in it. It returns the report's text.
func runQuickPaper(t *testing.T, cfg PaperConfig, files, phrases []string) string {
	t.Helper()
	if err := RunPaper(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(cfg.Out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(cfg.Out, f)); err != nil {
			t.Errorf("missing %s", f)
		}
		if strings.HasSuffix(f, ".png") && !strings.Contains(md, "("+f+")") {
			t.Errorf("report.md does not show %s", f)
		}
	}
	for _, s := range phrases {
		if !strings.Contains(md, s) {
			t.Errorf("report.md lacks %q", s)
		}
	}
	return md
}

// TestPaperDataMissingUpFront: a rerun whose shared data is missing fails
// before any work, naming every missing file, and writes nothing.
func TestPaperDataMissingUpFront(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	called := false
	err := RunPaper(context.Background(), PaperConfig{Name: "u-hlm", Out: out, LLM: builtin.DefaultLLM, Shared: t.TempDir(), Quick: true,
		Progress: func(int, int, string) { called = true }})
	if err == nil || called {
		t.Fatalf("RunPaper without the shared data: %v (progress reported: %v); want an error before any work", err, called)
	}
	for _, name := range []string{"alpaca", "qed", "creak", "strategyqa"} {
		if !strings.Contains(err.Error(), "/data/"+name) && !strings.Contains(err.Error(), name) {
			t.Errorf("the error does not name %s: %v", name, err)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the output directory was made")
	}
}

// resultsDir writes rows with WriteResults (results.csv, results.json) into
// a fresh directory and returns it.
func resultsDir(t *testing.T, rows []Row) string {
	t.Helper()
	dir := t.TempDir()
	if err := WriteResults(dir, "results", rows); err != nil {
		t.Fatal(err)
	}
	return dir
}
