package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/dataset"
	"github.com/hlmproject/hlm/internal/words"
	"github.com/hlmproject/hlm/metrics"
	"github.com/hlmproject/hlm/model"
)

func TestGrid(t *testing.T) {
	pts, err := Grid([]string{"hlm", "q-s"}, []string{"snr_db=-10,0", "l=2,4"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 8 || pts[0].Label != "hlm snr_db=-10 l=2" || pts[7].Label != "q-s snr_db=0 l=4" {
		t.Errorf("grid: %d points, first %q, last %q", len(pts), pts[0].Label, pts[len(pts)-1].Label)
	}
	if _, err := Grid([]string{"hlm"}, []string{"bad"}); err == nil {
		t.Error("malformed sweep: no error")
	}
	if _, err := Grid([]string{"q-s"}, []string{"temperature=0.5", "temperature=1"}); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("a key swept twice: %v", err)
	}
	if _, err := Grid([]string{"q-s"}, []string{"l=2, 2"}); err == nil || !strings.Contains(err.Error(), `value "2" given twice`) {
		t.Errorf("a value swept twice: %v", err)
	}
	// Values with commas: tree_shape's are always separated by ';', any
	// other key's when the sweep holds one.
	for _, c := range []struct {
		sweep string
		want  []string
	}{
		{"tree_shape=3,2,1", []string{"tree-q-s tree_shape=3,2,1"}},
		{"tree_shape=dynamic; 3,2,1;4,4", []string{"tree-q-s tree_shape=dynamic", "tree-q-s tree_shape=3,2,1", "tree-q-s tree_shape=4,4"}},
		{"l=2;4", []string{"tree-q-s l=2", "tree-q-s l=4"}},
	} {
		pts, err := Grid([]string{"tree-q-s"}, []string{c.sweep})
		var got []string
		for _, p := range pts {
			got = append(got, p.Label)
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("sweep %q: %q, %v; want %q", c.sweep, got, err, c.want)
		}
	}
}

// TestEvaluateReproducible: the same evaluation twice writes byte-identical
// results files, with quality metrics filled in.
func TestEvaluateReproducible(t *testing.T) {
	ms, ex, base := evalFixture(t, twoStories, 16)
	pts, _ := Grid([]string{"hlm", "q-s", "coupled"}, []string{"snr_db=-10,10"})
	var files [2][]byte
	for i := range files {
		rows, err := Evaluate(context.Background(), Setup{Models: ms, Base: base, NLL: true}, "t", ex, pts)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := WriteResults(dir, "results", rows); err != nil {
			t.Fatal(err)
		}
		if err := WriteOutputs(dir, "outputs", rows, ex); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"results.csv", "results.json", "outputs.jsonl"} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			files[i] = append(files[i], b...)
		}
		checkOutputs(t, filepath.Join(dir, "outputs.jsonl"), rows, ex)
		if r := rows[0]; r.NLL != r.NLL || r.RougeL != r.RougeL {
			t.Errorf("quality not measured: %+v", r)
		}
		// Every mean has its 95% interval (two prompts: finite, wide).
		for _, col := range []string{"throughput_tps", "transmission_rate", "uplink_bits_per_token", "nll", "rougeL", "mean_deviation", "energy_per_token"} {
			if h, ok := rows[0].CI[col]; !ok || !(h >= 0) {
				t.Errorf("%s: no confidence interval (%v, %v)", col, h, ok)
			}
		}
		if !bytes.Contains(files[i], []byte("throughput_tps_ci95")) {
			t.Error("results files lack the _ci95 columns")
		}
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("two identical evaluations wrote different results files")
	}
}

