package eval

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
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
var Papers = []string{"u-hlm", "cu-hlm", "ui-hlm", "sqs", "qs", "coupling", "trees"}

// PaperConfig configures a paper rerun.
type PaperConfig struct {
	Name      string
	Out       string
	LLM, SLM  string
	Tokenizer string
	Shared    string // the shared material root (holds data/ and models/)
	N         int    // prompts per dataset for tables (default 100, as the papers)
	NCurve    int    // prompts per point for curves (default 20)
	NCal      int    // calibration runs, generated from BOS alone: no evaluated prompt is used (default 100)
	NMeasure  int    // prompts of the uncertainty-measure comparison (default 20)
	WordNet   string // WordNet database directory for prompt perturbation ("": wordnet.DefaultDir())
	MaxTokens int
	Seed      uint64
	Command   string // the command line, quoted in the report
	// Quick runs a small version of a rerun (qs: two temperatures, a few
	// prompts and episodes) that produces every figure and table, for tests.
	Quick bool
	// Ablation lists other drafts for the same LLM (CU-HLM Table II's
	// ablation of the SLM: an untrained early exit, an exit head, …); the
	// report's own SLM is the first row.
	Ablation []Draft
	Progress func(done, total int, label string)
	// Notice, if set, is told what the report says the rerun left out or
	// replaced (a dataset's built-in stand-in, a figure's missing part),
	// for the terminal.
	Notice func(msg string)
}

// Draft names a draft model for an ablation row.
type Draft struct {
	Name string // what the row says ("untrained early exit")
	SLM  string // model spec
}

// Defaults of PaperConfig: the papers evaluate 100 prompts per table.
const (
	DefaultN        = 100
	DefaultNCurve   = 20
	DefaultNCal     = 100
	DefaultNMeasure = 20
)

// paper is the state of one rerun.
type paper struct {
	cfg   PaperConfig
	setup Setup
	doc   *Doc
	sets  map[string][]dataset.Example // loaded datasets by name
	cache map[string][]dataset.Example // samples by "name/skip/n"

	calRes sim.CalibrationResult // the calibration, once run
	calLog *sim.CalibrationLog

	ablation []*sim.Models // PaperConfig.Ablation's drafts with the LLM, in order
}

