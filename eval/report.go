package eval

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hlmproject/hlm/report"
)

// Doc accumulates a Markdown report and the files it links to.
type Doc struct {
	Dir string
	// Notice, if set, is told of what the report leaves out: a plot that
	// could not be drawn.
	Notice func(msg string)
	b      strings.Builder
	later  []func() string
}

// Later adds a paragraph whose text is known only when the report is
// saved (what the sections after it ran): f is called by Save.
func (d *Doc) Later(f func() string) {
	fmt.Fprintf(&d.b, "\x00later %d\x00", len(d.later))
	d.later = append(d.later, f)
}

// H adds a heading.
func (d *Doc) H(level int, text string) {
	fmt.Fprintf(&d.b, "%s %s\n\n", strings.Repeat("#", level), text)
}

// P adds a paragraph.
func (d *Doc) P(format string, args ...any) { fmt.Fprintf(&d.b, format+"\n\n", args...) }

// Table adds a table (and writes it as CSV beside the report).
func (d *Doc) Table(name string, t *report.Table) error {
	d.b.WriteString(t.Markdown())
	d.b.WriteString("\n")
	if name == "" {
		return nil
	}
	return writeCSV(filepath.Join(d.Dir, name+".csv"), t)
}

// writeCSV writes a report table as CSV: its "x ± h" cells, whose h is
// always a 95% half-width in eval's tables, as x and a COL_ci95 column, as
// results.csv has them (report.Table.WriteCSV).
func writeCSV(path string, t *report.Table) error {
	if t.HalfWidth == "" {
		t.HalfWidth = "_ci95"
	}
	return report.WriteFile(path, t.WriteCSV)
}

// saver is a plot that writes .svg and .png files.
type saver interface{ Save(base string) error }

// Plot saves a plot as name.svg and name.png and links the PNG. A plot
// that cannot be drawn (values its axes cannot show) costs the figure, not
// the rerun: the report says so where the figure would be, and the tables
// and CSV files hold its numbers. A file that cannot be written is an
// error.
func (d *Doc) Plot(name, caption string, p saver) error {
	if err := p.Save(filepath.Join(d.Dir, name)); err != nil {
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			return fmt.Errorf("plot %s: %w", name, err)
		}
		msg := fmt.Sprintf("plot %s could not be drawn (%v); its numbers are in the tables", name, err)
		fmt.Fprintf(&d.b, "*%s: the %s.*\n\n", caption, msg)
		if d.Notice != nil {
			d.Notice(msg)
		}
		return nil
	}
	fmt.Fprintf(&d.b, "![%s](%s.png)\n\n*%s* ([SVG](%s.svg))\n\n", caption, name, caption, name)
	return nil
}

// Save writes report.md.
func (d *Doc) Save() error {
	text := d.b.String()
	for i, f := range d.later {
		p := f()
		if p != "" {
			p += "\n\n"
		}
		text = strings.Replace(text, fmt.Sprintf("\x00later %d\x00", i), p, 1)
	}
	return os.WriteFile(filepath.Join(d.Dir, "report.md"), []byte(text), 0o644)
}

// list writes xs as a report's prose lists them: "0, 0.2, 0.4" (not Go's
// "[0 0.2 0.4]", which reads as an interval).
func list[T any](xs []T) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ", ")
}

// rateWords writes a rate in bit/s with its unit: "16 Mbit/s", "256 kbit/s".
func rateWords(bps float64) string {
	switch {
	case bps >= 1e6:
		return fmt.Sprintf("%g Mbit/s", bps/1e6)
	case bps >= 1e3:
		return fmt.Sprintf("%g kbit/s", bps/1e3)
	}
	return fmt.Sprintf("%g bit/s", bps)
}
