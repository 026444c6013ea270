package eval

import (
	"context"
	"fmt"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/report"
)

// sqs reruns SQS Fig. 2: end-to-end latency and resampling rate vs the
// sampling temperature for K-SQS (several K) and C-SQS (initial thresholds).
func (p *paper) sqs(ctx context.Context) error {
	p.header("K-SQS / C-SQS rerun", "Bhattacharjee et al., *Conformal Sparsification for Bandwidth-Efficient Edge-Cloud Speculative Decoding* (SQS)")
	base := p.setup.Base
	if err := base.SetAll([]string{"channel=fixed", "rate_bps=1e6", "budget_bits=5000", "ell=100", "conf_eta=0.001", "conf_alpha=0.0005"}); err != nil {
		return err
	}
	p.doc.P("Setting: a fixed 1 Mbit/s uplink (the paper does not give its rate), budget B = 5000 bits per batch, ℓ = 100, C-SQS η = 0.001 and α = 0.0005 (SPEC defaults). TinyStories continuations stand in for LM1B.")
	temps := []float64{0.2, 0.4, 0.6, 0.8, 1.0}
	vs := []Point{{"K-SQS K=4", hybrid.KSQS, []string{"sqs_k=4"}}, {"K-SQS K=8", hybrid.KSQS, []string{"sqs_k=8"}}, {"K-SQS K=16", hybrid.KSQS, []string{"sqs_k=16"}},
		{"C-SQS β₁=0.001", hybrid.CSQS, []string{"conf_beta=0.001"}}, {"C-SQS β₁=0.01", hybrid.CSQS, []string{"conf_beta=0.01"}}}
	var pts []Point
	for _, v := range vs {
		for _, t := range temps {
			pts = append(pts, Point{Label: v.Label, Method: v.Method, Sets: append(append([]string(nil), v.Sets...), fmt.Sprintf("temperature=%g", t))})
		}
	}
	rows, err := p.run(ctx, "fig2", "tinystories", p.cfg.NCurve, base, pts)
	if err != nil {
		return err
	}
	groups := map[string][]Row{}
	for _, r := range rows {
		groups[r.Label] = append(groups[r.Label], r)
	}
	x := func(r Row) float64 { return SetValue(r, "temperature") }
	lat := &report.LinePlot{Title: "latency per prompt", XLabel: "temperature", YLabel: "virtual seconds per prompt"}
	res := &report.LinePlot{Title: "resampling rate", XLabel: "temperature", YLabel: "rejections per batch"}
	for _, v := range vs {
		rs := groups[v.Label]
		perPrompt := func(i int) float64 { return 1 / float64(rs[i].Prompts) }
		lat.Series = append(lat.Series, scaled(Curve(v.Label, rs, x, "virtual_seconds"), perPrompt))
		res.Series = append(res.Series, Curve(v.Label, rs, x, "resampling_rate"))
	}
	p.doc.H(2, "Fig. 2: latency and resampling rate vs temperature")
	if err := p.doc.Plot("fig2_latency", "Average end-to-end latency per prompt (SQS Fig. 2 left)", lat); err != nil {
		return err
	}
	if err := p.doc.Plot("fig2_resampling", "Resampling rate: rejected-and-resampled tokens per batch (SQS Fig. 2 right)", res); err != nil {
		return err
	}
	return p.doc.Table("fig2_table", Table("", rows, []string{"label", "sets", "virtual_seconds", "resampling_rate", "accepted_per_round", "uplink_bits_per_token", "mean_deviation"}))
}
