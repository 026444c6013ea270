package eval

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/hlmproject/hlm/dataset"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/report"
	"github.com/hlmproject/hlm/sim"
)

// The Q-S rerun (Zhang et al., paper 004): Fig. 3 (ROUGE-2 and per-token
// entropy vs temperature), Fig. 4 (throughput vs temperature of static,
// heuristic and DDQN-controlled Q-S in a low- and a high-rate regime) at the
// paper's timings and at the U-HLM/CU-HLM testbed's, the DDQN's training
// and learning curves, and a sweep of the uplink rate.

// qsTiming is one setting of τ_SLM and τ_LLM and where it comes from.
type qsTiming struct {
	name, title, source string
	slm, llm            float64 // seconds
}

var qsTimings = []qsTiming{
	{"paper", "Q-S timing, 5/32 ms", "the Q-S paper's own (Sec. IV-A: about 5 ms per OPT-125M token and 32 ms per OPT-13B pass on an A100)", 0.005, 0.032},
	{"testbed", "U-HLM/CU-HLM testbed timing, 25.6/104.6 ms", "the U-HLM/CU-HLM testbed's (TinyLlama/Llama-2; hlm's defaults, not the Q-S paper's)", 0.0256, 0.1046},
}

func (t qsTiming) sets() []string {
	return []string{fmt.Sprintf("tau_slm=%g", t.slm), fmt.Sprintf("tau_llm=%g", t.llm)}
}

// qsRegime is one of Fig. 4's channel regimes.
type qsRegime struct {
	name, title string
	sets        []string
}

// The paper gives each regime's mean rate only; the two states and the
// transition probabilities (0.1 each way per round: stays of 10 rounds,
// half the time in each state) are hlm's choice.
var qsRegimes = []qsRegime{
	{"low", "low-rate regime (Markov 200/500 kbit/s, mean 350 kbit/s)", []string{"channel=markov", "rate_low_bps=2e5", "rate_high_bps=5e5", "p_low_high=0.1", "p_high_low=0.1"}},
	{"high", "high-rate regime (Markov 2/6 Mbit/s, mean 4 Mbit/s)", []string{"channel=markov", "rate_low_bps=2e6", "rate_high_bps=6e6", "p_low_high=0.1", "p_high_low=0.1"}},
}

// qsScale is how big a Q-S rerun is: the full rerun, or the quick one the
// tests run (PaperConfig.Quick).
type qsScale struct {
	temps     []float64
	rates     []float64 // bit/s, the rate sweep
	prompts   int       // generated evaluation prompts (Fig. 3, Fig. 4, the sweep)
	fig3Seeds int       // runs per prompt in Fig. 3
	episodes  int       // DDQN training episodes per agent
	evalEvery int       // episodes between learning-curve checkpoints
	curveRuns int       // BOS-only prompts per checkpoint and temperature
	tuneRuns  int       // BOS-only prompts per (L, ℓ) and temperature when tuning the static setting
}

func (p *paper) qsScale() qsScale {
	if p.cfg.Quick {
		return qsScale{temps: []float64{0.4, 1}, rates: []float64{3.2e4, 1e6}, prompts: 3, fig3Seeds: 1,
			episodes: 8, evalEvery: 4, curveRuns: 1, tuneRuns: 1}
	}
	return qsScale{temps: []float64{0.2, 0.4, 0.6, 0.8, 1}, rates: []float64{1.6e4, 3.2e4, 6.4e4, 1.28e5, 2.56e5, 5.12e5, 1e6, 4e6, 1.6e7},
		prompts: 40, fig3Seeds: 2, episodes: 800, evalEvery: 100, curveRuns: 8, tuneRuns: 4}
}

// qsOutcome is one (timing, regime) setting's Fig. 4 and its DDQN.
type qsOutcome struct {
	timing   qsTiming
	regime   qsRegime
	policy   string // the trained policy's file
	train    sim.TrainLog
	wall     time.Duration // training time, wall clock
	baseline float64       // Q-S L = 4, ℓ = 100 on the learning curve's runs
	tuned    map[float64]hybrid.Action
	rows     []Row
}

// base is the setting's parameters.
func (o qsOutcome) base(p *paper) (hybrid.Params, error) {
	b := p.setup.Base
	return b, b.SetAll(append(append([]string(nil), o.regime.sets...), o.timing.sets()...))
}

// qs reruns the Q-S paper's evaluation (Sec. V).
func (p *paper) qs(ctx context.Context) error {
	p.header("Q-S rerun", "Zhang et al., *Quantize-Sample-and-Verify: LLM Acceleration via Adaptive Edge-Cloud Speculative Decoding* (Q-S)")
	sc := p.qsScale()
	ex, err := p.qsExamples(ctx, sc.prompts)
	if err != nil {
		return err
	}
	p.qsIntro(sc)
	if err := p.qsFig3(ctx, sc, ex); err != nil {
		return err
	}
	var all []qsOutcome
	for _, tm := range qsTimings {
		for _, rg := range qsRegimes {
			all = append(all, qsOutcome{timing: tm, regime: rg})
		}
	}
	if err := p.qsTrainAll(ctx, sc, all); err != nil {
		return err
	}
	p.doc.H(2, "Fig. 4: throughput vs temperature")
	for i := range all {
		if err := p.qsSetting(ctx, sc, ex, &all[i]); err != nil {
			return fmt.Errorf("%s, %s: %w", all[i].timing.name, all[i].regime.name, err)
		}
	}
	if err := p.qsComparison(all); err != nil {
		return err
	}
	if err := p.qsLearning(sc, all); err != nil {
		return err
	}
	return p.qsRateSweep(ctx, sc, ex)
}

