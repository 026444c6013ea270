package eval

import (
	"context"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/hlmproject/hlm/dataset"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/metrics"
	"github.com/hlmproject/hlm/report"
	"github.com/hlmproject/hlm/sim"
	"github.com/hlmproject/hlm/uncertainty"
)

// Papers lists the reruns `hlm eval paper NAME` knows.
var Papers = []string{"u-hlm", "cu-hlm", "ui-hlm", "sqs", "qs", "coupling"}

// PaperConfig configures a paper rerun.
type PaperConfig struct {
	Name      string
	Out       string
	LLM, SLM  string
	Tokenizer string
	Shared    string // the shared material root (holds data/ and models/)
	N         int    // prompts per dataset for tables
	NCurve    int    // prompts per point for curves
	MaxTokens int
	Seed      uint64
	Command   string // the command line, quoted in the report
	Progress  func(done, total int, label string)
}

// paper is the state of one rerun.
type paper struct {
	cfg   PaperConfig
	setup Setup
	doc   *Doc
	sets  map[string][]dataset.Example // loaded datasets by name
	cache map[string][]dataset.Example // samples by "name/n"
}

// RunPaper reruns one paper's experiments and writes DIR/report.md, its
// plots (PNG and SVG) and the CSV/JSON results.
func RunPaper(ctx context.Context, cfg PaperConfig) error {
	if cfg.N <= 0 {
		cfg.N = 20
	}
	if cfg.NCurve <= 0 {
		cfg.NCurve = 10
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = 64
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return err
	}
	ms, err := sim.Open(cfg.LLM, cfg.SLM, cfg.Tokenizer)
	if err != nil {
		return err
	}
	base := hybrid.DefaultParams()
	base.MaxTokens, base.Seed = cfg.MaxTokens, cfg.Seed
	glovePath := cfg.Shared + "/models/glove/glove-100d-top40k.txt.gz"
	var glove func() (*metrics.Embeddings, error)
	if _, err := os.Stat(glovePath); err == nil {
		glove = metrics.LazyGloVe(glovePath)
	}
	p := &paper{cfg: cfg, doc: &Doc{Dir: cfg.Out}, sets: map[string][]dataset.Example{}, cache: map[string][]dataset.Example{},
		setup: Setup{Models: ms, Base: base, GloVe: glove, NLL: true, Progress: cfg.Progress}}
	switch cfg.Name {
	case "cu-hlm":
		err = p.cuhlm(ctx)
	case "u-hlm":
		err = p.uhlm(ctx)
	case "ui-hlm":
		err = p.uihlm(ctx)
	case "sqs":
		err = p.sqs(ctx)
	case "qs":
		err = p.qs(ctx)
	case "coupling":
		err = p.coupling(ctx)
	default:
		return fmt.Errorf("unknown paper %q (want one of %s)", cfg.Name, strings.Join(Papers, ", "))
	}
	if err != nil {
		return err
	}
	return p.doc.Save()
}

// load reads a dataset's default file once per rerun. The slice is shared:
// callers sample from it (dataset.Sample copies) and never modify it.
func (p *paper) load(name string) ([]dataset.Example, error) {
	if ex, ok := p.sets[name]; ok {
		return ex, nil
	}
	ex, err := dataset.Load(name, dataset.Default(name, p.cfg.Shared))
	if err != nil {
		return nil, err
	}
	p.sets[name] = ex
	return ex, nil
}

// examples loads n examples of a dataset (seeded sample), with the rest of
// a story as the reference for TinyStories.
func (p *paper) examples(name string, n int) ([]dataset.Example, error) {
	key := fmt.Sprintf("%s/%d", name, n)
	if ex, ok := p.cache[key]; ok {
		return ex, nil
	}
	ex, err := p.load(name)
	if err != nil {
		return nil, err
	}
	ex = dataset.Sample(ex, min(n, len(ex)), p.cfg.Seed) // a copy: filling in Reference leaves p.sets as loaded
	for i := range ex {
		if ex[i].Reference == "" && ex[i].Text != "" {
			ex[i].Reference = strings.TrimSpace(strings.TrimPrefix(ex[i].Text, ex[i].Prompt))
		}
	}
	p.cache[key] = ex
	return ex, nil
}

