package eval

import (
	"fmt"
	"math"
	"slices"

	"github.com/hlmproject/hlm/metrics"
	"github.com/hlmproject/hlm/report"
)

// latency is the mean virtual seconds per prompt and its 95% half-width,
// runs as units.
func (c *sqsCell) latency() (float64, float64) {
	xs := make([]float64, len(c.runs))
	for i, r := range c.runs {
		xs[i] = r.VirtualSeconds
	}
	return metrics.Mean(xs), metrics.CI95(xs)
}

// resampling is SQS's resampling rate, N_rej per batch, pooled over the
// runs (ratio of sums, runs as clusters).
func (c *sqsCell) resampling() (float64, float64) {
	num, den := make([]float64, len(c.runs)), make([]float64, len(c.runs))
	for i, r := range c.runs {
		num[i], den[i] = float64(r.Resampled), float64(r.Uploads)
	}
	return metrics.RatioCI(num, den)
}

// pairedLatency is the mean of a's latency minus b's, run by run (same
// prompt and seed), and its 95% half-width.
func pairedLatency(a, b *sqsCell) (float64, float64) {
	d := make([]float64, len(a.runs))
	for i := range d {
		d[i] = a.runs[i].VirtualSeconds - b.runs[i].VirtualSeconds
	}
	return metrics.Mean(d), metrics.CI95(d)
}

// vsT is one variant's statistic against the temperature.
func (g *sqsGrid) vsT(label string, stat func(*sqsCell) (float64, float64)) report.Series {
	s := report.Series{Name: label}
	for ti, t := range g.scale.temps {
		y, h := stat(g.cell(label, ti))
		s.X, s.Y, s.YErr = append(s.X, t), append(s.Y, y), append(s.YErr, h)
	}
	return s
}

// labels are the variants of the given kinds whose x is in xs (all when
// xs is nil), in grid order.
func (g *sqsGrid) labels(kind string, xs []float64) []string {
	var out []string
	for _, v := range g.vs {
		if v.kind == kind && (xs == nil || slices.Contains(xs, v.x)) {
			out = append(out, v.label)
		}
	}
	return out
}

// latencyAndResampling draws a pair of plots against T for the labels.
func (p *paper) latencyAndResampling(g *sqsGrid, name, caption string, labels []string) error {
	lat := &report.LinePlot{Title: "latency per prompt", XLabel: "temperature T", YLabel: "virtual seconds per prompt", Legend: "top-left"}
	res := &report.LinePlot{Title: "resampling rate", XLabel: "temperature T", YLabel: "rejected-and-resampled tokens per batch", Legend: "top-left"}
	for _, l := range labels {
		lat.Series = append(lat.Series, g.vsT(l, (*sqsCell).latency))
		res.Series = append(res.Series, g.vsT(l, (*sqsCell).resampling))
	}
	if err := p.doc.Plot(name+"_latency", caption+": latency", lat); err != nil {
		return err
	}
	return p.doc.Plot(name+"_resampling", caption+": resampling rate", res)
}

// sqsFig2 is SQS Fig. 2: latency and resampling rate against T.
func (p *paper) sqsFig2(g *sqsGrid) error {
	p.doc.H(2, "Fig. 2: latency and resampling rate vs temperature")
	labels := append(g.labels("k", []float64{4, 8, 16}), g.labels("c", []float64{0.001, 0.01})...)
	if err := p.latencyAndResampling(g, "fig2", "SQS Fig. 2", labels); err != nil {
		return err
	}
	p.doc.P("%s", slmShareText(g))
	t := &report.Table{Columns: []string{"variant", "T", "latency (s/prompt)", "resampling rate (N_rej/batch)", "accepted/batch", "L^t", "SLM share", "uplink bits/token"}}
	for _, v := range g.vs {
		if v.kind == "c0" {
			continue
		}
		for ti, temp := range g.scale.temps {
			c := g.cell(v.label, ti)
			b := c.batchStats(g.ell)
			lat, latH := c.latency()
			res, resH := c.resampling()
			t.AddRow(v.label, report.Float(temp, 1), PM(lat, latH, 4), PM(res, resH, 3),
				report.Float(b.accepted, 2), report.Float(b.l, 1), fmt.Sprintf("%.0f%%", 100*slmShare(c)), report.Float(bitsPerToken(c), 1))
		}
	}
	return p.doc.Table("fig2_table", t)
}