// qsIntro says how the rerun is set up.
func (p *paper) qsIntro(sc qsScale) {
	var ts []string
	for _, t := range qsTimings {
		ts = append(ts, fmt.Sprintf("**%s** (τ_SLM = %g ms, τ_LLM = %g ms): %s", t.title, 1000*t.slm, 1000*t.llm, t.source))
	}
	p.doc.P("Two timings, each labelled with where it comes from: %s. Every Fig. 4 point runs under both.", strings.Join(ts, "; "))
	p.doc.P("Prompts: %d story openings generated here (below, Fig. 3) — the same for every method, temperature and setting, one run each (seed = --seed + prompt index). "+
		"Q-S quantizes with the lattice over the whole vocabulary. *Q-S static* drafts L = 4 at ℓ = 100; *Q-S static, tuned* uses, at each temperature and setting, the (L, ℓ) of the DDQN's action set with the highest throughput on %d BOS-only runs (no evaluated prompt); "+
		"*Q-S heuristic* is the paper's rule (L¹ = 4, +1 after a fully accepted block, else the accepted count; 1 ≤ L ≤ 16) at ℓ = 100; *S-Q* drafts L = 4 from the SLM and sends ℓ = 100. "+
		"*Q-S DDQN* is Q-S Sec. IV-C's policy, trained per setting by this command (below).", sc.prompts, sc.tuneRuns)
}

// qsSetting tunes the static (L, ℓ) of a setting whose DDQN is trained,
// runs Fig. 4's methods and plots them.
func (p *paper) qsSetting(ctx context.Context, sc qsScale, ex []dataset.Example, o *qsOutcome) error {
	base, err := o.base(p)
	if err != nil {
		return err
	}
	if o.tuned, err = p.qsTune(ctx, sc, base); err != nil {
		return err
	}
	var pts []Point
	for _, t := range sc.temps {
		a := o.tuned[t]
		for _, v := range []Point{{"LLM", hybrid.LLM, nil}, {"S-Q", hybrid.SQ, []string{"l=4", "ell=100"}},
			{"Q-S static", hybrid.QS, []string{"l=4", "ell=100"}}, {"Q-S static, tuned", hybrid.QS, []string{fmt.Sprintf("l=%d", a.L), fmt.Sprintf("ell=%d", a.Ell)}},
			{"Q-S heuristic", hybrid.QS, []string{"draft=heuristic", "l=4", "l_min=1", "l_max=16", "ell=100"}}, {"Q-S DDQN", hybrid.QS, []string{"draft=ddqn", "ddqn_model=" + o.policy}}} {
			pts = append(pts, Point{Label: v.Label, Method: v.Method, Sets: append(v.Sets, fmt.Sprintf("temperature=%g", t))})
		}
	}
	tm, rg := o.timing, o.regime
	name := "fig4_" + tm.name + "_" + rg.name
	if o.rows, err = p.runEx(ctx, name, ex, base, pts, false); err != nil {
		return err
	}
	tp := &report.LinePlot{Title: tm.title + ", " + rg.title, XLabel: "temperature", YLabel: "token throughput (tokens/s, virtual)", Legend: "bottom-right"}
	g := groupRows(o.rows)
	for _, l := range []string{"LLM", "S-Q", "Q-S static", "Q-S static, tuned", "Q-S heuristic", "Q-S DDQN"} {
		tp.Series = append(tp.Series, Curve(l, g[l], qsTemp, "throughput_tps"))
	}
	return p.doc.Plot(name, fmt.Sprintf("Throughput, %s, %s (Q-S Fig. 4%s)", tm.title, rg.title, map[string]string{"low": "a", "high": "b"}[rg.name]), tp)
}

func qsTemp(r Row) float64 { return SetValue(r, "temperature") }

// groupRows groups rows by label, in order.
func groupRows(rows []Row) map[string][]Row {
	g := map[string][]Row{}
	for _, r := range rows {
		g[r.Label] = append(g[r.Label], r)
	}
	return g
}

// runEx evaluates points on given examples (NLL scored only when asked)
// and saves the rows as name.csv/json.
func (p *paper) runEx(ctx context.Context, name string, ex []dataset.Example, base hybrid.Params, points []Point, nll bool) ([]Row, error) {
	s := p.setup
	s.Base, s.NLL = base, nll
	rows, err := Evaluate(ctx, s, "qs-stories", ex, points)
	if err != nil {
		return nil, err
	}
	return rows, WriteResults(p.cfg.Out, name, rows)
}

// qsRuns are n BOS-only runs (the empty prompt) with IDs from a tag: they
// share no prompt with the evaluated runs.
func qsRuns(tag string, n int) []dataset.Example {
	ex := make([]dataset.Example, n)
	for i := range ex {
		ex[i] = dataset.Example{ID: fmt.Sprintf("%s#%d", tag, i)}
	}
	return ex
}

// pct formats a fraction as a percentage.
func pct(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}
