package eval

import (
	"fmt"
	"math"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/metrics"
	"github.com/hlmproject/hlm/report"
)

// sqsBatchStats summarizes the batches of a cell (every run's
// Result.Batches). Draft statistics are over every draft sent; the terms of
// SQS Theorem 1 are over the examined drafts (accepted, or the rejected
// one), summed per batch.
type sqsBatchStats struct {
	batches          int
	l, lMin, lMax    float64 // L^t
	budgetEnd        float64 // share of batches that B ended
	bits             float64 // Σ b_n per batch
	accepted         float64 // T^t per batch
	k, kMin, kMax    float64 // K_n
	dropped          float64 // α_n per draft
	rej              float64 // N_rej per batch (measured)
	tvHat, tv, alpha float64 // Σ TV(q̂,p), Σ TV(q,p), Σ α_n per batch
	lattice          float64 // Σ K_n/(4ℓ) per batch
	// gap is the mean over batches of N_rej − Σ TV(q̂,p) (the martingale
	// difference of SQS eq. 15: mean 0, uncorrelated across batches) and
	// gapH its 95% half-width.
	gap, gapH float64
}

func (c *sqsCell) batchStats(ell int) sqsBatchStats {
	s := sqsBatchStats{lMin: math.Inf(1), kMin: math.Inf(1)}
	drafts := 0
	var gaps []float64
	for _, r := range c.runs {
		for _, b := range r.Batches {
			s.batches++
			gap := 0.0
			s.l += float64(b.L)
			s.lMin, s.lMax = math.Min(s.lMin, float64(b.L)), math.Max(s.lMax, float64(b.L))
			s.bits += float64(b.Bits)
			s.accepted += float64(b.Accepted)
			if b.BudgetEnd {
				s.budgetEnd++
			}
			if b.Resampled {
				s.rej++
				gap = 1
			}
			for _, d := range b.Drafts {
				drafts++
				s.k += float64(d.K)
				s.kMin, s.kMax = math.Min(s.kMin, float64(d.K)), math.Max(s.kMax, float64(d.K))
				s.dropped += d.Dropped
				if d.Examined {
					gap -= d.TVHat
					s.tvHat += d.TVHat
					s.tv += d.TV
					s.alpha += d.Dropped
					s.lattice += float64(d.K) / (4 * float64(ell))
				}
			}
			gaps = append(gaps, gap)
		}
	}
	s.gap, s.gapH = metrics.Mean(gaps), metrics.CI95(gaps)
	n := float64(s.batches)
	for _, x := range []*float64{&s.l, &s.budgetEnd, &s.bits, &s.accepted, &s.rej, &s.tvHat, &s.tv, &s.alpha, &s.lattice} {
		*x /= n
	}
	s.k /= float64(drafts)
	s.dropped /= float64(drafts)
	return s
}

// sqsBatchTables are the per-batch tables: a summary per variant and
// temperature, every batch in batches.csv, and the first prompt's batches
// of two variants in the report.
func (p *paper) sqsBatchTables(g *sqsGrid) error {
	p.doc.H(2, "Batches: L^t, support size K_n and dropped mass")
	p.doc.P("Per variant and temperature, over all runs: L^t is the number of drafts of a batch (mean [min–max]); *ended by B* is the share of batches whose next draft would not have fitted the budget (the rest ran out of tokens to generate); K_n the support size of each draft; α_n the SLM's mass outside the support (SQS eq. 4). " +
		"C-SQS computes the distribution of the draft that does not fit (to learn its support size) and does not send it: one SLM pass per batch ended by B, which the virtual clock charges (one τ_SLM against the L^t·τ_SLM of the batch; `hlm sim` counts them as budget tests). K-SQS knows its drafts' size beforehand and computes no such pass. Every batch of every run is in batches.csv.")
	t := &report.Table{Columns: []string{"variant", "T", "batches", "L^t", "ended by B", "bits/batch", "T^t (accepted)", "K_n", "α_n (mean)"}}
	for _, v := range g.vs {
		for ti, temp := range g.scale.temps {
			s := g.cell(v.label, ti).batchStats(g.ell)
			t.AddRow(v.label, report.Float(temp, 1), fmt.Sprint(s.batches), fmt.Sprintf("%.1f [%g–%g]", s.l, s.lMin, s.lMax), fmt.Sprintf("%.0f%%", 100*s.budgetEnd),
				report.Float(s.bits, 0), report.Float(s.accepted, 2), fmt.Sprintf("%.1f [%g–%g]", s.k, s.kMin, s.kMax), sci(s.dropped))
		}
	}
	if err := p.doc.Table("batches_summary", t); err != nil {
		return err
	}
	if err := p.writeBatches(g); err != nil {
		return err
	}
	return p.batchExcerpt(g)
}

// batchColumns are the columns of batches.csv and of the excerpt.
var batchColumns = []string{"variant", "T", "seed", "prompt", "batch", "L^t", "bits", "ended by B", "T^t", "resampled", "β after", "K_n (mean)", "α_n (mean)", "Σ TV(q̂,p) examined"}

// batchRow is one batch as a table row.
func batchRow(c *sqsCell, seed uint64, prompt, t int, b hybrid.Batch) []string {
	var k, a, tvh float64
	for _, d := range b.Drafts {
		k += float64(d.K)
		a += d.Dropped
		if d.Examined {
			tvh += d.TVHat
		}
	}
	n := float64(len(b.Drafts))
	return []string{c.v.label, report.Float(c.temp, 1), fmt.Sprint(seed), fmt.Sprint(prompt), fmt.Sprint(t), fmt.Sprint(b.L), fmt.Sprint(b.Bits),
		fmt.Sprint(b.BudgetEnd), fmt.Sprint(b.Accepted), fmt.Sprint(b.Resampled), sci(b.Beta), report.Float(k/n, 1), sci(a / n), report.Float(tvh, 3)}
}

// writeBatches writes every batch of every run to batches.csv.
func (p *paper) writeBatches(g *sqsGrid) error {
	t := &report.Table{Columns: batchColumns}
	for _, v := range g.vs {
		for ti := range g.scale.temps {
			c := g.cell(v.label, ti)
			for i, r := range c.runs {
				for j, b := range r.Batches {
					t.AddRow(batchRow(c, g.scale.seeds[i/g.scale.n], i%g.scale.n, j+1, b)...)
				}
			}
		}
	}
	return writeCSV(p.cfg.Out+"/batches.csv", t)
}

// batchExcerpt shows the batches of the first prompt (first seed) for the
// smallest and largest K and β₁ at the lowest and highest temperature.
func (p *paper) batchExcerpt(g *sqsGrid) error {
	t := &report.Table{Columns: batchColumns}
	ks, cs := g.labels("k", nil), g.labels("c", nil)
	last := len(g.scale.temps) - 1
	for _, l := range []string{ks[len(ks)/2], cs[1%len(cs)]} {
		for _, ti := range []int{0, last} {
			c := g.cell(l, ti)
			for j, b := range c.runs[0].Batches {
				t.AddRow(batchRow(c, g.scale.seeds[0], 0, j+1, b)...)
			}
		}
	}
	p.doc.P("The batches of the first prompt (seed %d) for two variants at T = %g and T = %g:", g.scale.seeds[0], g.scale.temps[0], g.scale.temps[last])
	return p.doc.Table("", t)
}
