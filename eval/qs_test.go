package eval

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/sim"
)

// TestQSQuick runs the Q-S rerun in quick mode on the built-in pair and
// checks that it makes every figure and table: Fig. 3 (ROUGE-2, entropy,
// deviation), Fig. 4 under both timings and both regimes with the static,
// tuned, heuristic and DDQN variants, the DDQN comparison, the learning
// curves and the rate sweep; that Q-S is lossless and S-Q is not; and that
// the saved policies load and read the paper's state.
func TestQSQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the quick Q-S rerun (about 15 s of CPU)")
	}
	out := t.TempDir()
	cfg := PaperConfig{Name: "qs", Out: out, LLM: builtin.DefaultLLM, Quick: true, MaxTokens: 32, Seed: 1, Command: "test"}
	runQuickPaper(t, cfg,
		[]string{"fig3_rouge2.png", "fig3_entropy.png", "fig3_deviation.png", "fig4_paper_low.png", "fig4_paper_high.png", "fig4_testbed_low.png", "fig4_testbed_high.png",
			"ddqn_learning_paper.png", "ddqn_learning_testbed.png", "rate_paper.png", "rate_testbed.png", "fig3_table.csv", "fig3_paired.csv", "ddqn_vs_best.csv", "ddqn_learning.csv", "ddqn_rewards.csv", "rate_sweep.csv"},
		[]string{"τ_SLM = 5 ms, τ_LLM = 32 ms", "τ_SLM = 25.6 ms, τ_LLM = 104.6 ms", "Q-S static, tuned", "Q-S heuristic", "Q-S DDQN"})
	checkFig3(t, out)
	checkPolicies(t, out)
}

// checkFig3: Q-S's exact deviation is zero to rounding at every
// temperature, S-Q's is not, and every method's entropy is measured (the
// report's table; entropy is not a column of the results files).
func checkFig3(t *testing.T, out string) {
	t.Helper()
	for _, r := range readCSV(t, filepath.Join(out, "fig3_table.csv")) {
		label, ent, dev := r["label"], r["mean_entropy"], r["mean_deviation"]
		if !(parse(ent) > 0) {
			t.Errorf("%s %s: entropy %q", label, r["sets"], ent)
		}
		if label == "Q-S" && !(parse(dev) < 1e-9) || label == "S-Q" && !(parse(dev) > 1e-6) {
			t.Errorf("%s %s: deviation %q", label, r["sets"], dev)
		}
	}
}

// parse reads a number cell (NaN when it is not one).
func parse(s string) float64 {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return x
}

// checkPolicies: each setting's policy loads as a controller of the
// paper's state, and its training record has a learning curve.
func checkPolicies(t *testing.T, out string) {
	t.Helper()
	for _, tm := range qsTimings {
		for _, rg := range qsRegimes {
			name := "ddqn_" + tm.name + "_" + rg.name
			if _, err := hybrid.LoadController(filepath.Join(out, name+".json")); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			b, err := os.ReadFile(filepath.Join(out, name+"_training.json"))
			if err != nil {
				t.Fatal(err)
			}
			var log sim.TrainLog
			if err := json.Unmarshal(b, &log); err != nil {
				t.Fatal(err)
			}
			if len(log.Episodes) == 0 || len(log.Curve) == 0 || !(log.Curve[len(log.Curve)-1].Throughput > 0) {
				t.Errorf("%s: %d episodes, curve %+v", name, len(log.Episodes), log.Curve)
			}
		}
	}
}
