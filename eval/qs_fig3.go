package eval

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/hlmproject/hlm/codec"
	"github.com/hlmproject/hlm/dataset"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/internal/words"
	"github.com/hlmproject/hlm/metrics"
	"github.com/hlmproject/hlm/report"
	"github.com/hlmproject/hlm/sim"
)

// qsPaperVocab is the vocabulary of the Q-S paper's OPT models.
const qsPaperVocab = 50272

// qsGenSeed offsets the seeds of the generated stories from every other
// run's (training, tuning and evaluation seeds are small).
const qsGenSeed = 1 << 40

// qsExamples generates the rerun's prompts: stories the LLM writes alone
// from BOS (temperature 1, seeds qsGenSeed + i), whitespace runs made one
// space, each split after its first sentence into a prompt and the rest as
// the reference. Stories whose first sentence has fewer than 3 words or
// whose rest has fewer than 10 are passed over; the first n that qualify
// are kept (at most 4n are tried).
func (p *paper) qsExamples(ctx context.Context, n int) ([]dataset.Example, error) {
	gp := p.setup.Base
	gp.Method, gp.Temperature, gp.MaxTokens = hybrid.LLM, 1, 2*p.cfg.MaxTokens+32
	var ex []dataset.Example
	for i := 0; len(ex) < n && i < 4*n; i++ {
		gp.Seed = p.cfg.Seed + qsGenSeed + uint64(i)
		r, err := sim.One(ctx, p.setup.Models, gp, "", nil)
		if err != nil {
			return nil, fmt.Errorf("generating story %d: %w", i, err)
		}
		text := strings.Join(strings.Fields(r.Text), " ") // one paragraph
		cut := strings.IndexAny(text, ".!?") + 1
		prompt, ref := text[:cut], strings.TrimSpace(text[cut:])
		if cut == 0 || len(strings.Fields(prompt)) < 3 || len(strings.Fields(ref)) < 10 {
			continue
		}
		ex = append(ex, dataset.Example{ID: fmt.Sprintf("gen#%d", i), Prompt: prompt, Reference: ref, Text: text})
	}
	if len(ex) < n {
		return nil, fmt.Errorf("only %d of %d generated stories have a first sentence and 10 more words", len(ex), n)
	}
	return ex, nil
}

// qsFig3 reruns Fig. 3: ROUGE-2 against the reference, per-token entropy,
// the exact deviation from the LLM and the NLL under it, vs temperature,
// for the LLM, the SLM, S-Q and Q-S, each prompt run fig3Seeds times.
func (p *paper) qsFig3(ctx context.Context, sc qsScale, ex []dataset.Example) error {
	var runs []dataset.Example
	for s := range sc.fig3Seeds {
		for _, e := range ex {
			e.ID = fmt.Sprintf("%s/%d", e.ID, s)
			runs = append(runs, e)
		}
	}
	base := p.setup.Base
	if err := base.SetAll(append(append([]string{"entropy=true"}, qsRegimes[0].sets...), qsTimings[0].sets()...)); err != nil {
		return err
	}
	labels := []string{"LLM", "SLM", "S-Q", "Q-S"}
	var pts []Point
	for _, t := range sc.temps {
		for _, v := range []Point{{"LLM", hybrid.LLM, nil}, {"SLM", hybrid.SLM, nil}, {"S-Q", hybrid.SQ, []string{"l=4", "ell=100"}}, {"Q-S", hybrid.QS, []string{"l=4", "ell=100"}}} {
			pts = append(pts, Point{Label: v.Label, Method: v.Method, Sets: append(v.Sets, fmt.Sprintf("temperature=%g", t))})
		}
	}
	rows, err := p.runEx(ctx, "fig3", runs, base, pts, true)
	if err != nil {
		return err
	}
	p.doc.H(2, "Fig. 3: quality and entropy vs temperature")
	p.doc.P("The paper summarizes CNN/DailyMail with OPT-125M/OPT-13B. Neither pair here can summarize (both are TinyStories models, trained on children's stories only, with no summary or instruction data), ../shared/data holds no summarization set, and CNN/DailyMail's articles cannot be shipped (news text under the publishers' copyright). "+
		"So Fig. 3 is rerun on what these models do — continue a story — with references generated here, licence-clean and reproducible from the command alone: %d stories the LLM writes from BOS (temperature 1, seeds 2^40 + i), each cut after its first sentence; the first sentence is the prompt, the rest the reference. "+
		"Each prompt runs %s (%d runs per point; S-Q and Q-S at L = 4, ℓ = 100; the quality of every Q-S variant is the same distribution, Prop. 1). "+
		"Entropy is the mean Shannon entropy (nats) of the exact distribution each committed token followed (for Q-S the LLM's — by construction, Prop. 1 —, for S-Q speculative sampling's output distribution with the SLM's draft and the quantized verification, for the SLM its own).", len(ex), words.Times(sc.fig3Seeds), len(runs))
	g := groupRows(rows)
	for _, f := range []struct{ name, col, title, y string }{
		{"fig3_rouge2", "rouge2", "ROUGE-2 against the reference (Q-S Fig. 3a)", "ROUGE-2 F1"},
		{"fig3_entropy", "mean_entropy", "Per-token Shannon entropy (Q-S Fig. 3b)", "entropy (nats/token)"},
		{"fig3_deviation", "mean_deviation", "Exact L1 deviation of the output distribution from the LLM's", "mean L1 deviation"},
	} {
		lp := &report.LinePlot{Title: f.title, XLabel: "temperature", YLabel: f.y}
		for _, l := range labels {
			lp.Series = append(lp.Series, Curve(l, g[l], qsTemp, f.col))
		}
		if err := p.doc.Plot(f.name, f.title, lp); err != nil {
			return err
		}
	}
	if err := p.doc.Table("fig3_table", Table("", rows, []string{"label", "sets", "rouge2", "mean_entropy", "nll", "mean_deviation"})); err != nil {
		return err
	}
	return p.qsFig3Paired(g)
}

