package report

import (
	"bytes"
	"errors"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// throughput is a LinePlot shaped like the papers' throughput-vs-SNR
// figures.
func throughput() LinePlot {
	snr := []float64{-20, -15, -10, -5, 0, 5, 10}
	curve := func(scale, floor float64) []float64 {
		y := make([]float64, len(snr))
		for i, s := range snr {
			y[i] = floor + scale*math.Log2(1+math.Pow(10, s/10))
		}
		return y
	}
	return LinePlot{
		Title: "Token throughput", XLabel: "average SNR (dB)", YLabel: "tokens/s",
		Series: []Series{
			{Name: "HLM", X: snr, Y: curve(1, 0.5), YErr: []float64{0.1, 0.1, 0.1, 0.2, 0.2, 0.3, math.NaN()}},
			{Name: "U-HLM", X: snr, Y: curve(2, 1)},
			{Name: "SLM", X: snr, Y: []float64{8, 8, 8, 8, math.NaN(), 8, 8}},
		},
	}
}

func methods() BarChart {
	return BarChart{
		Title: "Cosine similarity", YLabel: "cosine",
		Categories: []string{"Alpaca", "QED", "CREAK", "StrategyQA"},
		Series: []BarSeries{
			{Name: "SLM", Values: []float64{0.80, 0.70, 0.75, 0.72}, Err: []float64{0.01, 0.02, 0.01, math.NaN()}},
			{Name: "U-HLM", Values: []float64{0.85, 0.74, 0.78, math.NaN()}},
		},
	}
}

func TestPlotsDeterministicAndRendered(t *testing.T) {
	log := throughput()
	log.LogY, log.Legend = true, "bottom-right"
	scatter := throughput()
	scatter.Scatter, scatter.Legend = true, "top-left"
	single := BarChart{Categories: []string{"a", "b"}, Series: []BarSeries{{Values: []float64{1, -0.5}}}, Legend: "bottom-left"}
	for _, tc := range []struct {
		name string
		save func(string) error
	}{
		{"line", throughput().Save},
		{"line-logy", log.Save},
		{"scatter", scatter.Save},
		{"bars", methods().Save},
		{"bars-single", single.Save},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			if err := tc.save(a); err != nil {
				t.Fatal(err)
			}
			if err := tc.save(b); err != nil {
				t.Fatal(err)
			}
			for _, ext := range []string{".svg", ".png"} {
				x, err1 := os.ReadFile(a + ext)
				y, err2 := os.ReadFile(b + ext)
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				if !bytes.Equal(x, y) {
					t.Errorf("%s: two saves of the same plot differ", ext)
				}
			}
			svg, _ := os.ReadFile(a + ".svg")
			if !bytes.HasPrefix(svg, []byte("<?xml")) || !bytes.Contains(svg, []byte("</svg>")) {
				t.Errorf("SVG does not look like SVG: %.80q", svg)
			}
			f, err := os.Open(a + ".png")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			img, err := png.Decode(f)
			if err != nil {
				t.Fatal(err)
			}
			checkRendered(t, img)
		})
	}
}

// checkRendered checks the PNG is 900 × 600 and not blank: a good share of
// its pixels differ from the white background, and some are coloured.
func checkRendered(t *testing.T, img image.Image) {
	t.Helper()
	if got := img.Bounds().Size(); got != (image.Point{900, 600}) {
		t.Errorf("PNG is %v, want 900×600", got)
	}
	var ink, colour int
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xF000 || g < 0xF000 || bl < 0xF000 {
				ink++
			}
			if max(r, g, bl)-min(r, g, bl) > 0x4000 {
				colour++
			}
		}
	}
	if total := b.Dx() * b.Dy(); ink < total/100 || colour < 200 {
		t.Errorf("PNG looks blank: %d of %d pixels drawn, %d coloured", ink, total, colour)
	}
}

func TestPlotSVGContent(t *testing.T) {
	var buf bytes.Buffer
	if err := throughput().WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Token throughput", "average SNR (dB)", "tokens/s", "U-HLM", `width="432pt" height="288pt"`} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("SVG lacks %q", s)
		}
	}
	var bb bytes.Buffer
	if err := methods().WriteSVG(&bb); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"StrategyQA", "CREAK", "SLM"} {
		if !strings.Contains(bb.String(), s) {
			t.Errorf("bar chart SVG lacks %q", s)
		}
	}
}

func TestPlotErrors(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		name string
		fig  interface{ WriteSVG(w *bytes.Buffer) error }
		want string
	}{
		{"length mismatch", line(LinePlot{Series: []Series{{Name: "s", X: []float64{1, 2}, Y: []float64{1}}}}), "has 2 x, 1 y"},
		{"error length", line(LinePlot{Series: []Series{{X: []float64{1}, Y: []float64{1}, YErr: []float64{}}}}), "0 error values"},
		{"infinite", line(LinePlot{Series: []Series{{Name: "s", X: []float64{1, 2}, Y: []float64{1, inf}}}}), `series 0 ("s") point 1: (2, +Inf) is infinite`},
		{"log of zero", line(LinePlot{LogY: true, Series: []Series{{X: []float64{1}, Y: []float64{0}}}}), "on a log axis"},
		{"log error below zero", line(LinePlot{LogY: true, Series: []Series{{X: []float64{1}, Y: []float64{1}, YErr: []float64{2}}}}), "on a log axis"},
		{"legend", line(LinePlot{Legend: "middle"}), `legend position "middle"`},
		{"bars: no categories", bar(BarChart{Series: []BarSeries{{Values: nil}}}), "0 categories"},
		{"bars: length", bar(BarChart{Categories: []string{"a"}, Series: []BarSeries{{Values: []float64{1, 2}}}}), "2 values"},
		{"bars: infinite", bar(BarChart{Categories: []string{"a"}, Series: []BarSeries{{Values: []float64{inf}}}}), "infinite value"},
	} {
		err := tc.fig.WriteSVG(new(bytes.Buffer))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrBadPlot) {
			t.Errorf("%s: error %v, want one containing %q and wrapping ErrBadPlot", tc.name, err, tc.want)
		}
	}
	dir := t.TempDir()
	bad := LinePlot{LogY: true, Series: []Series{{X: []float64{1}, Y: []float64{-1}}}}
	if err := bad.Save(filepath.Join(dir, "bad")); err == nil {
		t.Error("Save of bad data: no error")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("Save of bad data left files: %v", ents)
	}
	// An empty plot is not an error.
	if err := (LinePlot{Title: "empty"}).WriteSVG(new(bytes.Buffer)); err != nil {
		t.Errorf("empty plot: %v", err)
	}
}

type line LinePlot

func (l line) WriteSVG(w *bytes.Buffer) error { return LinePlot(l).WriteSVG(w) }

type bar BarChart

func (b bar) WriteSVG(w *bytes.Buffer) error { return BarChart(b).WriteSVG(w) }
