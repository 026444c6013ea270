package eval

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/hlmproject/hlm/internal/sharedtest"
	"github.com/hlmproject/hlm/model/builtin"
)

// TestSQSQuick runs the SQS rerun in quick mode on the built-in pair and
// checks that it makes every figure and table (Figs. 2, 4, 5, 6, the
// paired crossover, the batch tables, Theorems 1 and 2), that no batch
// exceeds the budget B (except a lone first draft) nor is cut by a draft
// count, and that the measured rejections agree with their exact
// expectation Σ TV(q̂, p) and stay below Theorem 1's bound.
func TestSQSQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the quick SQS rerun (about 10 s of CPU)")
	}
	sharedtest.Path(t, "data/tinystories/TinyStories-valid-sample.txt")
	out := t.TempDir()
	cfg := PaperConfig{Name: "sqs", Out: out, LLM: builtin.DefaultLLM, Shared: sharedtest.Dir(), Quick: true, MaxTokens: 48, Seed: 1, Command: "test"}
	runQuickPaper(t, cfg,
		[]string{"fig2_latency.png", "fig2_resampling.png", "fig4_k.png", "fig4_beta.png", "fig5_latency.png", "fig5_resampling.png",
			"fig6_latency.png", "fig6_resampling.png", "crossover.png", "fig2_table.csv", "fig5_table.csv", "crossover.csv", "batches_summary.csv",
			"batches.csv", "theorem1.csv", "theorem2.csv", "runs.csv"},
		[]string{"No draft-count cap", "C-SQS β₁=0.001 η=0", "K-SQS K=16", "vacuous here"})
	checkBatches(t, readCSV(t, filepath.Join(out, "batches.csv")))
	checkTheorem1(t, readCSV(t, filepath.Join(out, "theorem1.csv")))
}

func readCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, c := range recs[0] {
			m[c] = r[i]
		}
		out = append(out, m)
	}
	return out
}

func num(t *testing.T, m map[string]string, col string) float64 {
	t.Helper()
	x, err := strconv.ParseFloat(m[col], 64)
	if err != nil {
		t.Fatalf("column %q: %v", col, err)
	}
	return x
}

// pm reads column col of a report table's CSV and its 95% half-width
// (COL_ci95; 0 when empty).
func pm(t *testing.T, m map[string]string, col string) (float64, float64) {
	t.Helper()
	v := num(t, m, col)
	s, ok := m[col+"_ci95"]
	if !ok {
		t.Fatalf("no column %q", col+"_ci95")
	}
	if s == "" {
		return v, 0
	}
	h, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("column %q: %v", col+"_ci95", err)
	}
	return v, h
}

// checkBatches: a batch fits B unless it is a lone draft; B ends some
// K-SQS K=16 batches (162 bits a draft: 30 fit); a batch cut short of B
// ran out of tokens (48 per prompt), never at a draft count.
func checkBatches(t *testing.T, rows []map[string]string) {
	byB := 0
	for _, r := range rows {
		l, bits := num(t, r, "L^t"), num(t, r, "bits")
		if bits > 5000 && l > 1 {
			t.Errorf("batch %v: %v bits in %v drafts > B", r, bits, l)
		}
		if r["ended by B"] == "true" {
			byB++
			continue
		}
		if r["variant"] == "K-SQS K=16" && l > 30 {
			t.Errorf("K-SQS K=16 batch of %v drafts: 30 fit B", l)
		}
	}
	if byB == 0 {
		t.Error("B never ended a batch")
	}
}

// checkTheorem1: measured N_rej per batch agrees with its exact
// expectation Σ TV(q̂, p) (within twice the 95% half-width of their
// batch-by-batch difference: about 4 standard errors), and the expectation
// is below Theorem 1's bound.
func checkTheorem1(t *testing.T, rows []map[string]string) {
	for _, r := range rows {
		exact, bound := num(t, r, "Σ TV(q̂,p)"), num(t, r, "bound")
		if exact > bound+1e-3 {
			t.Errorf("%s T=%s: Σ TV(q̂,p) = %v above the bound %v", r["variant"], r["T"], exact, bound)
		}
		gap, h := pm(t, r, "measured − Σ TV(q̂,p)")
		if math.Abs(gap) > 2*h+1e-9 {
			t.Errorf("%s T=%s: measured − expected = %v ± %v: more than 4 standard errors from 0", r["variant"], r["T"], gap, h)
		}
	}
}
