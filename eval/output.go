package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hlmproject/hlm/dataset"
	"github.com/hlmproject/hlm/report"
)

// Columns of the results files, in order.
var Columns = []string{"label", "method", "dataset", "llm", "slm", "prompts", "tokens", "throughput_tps", "virtual_seconds",
	"slm_seconds_per_token", "uplink_seconds_per_token", "llm_seconds_per_token", "downlink_seconds_per_token",
	"communication_seconds_per_token",
	"transmission_rate", "true_skip_rate", "rejection_rate", "resampling_rate", "accepted_per_round",
	"uplink_bits_per_token", "compression_ratio", "downlink_bits", "energy", "energy_per_token", "mean_deviation",
	"rouge1", "rouge2", "rougeL", "cosine", "nll", "sets"}

// Value returns a row's value for a column (NaN when not measured).
//
// The _seconds_per_token columns split the virtual time per committed token
// (1 / throughput_tps) by what it was spent on: SLM drafting, uplink, LLM
// verification and downlink (hybrid.Result's parts of the virtual time);
// communication is uplink + downlink (CU-HLM Table II's "communication"
// latency, with "LLM computation" the llm column).
func (r Row) Value(col string) float64 {
	s := r.Summary
	opt := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	tokens := float64(s.Accepted + s.Resampled + s.Bonus + s.Skipped)
	if s.ThroughputTPS > 0 {
		tokens = s.ThroughputTPS * s.VirtualSeconds
	}
	switch col {
	case "prompts":
		return float64(r.Prompts)
	case "tokens":
		return math.Round(tokens)
	case "throughput_tps":
		return s.ThroughputTPS
	case "virtual_seconds":
		return s.VirtualSeconds
	case "slm_seconds_per_token", "uplink_seconds_per_token", "llm_seconds_per_token", "downlink_seconds_per_token", "communication_seconds_per_token":
		if n := math.Round(tokens); n > 0 {
			return timeParts[col](s) / n
		}
		return math.NaN()
	case "transmission_rate":
		return s.TransmissionRate
	case "true_skip_rate":
		return opt(s.TrueSkipRate)
	case "rejection_rate":
		return opt(s.RejectionRate)
	case "resampling_rate":
		return s.ResamplingRate
	case "accepted_per_round":
		return s.AcceptedPerRound
	case "uplink_bits_per_token":
		return s.BitsPerToken
	case "compression_ratio":
		return opt(s.CompressionRatio)
	case "downlink_bits":
		return float64(s.DownlinkBits)
	case "energy":
		return s.Energy
	case "energy_per_token":
		if tokens > 0 {
			return s.Energy / tokens
		}
		return math.NaN()
	case "mean_deviation":
		return opt(s.MeanDeviation)
	case "mean_entropy": // with entropy=true only; not a column of the results files
		return opt(s.MeanEntropy)
	case "rouge1":
		return r.Rouge1
	case "rouge2":
		return r.Rouge2
	case "rougeL":
		return r.RougeL
	case "cosine":
		return r.Cosine
	case "nll":
		return r.NLL
	}
	return math.NaN()
}

// cell formats one column of a row.
func (r Row) cell(col string) string {
	switch col {
	case "label":
		return r.Label
	case "method":
		return r.Method
	case "dataset":
		return r.Dataset
	case "llm":
		return r.LLM
	case "slm":
		return r.SLM
	case "sets":
		return strings.Join(r.Sets, " ")
	}
	v := r.Value(col)
	if math.IsNaN(v) {
		return ""
	}
	return fmt.Sprintf("%.6g", v)
}

// PM formats a row's column as "value ± half-width of its 95% CI" with
// the given significant digits for the value (the value alone when it has
// no interval; "–" when not measured).
func (r Row) PM(col string, digits int) string {
	return PM(r.Value(col), r.CI[col], digits)
}

// PM formats v ± h (h: the 95% half-width; 0 or NaN: v alone).
func PM(v, h float64, digits int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	if !(h > 1e-9*math.Abs(v)) || math.IsInf(h, 0) { // no interval, or rounding noise
		return fmt.Sprintf("%.*g", digits, v)
	}
	return fmt.Sprintf("%.*g ± %.2g", digits, v, h)
}

