package eval

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hlmproject/hlm/dataset"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/metrics"
	"github.com/hlmproject/hlm/report"
	"github.com/hlmproject/hlm/sim"
	"github.com/hlmproject/hlm/uncertainty"
	"github.com/hlmproject/hlm/wordnet"
)

// uhlmMethods are the methods of U-HLM's Table I and Fig. 6.
var uhlmMethods = []string{hybrid.LLM, hybrid.SLM, hybrid.HLM, hybrid.RandHLM, hybrid.UHLM}

// uhlm reruns U-HLM: Theorem 1 on calibrated data (Fig. 5), the three
// uncertainty measures (Fig. 3), cosine and TR vs u_th (Fig. 4), Table I,
// and TSR/TR by method and throughput vs SNR (Fig. 6), in U-HLM's setting
// (W = 1 MHz, 23 dBm, −104 dBm, 2.5 km, α = 4, Rayleigh; full
// distributions at 32 bits, B = |V|·b_prob).
func (p *paper) uhlm(ctx context.Context) error {
	p.header("U-HLM rerun", "Oh et al., *Uncertainty-Aware Hybrid Inference with On-Device Small and Remote Large Language Models* (U-HLM)")
	base := p.setup.Base
	if err := base.SetAll([]string{"channel_preset=uhlm", "prob_bits=32", "index_bits=false"}); err != nil {
		return err
	}
	cal, log, err := p.calibrate(ctx, base)
	if err != nil {
		return err
	}
	var pts []Point
	for _, m := range uhlmMethods {
		pts = append(pts, Point{Label: m, Method: m})
	}
	bonus := []Point{{Label: "hlm +bonus", Method: hybrid.HLM, Sets: []string{"bonus=true"}}, {Label: "u-hlm +bonus", Method: hybrid.UHLM, Sets: []string{"bonus=true"}}}
	sum, err := p.run(ctx, "summary", "tinystories", p.cfg.N, base, append(append([]Point(nil), pts...), bonus...))
	if err != nil {
		return err
	}
	p.doc.H(2, "Summary (U-HLM setting: 1 MHz, 23 dBm, −104 dBm, 2.5 km, α = 4, Rayleigh; 32-bit distributions; u_th = 0.431)")
	p.doc.P("TinyStories continuations (%d prompts, at most %d tokens each). Rows \"+bonus\" let an accepted draft be followed by the LLM's bonus token (not the papers' method). The CU-HLM rerun runs U-HLM and HLM again in CU-HLM's setting (u_th = 0.8, 8-bit probabilities with indices, 10 MHz at 10 dB), so its rows for them differ from these.", sum[0].Prompts, p.cfg.MaxTokens)
	if err := p.doc.Table("summary_table", Table("", sum, []string{"label", "throughput_tps", "transmission_rate", "true_skip_rate", "rejection_rate", "uplink_bits_per_token", "rougeL", "cosine", "nll", "mean_deviation"})); err != nil {
		return err
	}

	p.doc.H(2, "Theorem 1: thresholds and rejection risk (Fig. 5)")
	p.calibrationNote(cal)
	if err := p.doc.Table("calibration", p.calibrationTable(cal, []string{"U-HLM paper", "5,134", "0.82", "−0.06", "–", "0.301", "0.431", "0.073", "2.24e-3", "–", "< 4e-3", "–", "–"})); err != nil {
		return err
	}
	if err := p.uhlmFig5(cal, log, base.M); err != nil {
		return err
	}
	if err := p.measureFigure(ctx, base, "fig3", "U-HLM Fig. 3", "not printed; temperature perturbation is the only linear one (U-HLM Fig. 3); CU-HLM Fig. 2: 0.71, 0.65, 0.20"); err != nil {
		return err
	}
	if err := p.uhlmFig4(ctx, base); err != nil {
		return err
	}
	p.doc.H(2, "Table I: quality by method and dataset")
	if err := p.methodsByDataset(ctx, base, pts, uhlmMethods, []string{"alpaca", "qed", "creak", "strategyqa", "tinystories"}); err != nil {
		return err
	}
	return p.uhlmFig6(ctx, base, sum)
}

