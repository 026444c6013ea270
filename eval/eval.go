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
	"strings"

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
	total := len(points) * len(ex)
	done := 0
	var rows []Row
	for _, pt := range points {
		p := s.Base
		p.Method = pt.Method
		if err := p.SetAll(pt.Sets); err != nil {
			return nil, fmt.Errorf("%s: %w", pt.Label, err)
		}
		if err := p.Validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", pt.Label, err)
		}
		row := Row{Point: pt, Dataset: name, Prompts: len(ex)}
		var runs []hybrid.Result
		var r1, r2, rl, cos []float64
		var nllSum score.Result
		var nllNum, nllDen []float64
		for i, e := range ex {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			pp := p
			pp.Seed += uint64(i)
			r, err := sim.One(ctx, s.Models, pp, e.Prompt, nil)
			if err != nil {
				return nil, fmt.Errorf("%s, prompt %s: %w", pt.Label, e.ID, err)
			}
			r.WallSeconds, r.WallTPS = 0, 0 // results files must be reproducible
			runs = append(runs, r)
			row.Outputs = append(row.Outputs, r.Text)
			if e.Reference != "" {
				sc := metrics.Rouge(r.Text, e.Reference)
				r1 = append(r1, sc.Rouge1.F1)
				r2 = append(r2, sc.Rouge2.F1)
				rl = append(rl, sc.RougeL.F1)
				if emb != nil {
					cos = append(cos, emb.Cosine(r.Text, e.Reference))
				}
			}
			if s.NLL && len(r.Tokens) > 0 {
				ids, err := sim.PromptIDs(s.Models, e.Prompt, pp.MaxTokens)
				if err != nil {
					return nil, err
				}
				sc, err := score.Continuation(s.Models.LLM, ids, r.Tokens)
				if err != nil {
					return nil, err
				}
				nllSum.Add(sc)
				nllNum, nllDen = append(nllNum, sc.Sum), append(nllDen, float64(sc.Tokens))
			}
			done++
			if s.Progress != nil {
				s.Progress(done, total, pt.Label)
			}
		}
		row.Summary = sim.Aggregate(runs).Result
		row.Summary.Tokens, row.Summary.Text = nil, "" // kept per run in Outputs
		row.Rouge1, row.Rouge2, row.RougeL = meanOf(r1), meanOf(r2), meanOf(rl)
		row.Cosine = meanOf(cos)
		row.NLL = math.NaN()
		if nllSum.Tokens > 0 {
			row.NLL = nllSum.Mean()
		}
		row.CI = rowCI(runs, map[string][]float64{"rouge1": r1, "rouge2": r2, "rougeL": rl, "cosine": cos}, nllNum, nllDen)
		rows = append(rows, row)
	}
	return rows, nil
}

// ratioColumns are the pooled rates of a row: Σ num / Σ den over its
// prompts' runs (as sim.Aggregate computes them).
var ratioColumns = map[string]func(r hybrid.Result) (num, den float64){
	"throughput_tps":    func(r hybrid.Result) (float64, float64) { return float64(len(r.Tokens)), r.VirtualSeconds },
	"transmission_rate": func(r hybrid.Result) (float64, float64) { return float64(r.Uploads), float64(r.Rounds) },
	"true_skip_rate":    func(r hybrid.Result) (float64, float64) { return weighted(r.TrueSkipRate, r.Skipped) },
	"rejection_rate": func(r hybrid.Result) (float64, float64) {
		return float64(r.Resampled), float64(r.Accepted + r.Resampled)
	},
	"resampling_rate":       func(r hybrid.Result) (float64, float64) { return float64(r.Resampled), float64(r.Uploads) },
	"accepted_per_round":    func(r hybrid.Result) (float64, float64) { return float64(r.Accepted), float64(r.Uploads) },
	"uplink_bits_per_token": func(r hybrid.Result) (float64, float64) { return float64(r.UplinkBits), float64(len(r.Tokens)) },
	"energy_per_token":      func(r hybrid.Result) (float64, float64) { return r.Energy, float64(len(r.Tokens)) },
	"mean_deviation":        func(r hybrid.Result) (float64, float64) { return weighted(r.MeanDeviation, r.Drafted) },
	"compression_ratio": func(r hybrid.Result) (float64, float64) {
		if r.CompressionRatio == nil || *r.CompressionRatio <= 0 {
			return 0, 0
		}
		return float64(r.CodecBits), float64(r.CodecBits) / *r.CompressionRatio
	},
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

// Grid expands methods × the cartesian product of sweeps ("key=v1,v2,…").
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
		axes = append(axes, axis{strings.TrimSpace(k), strings.Split(v, ",")})
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
