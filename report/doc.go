// Package report writes experiment results as tables (Markdown and CSV) and
// figures (SVG and PNG), for the reports of hlm eval.
//
// A Table is text cells; Float, PlusMinus and Percent format numbers the
// same way everywhere:
//
//	t := report.Table{Title: "Cosine similarity", Columns: []string{"method", "Alpaca", "QED"}}
//	t.AddRow("U-HLM", report.PlusMinus(0.853, 0.012, 3), report.Float(0.811, 3))
//	fmt.Print(t.Markdown())
//	err := t.Save("out/cosine") // out/cosine.md and out/cosine.csv
//
// LinePlot draws curves (throughput against SNR, one series per method,
// optional error bars and logarithmic y axis) and BarChart draws one bar per
// category and series (methods × datasets). Both save an SVG and a
// 6 × 4 in PNG at 150 dpi:
//
//	lp := report.LinePlot{
//		Title: "Token throughput", XLabel: "average SNR (dB)", YLabel: "tokens/s",
//		Series: []report.Series{{Name: "HLM", X: snr, Y: tput, YErr: ci}},
//	}
//	err := lp.Save("out/throughput") // out/throughput.svg and .png
//
// Output is deterministic: the same data gives byte-identical files, so
// figures can be kept under version control and diffed.
package report