// uhlmFig5 is Fig. 5: the density of u over the calibration's drafts, and
// the mean rejection probability per uncertainty bin with the fitted line.
func (p *paper) uhlmFig5(cal sim.CalibrationResult, log *sim.CalibrationLog, bins int) error {
	u := make([]float64, len(log.Records))
	beta := make([]float64, len(log.Records))
	for i, r := range log.Records {
		u[i], beta[i] = r.U, uncertainty.Beta(r.XD, r.YD)
	}
	uc, mb, cnt := uncertainty.BinnedMeans(u, beta, bins)
	dens := make([]float64, len(cnt))
	for i, c := range cnt {
		dens[i] = float64(c) / float64(len(u))
	}
	if err := p.doc.Plot("fig5_density", "Empirical distribution of the uncertainty u (U-HLM Fig. 5 left)", &report.LinePlot{Title: "density of u", XLabel: "u", YLabel: "share of tokens",
		Series: []report.Series{{Name: "P(u)", X: uc, Y: dens}}}); err != nil {
		return err
	}
	line := report.Series{Name: fmt.Sprintf("β = %.3f·u %+.3f", cal.Fit.A, cal.Fit.B)}
	for _, x := range uc {
		line.X = append(line.X, x)
		line.Y = append(line.Y, cal.Fit.A*x+cal.Fit.B)
	}
	return p.doc.Plot("fig5_regression", "Mean rejection probability per uncertainty value and the linear fit (U-HLM Fig. 5 right)", &report.LinePlot{Title: "rejection probability vs uncertainty", XLabel: "u", YLabel: "β",
		Series: []report.Series{{Name: "mean β", X: uc, Y: mb}, line}})
}

// uhlmFig4 is Fig. 4: quality and TR of U-HLM vs u_th.
func (p *paper) uhlmFig4(ctx context.Context, base hybrid.Params) error {
	var uth []Point
	for _, v := range []float64{0, 0.1, 0.2, 0.3, 0.4, 0.431, 0.5, 0.6, 0.7, 0.8, 0.9, 1} {
		uth = append(uth, Point{Label: fmt.Sprintf("u_th=%g", v), Method: hybrid.UHLM, Sets: []string{fmt.Sprintf("u_th=%g", v)}})
	}
	rows, err := p.run(ctx, "fig4_uth", "tinystories", p.cfg.NCurve, base, uth)
	if err != nil {
		return err
	}
	x := func(r Row) float64 { return SetValue(r, "u_th") }
	p.doc.H(2, "Fig. 4: quality and TR vs u_th")
	p.doc.P("That TR falls as u_th rises holds by construction on shared trajectories (a higher threshold skips every token a lower one skips: hybrid.TestSkipThresholdOrdering); the runs at different thresholds commit different tokens and so follow different trajectories, over which TR can rise a little from one threshold to the next with few prompts; the quality curves are the measurement.")
	if err := p.doc.Plot("fig4_uth", "Cosine similarity, ROUGE-L and TR of U-HLM vs u_th (U-HLM Fig. 4)", &report.LinePlot{Title: "U-HLM vs uncertainty threshold", XLabel: "u_th", YLabel: "value",
		Series: []report.Series{Curve("cosine", rows, x, "cosine"), Curve("ROUGE-L", rows, x, "rougeL"), Curve("TR", rows, x, "transmission_rate")}}); err != nil {
		return err
	}

	return nil
}