// run evaluates points on a dataset and saves the rows as name.csv/json.
func (p *paper) run(ctx context.Context, name, ds string, n int, base hybrid.Params, points []Point) ([]Row, error) {
	ex, err := p.examples(ds, n)
	if err != nil {
		return nil, err
	}
	s := p.setup
	s.Base = base
	rows, err := Evaluate(ctx, s, ds, ex, points)
	if err != nil {
		return nil, err
	}
	return rows, WriteResults(p.cfg.Out, name, rows)
}

func (p *paper) header(title, source string) {
	p.doc.H(1, title)
	p.doc.P("Rerun of %s on the models at hand: LLM `%s`, SLM `%s` (vocabulary %d). Command:\n\n    %s\n\n"+
		"Every number below comes from the simulator (package sim) with seed %d; the same command gives byte-identical results files. "+
		"Quality metrics compare outputs with references: ROUGE (F1) and the cosine similarity of averaged GloVe vectors; NLL is the negative log-likelihood of the output under the LLM (nats/token; lower is closer to what the LLM would write). "+
		"Deviation is the exact mean L1 distance between the distribution each committed token followed and the LLM's (0 = lossless).",
		source, p.cfg.LLM, p.cfg.SLM, p.setup.Models.LLM.Config().Vocab, p.cfg.Command, p.cfg.Seed)
}

// calibrate runs the calibration of Theorem 1 / eq. 21 on TinyStories prompts.
func (p *paper) calibrate(ctx context.Context, base hybrid.Params) (sim.CalibrationResult, *sim.CalibrationLog, error) {
	ex, err := p.examples("tinystories", p.cfg.N)
	if err != nil {
		return sim.CalibrationResult{}, nil, err
	}
	prompts := make([]string, len(ex))
	for i, e := range ex {
		prompts[i] = e.Prompt
	}
	log, err := sim.Collect(ctx, p.setup.Models, base, prompts, 200, nil)
	if err != nil {
		return sim.CalibrationResult{}, nil, err
	}
	res, err := sim.Analyze(log, base.Theta, uncertainty.Options{M: base.M})
	return res, log, err
}

func (p *paper) calibrationTable(c sim.CalibrationResult, paperRow []string) *report.Table {
	t := &report.Table{Columns: []string{"", "a", "b", "R² (binned)", "Δ", "risk-prone u_th", "risk-averse u_th", "R", "Hölder bound", "k* (θ=0.1)"}}
	f := report.Float
	if c.Degenerate {
		t.AddRow("ours", f(c.Fit.A, 3), f(c.Fit.B, 3), f(c.Fit.R2, 3), f(c.Delta, 3), "undefined (a ≤ 0)", "undefined", "–", "–", fmt.Sprint(c.KOffline))
	} else {
		t.AddRow("ours", f(c.Fit.A, 3), f(c.Fit.B, 3), f(c.Fit.R2, 3), f(c.Delta, 3), f(c.RiskProne, 3), f(c.RiskAverse, 3), f(c.Risk, 4), f(c.RiskBound, 4), fmt.Sprint(c.KOffline))
	}
	t.AddRow(paperRow...)
	return t
}

// byLabel groups rows by method, keeping their order within each method.
func byLabel(rows []Row) map[string][]Row {
	out := map[string][]Row{}
	for _, r := range rows {
		out[r.Method] = append(out[r.Method], r)
	}
	return out
}

// snrCurves plots throughput against the swept average SNR, one line per
// method.
func snrCurves(rows []Row, methods []string, title string) *report.LinePlot {
	lp := &report.LinePlot{Title: title, XLabel: "average SNR (dB)", YLabel: "token throughput (tokens/s, virtual)", LogY: true, Legend: "bottom-right"}
	g := byLabel(rows)
	for _, m := range methods {
		rs := g[m]
		sort.Slice(rs, func(i, j int) bool { return SetValue(rs[i], "snr_db") < SetValue(rs[j], "snr_db") })
		lp.Series = append(lp.Series, Curve(m, rs, func(r Row) float64 { return SetValue(r, "snr_db") }, "throughput_tps"))
	}
	return lp
}

