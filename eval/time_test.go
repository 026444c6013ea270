package eval

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/hlmproject/hlm/dataset"
	"github.com/hlmproject/hlm/hybrid"
)

var timeColumns = []string{"slm_seconds_per_token", "uplink_seconds_per_token", "llm_seconds_per_token", "downlink_seconds_per_token", "communication_seconds_per_token"}

// TestTimeColumnsValue: the per-token parts of the virtual time are the
// summary's parts over the committed tokens (made-up summary: 8 tokens in
// 1.875 s).
func TestTimeColumnsValue(t *testing.T) {
	r := Row{Summary: hybrid.Result{VirtualSeconds: 1.875, ThroughputTPS: 8 / 1.875, SLMSeconds: 0.5, UplinkSeconds: 0.25, LLMSeconds: 1, DownlinkSeconds: 0.125}}
	want := map[string]float64{"slm_seconds_per_token": 0.0625, "uplink_seconds_per_token": 0.03125, "llm_seconds_per_token": 0.125,
		"downlink_seconds_per_token": 0.015625, "communication_seconds_per_token": 0.046875, "tokens": 8}
	for col, w := range want {
		if got := r.Value(col); got != w {
			t.Errorf("%s = %v, want %v", col, got, w)
		}
	}
	if v := (Row{}).Value("llm_seconds_per_token"); !math.IsNaN(v) {
		t.Errorf("no tokens: llm_seconds_per_token = %v, want NaN (not measured)", v)
	}
}

// TestTimeColumns: an evaluation's results files carry the per-token parts
// of the virtual time with their 95% intervals, and they are consistent:
// SLM + uplink + LLM + downlink is the virtual time per token
// (1 / throughput_tps), communication is uplink + downlink, the LLM part is
// τ_LLM per upload and the SLM part τ_SLM per drafted token (fixed τ), and
// the files hold what Row.Value gives.
func TestTimeColumns(t *testing.T) {
	ms, _ := storiesPair(t)
	ex, err := dataset.SplitStories("Once upon a time there was a cat.\n\nTom had a red car.\n\nThe sun was hot.", "t")
	if err != nil {
		t.Fatal(err)
	}
	base := hybrid.DefaultParams()
	base.MaxTokens, base.UTh = 12, 0.4
	base.Channel.DownlinkBps = 1e6 // the downlink takes time too
	pts, _ := Grid([]string{"u-hlm", "cu-hlm-online", "q-s", "llm"}, nil)
	rows, err := Evaluate(context.Background(), Setup{Models: ms, Base: base, Workers: 1}, "t", ex, pts)
	if err != nil {
		t.Fatal(err)
	}
	dir := resultsDir(t, rows)
	f, err := os.Open(filepath.Join(dir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var js []map[string]any
	if err := json.Unmarshal(b, &js); err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(rows)+1 || len(js) != len(rows) {
		t.Fatalf("%d CSV records and %d JSON rows for %d rows", len(recs), len(js), len(rows))
	}
	head := recs[0]
	for _, col := range timeColumns {
		for _, c := range []string{col, col + "_ci95"} {
			if !slices.Contains(head, c) {
				t.Errorf("results.csv lacks %s", c)
			}
		}
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }
	for i, r := range rows {
		v := map[string]float64{}
		for _, col := range append(slices.Clone(timeColumns), "throughput_tps", "tokens") {
			v[col] = r.Value(col)
			csvV, err := strconv.ParseFloat(recs[i+1][slices.Index(head, col)], 64)
			if err != nil || math.Abs(csvV-v[col]) > 5e-6*math.Abs(v[col]) { // CSV: 6 significant digits
				t.Errorf("%s: %s is %v in the CSV (%v), Value %v", r.Label, col, csvV, err, v[col])
			}
			if jv, ok := js[i][col].(float64); !ok || jv != v[col] {
				t.Errorf("%s: %s is %v in the JSON, Value %v", r.Label, col, js[i][col], v[col])
			}
		}
		t.Logf("%-14s per token: SLM %.4g s, uplink %.4g s, LLM %.4g s, downlink %.4g s, communication %.4g s; %.4g tokens/s", r.Label,
			v["slm_seconds_per_token"], v["uplink_seconds_per_token"], v["llm_seconds_per_token"], v["downlink_seconds_per_token"], v["communication_seconds_per_token"], v["throughput_tps"])
		sum := v["slm_seconds_per_token"] + v["uplink_seconds_per_token"] + v["llm_seconds_per_token"] + v["downlink_seconds_per_token"]
		s := r.Summary
		n := v["tokens"]
		checks := []struct {
			what      string
			got, want float64
		}{
			{"parts vs 1/throughput", sum, 1 / v["throughput_tps"]},
			{"communication vs uplink + downlink", v["communication_seconds_per_token"], v["uplink_seconds_per_token"] + v["downlink_seconds_per_token"]},
			{"LLM vs τ_LLM·uploads/tokens", v["llm_seconds_per_token"], base.TauLLM * float64(s.Uploads) / n},
			{"SLM vs τ_SLM·drafted/tokens", v["slm_seconds_per_token"], base.TauSLM * float64(s.Drafted) / n},
		}
		for _, c := range checks {
			if !near(c.got, c.want) {
				t.Errorf("%s: %s: %v, want %v", r.Label, c.what, c.got, c.want)
			}
		}
		if r.Method != hybrid.LLM && !(v["uplink_seconds_per_token"] > 0 && v["downlink_seconds_per_token"] > 0) {
			t.Errorf("%s: no communication time: %v", r.Label, v)
		}
		for _, col := range timeColumns {
			if h, ok := r.CI[col]; !ok || !(h >= 0) {
				t.Errorf("%s: %s has no 95%% interval (%v, %v)", r.Label, col, h, ok)
			}
		}
	}
}

// TestOutOfRange: an interval is listed where it passes its column's range
// ([0, 1] for rates and ROUGE, [−1, 1] for the cosine, ≥ 0 for the rest),
// and only there.
func TestOutOfRange(t *testing.T) {
	rows := []Row{
		{Point: Point{Label: "a"}, RougeL: 0.1, Cosine: -0.5, NLL: 1, Summary: hybrid.Result{ThroughputTPS: 5},
			CI: map[string]float64{"rougeL": 0.2, "cosine": 0.4, "nll": 0.9, "throughput_tps": 6}},
		{Point: Point{Label: "b"}, RougeL: 0.9, Cosine: 0.5, NLL: 1, Summary: hybrid.Result{ThroughputTPS: 5},
			CI: map[string]float64{"rougeL": 0.05, "cosine": 0.6, "nll": 1, "throughput_tps": 5}},
	}
	got := OutOfRange(rows, []string{"throughput_tps", "rougeL", "cosine", "nll", "energy"})
	want := []string{
		"throughput_tps ≥ 0: a 5 ± 6",
		"rougeL in [0, 1]: a 0.1 ± 0.2",
		"cosine in [-1, 1]: b 0.5 ± 0.6",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
