package eval

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/hlmproject/hlm/ddqn"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/report"
	"github.com/hlmproject/hlm/sim"
)

// qs reruns Q-S Fig. 3–4: ROUGE-2 and throughput vs temperature for LLM,
// SLM, S-Q, static Q-S and heuristic Q-S, in a low-rate and a high-rate
// two-state Markov regime.
func (p *paper) qs(ctx context.Context) error {
	p.header("Q-S rerun", "Zhang et al., *Quantize-Sample-and-Verify: LLM Acceleration via Adaptive Edge-Cloud Speculative Decoding* (Q-S)")
	temps := []float64{0.2, 0.4, 0.6, 0.8, 1.0}
	vs := []Point{{"LLM", hybrid.LLM, nil}, {"SLM", hybrid.SLM, nil}, {"S-Q", hybrid.SQ, []string{"l=4"}},
		{"Q-S static", hybrid.QS, []string{"l=4"}}, {"Q-S heuristic", hybrid.QS, []string{"draft=heuristic", "l=4"}}}
	regimes := []struct {
		name, title string
		sets        []string
	}{
		{"low", "low-rate regime (Markov 200/500 kbit/s, mean 350 kbit/s)", []string{"channel=markov", "rate_low_bps=2e5", "rate_high_bps=5e5", "p_low_high=0.1", "p_high_low=0.1"}},
		{"high", "high-rate regime (Markov 2/6 Mbit/s, mean 4 Mbit/s)", []string{"channel=markov", "rate_low_bps=2e6", "rate_high_bps=6e6", "p_low_high=0.1", "p_high_low=0.1"}},
	}
	p.doc.P("Lattice resolution ℓ = 100 over the whole vocabulary; static draft length 4; the heuristic grows the length by one when all drafts were accepted, else sets it to the accepted count. The DDQN policy (Q-S Sec. IV-C) is trained here, per regime, by `hlm train-ddqn`'s procedure: %d episodes over %d runs from BOS alone (the calibration runs: no evaluated prompt), at temperature 1, reward = committed tokens per second of each round; it then picks L ∈ {1,2,3,4,6,8} and ℓ ∈ {20,50,100,200} greedily every round. TinyStories continuations stand in for CNN/DailyMail.", qsEpisodes, qsTrainPrompts)
	for i, rg := range regimes {
		base := p.setup.Base
		if err := base.SetAll(rg.sets); err != nil {
			return err
		}
		policy, err := p.trainPolicy(ctx, base, rg.name)
		if err != nil {
			return err
		}
		vs := append(vs[:len(vs):len(vs)], Point{"Q-S DDQN", hybrid.QS, []string{"draft=ddqn", "ddqn_model=" + policy}})
		var pts []Point
		for _, v := range vs {
			for _, t := range temps {
				pts = append(pts, Point{Label: v.Label, Method: v.Method, Sets: append(append([]string(nil), v.Sets...), fmt.Sprintf("temperature=%g", t))})
			}
		}
		rows, err := p.run(ctx, "fig4_"+rg.name, "tinystories", p.cfg.NCurve, base, pts)
		if err != nil {
			return err
		}
		groups := map[string][]Row{}
		for _, r := range rows {
			groups[r.Label] = append(groups[r.Label], r)
		}
		x := func(r Row) float64 { return SetValue(r, "temperature") }
		tp := &report.LinePlot{Title: rg.title, XLabel: "temperature", YLabel: "token throughput (tokens/s, virtual)"}
		qual := &report.LinePlot{Title: "ROUGE-2 vs temperature", XLabel: "temperature", YLabel: "ROUGE-2 F1"}
		dev := &report.LinePlot{Title: "deviation from the LLM vs temperature", XLabel: "temperature", YLabel: "mean L1 deviation"}
		for _, v := range vs {
			tp.Series = append(tp.Series, Curve(v.Label, groups[v.Label], x, "throughput_tps"))
			qual.Series = append(qual.Series, Curve(v.Label, groups[v.Label], x, "rouge2"))
			dev.Series = append(dev.Series, Curve(v.Label, groups[v.Label], x, "mean_deviation"))
		}
		if i == 0 {
			p.doc.H(2, "Fig. 4: throughput vs temperature")
		}
		if err := p.doc.Plot("fig4_"+rg.name, "Throughput, "+rg.title+" (Q-S Fig. 4)", tp); err != nil {
			return err
		}
		if i == 0 {
			p.doc.H(2, "Fig. 3: quality vs temperature")
			if err := p.doc.Plot("fig3_rouge2", "ROUGE-2 against the rest of the story (Q-S Fig. 3a)", qual); err != nil {
				return err
			}
			if err := p.doc.Plot("fig3_deviation", "Exact deviation of the output distribution from the LLM's: Q-S is lossless, S-Q is not", dev); err != nil {
				return err
			}
			if err := p.doc.Table("fig3_table", Table("", rows, []string{"label", "sets", "rouge2", "nll", "mean_deviation", "throughput_tps"})); err != nil {
				return err
			}
		}
	}
	return nil
}

const (
	qsEpisodes     = 150
	qsTrainPrompts = 40
)

// trainPolicy trains the Q-S DDQN controller for a regime and writes it
// beside the report.
func (p *paper) trainPolicy(ctx context.Context, base hybrid.Params, name string) (string, error) {
	ex, err := p.calibrationExamples() // disjoint from every evaluated prompt
	if err != nil {
		return "", err
	}
	ex = ex[:min(qsTrainPrompts, len(ex))]
	tp := base
	tp.Method = hybrid.QS
	cfg := ddqn.DefaultConfig()
	cfg.Seed = p.cfg.Seed
	agent, _, err := sim.TrainDDQN(ctx, p.setup.Models, sim.TrainConfig{Params: tp, Prompts: prompts(ex), Episodes: qsEpisodes, Agent: cfg})
	if err != nil {
		return "", err
	}
	path := filepath.Join(p.cfg.Out, "ddqn_"+name+".json")
	return path, report.WriteFile(path, agent.Save)
}
