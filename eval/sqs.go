package eval

import (
	"context"
	"fmt"
	"slices"

	"github.com/hlmproject/hlm/hybrid"
)

// The SQS rerun (SQS Sec. 4 and Appendix A.4): K-SQS and C-SQS with the
// bit budget B deciding every batch (no draft-count cap: batch_max = 0,
// the default), over the temperatures of the paper and several seeds.
// sqs.go runs the grid; sqs_figs.go draws Figs. 2, 4, 5 and 6 and the
// paired crossover; sqs_tables.go makes the per-batch tables and the terms
// of Theorems 1 and 2.

// sqsVariant is one configuration of the grid.
type sqsVariant struct {
	label  string
	method string
	sets   []string
	kind   string  // "k": K-SQS; "c": C-SQS (η > 0); "c0": C-SQS with η = 0
	x      float64 // K of K-SQS, β₁ of C-SQS
}

// sqsScale is how big the rerun is: the full one, or the quick one the
// tests run (PaperConfig.Quick).
type sqsScale struct {
	temps []float64
	seeds []uint64
	n     int       // prompts per point
	ks    []int     // K of K-SQS (Fig. 4 left)
	betas []float64 // β₁ of C-SQS (Fig. 4 right, Fig. 5)
}

// The C-SQS learning rate and target of SQS Sec. 4.
const (
	sqsEta   = 0.001
	sqsAlpha = 0.0005
)

func (p *paper) sqsScale() sqsScale {
	s := sqsScale{temps: []float64{0, 0.2, 0.4, 0.6, 0.8, 1}, n: p.cfg.NCurve,
		ks: []int{2, 4, 8, 16, 32}, betas: []float64{0.0005, 0.001, 0.005, 0.01, 0.05}}
	for i := range 3 {
		s.seeds = append(s.seeds, p.cfg.Seed+uint64(1000*i))
	}
	if p.cfg.Quick {
		s.temps, s.n, s.ks, s.betas = []float64{0, 1}, 3, []int{4, 16}, []float64{0.001, 0.01}
		s.seeds = s.seeds[:2]
	}
	return s
}

// fig5 are the β₁ of the scale run with η = 0 too: fig5Betas among betas.
func (s sqsScale) fig5() []float64 {
	var out []float64
	for _, b := range s.betas {
		if slices.Contains(fig5Betas, b) {
			out = append(out, b)
		}
	}
	return out
}

// fig5Betas are the β₁ of Fig. 5's non-adaptive C-SQS (η = 0).
var fig5Betas = []float64{0.001, 0.01, 0.05}

// variants are the grid's configurations: K-SQS for every K, C-SQS with
// η = 0.001 for every β₁ and with η = 0 for those of fig5Betas.
func (s sqsScale) variants() []sqsVariant {
	var vs []sqsVariant
	for _, k := range s.ks {
		vs = append(vs, sqsVariant{fmt.Sprintf("K-SQS K=%d", k), hybrid.KSQS, []string{fmt.Sprintf("sqs_k=%d", k)}, "k", float64(k)})
	}
	for _, b := range s.betas {
		vs = append(vs, sqsVariant{fmt.Sprintf("C-SQS β₁=%g", b), hybrid.CSQS, []string{fmt.Sprintf("conf_beta=%g", b)}, "c", b})
	}
	for _, b := range s.betas {
		if slices.Contains(fig5Betas, b) {
			vs = append(vs, sqsVariant{fmt.Sprintf("C-SQS β₁=%g η=0", b), hybrid.CSQS, []string{fmt.Sprintf("conf_beta=%g", b), "conf_eta=0"}, "c0", b})
		}
	}
	return vs
}

// sqsCell is one (variant, temperature) pooled over the seeds: the runs of
// every seed and prompt, seed-major, in the same order in every cell, so
// that two cells can be compared prompt by prompt.
type sqsCell struct {
	v    sqsVariant
	temp float64
	rows []Row // one per seed
	runs []hybrid.Result
}

// sqsGrid holds the cells by variant label and temperature index.
type sqsGrid struct {
	scale sqsScale
	ell   int // lattice resolution ℓ
	vs    []sqsVariant
	cells map[string][]*sqsCell
}

func (g *sqsGrid) cell(label string, ti int) *sqsCell { return g.cells[label][ti] }