func sweep(key string, vals ...float64) string {
	var s []string
	for _, v := range vals {
		s = append(s, fmt.Sprint(v))
	}
	return key + "=" + strings.Join(s, ",")
}

// cuhlm reruns CU-HLM: calibration, the summary at 10 dB, Fig. 10 (throughput
// vs average SNR, Rayleigh and Rician), Table I (methods × datasets) and
// Fig. 9 (TR/TSR vs u_th; quality and payload vs k).
func (p *paper) cuhlm(ctx context.Context) error {
	p.header("CU-HLM rerun", "Oh et al., *Communication-Efficient Hybrid Language Model via Uncertainty-Aware Opportunistic and Compressed Transmission* (CU-HLM)")
	base := p.setup.Base // CU-HLM defaults: 10 MHz, 10 dB Rayleigh, b_prob 8 + indices, u_th 0.8
	cal, _, err := p.calibrate(ctx, base)
	if err != nil {
		return err
	}
	calSets := []string{fmt.Sprintf("calib_a=%g", cal.Fit.A), fmt.Sprintf("calib_b=%g", cal.Fit.B)}
	if cal.Degenerate {
		calSets = nil // keep the paper's a, b for the online k
	}
	kStar := cal.KOffline
	if kStar <= 0 {
		kStar = 30
	}
	methods := []string{hybrid.LLM, hybrid.SLM, hybrid.HLM, hybrid.RandHLM, hybrid.UHLM, hybrid.CUHLMOffline, hybrid.CUHLMOnline}
	point := func(m string, extra ...string) Point {
		sets := []string{"u_th=0.8"}
		switch m {
		case hybrid.CUHLMOffline:
			sets = append(sets, fmt.Sprintf("k=%d", kStar))
		case hybrid.CUHLMOnline:
			sets = append(sets, calSets...)
		}
		sets = append(sets, extra...)
		return Point{Label: m, Method: m, Sets: sets}
	}

	// Summary at the paper's headline setting.
	var pts []Point
	for _, m := range methods {
		pts = append(pts, point(m))
	}
	sum, err := p.run(ctx, "summary", "tinystories", p.cfg.N, base, pts)
	if err != nil {
		return err
	}
	p.doc.H(2, "Summary (Rayleigh, average SNR 10 dB, W = 10 MHz, b_prob = 8 + 15-bit indices, u_th = 0.8)")
	p.doc.P("TinyStories continuations (%d prompts × %d tokens). TR = share of tokens uploaded; TSR = mean acceptance probability of the skipped tokens; compression = distribution bits relative to 32-bit full distributions.", p.cfg.N, p.cfg.MaxTokens)
	if err := p.doc.Table("summary_table", Table("", sum, []string{"method", "throughput_tps", "transmission_rate", "true_skip_rate", "rejection_rate", "uplink_bits_per_token", "compression_ratio", "rougeL", "cosine", "nll", "mean_deviation"})); err != nil {
		return err
	}

	// Fig. 10.
	snrs := sweep("snr_db", -20, -15, -10, -5, 0, 5, 10)
	for _, fad := range []struct{ name, set, title string }{
		{"rayleigh", "fading=rayleigh", "Rayleigh fading"},
		{"rician", "fading=rician", "Rician fading, K = 10 dB"},
	} {
		var pts []Point
		for _, m := range methods {
			grid, _ := Grid([]string{m}, []string{snrs})
			for _, g := range grid {
				q := point(m, append([]string{fad.set, "rician_k_db=10"}, g.Sets...)...)
				q.Label = g.Label
				pts = append(pts, q)
			}
		}
		rows, err := p.run(ctx, "fig10_"+fad.name, "tinystories", p.cfg.NCurve, base, pts)
		if err != nil {
			return err
		}
		if fad.name == "rayleigh" {
			p.doc.H(2, "Fig. 10: token throughput vs average SNR")
		}
		if err := p.doc.Plot("fig10_"+fad.name, "Throughput vs average SNR, "+fad.title+" (CU-HLM Fig. 10)", snrCurves(rows, methods, fad.title)); err != nil {
			return err
		}
	}

	// Calibration.
	p.doc.H(2, "Calibration: Theorem 1 and the offline k* (eq. 21)")
	p.doc.P("Lossless HLM over TinyStories prompts logs (u, β = max(1 − y_d/x_d, 0)) per token; β = a·u + b is fitted on the mean β of each uncertainty value (as the paper's Fig. 2/4a curves).")
	if err := p.doc.Table("calibration", p.calibrationTable(cal, []string{"CU-HLM paper", "0.815", "−0.066", "0.977", "0.5956", "0.8117", "0.0810", "4.94e-3", "9.87e-3", "30"})); err != nil {
		return err
	}

	// Table I.
	p.doc.H(2, "Table I: quality by method and dataset")
	p.doc.P("Cosine similarity of averaged GloVe vectors between output and reference (the paper uses BERT sentence embeddings):")
	if err := p.methodsByDataset(ctx, base, pts, methods, []string{"alpaca", "qed", "creak", "strategyqa", "tinystories"}); err != nil {
		return err
	}

	// Fig. 9a: TR and TSR vs u_th.
	var uth []Point
	for _, u := range []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1} {
		q := point(hybrid.CUHLMOffline)
		q.Sets = append([]string{fmt.Sprintf("k=%d", kStar)}, fmt.Sprintf("u_th=%g", u))
		q.Label = fmt.Sprintf("u_th=%g", u)
		uth = append(uth, q)
	}
	rows, err := p.run(ctx, "fig9a_uth", "tinystories", p.cfg.NCurve, base, uth)
	if err != nil {
		return err
	}
	p.doc.H(2, "Fig. 9: design parameters")
	x := func(r Row) float64 { return SetValue(r, "u_th") }
	if err := p.doc.Plot("fig9a_uth", "TR, TSR and ROUGE-L of CU-HLM (offline) vs u_th (CU-HLM Fig. 9a)", &report.LinePlot{Title: "CU-HLM vs uncertainty threshold", XLabel: "u_th", YLabel: "rate / score",
		Series: []report.Series{Curve("TR", rows, x, "transmission_rate"), Curve("TSR", rows, x, "true_skip_rate"), Curve("ROUGE-L", rows, x, "rougeL")}}); err != nil {
		return err
	}
	// Fig. 9b: quality and payload vs k.
	var ks []Point
	vocab := p.setup.Models.LLM.Config().Vocab
	for _, k := range []int{1, 2, 5, 10, 30, 100, 300, vocab} {
		if k > vocab {
			continue
		}
		ks = append(ks, Point{Label: fmt.Sprintf("k=%d", k), Method: hybrid.CUHLMOffline, Sets: []string{"u_th=0.8", fmt.Sprintf("k=%d", k)}})
	}
	rows, err = p.run(ctx, "fig9b_k", "tinystories", p.cfg.NCurve, base, ks)
	if err != nil {
		return err
	}
	kx := func(r Row) float64 { return SetValue(r, "k") }
	if err := p.doc.Plot("fig9b_k", "Deviation from the LLM and uplink bits per token vs k (CU-HLM Fig. 9b)", &report.LinePlot{Title: "CU-HLM (offline) vs compressed vocabulary size", XLabel: "k", YLabel: "value", LogY: true,
		Series: []report.Series{Curve("uplink bits/token", rows, kx, "uplink_bits_per_token"), Curve("deviation ×1000", scaleDeviation(rows, 1000), kx, "mean_deviation")}}); err != nil {
		return err
	}
	return nil
}

// scaleDeviation multiplies the rows' mean deviation by f for plotting on a
// shared axis; a non-positive product becomes NaN.
func scaleDeviation(rows []Row, f float64) []Row {
	out := append([]Row(nil), rows...)
	for i := range out {
		if out[i].Summary.MeanDeviation != nil {
			v := *out[i].Summary.MeanDeviation * f
			if v <= 0 {
				v = math.NaN()
			}
			out[i].Summary.MeanDeviation = &v
		}
	}
	return out
}