// checkOutputs: outputs.jsonl holds a line per row and prompt, in order,
// with the text, tokens and seed of that run and its ROUGE-L.
func checkOutputs(t *testing.T, path string, rows []Row, ex []dataset.Example) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	if len(lines) != len(rows)*len(ex) {
		t.Fatalf("%d lines, want %d rows × %d prompts", len(lines), len(rows), len(ex))
	}
	for k, line := range lines {
		r, i := rows[k/len(ex)], k%len(ex)
		var l outputLine
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatalf("line %d: %v", k+1, err)
		}
		run := r.Runs[i]
		if l.Label != r.Label || l.Prompt != i || l.ID != ex[i].ID || l.Input != ex[i].Prompt || l.Output != run.Text ||
			l.Seed != run.Seed || !slices.Equal(l.Tokens, run.Tokens) || l.Output != r.Outputs[i] {
			t.Fatalf("line %d does not match row %s, prompt %d: %s", k+1, r.Label, i, line)
		}
		if want := metrics.Rouge(run.Text, ex[i].Reference).RougeL.F1; l.RougeL == nil || *l.RougeL != want {
			t.Fatalf("line %d: rougeL %v, want %v", k+1, l.RougeL, want)
		}
	}
}

// TestProseLists: the reports' prose writes lists and rates as a reader
// expects, not in Go's notation.
func TestProseLists(t *testing.T) {
	if got := list([]float64{0, 0.2, 1}); got != "0, 0.2, 1" {
		t.Errorf("list = %q", got)
	}
	if got := list([]int{4}); got != "4" {
		t.Errorf("list of one = %q", got)
	}
	for _, c := range []struct {
		bps  float64
		want string
	}{{16e6, "16 Mbit/s"}, {1e6, "1 Mbit/s"}, {256e3, "256 kbit/s"}, {500, "500 bit/s"}} {
		if got := rateWords(c.bps); got != c.want {
			t.Errorf("rateWords(%g) = %q, want %q", c.bps, got, c.want)
		}
	}
	if words.Times(1) != "once" || words.Times(2) != "twice" || words.Times(3) != "3 times" {
		t.Errorf("times: %s, %s, %s", words.Times(1), words.Times(2), words.Times(3))
	}
	s := sqsScale{betas: []float64{0.001, 0.01}}
	if got := s.fig5(); !slices.Equal(got, []float64{0.001, 0.01}) {
		t.Errorf("fig5 of the quick scale = %v", got)
	}
}

// TestColumnsDocumented: every column of the results files is in
// docs/design.md's table "Results of hlm eval", and the table names no
// column the files lack.
func TestColumnsDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "design.md"))
	if err != nil {
		t.Skipf("docs/design.md: %v", err)
	}
	_, sec, ok := strings.Cut(string(b), "## Results of `hlm eval`")
	if !ok {
		t.Fatal("docs/design.md has no section \"Results of `hlm eval`\"")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	documented := map[string]bool{}
	for _, line := range strings.Split(sec, "\n") {
		cell, _, ok := strings.Cut(strings.TrimPrefix(line, "| "), " |")
		if !ok || !strings.HasPrefix(line, "| `") {
			continue
		}
		for _, name := range strings.Split(cell, ", ") {
			documented[strings.Trim(name, "`")] = true
		}
	}
	for _, c := range Columns {
		if !documented[c] {
			t.Errorf("column %s is not in docs/design.md's table", c)
		}
		delete(documented, c)
	}
	for c := range documented {
		t.Errorf("docs/design.md's table names %s, which the results files do not have", c)
	}
}