// Table is the rows as a report table with the given columns; a column
// with a confidence interval reads "value ± half-width".
func Table(title string, rows []Row, cols []string) *report.Table {
	t := &report.Table{Title: title, Columns: cols}
	for _, r := range rows {
		var cells []string
		for _, c := range cols {
			if _, ok := r.CI[c]; ok {
				cells = append(cells, r.PM(c, 4))
				continue
			}
			cells = append(cells, r.cell(c))
		}
		t.AddRow(cells...)
	}
	return t
}

// resultColumns are Columns with a COL_ci95 column after every column
// that can have a confidence interval.
func resultColumns() []string {
	var out []string
	for _, c := range Columns {
		out = append(out, c)
		_, ratio := ratioColumns[c]
		_, total := totalColumns[c]
		if ratio || total || c == "nll" || c == "rouge1" || c == "rouge2" || c == "rougeL" || c == "cosine" {
			out = append(out, c+"_ci95")
		}
	}
	return out
}

// ci95 says whether c is a half-width column COL_ci95 (isCI) and, if r has
// an interval for COL, returns its half-width (has).
func (r Row) ci95(c string) (h float64, isCI, has bool) {
	base, isCI := strings.CutSuffix(c, "_ci95")
	if !isCI {
		return 0, false, false
	}
	h, has = r.CI[base]
	return h, true, has
}

// WriteResults writes dir/name.csv and dir/name.json with every column and
// the 95% half-widths (COL_ci95). Numbers are formatted deterministically;
// wall-clock figures are excluded, so the same command and seed give
// byte-identical files.
func WriteResults(dir, name string, rows []Row) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cols := resultColumns()
	t := &report.Table{Title: name, Columns: cols}
	for _, r := range rows {
		var cells []string
		for _, c := range cols {
			switch h, isCI, has := r.ci95(c); {
			case isCI && has:
				cells = append(cells, fmt.Sprintf("%.6g", h))
			case isCI:
				cells = append(cells, "")
			default:
				cells = append(cells, r.cell(c))
			}
		}
		t.AddRow(cells...)
	}
	if err := report.WriteFile(filepath.Join(dir, name+".csv"), t.WriteCSV); err != nil {
		return err
	}
	var out []map[string]any
	for _, r := range rows {
		m := map[string]any{}
		for _, c := range cols {
			switch c {
			case "label", "method", "dataset", "llm", "slm":
				m[c] = r.cell(c)
			case "sets":
				m[c] = append([]string{}, r.Sets...) // a list, [] when nothing is set (not null)
			default:
				v, isCI, has := r.ci95(c)
				switch {
				case !isCI:
					v = r.Value(c)
				case !has:
					v = math.NaN()
				}
				if !math.IsNaN(v) && !math.IsInf(v, 0) {
					m[c] = v
				} else {
					m[c] = nil
				}
			}
		}
		out = append(out, m)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name+".json"), append(b, '\n'), 0o644)
}

// Curve is one line of a plot drawn from rows: the rows of one method (or
// any grouping) with x taken from a swept parameter, and the 95%
// confidence half-widths as error bars when the column has them.
func Curve(name string, rows []Row, x func(Row) float64, y string) report.Series {
	s := report.Series{Name: name}
	bars := false
	for _, r := range rows {
		s.X = append(s.X, x(r))
		s.Y = append(s.Y, r.Value(y))
		h, ok := r.CI[y]
		if !ok {
			h = math.NaN()
		}
		bars = bars || ok
		s.YErr = append(s.YErr, h)
	}
	if !bars {
		s.YErr = nil
	}
	return s
}

// scaled multiplies a curve's values and error bars by f(i) at point i (to
// share an axis, or per prompt); a value that is not positive becomes NaN
// (a logarithmic axis cannot show it).
func scaled(s report.Series, f func(i int) float64) report.Series {
	s.Y, s.YErr = slices.Clone(s.Y), slices.Clone(s.YErr)
	for i := range s.Y {
		s.Y[i] *= f(i)
		if !(s.Y[i] > 0) {
			s.Y[i] = math.NaN()
		}
		if s.YErr != nil {
			s.YErr[i] *= f(i)
		}
	}
	return s
}

// logSafe drops what a logarithmic axis cannot show: the points at zero
// or below (a curve of uplink bits where every token was skipped, as a
// small rerun can give), which the plot leaves out, and the error bars
// that would reach zero or below. The results files keep every value.
func logSafe(s report.Series) report.Series {
	s = positive(s)
	if s.YErr == nil {
		return s
	}
	s.YErr = append([]float64(nil), s.YErr...)
	for i := range s.YErr {
		if !(s.Y[i]-s.YErr[i] > 0) {
			s.YErr[i] = math.NaN()
		}
	}
	return s
}

