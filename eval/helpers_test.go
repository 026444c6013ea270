package eval

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
