// Package eval measures methods of hybrid inference on datasets: it runs the
// simulator over prompt sets for a grid of methods and parameters, scores
// the outputs (ROUGE and GloVe cosine against references, negative
// log-likelihood under the LLM, the exact deviation from the LLM's
// distribution) and writes results as CSV, JSON, Markdown tables and plots.
// Paper reruns (paper.go) rebuild the shape of each source paper's main
// tables and figures on the models at hand.
package eval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hlmproject/hlm/dataset"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/metrics"
	"github.com/hlmproject/hlm/score"
	"github.com/hlmproject/hlm/sim"
)

// Setup is what every point of an evaluation shares.
type Setup struct {
	Models *sim.Models
	Base   hybrid.Params
	// GloVe, when set, loads the word vectors for the cosine metric.
	GloVe func() (*metrics.Embeddings, error)
	// NLL scores every output under the LLM.
	NLL bool
	// Progress is called after each (point, prompt).
	Progress func(done, total int, label string)
	// Workers is how many prompts run at once (0: GOMAXPROCS). Results do
	// not depend on it.
	Workers int
	// Ran, when set, records the methods run (a paper's report names
	// only those).
	Ran *Methods
}

// Methods is a set of method names, safe for concurrent use.
type Methods struct {
	mu    sync.Mutex
	names map[string]bool
}

// Add records a method.
func (m *Methods) Add(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.names == nil {
		m.names = map[string]bool{}
	}
	m.names[name] = true
}

// Names are the methods recorded, in the method table's order.
func (m *Methods) Names() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, name := range hybrid.Methods {
		if m.names[name] {
			out = append(out, name)
		}
	}
	return out
}

// Point is one configuration of the grid: a method and parameter overrides
// ("key=value", applied after the base parameters).
type Point struct {
	Label  string   `json:"label"`
	Method string   `json:"method"`
	Sets   []string `json:"sets,omitempty"`
}

// Row is one point measured on one dataset.
type Row struct {
	Point
	Dataset string `json:"dataset"`
	// LLM and SLM name the models that ran (their specs: "@llama.cpp"
	// marks llama.cpp's library; SLM is empty for the LLM alone).
	LLM     string `json:"llm"`
	SLM     string `json:"slm"`
	Prompts int    `json:"prompts"`
	// Summary aggregates the runs (counts summed, rates recomputed).
	Summary hybrid.Result `json:"summary"`
	// Quality, averaged over prompts (NaN when not measured: encoded null).
	Rouge1 float64 `json:"rouge1"`
	Rouge2 float64 `json:"rouge2"`
	RougeL float64 `json:"rougeL"`
	Cosine float64 `json:"cosine"`
	NLL    float64 `json:"nll"` // mean per output token, nats
	// CI is the half-width of the 95% confidence interval of each column
	// that has one, with the prompts as independent units: Student's t for
	// the per-prompt means (ROUGE, cosine), the linearized ratio of sums
	// (metrics.RatioCI) for the pooled rates, n × the mean's for totals.
	CI      map[string]float64 `json:"ci95"`
	Outputs []string           `json:"-"`
	// Runs are the per-prompt results and PerPrompt the per-prompt quality
	// scores ("rouge1", "rouge2", "rougeL", "cosine"; prompts with a
	// reference), in prompt order, for paired comparisons between rows.
	Runs      []hybrid.Result      `json:"-"`
	PerPrompt map[string][]float64 `json:"-"`
}

// Evaluate runs every point on the examples of one dataset.
func Evaluate(ctx context.Context, s Setup, name string, ex []dataset.Example, points []Point) ([]Row, error) {
	if len(ex) == 0 {
		return nil, errors.New("eval: no examples")
	}
	var emb *metrics.Embeddings
	if s.GloVe != nil {
		var err error
		if emb, err = s.GloVe(); err != nil {
			return nil, fmt.Errorf("GloVe: %w", err)
		}
	}
	params, err := pointParams(s, points)
	if err != nil {
		return nil, err
	}
	pr := &progress{report: s.Progress, total: len(points) * len(ex)}
	var rows []Row
	// A point that differs from an earlier one only in keys its method
	// does not read (Params.Inert) has that point's results: it is not
	// run again (a sweep of l over one-token methods, say).
	ran := map[string]int{}
	for i, pt := range points {
		p := params[i]
		same := effective(p, pt)
		if j, ok := ran[same]; ok {
			row := rows[j]
			row.Point = pt
			rows = append(rows, row)
			pr.add(len(ex), pt.Label+" (as "+rows[j].Label+": its other keys are not read)")
			continue
		}
		ran[same] = len(rows)
		out, err := runPoint(ctx, s, emb, p, pt, ex, pr)
		if err != nil {
			return nil, err
		}
		row := Row{Point: pt, Dataset: name, Prompts: len(ex), LLM: s.Models.LLM.Name()}
		if s.Models.SLM != nil && p.Family() != hybrid.FamilyLLM {
			row.SLM = s.Models.SLM.Name()
		}
		row.fill(out, ex, emb != nil)
		rows = append(rows, row)
	}
	return rows, nil
}