// uhlmFig6 is Fig. 6: TSR and TR by method (from the summary), and
// throughput vs average SNR.
func (p *paper) uhlmFig6(ctx context.Context, base hybrid.Params, sum []Row) error {
	p.doc.H(2, "Fig. 6: TSR and TR by method; throughput vs average SNR")
	bars := &report.BarChart{Title: "TSR and TR", YLabel: "rate", Categories: []string{"Rand-HLM", "U-HLM"}}
	g := byLabel(sum)
	tr := report.BarSeries{Name: "TR"}
	tsr := report.BarSeries{Name: "TSR"}
	for _, m := range []string{hybrid.RandHLM, hybrid.UHLM} {
		r := g[m][0]
		tr.Values = append(tr.Values, r.Value("transmission_rate"))
		tr.Err = append(tr.Err, ciOr(r, "transmission_rate"))
		tsr.Values = append(tsr.Values, r.Value("true_skip_rate"))
		tsr.Err = append(tsr.Err, ciOr(r, "true_skip_rate"))
	}
	bars.Series = []report.BarSeries{tsr, tr}
	if err := p.doc.Plot("fig6_rates", "True skip rate and transmission rate (U-HLM Fig. 6 left)", bars); err != nil {
		return err
	}
	var snrPts []Point
	for _, m := range uhlmMethods {
		grid, _ := Grid([]string{m}, []string{sweep("snr_db", -20, -15, -10, -5, 0, 5, 10)})
		snrPts = append(snrPts, grid...)
	}
	rows, err := p.run(ctx, "fig6_snr", "tinystories", p.cfg.NCurve, base, snrPts)
	if err != nil {
		return err
	}
	return p.doc.Plot("fig6_snr", "Throughput vs average SNR at 1 MHz, Rayleigh (U-HLM Fig. 6 right)", snrCurves(rows, uhlmMethods, "Rayleigh, W = 1 MHz"))
}

// ciOr is the row's 95% half-width for col, NaN when it has none.
func ciOr(r Row, col string) float64 {
	if h, ok := r.CI[col]; ok {
		return h
	}
	return math.NaN()
}

// meanCI is the mean and its 95% half-width.
func meanCI(xs []float64) (float64, float64) {
	s := metrics.Summarize(xs)
	return s.Mean, s.CI95
}

// measureFigure compares the three uncertainty measures of U-HLM Fig. 3 /
// CU-HLM Fig. 2 on NMeasure TinyStories prompts: mean β per
// uncertainty value with its 95% interval, Pearson's correlation with β,
// and what each measure costs per token.
func (p *paper) measureFigure(ctx context.Context, base hybrid.Params, name, fig, paperCorr string) error {
	cfg := sim.MeasureConfig{Params: base, Dropout: uncertainty.MCDropout{M: base.M, PMax: uncertainty.DefaultDropoutPMax}}
	dir := p.cfg.WordNet
	if dir == "" {
		dir = wordnet.DefaultDir()
	}
	var missing string
	if _, err := os.Stat(filepath.Join(dir, "index.noun")); err != nil {
		missing = fmt.Sprintf("Prompt perturbation is left out: no WordNet database in %s (install Debian's wordnet-base, or pass --wordnet DIR or set HLM_WORDNET).", dir)
		p.notice(missing)
	} else {
		db, err := wordnet.Open(dir)
		if err != nil {
			return err
		}
		cfg.Paraphraser = &wordnet.Paraphraser{DB: db}
	}
	ex, err := p.examples("tinystories", p.cfg.NMeasure) // prompt perturbation needs prompts
	if err != nil {
		return err
	}
	log, err := sim.CollectMeasures(ctx, p.setup.Models, cfg, dataset.Prompts(ex), nil)
	if err != nil {
		return err
	}
	p.doc.H(2, fig+": uncertainty measures vs rejection probability")
	p.doc.P("Lossless HLM (one token per round) over %d TinyStories prompts, %d tokens; for each draft, its rejection probability β and three uncertainty measures with M = %d samples each, u = share of samples ≠ draft: temperature perturbation (θ uniform in [0, %g]), MC dropout (dropout probability uniform in [0, %g] on the draft position's attention and feed-forward outputs, one sampled token per pass; the prefix's cache is kept as computed without dropout) and prompt perturbation (M paraphrases of the prompt by WordNet synonym substitution, each continued with the response so far). Curves: mean β per value of u with its 95%% interval. Paper's correlations: %s.",
		len(ex), len(log.Beta), base.M, base.ThetaMax, uncertainty.DefaultDropoutPMax, paperCorr)
	if missing != "" {
		p.doc.P("%s", missing)
	}
	t := &report.Table{Columns: []string{"measure", "Pearson r(u, β)", "95% interval of r", "slope a of the binned fit", "R² (binned)", "extra SLM token passes per token", "wall ms per token"}}
	lp := &report.LinePlot{Title: "mean rejection probability vs uncertainty", XLabel: "uncertainty u", YLabel: "β", Legend: "top-left"}
	n := float64(len(log.Beta))
	for m, us := range log.U {
		r := uncertainty.Correlation(us, log.Beta)
		lo, hi := fisherCI(r, len(us))
		s := report.Series{Name: log.Names[m]}
		var bx, by []float64
		bins := make([][]float64, base.M+1) // β of the tokens at u = k/M
		for i, u := range us {
			if k := int(math.Round(u * float64(base.M))); k >= 0 && k <= base.M {
				bins[k] = append(bins[k], log.Beta[i])
			}
		}
		for k, bs := range bins {
			if len(bs) == 0 {
				continue
			}
			mean, half := meanCI(bs)
			s.X, s.Y, s.YErr = append(s.X, float64(k)/float64(base.M)), append(s.Y, mean), append(s.YErr, half)
			bx, by = append(bx, float64(k)/float64(base.M)), append(by, mean)
		}
		lp.Series = append(lp.Series, s)
		a, r2 := "–", "–"
		if fit, err := uncertainty.Fit(bx, by); err == nil {
			a, r2 = report.Float(fit.A, 3), report.Float(fit.R2, 3)
		}
		t.AddRow(log.Names[m], report.Float(r, 3), fmt.Sprintf("[%s, %s]", report.Float(lo, 3), report.Float(hi, 3)), a, r2,
			report.Float(float64(log.Passes[m])/n, 1), report.Float(1000*log.Seconds[m]/n, 3))
	}
	if err := p.doc.Table(name+"_measures", t); err != nil {
		return err
	}
	if len(log.Examples) > 0 {
		var distinct []string
		for _, e := range log.Examples {
			if !slices.Contains(distinct, e) {
				distinct = append(distinct, e)
			}
		}
		p.doc.P("The first prompt, “%s”, has %d distinct paraphrases among its %d, e.g. “%s”.", ex[0].Prompt, len(distinct), len(log.Examples), strings.Join(distinct[:min(3, len(distinct))], "” / “"))
	}
	return p.doc.Plot(name+"_measures", "Rejection probability vs uncertainty for three measures ("+fig+")", lp)
}

