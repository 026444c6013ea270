package eval

import (
	"context"
	"os"
	"path/filepath"
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
		Ablation: []Draft{{Name: "one-layer exit", SLM: stories + "@exit=1"}}}
	ms, err := sim.Open(cfg.LLM, cfg.SLM, "")
	if err != nil {
		t.Fatal(err)
	}
	base := hybrid.DefaultParams()
	base.MaxTokens = cfg.MaxTokens
	p := &paper{cfg: cfg, doc: &Doc{Dir: dir}, sets: map[string][]dataset.Example{}, cache: map[string][]dataset.Example{},
		setup: Setup{Models: ms, Base: base}}
	if err := p.kdAblation(context.Background(), base); err != nil {
		t.Fatal(err)
	}
	md := p.doc.b.String()
	b, err := os.ReadFile(filepath.Join(dir, "table2_kd.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 5 { // header + 2 methods × 2 drafts
		t.Fatalf("table has %d lines, want 5:\n%s", len(lines), b)
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
