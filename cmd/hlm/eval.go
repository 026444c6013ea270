package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hlmproject/hlm/dataset"
	"github.com/hlmproject/hlm/eval"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/internal/words"
	"github.com/hlmproject/hlm/metrics"
	"github.com/hlmproject/hlm/report"
	"github.com/hlmproject/hlm/tensor"
)

func init() {
	register("eval", "evaluate methods over datasets and parameter sweeps; rerun the papers' experiments", runEval)
}

// sharedDir is the shared material root: $HLM_SHARED or ../shared.
func sharedDir() string {
	if d := os.Getenv("HLM_SHARED"); d != "" {
		return d
	}
	return filepath.Join("..", "shared")
}

// progressBar reports progress on w: on a terminal a one-line bar redrawn
// when the percentage or the label changes; otherwise (a log file, a pipe)
// one line per finished cell, so that logs hold no carriage returns.
func progressBar(w io.Writer) func(done, total int, label string) {
	if isTerminal(w) {
		return drawBar(w)
	}
	return cellLines(w)
}

// drawBar draws a one-line progress bar on w, redrawn when the percentage
// or the label changes.
func drawBar(w io.Writer) func(done, total int, label string) {
	lastPct, lastLabel := -1, ""
	return func(done, total int, label string) {
		pct := 100 * done / max(total, 1)
		if pct == lastPct && label == lastLabel && done != total {
			return
		}
		lastPct, lastLabel = pct, label
		const width = 30
		n := width * done / max(total, 1)
		if len(label) > 40 {
			label = label[:40]
		}
		fmt.Fprintf(w, "\r[%s%s] %3d%% %-40s", strings.Repeat("#", n), strings.Repeat(".", width-n), 100*done/max(total, 1), label)
		if done == total {
			fmt.Fprintln(w)
		}
	}
}