// slmShareText explains the table's SLM share with this run's own batch
// sizes: how many drafts a batch holds and how many of them are accepted,
// over the variants shown (it was a fixed sentence, wrong for tiny runs).
func slmShareText(g *sqsGrid) string {
	var l, acc float64
	n := 0
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range g.vs {
		if v.kind == "c0" {
			continue
		}
		for ti := range g.scale.temps {
			b := g.cell(v.label, ti).batchStats(g.ell)
			if b.batches == 0 {
				continue
			}
			l, acc, n = l+b.l, acc+b.accepted, n+1
			lo, hi = math.Min(lo, b.l), math.Max(hi, b.l)
		}
	}
	text := "*SLM share* is the part of the latency spent drafting (L^t·τ_SLM per batch)"
	if n == 0 {
		return text + "."
	}
	l, acc = l/float64(n), acc/float64(n)
	text += fmt.Sprintf(": with B deciding the batch, a batch here holds %.1f drafts on average (%.1f to %.1f over the variants and temperatures), of which %.1f are accepted", l, lo, hi, acc)
	if acc < l/2 {
		text += ", so most of the drafting time goes to drafts that are thrown away"
	}
	return text + "; a variant that spends more bits per draft (larger K, or C-SQS's wider supports at high T) drafts fewer of them."
}

// slmShare is the share of a cell's virtual time spent drafting.
func slmShare(c *sqsCell) float64 {
	var slm, all float64
	for _, r := range c.runs {
		slm += r.SLMSeconds
		all += r.VirtualSeconds
	}
	return slm / all
}

// bitsPerToken is the pooled uplink bits per generated token of a cell.
func bitsPerToken(c *sqsCell) float64 {
	var bits, toks float64
	for _, r := range c.runs {
		bits += float64(r.UplinkBits)
		toks += float64(len(r.Tokens))
	}
	return bits / toks
}

// sqsFig4 is SQS Fig. 4: latency against K (K-SQS) and β₁ (C-SQS), one
// line per temperature.
func (p *paper) sqsFig4(g *sqsGrid) error {
	p.doc.H(2, "Fig. 4: latency vs K (K-SQS) and vs β₁ (C-SQS)")
	byK := &report.LinePlot{Title: "K-SQS", XLabel: "log2 K", YLabel: "virtual seconds per prompt", Legend: "top-left"}
	byB := &report.LinePlot{Title: "C-SQS (η = 0.001)", XLabel: "log10 β₁", YLabel: "virtual seconds per prompt", Legend: "top-left"}
	for ti, temp := range g.scale.temps {
		k := report.Series{Name: fmt.Sprintf("T = %g", temp)}
		b := k
		for _, v := range g.vs {
			y, h := g.cell(v.label, ti).latency()
			switch v.kind {
			case "k":
				k.X, k.Y, k.YErr = append(k.X, math.Log2(v.x)), append(k.Y, y), append(k.YErr, h)
			case "c":
				b.X, b.Y, b.YErr = append(b.X, math.Log10(v.x)), append(b.Y, y), append(b.YErr, h)
			}
		}
		byK.Series, byB.Series = append(byK.Series, k), append(byB.Series, b)
	}
	if err := p.doc.Plot("fig4_k", "SQS Fig. 4 (left): K-SQS latency vs K at each temperature", byK); err != nil {
		return err
	}
	return p.doc.Plot("fig4_beta", "SQS Fig. 4 (right): C-SQS latency vs the initial threshold β₁ at each temperature", byB)
}

// sqsFig6 is SQS Fig. 6: every K-SQS and C-SQS (η > 0) against T.
func (p *paper) sqsFig6(g *sqsGrid) error {
	p.doc.H(2, "Fig. 6: K-SQS vs C-SQS across temperatures")
	return p.latencyAndResampling(g, "fig6", "SQS Fig. 6, every K and β₁", append(g.labels("k", nil), g.labels("c", nil)...))
}