// SetValue extracts the numeric value of key from a row's overrides: NaN
// when the row does not set key or its value is not a number.
func SetValue(r Row, key string) float64 {
	for _, s := range r.Sets {
		if k, v, ok := strings.Cut(s, "="); ok && k == key {
			// The whole value: a list such as tree_shape's "3,2,1" is no number.
			if x, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				return x
			}
		}
	}
	return math.NaN()
}

// columnRange is the range a column's values can take: [0, 1] for rates,
// shares, ROUGE and the deviation (a total variation distance), [−1, 1] for
// the cosine, [0, ∞) for the rest (times, bits, energy, NLL, counts).
func columnRange(col string) (lo, hi float64) {
	switch col {
	case "transmission_rate", "true_skip_rate", "rejection_rate", "resampling_rate",
		"rouge1", "rouge2", "rougeL", "mean_deviation":
		return 0, 1
	case "cosine":
		return -1, 1
	}
	return 0, math.Inf(1)
}

// OutOfRange lists, per column among cols, the rows whose interval passes
// the column's range, as "rejection_rate in [0, 1]: q-s 0.185 ± 2.3". Few
// prompts make such intervals (the t factor is 12.7 at two, 4.3 at three).
// The interval stays the t interval, not clipped: one that passes the range
// says that the mean is not pinned down.
func OutOfRange(rows []Row, cols []string) []string {
	var out []string
	for _, c := range cols {
		lo, hi := columnRange(c)
		var wide []string
		for _, r := range rows {
			v, h := r.Value(c), r.CI[c]
			if math.IsNaN(v) || !(h > 0) || (v-h >= lo && v+h <= hi) {
				continue
			}
			wide = append(wide, r.Label+" "+PM(v, h, 3))
		}
		if len(wide) == 0 {
			continue
		}
		rng := fmt.Sprintf("in [%g, %g]", lo, hi)
		if math.IsInf(hi, 1) {
			rng = fmt.Sprintf("≥ %g", lo)
		}
		out = append(out, fmt.Sprintf("%s %s: %s", c, rng, strings.Join(wide, ", ")))
	}
	return out
}

// outputLine is one run of outputs.jsonl: a point on one prompt.
type outputLine struct {
	Label     string   `json:"label"`
	Method    string   `json:"method"`
	Sets      []string `json:"sets"`
	Prompt    int      `json:"prompt"` // index in the run's prompt list (its seed is seed + prompt)
	ID        string   `json:"id"`
	Seed      uint64   `json:"seed"`
	Input     string   `json:"input"`
	Reference string   `json:"reference,omitempty"`
	Output    string   `json:"output"`
	Tokens    []int    `json:"tokens"`
	Stop      string   `json:"stop_reason"`
	// RougeL is the output's ROUGE-L F1 against the reference (absent
	// without one).
	RougeL *float64 `json:"rougeL,omitempty"`
}

// WriteOutputs writes DIR/NAME.jsonl: for every row and prompt (in the
// order of rows and of ex, the prompts the rows ran), the prompt, its
// reference, the text the method produced, its tokens and its seed: what
// a table's means are taken over, to read or to score again.
func WriteOutputs(dir, name string, rows []Row, ex []dataset.Example) error {
	return report.WriteFile(filepath.Join(dir, name+".jsonl"), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		for _, r := range rows {
			if len(r.Runs) != len(ex) {
				return fmt.Errorf("%s: %d runs for %d prompts", r.Label, len(r.Runs), len(ex))
			}
			withRef := 0 // PerPrompt holds the prompts with a reference
			for i, run := range r.Runs {
				l := outputLine{Label: r.Label, Method: r.Method, Sets: append([]string{}, r.Sets...), Prompt: i,
					ID: ex[i].ID, Seed: run.Seed, Input: ex[i].Prompt, Reference: ex[i].Reference,
					Output: run.Text, Tokens: append([]int{}, run.Tokens...), Stop: string(run.Stop)}
				if ex[i].Reference != "" {
					if rl := r.PerPrompt["rougeL"]; withRef < len(rl) {
						l.RougeL = &rl[withRef]
					}
					withRef++
				}
				if err := enc.Encode(l); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
