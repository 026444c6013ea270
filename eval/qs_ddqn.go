package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hlmproject/hlm/dataset"
	"github.com/hlmproject/hlm/ddqn"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/metrics"
	"github.com/hlmproject/hlm/report"
	"github.com/hlmproject/hlm/sim"
)

// qsAgent is the DDQN configuration of the rerun: the package defaults
// (two hidden layers of 64, γ = 0.9, Adam 1e-3, batch 32, target copy every
// 200 updates) with exploration decaying over the first half of training
// (about three tokens per round) and a replay buffer that holds it all.
func (p *paper) qsAgent(sc qsScale) ddqn.Config {
	cfg := ddqn.DefaultConfig()
	cfg.Seed = p.cfg.Seed
	rounds := max(1, sc.episodes*p.cfg.MaxTokens/3)
	cfg.EpsDecaySteps = rounds / 2
	cfg.Replay = max(cfg.BatchSize, min(ddqn.MaxReplay, 2*rounds))
	return cfg
}

// qsTrainAll trains every setting's DDQN, as many at once as there are
// cores (each agent is seeded and independent, so the policies do not
// depend on the order).
func (p *paper) qsTrainAll(ctx context.Context, sc qsScale, all []qsOutcome) error {
	var mu sync.Mutex
	done, total := 0, len(all)*sc.episodes
	progress := func() {
		mu.Lock()
		defer mu.Unlock()
		done++
		if p.cfg.Progress != nil {
			p.cfg.Progress(done, total, fmt.Sprintf("DDQN training, %d settings", len(all)))
		}
	}
	return forEach(ctx, len(all), 0, func(i int) error {
		if err := p.qsTrain(ctx, sc, &all[i], progress); err != nil {
			return fmt.Errorf("%s, %s: %w", all[i].timing.name, all[i].regime.name, err)
		}
		return nil
	})
}

// qsTrain trains a setting's DDQN on BOS-only generations (each episode
// its own seed; no evaluated prompt), cycling the evaluated temperatures,
// writes the policy and its training record beside the report, and
// measures Q-S static (L = 4, ℓ = 100) on the learning curve's runs.
func (p *paper) qsTrain(ctx context.Context, sc qsScale, o *qsOutcome, progress func()) error {
	tp, err := o.base(p)
	if err != nil {
		return err
	}
	tp.Method = hybrid.QS
	tc := sim.TrainConfig{Params: tp, Prompts: []string{""}, Episodes: sc.episodes, Temperatures: sc.temps, Agent: p.qsAgent(sc),
		EvalEvery: sc.evalEvery, EvalPrompts: dataset.Prompts(qsRuns("curve", sc.curveRuns)), Progress: func(int, float64, float64) { progress() }}
	start := time.Now()
	agent, log, err := sim.TrainDDQN(ctx, p.setup.Models, tc)
	if err != nil {
		return err
	}
	o.wall, o.train = time.Since(start), log
	if o.baseline, err = sim.EvalController(ctx, p.setup.Models, tc, fixedAction{4, 100}); err != nil {
		return err
	}
	name := "ddqn_" + o.timing.name + "_" + o.regime.name
	o.policy = filepath.Join(p.cfg.Out, name+".json")
	if err := report.WriteFile(o.policy, agent.Save); err != nil {
		return err
	}
	return report.WriteFile(filepath.Join(p.cfg.Out, name+"_training.json"), func(w io.Writer) error {
		e := json.NewEncoder(w)
		e.SetIndent("", " ")
		return e.Encode(log)
	})
}

// fixedAction is a controller that always takes one action.
type fixedAction hybrid.Action

func (a fixedAction) Choose(hybrid.ControlState) (int, int) { return a.L, a.Ell }

// qsTune finds, at each temperature, the static (L, ℓ) of the DDQN's
// action set with the highest throughput on BOS-only runs: the best static
// setting the same training data can pick.
func (p *paper) qsTune(ctx context.Context, sc qsScale, base hybrid.Params) (map[float64]hybrid.Action, error) {
	var pts []Point
	acts := hybrid.DefaultActions()
	for _, t := range sc.temps {
		for _, a := range acts {
			pts = append(pts, Point{Label: fmt.Sprintf("%d:%d", a.L, a.Ell), Method: hybrid.QS,
				Sets: []string{fmt.Sprintf("l=%d", a.L), fmt.Sprintf("ell=%d", a.Ell), fmt.Sprintf("temperature=%g", t)}})
		}
	}
	s := p.setup
	s.Base, s.NLL, s.GloVe = base, false, nil
	rows, err := Evaluate(ctx, s, "bos", qsRuns("tune", sc.tuneRuns), pts)
	if err != nil {
		return nil, err
	}
	best := map[float64]hybrid.Action{}
	top := map[float64]float64{}
	for i, r := range rows {
		t := qsTemp(r)
		if tps := r.Summary.ThroughputTPS; tps > top[t] {
			best[t], top[t] = acts[i%len(acts)], tps
		}
	}
	return best, nil
}