// cellLines prints a line on w each time a cell (a run of calls with the
// same label) finishes: when the label changes, and at the end.
func cellLines(w io.Writer) func(done, total int, label string) {
	cur, prev := "", 0
	start := time.Now()
	finish := func(done, total int) {
		runs := "runs"
		if done-prev == 1 {
			runs = "run"
		}
		fmt.Fprintf(w, "[%d/%d %3d%% %s] %s: %d %s\n", done, total, 100*done/max(total, 1),
			time.Since(start).Round(time.Second), cur, done-prev, runs)
		prev = done
	}
	last := 0 // done at the previous call: a call may count several runs (a reused row)
	return func(done, total int, label string) {
		if done <= prev { // a new series (hlm eval paper runs several)
			prev, last = 0, 0
		}
		if label != cur && last > prev {
			finish(last, total)
		}
		cur, last = label, done
		if done == total {
			finish(done, total)
		}
	}
}

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "paper" {
		return runEvalPaper(ctx, args[1:], stdout, stderr)
	}
	p := hybrid.DefaultParams()
	fs := newFlags("eval", "--out DIR [--methods a,b] [--dataset NAME [--dataset-path FILE]] [--n N] [--sweep key=v1,v2 ...] [--set key=value ...]\n       hlm eval paper NAME --out DIR [--quick]", `
Run methods over a dataset and a grid of parameters in the simulator, score
the outputs (ROUGE-1/2/L and GloVe cosine against the references, NLL under
the LLM, exact deviation from the LLM's distribution) and write
DIR/results.csv, DIR/results.json, DIR/outputs.jsonl (each run's prompt,
text, tokens and seed) and DIR/report.md (with plots when a
numeric parameter is swept). The same command gives byte-identical results;
docs/design.md ("Results of hlm eval") defines every column. A point that
differs from an earlier one only in keys its method does not read (a sweep
of l over one-token methods) takes that point's row instead of running.
With only --out it runs on the built-in model and draft, and TinyStories'
sample from $HLM_SHARED (else the stories built into hlm, with a notice).

`+datasetsHelp+`

hlm eval paper NAME reruns a paper's tables and figures (NAME: `+strings.Join(eval.Papers, ", ")+`;
--quick makes a small rerun of sqs, qs and trees); hlm eval paper --help lists its flags.`, stdout)
	mf := addModelFlags(fs)
	methods := fs.String("methods", "llm,slm,hlm,u-hlm,cu-hlm-online,q-s", "comma-separated methods")
	ds := fs.String("dataset", "tinystories", "dataset name (see above)")
	dsPath := fs.String("dataset-path", "", "the dataset's file, instead of the built-in or the shared one")
	n := fs.Int("n", defaultEvalPrompts, "prompts (a seeded random sample; all when the dataset has fewer; --dataset prompts: the file's first N, in order, as hlm sim --prompts runs them)")
	maxTokens := fs.Int("max-tokens", defaultMaxTokens, "new tokens per prompt")
	seed := fs.Uint64("seed", defaultSeed, "random seed")
	out := fs.String("out", "", "output directory (required)")
	noNLL := fs.Bool("no-nll", false, "skip scoring outputs under the LLM")
	plots := fs.String("plot", strings.Join(defaultPlots, ","), "with --sweep: the metrics plotted against the first swept key, comma-separated (columns of results.csv: "+strings.Join(plottable(), ", ")+")")
	threads := threadsFlag(fs, "worker threads (0: all cores)")
	var sets, sweeps setFlags
	fs.Var(&sets, "set", "parameter override key=value for every point (repeatable)")
	fs.Var(&sweeps, "sweep", "swept parameter key=v1,v2,… (repeatable: the grid is their product); values with commas are separated by ';', and tree_shape's always are: --sweep 'tree_shape=dynamic;3,2,1;4,4'")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usageError{errors.New("--out is required")}
	}
	plotted, err := plotMetrics(*plots)
	if err != nil {
		return usageError{err}
	}
	if err := setsAgree(fs, sets, map[string]string{"max-tokens": "max_tokens", "seed": "seed"}); err != nil {
		return err
	}
	points, err := evalGrid(&p, *maxTokens, *seed, *methods, sets, sweeps)
	if err != nil {
		return err
	}
	warnings := unusedInGrid(p, sets, points)
	for _, w := range warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	// Made before the evaluation, so that a bad --out fails in a second,
	// not after hours of work.
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return usageError{fmt.Errorf("--out %s: the directory for the results cannot be made: %w", *out, err)}
	}
	tensor.SetThreads(*threads)
	ex, err := evalExamples(*ds, *dsPath, *n, *seed)
	if err != nil {
		return err
	}
	ms, err := mf.open(ctx)
	if err != nil {
		return err
	}
	setup := eval.Setup{Models: ms, Base: p, NLL: !*noNLL, Progress: progressBar(stderr)}
	var noCosine string
	if setup.GloVe, noCosine = gloveVectors(); noCosine != "" {
		fmt.Fprintf(stderr, "hlm eval: %s\n", noCosine)
	}
	used := datasetUsed(*ds, *dsPath)
	rows, err := eval.Evaluate(ctx, setup, used, ex, points)
	if err != nil {
		return err
	}
	if err := eval.WriteResults(*out, "results", rows); err != nil {
		return err
	}
	if err := eval.WriteOutputs(*out, "outputs", rows, ex); err != nil {
		return err
	}
	header := fmt.Sprintf("    hlm eval %s\n\nLLM `%s`, SLM `%s`, dataset %s (%d prompts × %d tokens), seed %d.", shellJoin(args), *mf.llm, draftName(ms), datasetLabel(*ds, used), len(ex), *maxTokens, *seed)
	if len(warnings) > 0 {
		header += "\n\nWarnings (the rows of these keys' values are the same run): " + strings.Join(warnings, "; ") + "."
	}
	if noCosine != "" {
		header += "\n\nNote: " + noCosine + "."
	}
	if err := writeEvalReport(*out, header, rows, strings.Split(*methods, ","), sweeps, plotted, stderr); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "hlm eval: wrote %s/results.csv, results.json, outputs.jsonl and report.md\n", *out)
	return nil
}

