package eval

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/dataset"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/internal/sharedtest"
	"github.com/hlmproject/hlm/sim"
)

// TestKDAblation: Table II has a U-HLM and a CU-HLM (online) row per draft,
// each draft calibrated on its own, with the latency columns filled.
func TestKDAblation(t *testing.T) {
	stories := sharedtest.Path(t, "models/stories260K/stories260K.bin")
	dir := t.TempDir()
	cfg := PaperConfig{Out: dir, LLM: stories, SLM: stories + "@exit=2", Shared: sharedtest.Dir(), N: 2, NCal: 2, MaxTokens: 6,
		Ablation: []Draft{{Name: "one-layer exit", SLM: stories + "@exit=1"}, {Name: "the LLM itself", SLM: stories}}}
	ms, err := sim.Open(cfg.LLM, cfg.SLM, "")
	if err != nil {
		t.Fatal(err)
	}
	base := hybrid.DefaultParams()
	base.MaxTokens = cfg.MaxTokens
	p := &paper{cfg: cfg, doc: &Doc{Dir: dir}, sets: map[string][]dataset.Example{}, cache: map[string][]dataset.Example{},
		setup: Setup{Models: ms, Base: base}}
	for _, d := range cfg.Ablation {
		am, err := ms.WithDraft(cfg.LLM, d.SLM, "")
		if err != nil {
			t.Fatal(err)
		}
		p.ablation = append(p.ablation, am)
	}
	if err := p.kdAblation(context.Background(), base); err != nil {
		t.Fatal(err)
	}
	md := p.doc.b.String()
	b, err := os.ReadFile(filepath.Join(dir, "table2_kd.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 7 { // header + 2 methods × 3 drafts
		t.Fatalf("table has %d lines, want 7:\n%s", len(lines), b)
	}
	// A draft that is the LLM is always accepted; an early exit is not.
	acc := func(line string) float64 {
		f, err := strconv.ParseFloat(strings.Split(line, ",")[3], 64)
		if err != nil {
			t.Fatalf("draft acceptance of %q: %v", line, err)
		}
		return f
	}
	if a := acc(lines[5]); math.Abs(a-1) > 1e-9 {
		t.Errorf("draft acceptance of the LLM itself = %v, want 1", a)
	}
	if a := acc(lines[3]); !(a > 0 && a < 0.9) {
		t.Errorf("draft acceptance of the one-layer exit = %v, want in (0, 0.9)", a)
	}
	for _, want := range []string{"Table II", "one-layer exit", "@exit=1", "report's SLM", hybrid.CUHLMOnline} {
		if !strings.Contains(md+string(b), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// The two drafts have different calibrations, hence their own rows.
	if lines[1] == lines[3] {
		t.Error("both drafts gave the same row")
	}
}

// TestAblationCheckedFirst: an ablation draft that cannot pair with the LLM
// (another vocabulary) fails the CU-HLM rerun before any table runs.
func TestAblationCheckedFirst(t *testing.T) {
	stories := sharedtest.Path(t, "models/stories260K/stories260K.bin")
	other := sharedtest.Path(t, "models/tinystories-656k")
	dir := t.TempDir()
	progressed := false
	err := RunPaper(context.Background(), PaperConfig{Name: "cu-hlm", Out: dir, LLM: stories, SLM: stories + "@exit=2", Shared: sharedtest.Dir(),
		N: 2, NCal: 2, MaxTokens: 6, Ablation: []Draft{{Name: "other vocabulary", SLM: other}}, Progress: func(int, int, string) { progressed = true }})
	if err == nil || !strings.Contains(err.Error(), "other vocabulary") || !strings.Contains(err.Error(), "vocabulary") {
		t.Fatalf("err = %v, want the ablation draft's vocabulary refused", err)
	}
	if progressed {
		t.Error("runs started before the refusal")
	}
}