// qsCompared are the Q-S variants the DDQN is compared with.
var qsCompared = []string{"Q-S static", "Q-S static, tuned", "Q-S heuristic"}

// qsComparison puts the DDQN next to each other Q-S variant at every
// temperature and setting: the paired difference of throughput (same
// prompts and seeds) with its 95% interval, and a count of the points
// where the DDQN is ahead of, behind or within the interval of each.
func (p *paper) qsComparison(all []qsOutcome) error {
	t := &report.Table{Columns: []string{"timing", "regime", "T", "LLM", "S-Q", "Q-S static", "static, tuned", "heuristic", "DDQN", "DDQN − static", "DDQN − tuned", "DDQN − heuristic", "DDQN L", "DDQN bits/token"}}
	var ahead, behind [3]int
	n := 0
	for _, o := range all {
		g := groupRows(o.rows)
		for i, d := range g["Q-S DDQN"] {
			row := []string{o.timing.name, o.regime.name, report.Float(qsTemp(d), 1)}
			for _, l := range append([]string{"LLM", "S-Q"}, append(qsCompared, "Q-S DDQN")...) {
				row = append(row, g[l][i].PM("throughput_tps", 4))
			}
			for k, l := range qsCompared {
				diff := metrics.Summarize(pairedTPS(d, g[l][i]))
				row = append(row, PM(diff.Mean, diff.CI95, 2))
				switch {
				case diff.Mean-diff.CI95 > 0:
					ahead[k]++
				case diff.Mean+diff.CI95 < 0:
					behind[k]++
				}
			}
			n++
			t.AddRow(append(row, report.Float(float64(d.Summary.Drafted)/float64(max(1, d.Summary.Uploads)), 2), report.Float(d.Summary.BitsPerToken, 0))...)
		}
	}
	p.doc.H(2, "Is the DDQN the best Q-S variant?")
	var counts []string
	for k, l := range qsCompared {
		counts = append(counts, fmt.Sprintf("%s: ahead at %d, behind at %d, within the interval at %d", l, ahead[k], behind[k], n-ahead[k]-behind[k]))
	}
	p.doc.P("Throughput (tokens/s) at each temperature and setting, and the DDQN's paired difference from each other Q-S variant: the mean over prompts of the DDQN's throughput minus the variant's on the same prompt and seed, ± the half-width of its 95%% interval (Student's t). "+
		"**Of %d points, the DDQN against %s.** DDQN L is its mean draft length (drafted tokens per round), bits/token its uplink bits per committed token (which shows the ℓ it picks).", n, strings.Join(counts, "; against "))
	return p.doc.Table("ddqn_vs_best", t)
}

// pairedTPS are the per-prompt throughput differences of two rows over the
// same prompts.
func pairedTPS(a, b Row) []float64 {
	out := make([]float64, 0, len(a.Runs))
	for i := range a.Runs {
		if i < len(b.Runs) {
			out = append(out, a.Runs[i].ThroughputTPS-b.Runs[i].ThroughputTPS)
		}
	}
	return out
}