// pointParams are the points' parameters, every point's settings and
// models checked before any runs, so that a refused one does not fail
// after the others' work.
func pointParams(s Setup, points []Point) ([]hybrid.Params, error) {
	params := make([]hybrid.Params, len(points))
	for i, pt := range points {
		p := s.Base
		p.Method = pt.Method
		if err := p.SetAll(pt.Sets); err != nil {
			return nil, fmt.Errorf("%s: %w", pt.Label, err)
		}
		if err := p.Validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", pt.Label, err)
		}
		if err := hybrid.CheckDraft(p, s.Models.SLM); err != nil {
			return nil, fmt.Errorf("%s: %w", pt.Label, err)
		}
		params[i] = p
	}
	return params, nil
}

// progress counts the prompts run (or taken from an identical point) for
// Setup.Progress, from any worker.
type progress struct {
	mu     sync.Mutex
	report func(done, total int, label string)
	done   int
	total  int
}

// add counts n prompts of the point labelled label.
func (pr *progress) add(n int, label string) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.done += n
	if pr.report != nil {
		pr.report(pr.done, pr.total, label)
	}
}

// runPoint runs and scores every prompt at point pt (parameters p). The
// prompts run concurrently (each is independent and seeded by its index);
// results are gathered in prompt order, so they do not depend on the
// scheduling.
func runPoint(ctx context.Context, s Setup, emb *metrics.Embeddings, p hybrid.Params, pt Point, ex []dataset.Example, pr *progress) ([]promptResult, error) {
	out := make([]promptResult, len(ex))
	err := forEach(ctx, len(ex), s.Workers, func(i int) error {
		pp := p
		pp.Seed += uint64(i)
		r, err := scorePrompt(ctx, s, emb, pp, ex[i])
		if err != nil {
			return fmt.Errorf("%s, prompt %s: %w", pt.Label, ex[i].ID, err)
		}
		out[i] = r
		pr.add(1, pt.Label)
		return nil
	})
	return out, err
}

// fill sets the row's results from its prompts' (out[i] is ex[i]'s): the
// runs' aggregate, the means of the scores and their intervals. Prompts
// without a reference have no ROUGE or cosine; cosines only withGloVe.
func (row *Row) fill(out []promptResult, ex []dataset.Example, withGloVe bool) {
	var runs []hybrid.Result
	var r1, r2, rl, cos []float64
	var nllSum score.Result
	var nllNum, nllDen []float64
	for i, r := range out {
		runs = append(runs, r.run)
		row.Outputs = append(row.Outputs, r.run.Text)
		if ex[i].Reference != "" {
			r1, r2, rl = append(r1, r.rouge.Rouge1.F1), append(r2, r.rouge.Rouge2.F1), append(rl, r.rouge.RougeL.F1)
			if withGloVe {
				cos = append(cos, r.cosine)
			}
		}
		if r.nll.Tokens > 0 {
			nllSum.Add(r.nll)
			nllNum, nllDen = append(nllNum, r.nll.Sum), append(nllDen, float64(r.nll.Tokens))
		}
	}
	row.Summary = hybrid.Aggregate(runs).Result
	row.Summary.Tokens, row.Summary.Text = nil, "" // kept per run in Outputs
	row.Rouge1, row.Rouge2, row.RougeL = meanOf(r1), meanOf(r2), meanOf(rl)
	row.Cosine = meanOf(cos)
	row.NLL = math.NaN()
	if nllSum.Tokens > 0 {
		row.NLL = nllSum.Mean()
	}
	row.Runs, row.PerPrompt = runs, map[string][]float64{"rouge1": r1, "rouge2": r2, "rougeL": rl, "cosine": cos}
	row.CI = rowCI(runs, row.PerPrompt, nllNum, nllDen)
}

// effective is what a point runs: its method and the overrides that its
// method reads, in the point's order.
func effective(p hybrid.Params, pt Point) string {
	key := pt.Method
	for _, kv := range pt.Sets {
		if k, _, _ := strings.Cut(kv, "="); !p.Inert(k) {
			key += " " + kv
		}
	}
	return key
}

