package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Table is a titled grid of text cells, written as Markdown or CSV. Rows
// may be shorter than Columns (missing cells are empty); a row longer than
// Columns adds unnamed columns.
type Table struct {
	Title   string
	Columns []string
	Rows    [][]string
	// HalfWidth names, after a column's name, the column WriteCSV adds
	// for the half-widths of its "x ± h" cells: "_pm" when empty (hlm
	// eval's tables, whose intervals are 95%, set "_ci95").
	HalfWidth string
}

// AddRow appends a row.
func (t *Table) AddRow(cells ...string) { t.Rows = append(t.Rows, cells) }

// width is the number of columns.
func (t Table) width() int {
	w := len(t.Columns)
	for _, r := range t.Rows {
		w = max(w, len(r))
	}
	return w
}

// cell is row r's cell c, "" when the row is short.
func cell(r []string, c int) string {
	if c < len(r) {
		return r[c]
	}
	return ""
}

// Markdown renders the table as GitHub-flavoured Markdown, preceded by the
// title in bold when there is one. Cells are padded so that columns line up
// in plain text; a column whose non-empty body cells are all numbers (as
// Float and PlusMinus write them) is right-aligned. Pipes are escaped and
// line breaks become spaces.
func (t Table) Markdown() string {
	n := t.width()
	if n == 0 {
		return ""
	}
	esc := func(s string) string {
		s = strings.ReplaceAll(s, `\`, `\\`)
		s = strings.ReplaceAll(s, "|", `\|`)
		s = strings.ReplaceAll(s, "\r\n", " ")
		return strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
	}
	head := make([]string, n)
	body := make([][]string, len(t.Rows))
	wid := make([]int, n)
	right := make([]bool, n)
	for c := range n {
		head[c] = esc(cell(t.Columns, c))
		wid[c] = max(3, utf8.RuneCountInString(head[c]))
		numeric, any := true, false
		for _, r := range t.Rows {
			if s := strings.TrimSpace(cell(r, c)); s != "" {
				any = true
				numeric = numeric && isNumber(s)
			}
		}
		right[c] = numeric && any
	}
	for i, r := range t.Rows {
		body[i] = make([]string, n)
		for c := range n {
			body[i][c] = esc(cell(r, c))
			wid[c] = max(wid[c], utf8.RuneCountInString(body[i][c]))
		}
	}
	var b strings.Builder
	if t.Title != "" {
		fmt.Fprintf(&b, "**%s**\n\n", esc(t.Title))
	}
	line := func(cells []string) {
		b.WriteString("|")
		for c, s := range cells {
			pad := strings.Repeat(" ", wid[c]-utf8.RuneCountInString(s))
			if right[c] {
				b.WriteString(" " + pad + s + " |")
			} else {
				b.WriteString(" " + s + pad + " |")
			}
		}
		b.WriteString("\n")
	}
	line(head)
	b.WriteString("|")
	for c := range n {
		if right[c] {
			b.WriteString(" " + strings.Repeat("-", wid[c]-1) + ": |")
		} else {
			b.WriteString(" " + strings.Repeat("-", wid[c]) + " |")
		}
	}
	b.WriteString("\n")
	for _, r := range body {
		line(r)
	}
	return b.String()
}

// isNumber reports whether s reads as a number, allowing what Float and
// PlusMinus write: "1.25", "-3", "12.5%", "0.85 ± 0.01", "NaN", "–".
func isNumber(s string) bool {
	if s == dash {
		return true
	}
	for _, part := range strings.Split(s, " ± ") {
		part = plainNumber(strings.TrimSuffix(strings.TrimSpace(part), "%"))
		if _, err := strconv.ParseFloat(part, 64); err != nil && part != dash {
			return false
		}
	}
	return true
}

// WriteCSV writes the header and the rows as CSV (RFC 4180, via
// encoding/csv); every record has the same width. The title is not
// written. The cells are written as numbers a program reads back: in a
// column whose non-empty cells are all numbers (as Float, PlusMinus and
// Percent write them), "0.85 ± 0.01" becomes 0.85 and, in a column of its
// own named by HalfWidth, 0.01; a column of percentages loses its "%" and
// gains " (%)" in its name, unless the name has a "%" already; and "–"
// (missing) becomes an empty cell. Other columns are written as they are.
// The numbers keep the decimals the cells were formatted with.
func (t Table) WriteCSV(w io.Writer) error {
	cols := t.csvColumns()
	cw := csv.NewWriter(w)
	var rec []string
	for c := range cols {
		rec = append(rec, cols[c].name)
		if cols[c].pm {
			rec = append(rec, cols[c].name+t.halfWidth())
		}
	}
	if err := cw.Write(rec); err != nil {
		return err
	}
	for _, r := range t.Rows {
		rec = rec[:0]
		for c, col := range cols {
			s := cell(r, c)
			if !col.numeric {
				rec = append(rec, s)
				continue
			}
			v, h, _ := strings.Cut(strings.TrimSpace(s), " ± ")
			rec = append(rec, csvNumber(v))
			if col.pm {
				rec = append(rec, csvNumber(h))
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// halfWidth is the suffix of a ± column's half-width column in CSV.
func (t Table) halfWidth() string {
	if t.HalfWidth != "" {
		return t.HalfWidth
	}
	return "_pm"
}

// csvColumn is how WriteCSV writes one column.
type csvColumn struct {
	name    string
	numeric bool // the cells are numbers: written without "%", "–" or " ± h"
	pm      bool // some cells have a half-width: written in a column of their own
}

// csvColumns decides, for every column, how WriteCSV writes it.
func (t Table) csvColumns() []csvColumn {
	cols := make([]csvColumn, t.width())
	for c := range cols {
		name := cell(t.Columns, c)
		numeric, any, pct, plain := true, false, false, false
		for _, r := range t.Rows {
			s := strings.TrimSpace(cell(r, c))
			if s == "" || s == dash {
				continue
			}
			any = true
			numeric = numeric && isNumber(s)
			cols[c].pm = cols[c].pm || strings.Contains(s, " ± ")
			if v, _, _ := strings.Cut(s, " ± "); strings.HasSuffix(v, "%") {
				pct = true
			} else {
				plain = true
			}
		}
		if !numeric || !any || (pct && plain) {
			// Text, or numbers of two units: written as they are.
			cols[c] = csvColumn{name: name}
			continue
		}
		if pct && !strings.Contains(name, "%") {
			name += " (%)"
		}
		cols[c].name, cols[c].numeric = name, true
	}
	return cols
}

// csvNumber is a number cell as CSV holds it: without its "%", and empty
// for "–".
func csvNumber(s string) string {
	s = strings.TrimSpace(s)
	if s == dash {
		return ""
	}
	return plainNumber(strings.TrimSuffix(s, "%"))
}

// plainNumber writes a number as a program reads it: the typographic
// minus ("−0.06", as the papers' rows quote them) as "-", and without the
// thousands separators of "5,134". Anything else is returned as it is.
func plainNumber(s string) string {
	s = strings.ReplaceAll(s, "−", "-")
	if thousands.MatchString(s) {
		s = strings.ReplaceAll(s, ",", "")
	}
	return s
}

// thousands is a number written with thousands separators: "5,134",
// "-1,234,567.5" (never "5, 7", a list).
var thousands = regexp.MustCompile(`^-?[0-9]{1,3}(,[0-9]{3})+(\.[0-9]+)?$`)

// Save writes the table to pathWithoutExt+".md" (Markdown) and
// pathWithoutExt+".csv".
func (t Table) Save(pathWithoutExt string) error {
	if err := os.WriteFile(pathWithoutExt+".md", []byte(t.Markdown()), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return WriteFile(pathWithoutExt+".csv", t.WriteCSV)
}

// WriteFile creates path and fills it with write, closing the file and
// reporting the first error of the three (errors are prefixed "report:").
func WriteFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("report: writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// dash stands for a missing value (NaN).
const dash = "–"

// Float formats x with a fixed number of decimals, the one format tables
// should use for a metric: "0.8531" for Float(0.85312, 4). NaN is written
// "–", infinities "inf" and "-inf"; negative zero is written as zero.
func Float(x float64, decimals int) string {
	switch {
	case math.IsNaN(x):
		return dash
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(x, 'f', decimals, 64)
	if strings.Trim(s, "-0.") == "" { // -0.000 → 0.000
		s = strings.TrimPrefix(s, "-")
	}
	return s
}

// PlusMinus formats a mean and the half-width of its confidence interval
// with the same number of decimals: "0.853 ± 0.012". A NaN half-width (a
// single value) leaves just the mean.
func PlusMinus(mean, half float64, decimals int) string {
	if math.IsNaN(half) || math.IsNaN(mean) {
		return Float(mean, decimals)
	}
	return Float(mean, decimals) + " ± " + Float(half, decimals)
}

// Percent formats a fraction as a percentage with the given decimals:
// Percent(0.4593, 1) is "45.9%".
func Percent(frac float64, decimals int) string {
	if math.IsNaN(frac) || math.IsInf(frac, 0) {
		return Float(frac, decimals)
	}
	return Float(100*frac, decimals) + "%"
}