// qsLearning plots and tabulates the DDQN's learning curves: the greedy
// policy's throughput on held-out BOS-only runs at every evaluated
// temperature, before training and after every few episodes, next to Q-S
// static (L = 4, ℓ = 100) on the same runs.
func (p *paper) qsLearning(sc qsScale, all []qsOutcome) error {
	p.doc.H(2, "DDQN training and learning curves")
	cfg := p.qsAgent(sc)
	var walls []string
	for _, o := range all {
		walls = append(walls, fmt.Sprintf("%s/%s %s", o.timing.name, o.regime.name, wallSeconds(o.wall)))
	}
	p.doc.P("Each setting's policy is trained by this command (sim.TrainDDQN; the four at once, one per core): %d episodes, each a generation of up to %d tokens from BOS alone with its own seed (no evaluated prompt), the temperature cycling through %v; "+
		"state: Q-S Sec. IV-B's confidence vector f^t (the SLM's own probability of each generated token, its latest %d entries), its mean and length, and the round's uplink rate; action (L, ℓ) ∈ {1,2,3,4,6,8} × {20,50,100,200}; "+
		"reward: Q-S eq. 13, the expected number of tokens the round commits given its drafts (g(x) of eq. 14, speculative.ExpectedTokens) over the round's duration (eq. 9), divided by 1/(τ_SLM+τ_LLM). "+
		"DDQN: hidden layers %v, γ = %g, Adam %g, batch %d, replay %d, target copy every %d updates, ε %g → %g over %d rounds, one update per round. "+
		"The curve evaluates the greedy policy before training and after every %d episodes on %d held-out BOS-only runs per temperature (seeds apart from training's); the flat line is Q-S static (L = 4, ℓ = 100) on the same runs. Training time (wall clock, this machine, with the other three training beside it): %s.",
		sc.episodes, p.cfg.MaxTokens, list(sc.temps), hybrid.ConfWindow, list(cfg.Hidden), cfg.Gamma, cfg.LearningRate, cfg.BatchSize, cfg.Replay, cfg.TargetEvery, cfg.EpsStart, cfg.EpsEnd, cfg.EpsDecaySteps,
		sc.evalEvery, sc.curveRuns, strings.Join(walls, ", "))
	for _, tm := range qsTimings {
		lp := &report.LinePlot{Title: "DDQN learning curves, " + tm.title, XLabel: "training episodes", YLabel: "throughput on held-out runs (tokens/s)", Legend: "bottom-right"}
		for _, o := range all {
			if o.timing.name != tm.name {
				continue
			}
			s := report.Series{Name: "DDQN, " + o.regime.name}
			for _, c := range o.train.Curve {
				s.X, s.Y = append(s.X, float64(c.Episode)), append(s.Y, c.Throughput)
			}
			lp.Series = append(lp.Series, s, report.Series{Name: "static L=4 ℓ=100, " + o.regime.name, X: []float64{0, float64(sc.episodes)}, Y: []float64{o.baseline, o.baseline}})
		}
		if err := p.doc.Plot("ddqn_learning_"+tm.name, "Greedy DDQN throughput on held-out runs vs training episodes, "+tm.title, lp); err != nil {
			return err
		}
	}
	if err := p.doc.Table("ddqn_learning", qsLearningTable(all)); err != nil {
		return err
	}
	p.doc.P("The training episodes themselves (ε-greedy, the temperatures mixed): mean per-round reward before scaling (eq. 13, tokens/s) and exploration at the end of each block of %d episodes.", sc.evalEvery)
	return p.doc.Table("ddqn_rewards", qsRewardTable(sc, all))
}

// qsRewardTable is the mean per-round reward of each block of evalEvery
// training episodes, per setting, with ε at the block's end.
func qsRewardTable(sc qsScale, all []qsOutcome) *report.Table {
	cols := []string{"episodes"}
	for _, o := range all {
		cols = append(cols, o.timing.name+", "+o.regime.name)
	}
	t := &report.Table{Columns: append(cols, "ε")}
	eps := all[0].train.Episodes
	for lo := 0; lo < len(eps); lo += sc.evalEvery {
		hi := min(lo+sc.evalEvery, len(eps))
		row := []string{fmt.Sprintf("%d–%d", lo+1, hi)}
		for _, o := range all {
			var r []float64
			for _, e := range o.train.Episodes[lo:hi] {
				r = append(r, e.MeanReward)
			}
			row = append(row, report.Float(metrics.Summarize(r).Mean, 2))
		}
		t.AddRow(append(row, report.Float(eps[hi-1].Epsilon, 2))...)
	}
	return t
}

// qsLearningTable is the learning curves as a table, the static baseline
// in the last row.
func qsLearningTable(all []qsOutcome) *report.Table {
	cols := []string{"episodes"}
	for _, o := range all {
		cols = append(cols, o.timing.name+", "+o.regime.name)
	}
	t := &report.Table{Columns: cols}
	for i, c := range all[0].train.Curve {
		row := []string{fmt.Sprint(c.Episode)}
		for _, o := range all {
			row = append(row, report.Float(o.train.Curve[i].Throughput, 2))
		}
		t.AddRow(row...)
	}
	row := []string{"static L=4 ℓ=100"}
	for _, o := range all {
		row = append(row, report.Float(o.baseline, 2))
	}
	t.AddRow(row...)
	return t
}

// wallSeconds writes a training time in seconds, with a decimal below ten
// seconds so that a short run does not read "0 s".
func wallSeconds(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%.0f s", d.Seconds())
}
