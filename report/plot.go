package report

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Figure size and PNG resolution: 6 × 4 in, so 900 × 600 pixels at 150 dpi.
const (
	Width  = 6 * vg.Inch
	Height = 4 * vg.Inch
	DPI    = 150
)

// ErrBadPlot is wrapped by errors about a plot's data.
var ErrBadPlot = errors.New("bad plot data")

// Series is one curve of a LinePlot.
type Series struct {
	Name string
	X, Y []float64
	// YErr, when not nil, holds symmetric error-bar half-widths (for
	// instance a 95% confidence half-width), one per point; NaN means no
	// bar for that point.
	YErr []float64
}

// LinePlot is a plot of y against x for one or more series, each drawn as
// a line through markers in its own colour, marker shape and (past the
// seventh series) dash pattern, with optional error bars and a legend.
// Points whose X or Y is NaN are left out.
type LinePlot struct {
	Title, XLabel, YLabel string
	Series                []Series
	LogY                  bool // logarithmic y axis: every y (and y − err) must be > 0
	Scatter               bool // markers only, no lines
	// Legend is the legend's corner: "top-right" (the default when empty),
	// "top-left", "bottom-right" or "bottom-left".
	Legend string
}

// BarChart is a grouped bar chart: one group of bars per category, one bar
// per series in each group (a single series gives one bar per category),
// with optional error bars. Bars start at zero; a NaN value draws no bar.
type BarChart struct {
	Title, YLabel string
	Categories    []string // x-axis labels, one per group
	Series        []BarSeries
	Legend        string // as LinePlot.Legend; no legend for a single unnamed series
}

// BarSeries is one bar per category.
type BarSeries struct {
	Name   string
	Values []float64 // one per category
	Err    []float64 // optional symmetric error half-widths, NaN for none
}

// The palette (Okabe & Ito's colour-blind-safe colours, yellow left out) and
// marker shapes cycle with the series index.
var (
	palette = []color.Color{
		color.RGBA{0x00, 0x72, 0xB2, 0xFF}, // blue
		color.RGBA{0xD5, 0x5E, 0x00, 0xFF}, // vermilion
		color.RGBA{0x00, 0x9E, 0x73, 0xFF}, // bluish green
		color.RGBA{0xE6, 0x9F, 0x00, 0xFF}, // orange
		color.RGBA{0xCC, 0x79, 0xA7, 0xFF}, // reddish purple
		color.RGBA{0x56, 0xB4, 0xE9, 0xFF}, // sky blue
		color.RGBA{0x00, 0x00, 0x00, 0xFF}, // black
	}
	glyphs = []draw.GlyphDrawer{
		draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{},
		draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.PlusGlyph{},
	}
	dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}}
)

// newPlot is a plot with the title, labels, a light grid, sans-serif text
// and the legend in the given corner.
func newPlot(title, xlabel, ylabel, legend string) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	for _, s := range []*plot.Axis{&p.X, &p.Y} {
		s.Label.TextStyle.Font.Variant = "Sans"
		s.Tick.Label.Font.Variant = "Sans"
	}
	p.Title.TextStyle.Font.Variant = "Sans"
	p.Legend.TextStyle.Font.Variant = "Sans"
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	switch legend {
	case "", "top-right":
		p.Legend.Top = true
	case "top-left":
		p.Legend.Top, p.Legend.Left = true, true
	case "bottom-right":
	case "bottom-left":
		p.Legend.Left = true
	default:
		return nil, fmt.Errorf("report: %w: legend position %q (want top-right, top-left, bottom-right or bottom-left)", ErrBadPlot, legend)
	}
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(6), -vg.Points(6)
	if p.Legend.Left {
		p.Legend.XOffs = vg.Points(6)
	}
	if !p.Legend.Top {
		p.Legend.YOffs = vg.Points(6)
	}
	p.X.Tick.Marker = linearTicks{}
	p.Y.Tick.Marker = linearTicks{}
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{0xE0}
	grid.Horizontal.Color = color.Gray{0xE0}
	p.Add(grid)
	return p, nil
}

// errXYs is points with symmetric y errors, for plotter.YErrorBars.
type errXYs struct {
	plotter.XYs
	err []float64
}

func (e errXYs) YError(i int) (float64, float64) { return e.err[i], e.err[i] }