// promptResult is one prompt's run and scores.
type promptResult struct {
	run    hybrid.Result
	rouge  metrics.RougeScores
	cosine float64
	nll    score.Result
}

// scorePrompt simulates one prompt and scores its output.
// A dataset prompt longer than the context is cut to BOS and its last
// tokens (fit_prompt; the papers' QA passages exceed small models'
// contexts), as the NLL below scores it.
func scorePrompt(ctx context.Context, s Setup, emb *metrics.Embeddings, p hybrid.Params, e dataset.Example) (promptResult, error) {
	var out promptResult
	p.FitPrompt = true
	if s.Ran != nil {
		s.Ran.Add(p.Method)
	}
	r, err := sim.One(ctx, s.Models, p, e.Prompt, nil)
	if err != nil {
		return out, err
	}
	r.WallSeconds, r.WallTPS = 0, 0 // results files must be reproducible
	out.run = r
	if e.Reference != "" {
		out.rouge = metrics.Rouge(r.Text, e.Reference)
		if emb != nil {
			out.cosine = emb.Cosine(r.Text, e.Reference)
		}
	}
	if s.NLL && len(r.Tokens) > 0 {
		ids, err := sim.PromptIDs(s.Models, e.Prompt, p.MaxTokens)
		if err != nil {
			return out, err
		}
		if out.nll, err = score.Continuation(s.Models.LLM, ids, r.Tokens); err != nil {
			return out, err
		}
	}
	return out, nil
}

