package report

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/plot"
)

func labels(ticks []plot.Tick) (out []string) {
	for _, t := range ticks {
		if t.Label != "" {
			out = append(out, t.Label)
		}
	}
	return out
}

func TestTicks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ticker plot.Ticker
		lo, hi float64
		want   []string
		n      int // all ticks, minor included
	}{
		{"linear 0..1", linearTicks{}, 0, 1, []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}, 21},
		{"linear -20..10", linearTicks{}, -20, 10, []string{"-20", "-15", "-10", "-5", "0", "5", "10"}, 31},
		{"linear 0.3..10.6", linearTicks{}, 0.3, 10.6, []string{"2", "4", "6", "8", "10"}, 21},
		{"linear 1e6..3e6", linearTicks{}, 1e6, 3e6, []string{"1000000", "1500000", "2000000", "2500000", "3000000"}, 21},
		{"linear empty range", linearTicks{}, 2, 2, []string{"2"}, 1},
		{"log 0.15..12", logTicks{}, 0.15, 12, []string{"0.2", "0.5", "1", "2", "5", "10"}, 18}, // 0.2–0.9, 1–9, 10
		{"log 1..1e5", logTicks{}, 1, 1e5, []string{"1", "10", "100", "1000", "10000", "100000"}, 46},
		{"log invalid", logTicks{}, 0, 1, nil, 0},
	} {
		ticks := tc.ticker.Ticks(tc.lo, tc.hi)
		if got := labels(ticks); !slices.Equal(got, tc.want) || len(ticks) != tc.n {
			t.Errorf("%s: labels %q (%d ticks), want %q (%d)", tc.name, got, len(ticks), tc.want, tc.n)
		}
		for _, tk := range ticks {
			if tk.Value < tc.lo-1e-9*math.Abs(tc.lo) || tk.Value > tc.hi+1e-9*math.Abs(tc.hi) {
				t.Errorf("%s: tick %v outside [%v, %v]", tc.name, tk.Value, tc.lo, tc.hi)
			}
		}
	}
}

func TestPad(t *testing.T) {
	for _, tc := range []struct {
		name           string
		lo, hi         float64
		log, keepZero  bool
		n              int
		top            bool
		wantLo, wantHi float64
	}{
		{"linear, no legend", 0, 100, false, false, 0, true, -4, 104},
		{"bars keep zero", 0, 100, false, true, 0, true, 0, 104},
		{"log", 1, 100, true, false, 0, true, math.Pow(10, -0.08), math.Pow(10, 2.08)},
		{"legend on top", 0, 100, false, true, 2, true, 0, 104 + 104*(34./210)/(1-34./210)},
		{"legend at bottom", -50, 50, false, false, 2, false, -54 - 108*(34./210)/(1-34./210), 54},
		// Data never below zero: the legend's room goes to the top, and
		// the legend with it, instead of an axis reaching to −25.
		{"legend at bottom, data ≥ 0", 0, 100, false, false, 2, false, -4, 104 + 108*(34./210)/(1-34./210)},
		{"legend at bottom, data far above 0", 900, 1000, false, false, 2, false, 896 - 108*(34./210)/(1-34./210), 1004},
	} {
		p := plot.New()
		p.Y.Min, p.Y.Max = tc.lo, tc.hi
		p.Legend.Top = tc.top
		pad(p, tc.log, tc.keepZero, tc.n, tc.top)
		if math.Abs(p.Y.Min-tc.wantLo) > 1e-9 || math.Abs(p.Y.Max-tc.wantHi) > 1e-9 {
			t.Errorf("%s: [%v, %v], want [%v, %v]", tc.name, p.Y.Min, p.Y.Max, tc.wantLo, tc.wantHi)
		}
		if moved := tc.name == "legend at bottom, data ≥ 0"; p.Legend.Top != (tc.top || moved) {
			t.Errorf("%s: legend on top %v", tc.name, p.Legend.Top)
		}
	}
}