// build makes the gonum plot.
func (lp LinePlot) build() (*plot.Plot, error) {
	p, err := newPlot(lp.Title, lp.XLabel, lp.YLabel, lp.Legend)
	if err != nil {
		return nil, err
	}
	if lp.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
	}
	entries := 0
	for k, s := range lp.Series {
		bad := func(i int, format string, args ...any) error {
			return fmt.Errorf("report: %w: series %d (%q) point %d: %s", ErrBadPlot, k, s.Name, i, fmt.Sprintf(format, args...))
		}
		if len(s.X) != len(s.Y) || s.YErr != nil && len(s.YErr) != len(s.Y) {
			return nil, fmt.Errorf("report: %w: series %d (%q) has %d x, %d y and %d error values", ErrBadPlot, k, s.Name, len(s.X), len(s.Y), len(s.YErr))
		}
		var xys plotter.XYs
		var errs []float64
		for i := range s.X {
			x, y := s.X[i], s.Y[i]
			if math.IsNaN(x) || math.IsNaN(y) {
				continue
			}
			if math.IsInf(x, 0) || math.IsInf(y, 0) {
				return nil, bad(i, "(%v, %v) is infinite", x, y)
			}
			e := 0.0
			if s.YErr != nil && !math.IsNaN(s.YErr[i]) {
				e = math.Abs(s.YErr[i])
			}
			if math.IsInf(e, 0) {
				return nil, bad(i, "infinite error bar")
			}
			if lp.LogY && y-e <= 0 {
				return nil, bad(i, "y − err = %v on a log axis", y-e)
			}
			xys = append(xys, plotter.XY{X: x, Y: y})
			errs = append(errs, e)
		}
		if len(xys) == 0 {
			continue
		}
		col := palette[k%len(palette)]
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, fmt.Errorf("report: series %q: %w", s.Name, err)
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(2.5), Shape: glyphs[k%len(glyphs)]}
		thumbs := []plot.Thumbnailer{sc}
		if !lp.Scatter {
			ln, err := plotter.NewLine(xys)
			if err != nil {
				return nil, fmt.Errorf("report: series %q: %w", s.Name, err)
			}
			ln.LineStyle = draw.LineStyle{Color: col, Width: vg.Points(1.5), Dashes: dashes[k/len(palette)%len(dashes)]}
			p.Add(ln)
			thumbs = append([]plot.Thumbnailer{ln}, thumbs...)
		}
		p.Add(sc)
		if s.YErr != nil {
			eb, err := plotter.NewYErrorBars(errXYs{xys, errs})
			if err != nil {
				return nil, fmt.Errorf("report: series %q: %w", s.Name, err)
			}
			eb.LineStyle = draw.LineStyle{Color: col, Width: vg.Points(1)}
			eb.CapWidth = vg.Points(4)
			p.Add(eb)
		}
		if s.Name != "" {
			p.Legend.Add(s.Name, thumbs...)
			entries++
		}
	}
	pad(p, lp.LogY, false, entries, p.Legend.Top)
	return p, nil
}

// bars is one bar chart series drawn in data coordinates: a bar of the given
// width (in x units) centred on each x, from zero to y.
type bars struct {
	xs, ys []float64
	width  float64
	color  color.Color
}

func (b bars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	outline := draw.LineStyle{Color: color.Gray{0x40}, Width: vg.Points(0.5)}
	for i, x := range b.xs {
		y := b.ys[i]
		if math.IsNaN(y) {
			continue
		}
		x0, x1 := trX(x-b.width/2), trX(x+b.width/2)
		y0, y1 := trY(0), trY(y)
		pts := []vg.Point{{X: x0, Y: y0}, {X: x0, Y: y1}, {X: x1, Y: y1}, {X: x1, Y: y0}}
		c.FillPolygon(b.color, c.ClipPolygonXY(pts))
		c.StrokeLines(outline, c.ClipLinesXY(append(pts, pts[0]))...)
	}
}

func (b bars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for i, x := range b.xs {
		xmin, xmax = min(xmin, x-b.width/2), max(xmax, x+b.width/2)
		if y := b.ys[i]; !math.IsNaN(y) {
			ymin, ymax = min(ymin, y), max(ymax, y)
		}
	}
	return xmin, xmax, ymin, ymax
}

// Thumbnail draws the legend swatch.
func (b bars) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Min.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Min.Y}}
	c.FillPolygon(b.color, c.ClipPolygonY(pts))
}