// gloveVectors loads GloVe's vectors from the shared directory when
// asked, for the cosine column; without the file, a note saying why the
// column is empty.
func gloveVectors() (vectors func() (*metrics.Embeddings, error), note string) {
	glove := filepath.Join(sharedDir(), "models", "glove", "glove-100d-top40k.txt.gz")
	if !fileExists(glove) {
		return nil, fmt.Sprintf("the cosine column is empty: it needs GloVe's vectors at %s (set HLM_SHARED to the directory that holds models/)", glove)
	}
	return metrics.LazyGloVe(glove), ""
}

// evalGrid applies --max-tokens, --seed and --set to p and expands
// --methods × --sweep into the grid's points, each point's settings
// checked before the dataset and the models are read (Evaluate checks them
// again, with the models' drafts).
func evalGrid(p *hybrid.Params, maxTokens int, seed uint64, methods string, sets, sweeps setFlags) ([]eval.Point, error) {
	for _, kv := range sets {
		if k, _, _ := strings.Cut(kv, "="); strings.TrimSpace(k) == "method" {
			return nil, usageError{fmt.Errorf("--set %s: eval runs the methods --methods names", kv)}
		}
	}
	// Through the registry, so that --max-tokens is checked as sim's is
	// (before the dataset is read).
	if err := p.Set("max_tokens", fmt.Sprint(maxTokens)); err != nil {
		return nil, usageError{fmt.Errorf("--max-tokens %d: %w", maxTokens, err)}
	}
	p.Seed = seed
	if err := p.SetAll(sets); err != nil {
		return nil, usageError{err}
	}
	points, err := eval.Grid(strings.Split(methods, ","), sweeps)
	if err != nil {
		return nil, usageError{err}
	}
	for _, sw := range sweeps {
		k, _, _ := strings.Cut(sw, "=")
		for _, kv := range sets {
			if sk, _, _ := strings.Cut(kv, "="); strings.TrimSpace(sk) == strings.TrimSpace(k) {
				return nil, usageError{fmt.Errorf("--set %s and --sweep %s: the sweep sets %s at every point; give one", kv, sw, strings.TrimSpace(k))}
			}
		}
	}
	// Every point's settings are checked now, before the dataset and the
	// models are read (Evaluate checks them again, with the models' drafts).
	for _, pt := range points {
		q := *p
		q.Method = pt.Method
		if err := q.SetAll(pt.Sets); err != nil {
			return nil, usageError{fmt.Errorf("%s: %w", pt.Label, err)}
		}
		if err := q.Validate(); err != nil {
			return nil, usageError{fmt.Errorf("%s: %w", pt.Label, err)}
		}
	}
	return points, nil
}

// evalExamples loads n examples of the dataset name (from path, or its
// built-in or shared file), a sample seeded by seed; an example without a
// reference gets its text's continuation after the prompt.
func evalExamples(name, path string, n int, seed uint64) ([]dataset.Example, error) {
	ex, err := loadDataset(name, path, "--dataset-path")
	if err != nil {
		return nil, err
	}
	if name == "prompts" {
		// A list of one's own: its first n in the file's order, so that
		// prompt i runs with seed+i as in hlm sim --prompts FILE.
		ex = ex[:min(n, len(ex))]
	} else {
		ex = dataset.Sample(ex, min(n, len(ex)), seed)
	}
	for i := range ex {
		if ex[i].Reference == "" && ex[i].Text != "" {
			ex[i].Reference = strings.TrimSpace(strings.TrimPrefix(ex[i].Text, ex[i].Prompt))
		}
	}
	return ex, nil
}