// sqs reruns SQS Figs. 2, 4, 5 and 6 with the budget deciding the batch,
// and tabulates the batches and the terms of Theorems 1 and 2.
func (p *paper) sqs(ctx context.Context) error {
	p.header("K-SQS / C-SQS rerun", "Bhattacharjee et al., *Conformal Sparsification for Bandwidth-Efficient Edge-Cloud Speculative Decoding* (SQS)")
	base := p.setup.Base
	if err := base.SetAll([]string{"channel=fixed", "rate_bps=1e6", "budget_bits=5000", "ell=100", "batch_max=0",
		fmt.Sprintf("conf_eta=%g", sqsEta), fmt.Sprintf("conf_alpha=%g", sqsAlpha)}); err != nil {
		return err
	}
	// Both methods are lossless (the output follows the LLM whatever the
	// draft), so the rerun measures time and rejections only.
	p.setup.GloVe, p.setup.NLL = nil, false
	g, err := p.sqsRuns(ctx, base)
	if err != nil {
		return err
	}
	p.sqsSetting(g, base)
	for _, f := range []func(*sqsGrid) error{p.sqsFig2, p.sqsCrossover, p.sqsFig4, p.sqsFig5, p.sqsFig6, p.sqsBatchTables, p.sqsTheorem1, p.sqsTheorem2} {
		if err := f(g); err != nil {
			return err
		}
	}
	return nil
}

// sqsRuns evaluates every variant at every temperature and seed on the
// same prompts (one results file, runs.csv/json, a row per seed).
func (p *paper) sqsRuns(ctx context.Context, base hybrid.Params) (*sqsGrid, error) {
	sc := p.sqsScale()
	g := &sqsGrid{scale: sc, ell: base.Ell, vs: sc.variants(), cells: map[string][]*sqsCell{}}
	var pts []Point
	for _, v := range g.vs {
		for _, t := range sc.temps {
			for _, s := range sc.seeds {
				sets := append(append([]string(nil), v.sets...), fmt.Sprintf("temperature=%g", t), fmt.Sprintf("seed=%d", s))
				pts = append(pts, Point{Label: v.label, Method: v.method, Sets: sets})
			}
		}
	}
	rows, err := p.run(ctx, "runs", "tinystories", sc.n, base, pts)
	if err != nil {
		return nil, err
	}
	// The dataset may hold fewer prompts than asked (TinyStories: 19):
	// the setting's text and the seed and prompt of each batch in
	// batches.csv count the prompts that ran.
	if len(rows) > 0 {
		g.scale.n = len(rows[0].Runs)
	}
	for _, r := range rows {
		if len(r.Runs) != g.scale.n {
			return nil, fmt.Errorf("sqs: %s ran %d prompts, another point %d", r.Label, len(r.Runs), g.scale.n)
		}
	}
	i := 0
	for _, v := range g.vs {
		for _, t := range sc.temps {
			c := &sqsCell{v: v, temp: t}
			for range sc.seeds {
				c.rows = append(c.rows, rows[i])
				c.runs = append(c.runs, rows[i].Runs...)
				i++
			}
			g.cells[v.label] = append(g.cells[v.label], c)
		}
	}
	return g, nil
}

// sqsSetting states the setting, the seeds and what bounds a batch.
func (p *paper) sqsSetting(g *sqsGrid, base hybrid.Params) {
	sc := g.scale
	p.doc.P("Setting (SQS Sec. 4): B = %d bits per batch, ℓ = %d, C-SQS η = %g and α = %g, a fixed %g Mbit/s uplink (the paper gives no rate), τ_SLM = %g ms, τ_LLM = %g ms, %d new tokens per prompt. "+
		"TinyStories continuations stand in for LM1B. **No draft-count cap** (batch_max = 0): each batch drafts until the next draft's bits would exceed B (L^t = max{L : Σ b_n ≤ B}, filled sequentially) or until the tokens left to generate run out; the tables below give the share of batches that B ended. "+
		"Temperatures %v; seeds %v (prompt i of seed s runs with seed s+i); %d prompts per point, so every mean pools %d runs, and its ± is the half-width of the 95%% interval with runs as units (Student's t; rates by the ratio-of-sums linearization). "+
		"K-SQS K ∈ %v; C-SQS β₁ ∈ %v with η = %g, and with η = 0 (a fixed threshold, Fig. 5) for β₁ ∈ %v. "+
		"Comparisons between two methods are paired (same prompt and seed): the difference of the latencies, run by run, with its own interval. Both methods are lossless, so no quality scores are computed.",
		base.Budget, base.Ell, sqsEta, sqsAlpha, base.Channel.RateBps/1e6, base.TauSLM*1000, base.TauLLM*1000, base.MaxTokens,
		list(sc.temps), list(sc.seeds), sc.n, sc.n*len(sc.seeds), list(sc.ks), list(sc.betas), sqsEta, list(sc.fig5()))
}