// TestColumnsMeasured: every numeric column of the results files is
// measured by some method (a column added to Columns but not to
// Row.Value would be silently empty), and every pooled rate's value is
// the Σ num / Σ den over the prompts that its interval is computed from
// (ratioColumns), so the two definitions cannot drift apart. cosine needs
// GloVe vectors and is left out.
func TestColumnsMeasured(t *testing.T) {
	ms, ex, base := evalFixture(t, twoStories, 16)
	pts, _ := Grid([]string{"hlm", "q-s", "u-hlm", "k-sqs"}, nil)
	rows, err := Evaluate(context.Background(), Setup{Models: ms, Base: base, NLL: true}, "t", ex, pts)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Columns {
		switch c {
		case "label", "method", "dataset", "llm", "slm", "sets", "cosine":
			continue
		}
		measured := false
		for _, r := range rows {
			measured = measured || !math.IsNaN(r.Value(c))
		}
		if !measured {
			t.Errorf("column %s: no method measures it (Row.Value lacks it?)", c)
		}
	}
	for _, r := range rows {
		if r.LLM == "" || r.SLM == "" {
			t.Errorf("%s: the models that ran are not named (llm %q, slm %q)", r.Label, r.LLM, r.SLM)
		}
	}
	for col, f := range ratioColumns {
		for _, r := range rows {
			var num, den float64
			for _, run := range r.Runs {
				n, d := f(run)
				num, den = num+n, den+d
			}
			got := r.Value(col)
			if den == 0 {
				continue
			}
			if want := num / den; math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Errorf("%s %s: Value %v, Σ num / Σ den over the prompts %v", r.Label, col, got, want)
			}
		}
	}
}

// replicaless is a draft model the replica method refuses (as llama.cpp's
// backend: logits that depend on one-token vs block evaluation).
type replicaless struct{ model.Model }

func (replicaless) BlockVariant() string { return "a test draft" }

// TestEvaluateChecksFirst: a grid with a point its draft cannot run is
// refused before any point runs (Progress is never called), naming the
// point.
func TestEvaluateChecksFirst(t *testing.T) {
	ms, ex, base := evalFixture(t, "Once upon a time there was a cat.", 4)
	ms2 := *ms
	ms2.SLM = replicaless{ms.SLM}
	pts, _ := Grid([]string{"hlm", "q-s", "replica"}, nil)
	ran := 0
	_, err := Evaluate(context.Background(), Setup{Models: &ms2, Base: base, Progress: func(int, int, string) { ran++ }}, "t", ex, pts)
	if err == nil || !strings.Contains(err.Error(), "replica") || !strings.Contains(err.Error(), "a test draft") {
		t.Errorf("err = %v, want the replica point refused with the draft's reason", err)
	}
	if ran != 0 {
		t.Errorf("%d runs before the refusal", ran)
	}
}

// TestEvaluateReusesInert: a point that differs from an earlier one only
// in keys its method does not read is not run again; its row is the one
// a run of it gives on its own, and points whose method reads the key
// run.
func TestEvaluateReusesInert(t *testing.T) {
	ms, ex, base := evalFixture(t, "Once upon a time there was a cat.\n\nTom had a red car.", 12)
	pts, _ := Grid([]string{"hlm", "q-s"}, []string{"l=2,4"})
	var labels []string
	rows, err := Evaluate(context.Background(), Setup{Models: ms, Base: base, Workers: 1, Progress: func(_, _ int, l string) { labels = append(labels, l) }}, "t", ex, pts)
	if err != nil {
		t.Fatal(err)
	}
	reused := 0
	for _, l := range labels {
		if strings.Contains(l, "(as hlm l=2") {
			reused++
		}
		if strings.Contains(l, "(as q-s") {
			t.Errorf("q-s reads l, yet a point was reused: %q", l)
		}
	}
	if reused != 1 {
		t.Errorf("hlm l=4 reused %d times, want once; progress %q", reused, labels)
	}
	alone, err := Evaluate(context.Background(), Setup{Models: ms, Base: base, Workers: 1}, "t", ex, []Point{pts[1]})
	if err != nil {
		t.Fatal(err)
	}
	read := func(rs []Row) string {
		b, err := os.ReadFile(filepath.Join(resultsDir(t, rs), "results.csv"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if a, b := read(rows[1:2]), read(alone); a != b || rows[1].Label != "hlm l=4" {
		t.Errorf("the reused row differs from a run of its own:\n%s\n%s", a, b)
	}
	if rows[2].Summary.Rounds == rows[3].Summary.Rounds {
		t.Errorf("q-s at l=2 and l=4: %d rounds both", rows[2].Summary.Rounds)
	}
}