// forEach calls fn(0…n−1) on up to workers goroutines (0: GOMAXPROCS) and
// returns the first error; it stops handing out work after an error or
// when ctx is done.
func forEach(ctx context.Context, n, workers int, fn func(i int) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	var (
		next     atomic.Int64
		firstErr error
		once     sync.Once
		wg       sync.WaitGroup
	)
	fail := func(err error) { once.Do(func() { firstErr = err }) }
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := ctx.Err(); err != nil {
					fail(err)
					return
				}
				if err := fn(i); err != nil {
					fail(err)
					next.Store(int64(n)) // stop handing out work
					return
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// ratioColumns are the pooled rates of a row: Σ num / Σ den over its
// prompts' runs (as hybrid.Aggregate computes them).
var ratioColumns = map[string]func(r hybrid.Result) (num, den float64){
	"throughput_tps":    func(r hybrid.Result) (float64, float64) { return float64(len(r.Tokens)), r.VirtualSeconds },
	"transmission_rate": func(r hybrid.Result) (float64, float64) { return float64(r.Uploads), float64(r.Rounds) },
	"true_skip_rate":    func(r hybrid.Result) (float64, float64) { return weighted(r.TrueSkipRate, r.SkipChecks) },
	"rejection_rate": func(r hybrid.Result) (float64, float64) {
		return float64(r.Resampled), float64(r.Accepted + r.Resampled)
	},
	"resampling_rate":       func(r hybrid.Result) (float64, float64) { return float64(r.Resampled), float64(r.Uploads) },
	"accepted_per_round":    func(r hybrid.Result) (float64, float64) { return float64(r.Accepted), float64(r.Uploads) },
	"uplink_bits_per_token": func(r hybrid.Result) (float64, float64) { return float64(r.UplinkBits), float64(len(r.Tokens)) },
	"energy_per_token":      func(r hybrid.Result) (float64, float64) { return r.Energy, float64(len(r.Tokens)) },
	"mean_deviation":        func(r hybrid.Result) (float64, float64) { return weighted(r.MeanDeviation, r.Drafted) },
	"mean_entropy":          func(r hybrid.Result) (float64, float64) { return weighted(r.MeanEntropy, r.EntropyTokens) },
	"compression_ratio": func(r hybrid.Result) (float64, float64) {
		if r.CompressionRatio == nil || *r.CompressionRatio <= 0 {
			return 0, 0
		}
		return float64(r.CodecBits), float64(r.CodecBits) / *r.CompressionRatio
	},
	"slm_seconds_per_token":           perToken("slm_seconds_per_token"),
	"uplink_seconds_per_token":        perToken("uplink_seconds_per_token"),
	"llm_seconds_per_token":           perToken("llm_seconds_per_token"),
	"downlink_seconds_per_token":      perToken("downlink_seconds_per_token"),
	"communication_seconds_per_token": perToken("communication_seconds_per_token"),
}

// timeParts are the parts of a run's virtual time behind the
// _seconds_per_token columns.
var timeParts = map[string]func(r hybrid.Result) float64{
	"slm_seconds_per_token":           func(r hybrid.Result) float64 { return r.SLMSeconds },
	"uplink_seconds_per_token":        func(r hybrid.Result) float64 { return r.UplinkSeconds },
	"llm_seconds_per_token":           func(r hybrid.Result) float64 { return r.LLMSeconds },
	"downlink_seconds_per_token":      func(r hybrid.Result) float64 { return r.DownlinkSeconds },
	"communication_seconds_per_token": func(r hybrid.Result) float64 { return r.UplinkSeconds + r.DownlinkSeconds },
}

// perToken is the ratio column of a part of the virtual time per committed
// token.
func perToken(col string) func(r hybrid.Result) (float64, float64) {
	part := timeParts[col]
	return func(r hybrid.Result) (float64, float64) { return part(r), float64(len(r.Tokens)) }
}

// totalColumns are sums over the prompts.
var totalColumns = map[string]func(r hybrid.Result) float64{
	"virtual_seconds": func(r hybrid.Result) float64 { return r.VirtualSeconds },
	"downlink_bits":   func(r hybrid.Result) float64 { return float64(r.DownlinkBits) },
	"energy":          func(r hybrid.Result) float64 { return r.Energy },
}

func weighted(v *float64, w int) (float64, float64) {
	if v == nil {
		return 0, 0
	}
	return *v * float64(w), float64(w)
}

// rowCI computes Row.CI from the per-prompt runs, the per-prompt quality
// scores and the per-prompt NLL sums and token counts.
func rowCI(runs []hybrid.Result, means map[string][]float64, nllNum, nllDen []float64) map[string]float64 {
	ci := map[string]float64{}
	put := func(col string, h float64) {
		if !math.IsNaN(h) && !math.IsInf(h, 0) {
			ci[col] = h
		}
	}
	for col, f := range ratioColumns {
		num, den := make([]float64, len(runs)), make([]float64, len(runs))
		for i, r := range runs {
			num[i], den[i] = f(r)
		}
		_, h := metrics.RatioCI(num, den)
		put(col, h)
	}
	for col, f := range totalColumns {
		xs := make([]float64, len(runs))
		for i, r := range runs {
			xs[i] = f(r)
		}
		put(col, float64(len(xs))*metrics.CI95(xs))
	}
	for col, xs := range means {
		put(col, metrics.Summarize(xs).CI95)
	}
	if len(nllNum) > 0 {
		_, h := metrics.RatioCI(nllNum, nllDen)
		put("nll", h)
	}
	return ci
}

// meanOf is the mean of the finite values (NaN when there are none).
func meanOf(xs []float64) float64 {
	s := metrics.Summarize(xs)
	if s.N == 0 {
		return math.NaN()
	}
	return s.Mean
}

// Grid expands methods × the cartesian product of sweeps ("key=v1,v2,…",
// or "key=v1;v2;…" for values with commas: a sweep holding a ';' is split
// at its semicolons, and so is a sweep of a key whose values are lists,
// hybrid.Key.List: tree_shape, whose "3,2,1" is one shape).
func Grid(methods []string, sweeps []string) ([]Point, error) {
	type axis struct {
		key  string
		vals []string
	}
	var axes []axis
	for _, s := range sweeps {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("sweep %q: want key=v1,v2,…", s)
		}
		k = strings.TrimSpace(k)
		for _, a := range axes {
			if a.key == k {
				return nil, fmt.Errorf("sweep %s given twice: give all its values in one --sweep %s=v1,v2,…", k, k)
			}
		}
		sep := ","
		if key, ok := hybrid.LookupKey(k); strings.Contains(v, ";") || ok && key.List {
			sep = ";"
		}
		vals := strings.Split(v, sep)
		seen := map[string]bool{}
		for _, x := range vals {
			x = strings.TrimSpace(x)
			if seen[x] {
				return nil, fmt.Errorf("sweep %s: value %q given twice", k, x)
			}
			seen[x] = true
		}
		axes = append(axes, axis{k, vals})
	}
	var points []Point
	var rec func(i int, sets []string)
	for _, m := range methods {
		m = strings.TrimSpace(m)
		rec = func(i int, sets []string) {
			if i == len(axes) {
				label := m
				if len(sets) > 0 {
					label += " " + strings.Join(sets, " ")
				}
				points = append(points, Point{Label: label, Method: m, Sets: append([]string(nil), sets...)})
				return
			}
			for _, v := range axes[i].vals {
				rec(i+1, append(sets, axes[i].key+"="+strings.TrimSpace(v)))
			}
		}
		rec(0, nil)
	}
	return points, nil
}