func (bc BarChart) build() (*plot.Plot, error) {
	p, err := newPlot(bc.Title, "", bc.YLabel, bc.Legend)
	if err != nil {
		return nil, err
	}
	nc, ns := len(bc.Categories), len(bc.Series)
	if nc == 0 || ns == 0 {
		return nil, fmt.Errorf("report: %w: bar chart with %d categories and %d series", ErrBadPlot, nc, ns)
	}
	const group = 0.8 // share of a category's width taken by its bars
	w := group / float64(ns)
	entries := 0
	for k, s := range bc.Series {
		if len(s.Values) != nc || s.Err != nil && len(s.Err) != nc {
			return nil, fmt.Errorf("report: %w: bar series %d (%q) has %d values and %d errors for %d categories", ErrBadPlot, k, s.Name, len(s.Values), len(s.Err), nc)
		}
		b := bars{ys: s.Values, width: w, color: palette[k%len(palette)]}
		var exys plotter.XYs
		var errs []float64
		for i, y := range s.Values {
			x := float64(i) + (float64(k)-float64(ns-1)/2)*w
			b.xs = append(b.xs, x)
			if math.IsInf(y, 0) {
				return nil, fmt.Errorf("report: %w: bar series %q category %q: infinite value", ErrBadPlot, s.Name, bc.Categories[i])
			}
			if s.Err != nil && !math.IsNaN(y) && !math.IsNaN(s.Err[i]) {
				if math.IsInf(s.Err[i], 0) {
					return nil, fmt.Errorf("report: %w: bar series %q category %q: infinite error", ErrBadPlot, s.Name, bc.Categories[i])
				}
				exys = append(exys, plotter.XY{X: x, Y: y})
				errs = append(errs, math.Abs(s.Err[i]))
			}
		}
		p.Add(b)
		if len(exys) > 0 {
			eb, err := plotter.NewYErrorBars(errXYs{exys, errs})
			if err != nil {
				return nil, fmt.Errorf("report: bar series %q: %w", s.Name, err)
			}
			eb.LineStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(1)}
			eb.CapWidth = vg.Points(min(4, 100*w))
			p.Add(eb)
		}
		if s.Name != "" {
			p.Legend.Add(s.Name, b)
			entries++
		}
	}
	pad(p, false, true, entries, p.Legend.Top)
	p.NominalX(bc.Categories...)
	p.X.Min, p.X.Max = -0.5, float64(nc)-0.5
	return p, nil
}

// WriteSVG writes the plot as SVG (fonts referenced by name, not
// embedded): the same plot gives the same bytes.
func (lp LinePlot) WriteSVG(w io.Writer) error { return writeSVG(lp.build, w) }

// WritePNG writes the plot as a Width × Height PNG at DPI.
func (lp LinePlot) WritePNG(w io.Writer) error { return writePNG(lp.build, w) }

// Save writes pathWithoutExt+".svg" and pathWithoutExt+".png".
func (lp LinePlot) Save(pathWithoutExt string) error { return save(lp.build, pathWithoutExt) }

// WriteSVG writes the chart as SVG (fonts referenced by name, not
// embedded): the same chart gives the same bytes.
func (bc BarChart) WriteSVG(w io.Writer) error { return writeSVG(bc.build, w) }

// WritePNG writes the chart as a Width × Height PNG at DPI.
func (bc BarChart) WritePNG(w io.Writer) error { return writePNG(bc.build, w) }

// Save writes pathWithoutExt+".svg" and pathWithoutExt+".png".
func (bc BarChart) Save(pathWithoutExt string) error { return save(bc.build, pathWithoutExt) }

func writeSVG(build func() (*plot.Plot, error), w io.Writer) error {
	p, err := build()
	if err != nil {
		return err
	}
	c := vgsvg.New(Width, Height)
	p.Draw(draw.New(c))
	_, err = c.WriteTo(w)
	return err
}

func writePNG(build func() (*plot.Plot, error), w io.Writer) error {
	p, err := build()
	if err != nil {
		return err
	}
	c := vgimg.NewWith(vgimg.UseWH(Width, Height), vgimg.UseDPI(DPI))
	p.Draw(draw.New(c))
	_, err = vgimg.PngCanvas{Canvas: c}.WriteTo(w)
	return err
}

func save(build func() (*plot.Plot, error), pathWithoutExt string) error {
	if _, err := build(); err != nil { // check the data before creating files
		return err
	}
	if err := WriteFile(pathWithoutExt+".svg", func(w io.Writer) error { return writeSVG(build, w) }); err != nil {
		return err
	}
	return WriteFile(pathWithoutExt+".png", func(w io.Writer) error { return writePNG(build, w) })
}
