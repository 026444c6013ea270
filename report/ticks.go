package report

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// linearTicks puts labelled ticks at multiples of a 1-2-5 step (three to
// seven of them) with unlabelled minor ticks between.
type linearTicks struct{}

func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	span := hi - lo
	if !(span > 0) || math.IsInf(span, 0) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 4, 64)}}
	}
	mag := math.Pow(10, math.Floor(math.Log10(span/5)))
	step, minor := mag, 5
	for _, m := range []struct {
		mult  float64
		minor int
	}{{1, 5}, {2, 4}, {5, 5}, {10, 5}} {
		step, minor = m.mult*mag, m.minor
		if span/step <= 7 {
			break
		}
	}
	decimals := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	var ticks []plot.Tick
	sub := step / float64(minor)
	first := math.Ceil(lo/sub - 1e-9)
	for i := first; i*sub <= hi+sub*1e-9; i++ {
		v := i * sub
		t := plot.Tick{Value: v}
		if math.Mod(i, float64(minor)) == 0 {
			if math.Abs(v) < step*1e-9 {
				v = 0
			}
			t.Label = strconv.FormatFloat(v, 'f', decimals, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// logTicks labels 1, 2 and 5 times each power of ten when the axis spans
// at most two decades, and the powers of ten otherwise, with unlabelled
// ticks at the other integer multiples.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) || math.IsInf(hi, 0) {
		return nil
	}
	few := math.Log10(hi/lo) <= 2
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		p := math.Pow(10, e)
		for m := 1; m <= 9; m++ {
			v := float64(m) * p
			if v < lo*(1-1e-12) || v > hi*(1+1e-12) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || few && (m == 2 || m == 5) {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// pad widens the y range by 4% of its span at each end (in log space on a
// log axis), plus room for a legend of n entries at the top or the bottom
// so that it does not sit on the data. A bar chart's zero baseline stays.
// Data that are never negative do not get an axis reaching far below
// zero for a legend: it moves to the top and its room with it (the 4%
// margin stays, as in other plotting libraries).
func pad(p *plot.Plot, logY, keepZero bool, n int, legendTop bool) {
	lo, hi := p.Y.Min, p.Y.Max
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) || !(hi > lo) {
		return
	}
	f := func(v float64) float64 { return v }
	g := f
	if logY {
		f, g = math.Log10, func(v float64) float64 { return math.Pow(10, v) }
	}
	a, b := f(lo), f(hi)
	span := b - a
	if !(keepZero && lo == 0) {
		a -= 0.04 * span
	}
	if !(keepZero && hi == 0) {
		b += 0.04 * span
	}
	if n > 0 {
		// Share of the data area's height the legend takes: about 13 pt an
		// entry and 8 pt of margin, of roughly 210 pt.
		share := min(0.5, (13*float64(n)+8)/210)
		extra := (b - a) * share / (1 - share)
		if !legendTop && !logY && lo >= 0 && a-extra < 0 {
			legendTop, p.Legend.Top = true, true
		}
		if legendTop {
			b += extra
		} else {
			a -= extra
		}
	}
	p.Y.Min, p.Y.Max = g(a), g(b)
}
