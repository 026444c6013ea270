package eval

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/model/builtin"
)

// TestTreesQuick runs the token-tree rerun in quick mode on the built-in
// pair without the shared material (so pair 2 is skipped, saying why, and
// the prompts are the built-in stories) and checks that it makes every
// table and figure, and that the report's numbers are the runs': the best
// chain of each grid point is the fastest chain in the results file, its
// and the best tree's throughput are those of the results files, the
// ratio is theirs, and no tree spends more bits per round than its budget.
func TestTreesQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the quick trees rerun (a few seconds of CPU)")
	}
	out := t.TempDir()
	cfg := PaperConfig{Name: "trees", Out: out, LLM: builtin.DefaultLLM, Shared: t.TempDir(), Quick: true, MaxTokens: 24, Seed: 1, Command: "test"}
	md := runQuickPaper(t, cfg,
		[]string{"p1_chains.csv", "p1_chains.json", "p1_trees.csv", "p1_trees.json", "targets_tokens.csv", "targets_throughput.csv",
			"p1_equal_bits.csv", "p1_grid.csv", "p1_diagnostics.csv", "p1_first_by_q.csv", "p1_nodes.csv", "p1_tokens_per_round.png", "p1_where.png"},
		[]string{"Pair 2 is not measured", "tinystories-656k is not there", "Target 1", "Target 2", "Why, in numbers", "**not held out**"})
	if strings.Contains(md, "NaN") {
		t.Error("report.md shows NaN")
	}
	chains, trees := readRuns(t, filepath.Join(out, "p1_chains.json")), readRuns(t, filepath.Join(out, "p1_trees.json"))
	grid := readCSV(t, filepath.Join(out, "p1_grid.csv"))
	if len(grid) != 2 {
		t.Fatalf("%d grid points, want 2", len(grid))
	}
	for _, g := range grid {
		at := fmt.Sprintf("T=%s rtt=%s", g["T"], g["RTT (ms)"])
		var best runRow
		for _, c := range chains {
			if c.key() == at && c.TPS > best.TPS {
				best = c
			}
		}
		if best.Label != g["best chain"] {
			t.Errorf("%s: the grid's best chain is %q, the results' fastest %q", at, g["best chain"], best.Label)
		}
		ch := num(t, g, "chain tokens/s")
		if !close3(ch, best.TPS) {
			t.Errorf("%s: best chain %v tokens/s in the grid, %v in the results", at, ch, best.TPS)
		}
		var tree runRow
		for _, r := range trees {
			if r.key() == at && r.Label == g["best tree"] {
				tree = r
			}
		}
		if tree.Label == "" {
			t.Fatalf("%s: best tree %q is not in p1_trees.json", at, g["best tree"])
		}
		cells := strings.Split(g["best tree / best chain [95%]"], " ")
		ratio, err := strconv.ParseFloat(cells[0], 64)
		if err != nil || !close3(ratio, tree.TPS/best.TPS) {
			t.Errorf("%s: ratio %q, the results give %v", at, g["best tree / best chain [95%]"], tree.TPS/best.TPS)
		}
	}
	for _, r := range readCSV(t, filepath.Join(out, "p1_equal_bits.csv")) {
		_, b, _ := strings.Cut(r["tree"], "B=")
		budget, err := strconv.Atoi(b)
		if err != nil {
			t.Fatalf("tree %q: %v", r["tree"], err)
		}
		bits := num(t, r, "tree bits/round")
		if bits > float64(budget) {
			t.Errorf("%s at RTT %s: %v bits per round over its budget %d", r["tree"], r["RTT (ms)"], bits, budget)
		}
		// The chain measures fewer bits than its full round's where its
		// last round drafts less or a k-sqs draft costs less than its
		// share: the tree may then spend more than the chain measured.
		if chain := num(t, r, "chain bits/round"); bits > chain && strings.Contains(md, "measured bits per round are at most the chain's") {
			t.Errorf("%s at RTT %s: %v bits per round, more than its chain's %v, but the report says a tree's measured bits are at most the chain's", r["tree"], r["RTT (ms)"], bits, chain)
		}
	}
	for _, d := range readCSV(t, filepath.Join(out, "p1_diagnostics.csv")) {
		pred, acc := num(t, d, "predicted accepted/round"), num(t, d, "accepted/round")
		if !(pred > 0 && acc > 0) || num(t, d, "tokens/round") > acc+1+1e-9 {
			t.Errorf("diagnostics %v: predicted %v, accepted %v per round", d, pred, acc)
		}
	}
}

// runRow is a row of a results file.
type runRow struct {
	Label string   `json:"label"`
	Sets  []string `json:"sets"`
	TPS   float64  `json:"throughput_tps"`
}

// key names the grid point of a row as the grid table does.
func (r runRow) key() string {
	var temp, up float64
	for _, s := range r.Sets {
		k, v, _ := strings.Cut(s, "=")
		x, _ := strconv.ParseFloat(v, 64)
		switch k {
		case "temperature":
			temp = x
		case "up_overhead_s":
			up = x
		}
	}
	return fmt.Sprintf("T=%.1f rtt=%.0f", temp, 2000*up)
}

func readRuns(t *testing.T, path string) []runRow {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows []runRow
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

// close3 reports whether a, printed to 3 or 4 significant digits, is b.
func close3(a, b float64) bool { return math.Abs(a-b) <= 5e-3*math.Abs(b) }

// TestTargetStatus: Target 1's verdict. With one prompt (--n 1) the ratio
// has no interval: its lower bound is NaN, and the report once said that
// interval "reaches below 1.25".
func TestTargetStatus(t *testing.T) {
	for _, c := range []struct {
		ratio, lo float64
		want      string
	}{
		{1.5, 1.3, "**met**, beyond its interval"},
		{1.5, 1.1, "**met** by the point estimate (its 95% interval reaches below 1.25)"},
		{1.5, math.NaN(), "**met** by the point estimate (no interval: one prompt)"},
		{1.1, math.NaN(), "**not met**"},
		{1.1, 0.9, "**not met**"},
	} {
		if got := targetStatus(c.ratio, c.lo); got != c.want {
			t.Errorf("targetStatus(%v, %v) = %q, want %q", c.ratio, c.lo, got, c.want)
		}
	}
}