// qsFig3Paired tabulates S-Q's and Q-S's ROUGE-2 and entropy minus the
// LLM's on the same prompts and seeds.
func (p *paper) qsFig3Paired(g map[string][]Row) error {
	t := &report.Table{Columns: []string{"T", "S-Q − LLM ROUGE-2", "Q-S − LLM ROUGE-2", "S-Q − LLM entropy", "Q-S − LLM entropy", "S-Q deviation", "Q-S deviation"}}
	for i, llm := range g["LLM"] {
		sq, qs := g["S-Q"][i], g["Q-S"][i]
		cell := func(d []float64) string { s := metrics.Summarize(d); return PM(s.Mean, s.CI95, 3) }
		t.AddRow(report.Float(qsTemp(llm), 2), cell(paired(sq.PerPrompt["rouge2"], llm.PerPrompt["rouge2"])), cell(paired(qs.PerPrompt["rouge2"], llm.PerPrompt["rouge2"])),
			cell(pairedEntropy(sq, llm)), cell(pairedEntropy(qs, llm)), sq.PM("mean_deviation", 3), qs.PM("mean_deviation", 3))
	}
	p.doc.P("Differences from the LLM on the same prompt and seed (mean ± 95%% half-width over runs; each run weighs alike, where the table above pools the tokens of all runs, so the two agree when every run has as many tokens, and differ a little when some end early). Q-S's deviation is 0 up to rounding by construction (OutputDist(q̂, q̂, y) = y, Prop. 1): it is a check of the code, not evidence.")
	return p.doc.Table("fig3_paired", t)
}

// paired is a − b element-wise over their common length.
func paired(a, b []float64) []float64 {
	out := make([]float64, 0, len(a))
	for i := range a {
		if i < len(b) {
			out = append(out, a[i]-b[i])
		}
	}
	return out
}

// pairedEntropy is the per-run mean entropy of a minus b's.
func pairedEntropy(a, b Row) []float64 {
	ent := func(r Row) []float64 {
		out := make([]float64, len(r.Runs))
		for i, x := range r.Runs {
			out[i] = math.NaN()
			if x.MeanEntropy != nil {
				out[i] = *x.MeanEntropy
			}
		}
		return out
	}
	return paired(ent(a), ent(b))
}