// writeEvalReport writes out/report.md: the header paragraph, the table of
// rows and, when parameters are swept, a plot per metric against the first
// swept key with a line per method and value of the other swept keys.
func writeEvalReport(out, header string, rows []eval.Row, methods, sweeps, plotted []string, stderr io.Writer) error {
	doc := &eval.Doc{Dir: out}
	doc.H(1, "hlm eval")
	doc.P("%s", header)
	cols := []string{"label", "throughput_tps", "transmission_rate", "true_skip_rate", "rejection_rate", "accepted_per_round", "uplink_bits_per_token", "energy", "rougeL", "cosine", "nll", "mean_deviation"}
	if err := doc.Table("", eval.Table("", rows, cols)); err != nil {
		return err
	}
	if wide := eval.OutOfRange(rows, cols[1:]); len(wide) > 0 {
		prompts := 0
		for _, r := range rows {
			prompts = max(prompts, r.Prompts)
		}
		doc.P("Intervals that pass their metric's range (%s per row) — %s. These are Student's t intervals over the prompts, left as they are: at %s the t factor is %.3g, and such an interval says only that the mean is not pinned down. More prompts (--n) narrow them.",
			words.Plural(prompts, "prompt"), strings.Join(wide, "; "), words.Plural(prompts, "prompt"), metrics.T95(prompts))
		fmt.Fprintf(stderr, "hlm eval: intervals in %s pass the metric's range (%s per row; see report.md): more prompts (--n) narrow them\n", words.Plural(len(wide), "column"), words.Plural(prompts, "prompt"))
	}
	// One plot per metric against the first numeric sweep, a line per method (and value of the other swept keys, below).
	// An earlier run's plots in the same directory, of any metric, would
	// pass for this run's: remove them (those made below are written anew).
	for _, metric := range plottable() {
		for _, ext := range []string{".png", ".svg"} {
			if err := os.Remove(filepath.Join(out, metric+ext)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	if key := plotKey(rows, sweeps); key != "" {
		for _, metric := range plotted {
			lp := &report.LinePlot{Title: metric + " vs " + key, XLabel: key, YLabel: metric}
			// A line per method and per value of the other swept keys, so
			// that no line joins points that differ in more than key.
			for _, m := range methods {
				var labels []string
				groups := map[string][]eval.Row{}
				for _, r := range rows {
					if r.Method != strings.TrimSpace(m) {
						continue
					}
					label := strings.TrimSpace(m)
					for _, kv := range r.Sets {
						if k, _, _ := strings.Cut(kv, "="); k != key {
							label += " " + kv
						}
					}
					if _, ok := groups[label]; !ok {
						labels = append(labels, label)
					}
					groups[label] = append(groups[label], r)
				}
				for _, label := range labels {
					lp.Series = append(lp.Series, eval.Curve(label, groups[label], func(r eval.Row) float64 { return eval.SetValue(r, key) }, metric))
				}
			}
			if err := doc.Plot(metric, metric+" vs "+key, lp); err != nil {
				fmt.Fprintf(stderr, "hlm eval: no plot of %s: %v\n", metric, err)
			}
		}
	} else if len(sweeps) > 0 {
		fmt.Fprintf(stderr, "hlm eval: no plots: no swept key has numbers for values (%s)\n", strings.Join(sweeps, " "))
	}
	return doc.Save()
}

// plotKey is the first swept key whose value is a number in every row
// (tree_shape's "3,2,1" or draft=ddqn are not), or "" when none is.
func plotKey(rows []eval.Row, sweeps []string) string {
	for _, s := range sweeps {
		key, _, _ := strings.Cut(s, "=")
		key = strings.TrimSpace(key)
		numeric := len(rows) > 0
		for _, r := range rows {
			if math.IsNaN(eval.SetValue(r, key)) {
				numeric = false
				break
			}
		}
		if numeric {
			return key
		}
	}
	return ""
}

// unusedInGrid are the warnings for the --set keys and swept keys that
// have no effect on some point of the grid: "q-s: --sweep budget_bits
// has no effect: …", once per method and key.
func unusedInGrid(base hybrid.Params, sets []string, points []eval.Point) []string {
	var out []string
	seen := map[string]bool{}
	for _, pt := range points {
		p := base
		p.Method = pt.Method
		if err := p.SetAll(pt.Sets); err != nil {
			continue // Evaluate reports it
		}
		for _, u := range append(unusedSets("--set", sets, p), unusedSets("--sweep", pt.Sets, p)...) {
			// One warning per method and key, whatever the value.
			if id := pt.Method + " " + u.flag + " " + u.key; !seen[id] {
				seen[id] = true
				out = append(out, pt.Method+": "+u.String())
			}
		}
	}
	return out
}

// datasetLabel names the prompts a report's header describes: the dataset
// name, or used, the built-in set that stood in for it (datasetUsed).
func datasetLabel(name, used string) string {
	if used != name {
		return fmt.Sprintf("%s (the built-in set standing in for %s, whose file is absent)", used, name)
	}
	return name
}

// shellJoin writes args as a shell command line: an argument holding a
// character the shell would take apart (spaces, ';', quotes, globs, …) is
// single-quoted, so that a report's command can be pasted back.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,/:+@%") == "" {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// quickPapers are the reruns with a small version (PaperConfig.Quick).
var quickPapers = []string{"sqs", "qs", "trees"}

func runEvalPaper(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval paper", "NAME --out DIR [--llm SPEC] [--slm SPEC] [--n N] [--quick]", `
Rerun the shape of one paper's main tables and figures on the models at
hand and write DIR/report.md with its plots (PNG and SVG) and CSV/JSON
results. Every mean comes with its 95% confidence interval over prompts.
Calibration (a, b, Δ, k*) uses --n-cal runs generated from BOS alone, so
no prompt that a table or curve evaluates is seen. Prompt perturbation
(u-hlm, cu-hlm) reads WordNet 3.0's database files (Debian: apt-get install
wordnet-base) and is left out, with a note in the report, when they are
absent. Run times on the 2-core machine: docs/REPRODUCTION.md.
NAME: `+strings.Join(eval.Papers, ", ")+`.

The size flags each rerun reads (it refuses the others, which it would
ignore; --max-tokens and --seed apply to every one):
`+paperSizesHelp(), stdout)
	mf := addModelFlags(fs)
	out := fs.String("out", "", "output directory (required)")
	n := fs.Int("n", eval.DefaultN, "prompts per dataset for tables (the papers use 100)")
	nc := fs.Int("n-curve", eval.DefaultNCurve, "prompts per point for curves")
	ncal := fs.Int("n-cal", eval.DefaultNCal, "calibration runs, generated from BOS alone (no evaluated prompt)")
	nm := fs.Int("n-measure", eval.DefaultNMeasure, "prompts of the uncertainty-measure comparison (u-hlm, cu-hlm)")
	wn := fs.String("wordnet", "", "WordNet database directory for prompt perturbation (default $HLM_WORDNET or /usr/share/wordnet)")
	maxTokens := fs.Int("max-tokens", defaultMaxTokens, "new tokens per prompt")
	seed := fs.Uint64("seed", defaultSeed, "random seed")
	threads := threadsFlag(fs, "worker threads (0: all cores)")
	quick := fs.Bool("quick", false, "sqs, qs and trees: a small rerun that still makes every figure and table (sqs: 2 temperatures, 2 seeds, 3 prompts; qs: 2 temperatures, 3 prompts, 8 training episodes; trees: 2 round trips, L = 1, 2, 4, 3 prompts), for tests")
	var ablation listFlag
	fs.Var(&ablation, "ablation", "cu-hlm: another draft for Table II's KD ablation, as NAME=SPEC (repeatable), e.g. \"untrained early exit=M.bin@exit=1\"")
	// The paper's name comes first; --help alone prints the flags.
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return usageError{withSuggestion(fs, err)}
		}
		// The name after the flags: say that it goes first.
		if fs.NArg() > 0 && slices.Contains(eval.Papers, fs.Arg(0)) {
			return usageError{fmt.Errorf("the paper's name goes first: hlm eval paper %s [flags]", fs.Arg(0))}
		}
		return usageError{errors.New("which paper? give its name first: hlm eval paper NAME --out DIR, NAME one of " + strings.Join(eval.Papers, ", "))}
	}
	name := args[0]
	if !slices.Contains(eval.Papers, name) {
		return usageError{fmt.Errorf("no paper %q: want one of %s", name, strings.Join(eval.Papers, ", "))}
	}
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if *out == "" {
		return usageError{errors.New("--out is required")}
	}
	if *quick {
		if !slices.Contains(quickPapers, name) {
			return usageError{fmt.Errorf("--quick: %s has no small rerun (%s have one); give %s to make it smaller", name, strings.Join(quickPapers, ", "), sizeFlags(eval.PaperSizes[name]))}
		}
		if sized := givenSizes(fs, nil); len(sized) > 0 {
			return usageError{fmt.Errorf("--quick fixes the rerun's sizes, so %s would be ignored: give one or the other", strings.Join(sized, ", "))}
		}
	} else if ignored := givenSizes(fs, eval.PaperSizes[name]); len(ignored) > 0 {
		return usageError{fmt.Errorf("the %s rerun does not read %s: it would be ignored (it reads %s)", name, strings.Join(ignored, ", "), sizeFlags(eval.PaperSizes[name]))}
	}
	if len(ablation) > 0 && name != "cu-hlm" {
		return usageError{fmt.Errorf("--ablation adds drafts to CU-HLM's Table II: the %s rerun has no such table (hlm eval paper cu-hlm --ablation NAME=SPEC)", name)}
	}
	var drafts []eval.Draft
	for _, a := range ablation {
		name, spec, ok := strings.Cut(a, "=")
		if !ok || name == "" || spec == "" {
			return usageError{fmt.Errorf("--ablation %q: want NAME=SPEC", a)}
		}
		drafts = append(drafts, eval.Draft{Name: name, SLM: spec})
	}
	tensor.SetThreads(*threads)
	cfg := eval.PaperConfig{Ablation: drafts, Name: name, Out: *out, LLM: *mf.llm, SLM: *mf.slm, Tokenizer: *mf.tok, Shared: sharedDir(),
		N: *n, NCurve: *nc, NCal: *ncal, NMeasure: *nm, WordNet: *wn, MaxTokens: *maxTokens, Seed: *seed, Quick: *quick, Command: "hlm eval paper " + shellJoin(args), Progress: progressBar(stderr),
		Notice: func(msg string) { fmt.Fprintf(stderr, "hlm eval paper %s: %s\n", name, msg) }}
	if err := eval.RunPaper(ctx, cfg); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "hlm eval paper %s: wrote %s/report.md\n", name, *out)
	return nil
}

// givenSizes are the size flags given on the command line (--n, --n-curve,
// --n-cal, --n-measure) that are not in reads, as "--NAME".
func givenSizes(fs *flag.FlagSet, reads []string) []string {
	var out []string
	fs.Visit(func(f *flag.Flag) {
		if slices.Contains([]string{"n", "n-curve", "n-cal", "n-measure"}, f.Name) && !slices.Contains(reads, f.Name) {
			out = append(out, "--"+f.Name)
		}
	})
	return out
}

// defaultPlots are the metrics hlm eval plots against a swept key unless
// --plot names others.
var defaultPlots = []string{"throughput_tps", "transmission_rate", "uplink_bits_per_token", "rougeL"}

// plottable are the columns of results.csv that are numbers per row.
func plottable() []string {
	var out []string
	for _, c := range eval.Columns {
		switch c {
		case "label", "method", "dataset", "llm", "slm", "sets", "prompts":
		default:
			out = append(out, c)
		}
	}
	return out
}

// plotMetrics parses --plot: known metrics, each once.
func plotMetrics(s string) ([]string, error) {
	var out []string
	for _, m := range strings.Split(s, ",") {
		m = strings.TrimSpace(m)
		if m == "" {
			continue
		}
		if !slices.Contains(plottable(), m) {
			if near := words.Closest(m, plottable()); near != "" {
				return nil, fmt.Errorf("--plot: no metric %q; did you mean %s?", m, near)
			}
			return nil, fmt.Errorf("--plot: no metric %q (want some of %s)", m, strings.Join(plottable(), ", "))
		}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out, nil
}

// paperSizesHelp lists, a line per rerun, the size flags it reads
// (eval.PaperSizes), and which reruns have --quick.
func paperSizesHelp() string {
	var b strings.Builder
	for _, name := range eval.Papers {
		fmt.Fprintf(&b, "  %-9s %s", name, sizeFlags(eval.PaperSizes[name]))
		if slices.Contains(quickPapers, name) {
			b.WriteString("; or --quick")
		}
		b.WriteString("\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// sizeFlags names a rerun's size flags for a message ("no size flag" for
// none: qs sets its own sizes).
func sizeFlags(names []string) string {
	if len(names) == 0 {
		return "no size flag: it sets its own sizes"
	}
	var out []string
	for _, n := range names {
		out = append(out, "--"+n)
	}
	return strings.Join(out, ", ")
}