// fisherCI is the 95% interval of a correlation coefficient r over n
// points by Fisher's z transform.
func fisherCI(r float64, n int) (lo, hi float64) {
	if n < 4 || math.IsNaN(r) || math.Abs(r) >= 1 {
		return math.NaN(), math.NaN()
	}
	z := math.Atanh(r)
	h := 1.959964 / math.Sqrt(float64(n-3))
	return math.Tanh(z - h), math.Tanh(z + h)
}

// methodsByDataset writes method × dataset tables of cosine, ROUGE-L and
// NLL, each mean with its 95% interval.
func (p *paper) methodsByDataset(ctx context.Context, base hybrid.Params, pts []Point, methods, datasets []string) error {
	res := map[string]map[string]Row{}
	for _, ds := range datasets {
		rows, err := p.run(ctx, "table1_"+ds, ds, p.cfg.N, base, pts)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if res[r.Label] == nil {
				res[r.Label] = map[string]Row{}
			}
			res[r.Label][ds] = r
		}
	}
	for _, m := range []struct{ col, name, intro string }{
		{"cosine", "table1_cosine", fmt.Sprintf("Cosine similarity of averaged GloVe vectors between output and reference (the papers use BERT / USE sentence embeddings), %d prompts per dataset:", p.cfg.N)},
		{"rougeL", "table1_rougeL", "ROUGE-L F1:"},
		{"nll", "table1_nll", "NLL of the output under the LLM (nats/token, lower is closer to the LLM):"},
	} {
		t := &report.Table{Columns: append([]string{"method"}, datasets...)}
		for _, meth := range methods {
			cells := []string{meth}
			for _, ds := range datasets {
				cells = append(cells, res[meth][ds].PM(m.col, 3))
			}
			t.AddRow(cells...)
		}
		p.doc.P("%s", m.intro)
		if err := p.doc.Table(m.name, t); err != nil {
			return err
		}
	}
	return nil
}