// qsRateSweep runs Q-S over a fixed uplink rate from 16 kbit/s to 16 Mbit/s
// at temperature 1 under both timings: where does the link start to matter?
func (p *paper) qsRateSweep(ctx context.Context, sc qsScale, ex []dataset.Example) error {
	ex = ex[:max(1, len(ex)/2)]
	variants := []Point{{"LLM", hybrid.LLM, nil}, {"Q-S static L=4 ℓ=100", hybrid.QS, []string{"l=4", "ell=100"}},
		{"Q-S static L=4 ℓ=20", hybrid.QS, []string{"l=4", "ell=20"}}, {"Q-S heuristic ℓ=100", hybrid.QS, []string{"draft=heuristic", "l=4", "l_min=1", "l_max=16", "ell=100"}}}
	p.doc.H(2, "Where the link starts to matter: a rate sweep")
	p.doc.P("A fixed uplink rate, temperature 1, %d of the prompts, both timings. A Q-S draft costs ⌈log2 V⌉ + b bits (eq. 6–7): here V = %d, so ℓ = 100 costs %d bits and ℓ = 20 %d; with the paper's OPT vocabulary (V = %d) ℓ = 100 costs %d. "+
		"The paper's 350 kbit/s therefore spends as long per draft on the uplink as %.0f kbit/s does here, and its 4 Mbit/s as %.2f Mbit/s.",
		len(ex), p.vocab(), qsDraftBits(p.vocab(), 100), qsDraftBits(p.vocab(), 20), qsPaperVocab, qsDraftBits(qsPaperVocab, 100),
		350*qsRatio(p.vocab()), 4*qsRatio(p.vocab()))
	t := &report.Table{Columns: []string{"timing", "rate (kbit/s)", "LLM", "Q-S L=4 ℓ=100", "uplink share", "Q-S L=4 ℓ=20", "Q-S heuristic"}}
	for _, tm := range qsTimings {
		base := p.setup.Base
		if err := base.SetAll(append([]string{"channel=fixed", "temperature=1"}, tm.sets()...)); err != nil {
			return err
		}
		var pts []Point
		for _, r := range sc.rates {
			for _, v := range variants {
				pts = append(pts, Point{Label: v.Label, Method: v.Method, Sets: append(v.Sets, fmt.Sprintf("rate_bps=%g", r))})
			}
		}
		rows, err := p.runEx(ctx, "rate_"+tm.name, ex, base, pts, false)
		if err != nil {
			return err
		}
		if err := p.qsRatePlot(tm, rows, variants, t); err != nil {
			return err
		}
	}
	return p.doc.Table("rate_sweep", t)
}

// qsRatePlot plots one timing's sweep, adds its rows to t and says where
// Q-S static loses 5% of its throughput to the link.
func (p *paper) qsRatePlot(tm qsTiming, rows []Row, variants []Point, t *report.Table) error {
	g := groupRows(rows)
	x := func(r Row) float64 { return math.Log10(SetValue(r, "rate_bps")) }
	lp := &report.LinePlot{Title: tm.title + ", T = 1", XLabel: "log10 uplink rate (bit/s)", YLabel: "token throughput (tokens/s, virtual)", Legend: "bottom-right"}
	for _, v := range variants {
		lp.Series = append(lp.Series, Curve(v.Label, g[v.Label], x, "throughput_tps"))
	}
	qs := g[variants[1].Label]
	top := qs[len(qs)-1].Summary.ThroughputTPS
	knee := math.NaN()
	for i, r := range qs {
		share := r.Value("uplink_seconds_per_token") * r.Value("throughput_tps")
		t.AddRow(tm.name, report.Float(SetValue(r, "rate_bps")/1000, 0), g["LLM"][i].PM("throughput_tps", 4), r.PM("throughput_tps", 4), pct(share),
			g[variants[2].Label][i].PM("throughput_tps", 4), g[variants[3].Label][i].PM("throughput_tps", 4))
		if math.IsNaN(knee) && r.Summary.ThroughputTPS >= 0.95*top {
			knee = SetValue(r, "rate_bps")
		}
	}
	p.doc.P("%s: Q-S static (L = 4, ℓ = 100) is within 5%% of its throughput at %s from %s up; below that the link costs more.", tm.title, rateWords(SetValue(qs[len(qs)-1], "rate_bps")), rateWords(knee))
	return p.doc.Plot("rate_"+tm.name, "Throughput vs uplink rate, "+tm.title, lp)
}

// vocab is the pair's vocabulary size.
func (p *paper) vocab() int { return p.setup.Models.LLM.Config().Vocab }

// qsDraftBits is the uplink cost of one Q-S draft at resolution ℓ over a
// vocabulary of v: the token id and the lattice index (Q-S eq. 6–7).
func qsDraftBits(v, ell int) int {
	b, err := codec.Lattice{L: ell}.Bits(v)
	if err != nil {
		return 0
	}
	return b + int(math.Ceil(math.Log2(float64(v))))
}

// qsRatio is how much less a draft costs here than with the paper's
// vocabulary at ℓ = 100.
func qsRatio(v int) float64 {
	return float64(qsDraftBits(v, 100)) / float64(qsDraftBits(qsPaperVocab, 100))
}