// RunPaper reruns one paper's experiments and writes DIR/report.md, its
// plots (PNG and SVG) and the CSV/JSON results.
func RunPaper(ctx context.Context, cfg PaperConfig) error {
	if cfg.N <= 0 {
		cfg.N = DefaultN
	}
	if cfg.NCurve <= 0 {
		cfg.NCurve = DefaultNCurve
	}
	if cfg.NCal <= 0 {
		cfg.NCal = DefaultNCal
	}
	if cfg.NMeasure <= 0 {
		cfg.NMeasure = DefaultNMeasure
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = 64
	}
	// The shared datasets a rerun reads, checked before any work (the rerun
	// would fail at the first table that needs a missing one, minutes in).
	var missing []string
	for _, name := range paperDatasets[cfg.Name] {
		if path := dataset.Default(name, cfg.Shared); dataset.Fallback(name) == "" {
			if _, err := os.Stat(path); err != nil {
				missing = append(missing, path)
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the %s rerun reads shared data that is not there: %s; set HLM_SHARED to the directory that holds data/", cfg.Name, strings.Join(missing, ", "))
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return err
	}
	ms, err := sim.Open(cfg.LLM, cfg.SLM, cfg.Tokenizer)
	if err != nil {
		return err
	}
	// The ablation's drafts are opened and checked against the LLM now,
	// not when their table comes, after the others.
	var ablation []*sim.Models
	for _, d := range cfg.Ablation {
		am, err := ms.WithDraft(cfg.LLM, d.SLM, cfg.Tokenizer)
		if err != nil {
			return fmt.Errorf("ablation draft %q: %w", d.Name, err)
		}
		ablation = append(ablation, am)
	}
	// The uncertainty figure (the reruns that read --n-measure) runs MC
	// dropout, which needs the draft on hlm's engine: refused now rather
	// than after the tables before it.
	if slices.Contains(PaperSizes[cfg.Name], "n-measure") {
		if err := sim.CheckMeasures(ms); err != nil {
			return fmt.Errorf("the %s rerun's uncertainty figure: %w", cfg.Name, err)
		}
	}
	base := hybrid.DefaultParams()
	base.MaxTokens, base.Seed = cfg.MaxTokens, cfg.Seed
	glovePath := cfg.Shared + "/models/glove/glove-100d-top40k.txt.gz"
	var glove func() (*metrics.Embeddings, error)
	if _, err := os.Stat(glovePath); err == nil {
		glove = metrics.LazyGloVe(glovePath)
	}
	p := &paper{cfg: cfg, doc: &Doc{Dir: cfg.Out, Notice: cfg.Notice}, sets: map[string][]dataset.Example{}, cache: map[string][]dataset.Example{}, ablation: ablation,
		setup: Setup{Models: ms, Base: base, GloVe: glove, NLL: true, Progress: cfg.Progress, Ran: &Methods{}}}
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
	case "trees":
		err = p.trees(ctx)
	default:
		return fmt.Errorf("unknown paper %q (want one of %s)", cfg.Name, strings.Join(Papers, ", "))
	}
	if err != nil {
		return p.stopped(err)
	}
	return p.doc.Save()
}

// stopped ends a rerun that failed with err. What ran before the failure
// may have taken hours: its tables, CSV files and plots are written, and
// so is the report of them, which ends with the error.
func (p *paper) stopped(err error) error {
	p.doc.H(2, "The rerun stopped here")
	p.doc.P("%v", err)
	if p.doc.Save() != nil {
		return err
	}
	return fmt.Errorf("%w (the report of what ran before is %s)", err, filepath.Join(p.doc.Dir, "report.md"))
}

// paperDatasets are the datasets each rerun reads (tinystories falls back
// to the stories built into hlm; the others must be in the shared data).
// load refuses a dataset a rerun reads without listing it here.
var paperDatasets = map[string][]string{
	"u-hlm":  {"alpaca", "qed", "creak", "strategyqa", "tinystories"},
	"cu-hlm": {"alpaca", "qed", "creak", "strategyqa", "tinystories"},
	"ui-hlm": {"tinystories", "alpaca"},
}

// PaperSizes are the size flags each rerun reads (n: tables, n-curve:
// curves, n-cal: calibration runs, n-measure: the uncertainty-measure
// comparison); hlm eval paper refuses the others rather than ignore them.
// qs sets its own sizes.
var PaperSizes = map[string][]string{
	"u-hlm":    {"n", "n-curve", "n-cal", "n-measure"},
	"cu-hlm":   {"n", "n-curve", "n-cal", "n-measure"},
	"ui-hlm":   {"n", "n-curve"},
	"coupling": {"n", "n-curve"},
	"trees":    {"n"},
	"sqs":      {"n-curve"},
	"qs":       nil,
}

// load reads a dataset's default file once per rerun (for TinyStories
// without the shared one, the stories built into hlm, which the report
// says).
// The slice is shared: callers sample from it (dataset.Sample copies) and
// never modify it.
func (p *paper) load(name string) ([]dataset.Example, error) {
	if ex, ok := p.sets[name]; ok {
		return ex, nil
	}
	if dataset.Fallback(name) == "" && !slices.Contains(paperDatasets[p.cfg.Name], name) {
		return nil, fmt.Errorf("eval: the %s rerun reads %s, which paperDatasets does not list (so it is not checked before the work)", p.cfg.Name, name)
	}
	path := dataset.Default(name, p.cfg.Shared)
	var ex []dataset.Example
	_, err := os.Stat(path)
	switch {
	case err == nil:
		ex, err = dataset.Load(name, path)
	case dataset.Fallback(name) != "":
		fb := dataset.Fallback(name)
		ex, err = dataset.LoadBuiltin(fb)
		p.doc.P("**%s is not there: the %s prompts below are hlm's built-in `%s` set (%d short stories written for hlm), not TinyStories' validation sample; figures are not comparable with runs on it.** Set HLM_SHARED to the directory that holds data/ for the paper's data.", path, name, fb, len(ex))
		p.notice(fmt.Sprintf("%s is not there: the %s prompts are hlm's built-in %s set (the report says so)", path, name, fb))
	default:
		err = fmt.Errorf("dataset %s: %s is not there: this paper's rerun reads the shared data; set HLM_SHARED to the directory that holds data/", name, path)
	}
	if err != nil {
		return nil, err
	}
	p.sets[name] = ex
	return ex, nil
}

// calibrationExamples are NCal calibration runs that start from BOS alone
// (the empty prompt; each run has its own seed): the SLM and the LLM
// generate in their own domain, and no prompt of any evaluated dataset is
// seen, so calibration and evaluation are disjoint by construction.
func (p *paper) calibrationExamples() ([]dataset.Example, error) {
	ex := make([]dataset.Example, p.cfg.NCal)
	for i := range ex {
		ex[i] = dataset.Example{ID: fmt.Sprintf("bos#%d", i)}
	}
	return ex, nil
}

// examples returns n evaluation examples of a dataset (a seeded sample;
// a smaller n is a prefix of a larger one), with the rest of a story as the
// reference for TinyStories (dataset.Sample's prefixes agree for every
// length). TinyStories has only the stories of the shared sample file
// (19), so its tables use at most that many.
func (p *paper) examples(name string, n int) ([]dataset.Example, error) {
	key := fmt.Sprintf("%s/%d", name, n)
	if ex, ok := p.cache[key]; ok {
		return ex, nil
	}
	all, err := p.load(name)
	if err != nil {
		return nil, err
	}
	ex := dataset.Sample(all, min(n, len(all)), p.cfg.Seed) // a copy: filling in Reference leaves p.sets as loaded
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
		"Every number below comes from the simulator (package sim) with seed %d; the same command (the same --out included: some results name files under it) gives byte-identical results files, but for the columns of measured wall-clock time (named so), which the machine decides. "+
		"Quality metrics compare outputs with references: ROUGE (F1) and the cosine similarity of averaged GloVe vectors; NLL is the negative log-likelihood of the output under the LLM (nats/token; lower is closer to what the LLM would write). "+
		"Deviation is the exact mean L1 distance between the distribution each committed token followed and the LLM's (0 = lossless; for CU-HLM averaged over the draft as eq. 17 does). "+
		"Tables give each mean with the half-width of its 95%% confidence interval over prompts (± ; Student's t, pooled rates by the ratio-of-sums linearization).%s",
		source, p.cfg.LLM, p.draftName(), p.setup.Models.LLM.Config().Vocab, p.cfg.Command, p.cfg.Seed, strings.TrimRight(" "+p.sizes(), " "))
	p.doc.Later(func() string { return methodNotes(p.setup.Ran.Names()) })
}

