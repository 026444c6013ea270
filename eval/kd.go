package eval

import (
	"context"
	"fmt"
	"math"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/report"
	"github.com/hlmproject/hlm/uncertainty"
)

// kdAblation is CU-HLM Table II (Sec. V-D): the latency breakdown and
// throughput of U-HLM and CU-HLM (online) at the summary setting (Rayleigh,
// 10 dB) with different drafts for the same LLM — the paper's "No KD",
// "KD" and larger-SLM rows become the drafts of PaperConfig.Ablation next to
// the report's own SLM. Each draft gets its own calibration (a, b for the
// online k), as the paper's KD model would.
func (p *paper) kdAblation(ctx context.Context, base hybrid.Params) error {
	if len(p.cfg.Ablation) == 0 {
		// Said in the report and on the terminal, so that the table's
		// absence is not a surprise (docs/REPRODUCTION.md lists it).
		msg := "Table II (the draft's alignment, KD ablation) is left out: it compares drafts for the same LLM, given with --ablation NAME=SPEC (e.g. --ablation \"untrained early exit=M.bin@exit=1\")"
		p.doc.H(2, "Table II: the draft's alignment (KD ablation)")
		p.doc.P("%s.", msg)
		p.notice(msg)
		return nil
	}
	drafts := append([]Draft{{Name: "report's SLM", SLM: p.cfg.SLM}}, p.cfg.Ablation...)
	t := &report.Table{Columns: []string{"method", "draft", "SLM spec", "draft acceptance (lossless HLM)", "acceptance of the verified drafts", "communication (ms/token)", "LLM computation (ms/token)", "throughput (tokens/s)", "TR", "NLL"}}
	for i, d := range drafts {
		sub := *p // the report's own SLM keeps its models and calibration
		if i > 0 {
			sub.setup.Models = p.ablation[i-1]
			sub.calLog = nil
		}
		cal, log, err := sub.calibrate(ctx, base)
		if err != nil {
			return err
		}
		draftAcc := meanAcceptance(log.Records)
		pts := []Point{
			{Label: hybrid.UHLM + " / " + d.Name, Method: hybrid.UHLM, Sets: []string{"u_th=0.8"}},
			{Label: hybrid.CUHLMOnline + " / " + d.Name, Method: hybrid.CUHLMOnline, Sets: []string{"u_th=0.8", fmt.Sprintf("calib_a=%g", cal.Fit.A), fmt.Sprintf("calib_b=%g", cal.Fit.B)}},
		}
		rows, err := sub.run(ctx, fmt.Sprintf("table2_draft%d", i), "tinystories", p.cfg.N, base, pts)
		if err != nil {
			return err
		}
		for j, r := range rows {
			acc := 1 - r.Value("rejection_rate")
			ms := func(col string) string { return PM(1000*r.Value(col), 1000*r.CI[col], 3) }
			t.AddRow(pts[j].Method, d.Name, "`"+d.SLM+"`", report.Float(draftAcc, 3), report.Float(acc, 3), ms("communication_seconds_per_token"), ms("llm_seconds_per_token"), r.PM("throughput_tps", 4), r.PM("transmission_rate", 3), r.PM("nll", 4))
		}
	}
	p.doc.H(2, "Table II: the draft's alignment (KD ablation)")
	p.doc.P("CU-HLM Table II compares the default SLM with a knowledge-distilled one and a larger one (U-HLM: 15.9 → 16.5 → 12.4 tokens/s; CU-HLM online: 18.0 → 18.7 → 13.0), at Rayleigh 10 dB with τ_SLM = 25.6 ms. Here each row is a draft for the same LLM, with its own calibration (%d BOS-only runs), at the summary setting; communication is uplink + downlink time per committed token, LLM computation τ_LLM × uploads per committed token. *Draft acceptance* is the mean acceptance probability min(1, y_d/x_d) of every draft along the calibration runs (lossless HLM, one token per round): the draft's alignment with the LLM, what distillation improves. *Acceptance of the verified drafts* is 1 − the rejection rate of the drafts U-HLM or CU-HLM chose to upload: a selected subset, so a draft that is confident where it is wrong uploads little and its verified drafts can look well aligned.", p.cfg.NCal)
	return p.doc.Table("table2_kd", t)
}

// meanAcceptance is the mean of 1 − β = min(1, y_d/x_d) over the records:
// the probability that a draft sampled from x is accepted, averaged along
// the logged text (an estimate of E[1 − TV(x, y)]).
func meanAcceptance(rs []uncertainty.Record) float64 {
	if len(rs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, r := range rs {
		s += 1 - uncertainty.Beta(r.XD, r.YD)
	}
	return s / float64(len(rs))
}
