package distill

import (
	"fmt"
	"math"

	"github.com/hlmproject/hlm/internal/atomicfile"
	"github.com/hlmproject/hlm/report"
)

// writeCurve writes the learning curve as CSV (every step) and PNG (the
// acceptance estimates against training tokens).
func writeCurve(curve []Point, csvPath, pngPath string) error {
	t := report.Table{Columns: []string{"step", "tokens", "seconds", "lr", "loss", "train_accept", "heldout_accept", "heldout_loss", "grad_norm"}}
	f := func(x float64) string {
		if math.IsNaN(x) {
			return ""
		}
		return fmt.Sprintf("%.6g", x)
	}
	var train, held report.Series
	train.Name, held.Name = "train batch", "held-out"
	for _, p := range curve {
		t.AddRow(fmt.Sprint(p.Step), fmt.Sprint(p.Tokens), f(p.Seconds), f(p.LR), f(p.Loss), f(p.TrainAccept), f(p.HeldoutAccept), f(p.HeldoutLoss), f(p.GradNorm))
		mt := float64(p.Tokens) / 1e6
		train.X, train.Y = append(train.X, mt), append(train.Y, p.TrainAccept)
		if !math.IsNaN(p.HeldoutAccept) {
			held.X, held.Y = append(held.X, mt), append(held.Y, p.HeldoutAccept)
		}
	}
	if err := atomicfile.Write(csvPath, t.WriteCSV); err != nil {
		return err
	}
	if len(held.X) == 0 {
		return nil
	}
	lp := report.LinePlot{Title: "Distillation: acceptance probability mean(1 − TV)", XLabel: "training tokens (millions)",
		YLabel: "mean 1 − TV(draft, teacher)", Series: []report.Series{held, train}, Legend: "bottom-right"}
	return atomicfile.Write(pngPath, lp.WritePNG)
}
