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
	train.Name, held.Name = "train batches (mean per window)", "held-out"
	// The train series averages windows of steps, so that a long run keeps
	// a readable plot (at most about 200 points).
	win := max(1, len(curve)/200)
	var sum float64
	for i, p := range curve {
		t.AddRow(fmt.Sprint(p.Step), fmt.Sprint(p.Tokens), f(p.Seconds), f(p.LR), f(p.Loss), f(p.TrainAccept), f(p.HeldoutAccept), f(p.HeldoutLoss), f(p.GradNorm))
		mt := float64(p.Tokens) / 1e6
		sum += p.TrainAccept
		if (i+1)%win == 0 || i == len(curve)-1 {
			train.X, train.Y = append(train.X, mt), append(train.Y, sum/float64(i%win+1))
			sum = 0
		}
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
		YLabel: "mean 1 − TV(draft, teacher)", Series: []report.Series{train, held}, Legend: "bottom-right"}
	return atomicfile.Write(pngPath, lp.WritePNG)
}
