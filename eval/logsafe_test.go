package eval

import (
	"bytes"
	"math"
	"testing"

	"github.com/hlmproject/hlm/report"
)

// A curve with a point at zero (uplink bits of a CU-HLM point whose every
// token was skipped, as a small rerun of pair 2 gives) is drawn on a log
// axis without that point: it used to fail the whole rerun with "y − err
// = 0 on a log axis" after every run had finished.
func TestLogSafeDropsNonPositivePoints(t *testing.T) {
	s := logSafe(report.Series{Name: "uplink bits/token", X: []float64{1, 2, 5}, Y: []float64{0, 40, 300}, YErr: []float64{0, 50, 20}})
	if !math.IsNaN(s.Y[0]) || s.Y[1] != 40 || s.Y[2] != 300 {
		t.Errorf("Y = %v, want the zero dropped (NaN) and the rest kept", s.Y)
	}
	if !math.IsNaN(s.YErr[1]) || s.YErr[2] != 20 {
		t.Errorf("YErr = %v, want the bar that reaches below zero dropped", s.YErr)
	}
	lp := &report.LinePlot{Title: "t", XLabel: "k", YLabel: "value", LogY: true, Series: []report.Series{s}}
	var buf bytes.Buffer
	if err := lp.WritePNG(&buf); err != nil {
		t.Fatalf("plotting the log-safe series: %v", err)
	}
	in := report.Series{Name: "x", X: []float64{1}, Y: []float64{0}}
	if out := logSafe(in); !math.IsNaN(out.Y[0]) || in.Y[0] != 0 {
		t.Errorf("logSafe without error bars: got %v, input now %v; want NaN and the input unchanged", out.Y, in.Y)
	}
}