// methodNotes is the header's paragraph on the methods a report ran: which
// of them are lossless by construction (so that their deviation is an
// identity, not evidence), and the one-token rule where one-token methods
// ran.
func methodNotes(ran []string) string {
	var sampled, raced []string
	oneToken := false
	for _, name := range ran {
		m, err := hybrid.MethodByName(name)
		if err != nil {
			continue
		}
		oneToken = oneToken || (m.Family == hybrid.FamilySkip && name != hybrid.SLM)
		switch {
		case !m.Lossless || name == hybrid.LLM:
		case name == hybrid.Coupled || name == hybrid.CoupledList:
			raced = append(raced, name)
		default:
			sampled = append(sampled, name)
		}
	}
	var parts []string
	if len(sampled) > 0 {
		parts = append(parts, join(sampled)+" sample each draft from what the server verifies against")
	}
	if len(raced) > 0 {
		parts = append(parts, join(raced)+" commit the winner of a race over the LLM's distribution")
	}
	var b strings.Builder
	if len(parts) > 0 {
		fmt.Fprintf(&b, "For the methods here that are lossless by construction (%s) the deviation is an identity, OutputDist(x̂, x̂, y) = y or RaceDist(y) = y, and reads 0 up to rounding: a check of the code's bookkeeping, not evidence; the chi-square tests of package hybrid (TestLosslessOnRealPair, TestBlocksFollowTheLLMOnRealPair) are what test the sampling.", strings.Join(parts, "; "))
	}
	if oneToken {
		if b.Len() > 0 {
			b.WriteString(" ")
		}
		b.WriteString("Verified rounds of the one-token methods commit exactly one token (the papers' rule; rows marked \"+bonus\" add the LLM's bonus token after an accepted draft for comparison).")
	}
	return b.String()
}

// join is "a", "a and b", "a, b and c".
func join(xs []string) string {
	if len(xs) <= 1 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

// sizes is the header's sentence on how many prompts and runs the tables,
// curves and calibration use: --n, --n-curve and --n-cal, or, in the
// small rerun, the sizes each section's setting states (--quick sets its
// own).
func (p *paper) sizes() string {
	if p.cfg.Quick {
		return "This is the small rerun (--quick): it runs fewer prompts, seeds and settings than the full one, and each section's setting says how many. "
	}
	reads := PaperSizes[p.cfg.Name]
	var parts []string
	if slices.Contains(reads, "n") {
		parts = append(parts, fmt.Sprintf("tables use %d prompts per dataset (TinyStories: at most the 19 stories of the shared sample)", p.cfg.N))
	}
	if slices.Contains(reads, "n-curve") {
		parts = append(parts, fmt.Sprintf("curves %d per point", p.cfg.NCurve))
	}
	if slices.Contains(reads, "n-cal") {
		parts = append(parts, fmt.Sprintf("calibration (a, b, Δ, k*) uses %d runs generated from BOS alone, so no evaluated prompt is seen", p.cfg.NCal))
	}
	if slices.Contains(reads, "n-measure") {
		parts = append(parts, fmt.Sprintf("the uncertainty measures are compared on %d prompts", p.cfg.NMeasure))
	}
	if len(parts) == 0 {
		return ""
	}
	s := strings.Join(parts, "; ")
	return strings.ToUpper(s[:1]) + s[1:] + ". "
}

// calibrate runs the calibration of Theorem 1 / eq. 21 on the calibration
// prompts (disjoint from every evaluated prompt), keeping a sample of 300
// distribution pairs for the figures.
func (p *paper) calibrate(ctx context.Context, base hybrid.Params) (sim.CalibrationResult, *sim.CalibrationLog, error) {
	if p.calLog != nil {
		return p.calRes, p.calLog, nil
	}
	ex, err := p.calibrationExamples()
	if err != nil {
		return sim.CalibrationResult{}, nil, err
	}
	log, err := sim.Collect(ctx, p.setup.Models, base, dataset.Prompts(ex), 300, nil)
	if err != nil {
		return sim.CalibrationResult{}, nil, err
	}
	res, err := sim.Analyze(log, base.Theta, uncertainty.Options{M: base.M})
	if err != nil {
		return sim.CalibrationResult{}, nil, err
	}
	p.calRes, p.calLog = res, log
	return res, log, nil
}

// calibrationTable is Theorem 1 and eq. 21 on the calibration data, next
// to the paper's row. The measured risk is the evidence; R ≤ Hölder bound
// holds for any density by Cauchy–Schwarz.
func (p *paper) calibrationTable(c sim.CalibrationResult, paperRow []string) *report.Table {
	t := &report.Table{Columns: []string{"", "tokens", "a", "b", "R² (binned)", "Δ", "risk-prone u_th", "risk-averse u_th", "measured R", "R (integral)", "Hölder bound", "k* (θ=0.1)", "k* on each half"}}
	f := report.Float
	halves := fmt.Sprintf("%d, %d", c.KHalves[0], c.KHalves[1])
	if c.Degenerate {
		t.AddRow("ours", fmt.Sprint(c.N), f(c.Fit.A, 3), f(c.Fit.B, 3), f(c.Fit.R2, 3), f(c.Delta, 3), "undefined (a ≤ 0)", "undefined", "–", "–", "–", fmt.Sprint(c.KOffline), halves)
	} else {
		t.AddRow("ours", fmt.Sprint(c.N), f(c.Fit.A, 3), f(c.Fit.B, 3), f(c.Fit.R2, 3), f(c.Delta, 3), f(c.RiskProne, 3), f(c.RiskAverse, 3), sci(c.EmpiricalRisk), sci(c.Risk), sci(c.RiskBound), fmt.Sprint(c.KOffline), halves)
	}
	t.AddRow(paperRow...)
	return t
}

// sci formats a small number as 2.24e-03.
func sci(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%.3g", x)
}

// calibrationNote says what the calibration means for the rerun, loudly
// when the slope is not positive.
func (p *paper) calibrationNote(c sim.CalibrationResult) {
	p.doc.P("Calibration: %d runs of lossless HLM (one token per round) from BOS alone — the pair's own domain, no evaluated prompt — %d tokens; β = a·u + b fitted on the mean β of each uncertainty value (as the papers' curves); Δ = P(y_d < x_d); k* = eq. 21 over all %d tokens (and on each half of the prompts, to show whether k* is stable). "+
		"*Measured R* is the mean over tokens of β·1(−b/a < u ≤ (Δ−b)/a), the paper's measured risk. *R (integral)* ≤ *Hölder bound* holds for any density by Cauchy–Schwarz — by construction, not evidence.", p.cfg.NCal, c.N, c.Pairs)
	if c.Degenerate {
		p.doc.P("**The fitted slope is not positive (a = %.3f ≤ 0): on this pair uncertainty does not predict rejection, U-HLM's Remark 1 fails, and Theorem 1's thresholds, risk and bound do not exist.** The methods below still run with the paper's thresholds (u_th = 0.431 or 0.8), and CU-HLM (online) predicts β from this fitted line (clipped to [0, 1]) — it is the pair's least-squares predictor, not the paper's a and b — so its k follows a prediction that carries no information about rejection.", c.Fit.A)
	}
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
		lp.Series = append(lp.Series, logSafe(Curve(m, rs, func(r Row) float64 { return SetValue(r, "snr_db") }, "throughput_tps")))
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

// draftName names the draft of the rerun: the spec it was opened from (the
// shipped draft's name when none was given), or "none".
func (p *paper) draftName() string {
	if p.setup.Models.SLM == nil {
		return "none"
	}
	return p.setup.Models.SLM.Name()
}

// notice tells cfg.Notice, if set, what the report says was left out or
// replaced.
func (p *paper) notice(msg string) {
	if p.cfg.Notice != nil {
		p.cfg.Notice(msg)
	}
}
