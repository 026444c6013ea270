package eval

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/sim"
	"github.com/hlmproject/hlm/uncertainty"
)

// TestCalibrationReport: the calibration table puts the measured risk
// next to R and its bound, with k* on both halves; a slope a ≤ 0 is said in
// bold instead of being replaced silently by the paper's a and b.
func TestCalibrationReport(t *testing.T) {
	p := &paper{cfg: PaperConfig{NCal: 100}, doc: &Doc{}}
	c := sim.CalibrationResult{Calibration: uncertainty.Calibration{N: 6400, Fit: uncertainty.Linear{A: 0.8, B: -0.05, R2: 0.9}, Delta: 0.6,
		RiskProne: 0.8125, RiskAverse: 0.0625, Risk: 4.9e-3, RiskBound: 9.9e-3, EmpiricalRisk: 2.2e-3}, KOffline: 30, KHalves: [2]int{29, 31}, Pairs: 6400}
	md := p.calibrationTable(c, []string{"paper"}).Markdown()
	for _, want := range []string{"measured R", "R (integral)", "Hölder bound", "0.0022", "0.0049", "0.0099", "29, 31"} {
		if !strings.Contains(md, want) {
			t.Errorf("calibration table lacks %q:\n%s", want, md)
		}
	}
	p.calibrationNote(c)
	if strings.Contains(p.doc.b.String(), "not positive") {
		t.Error("a > 0 reported as not positive")
	}
	c.Degenerate, c.Fit.A = true, -0.3
	p.calibrationNote(c)
	if s := p.doc.b.String(); !strings.Contains(s, "**The fitted slope is not positive (a = -0.300 ≤ 0)") || !strings.Contains(s, "not the paper's a and b") {
		t.Errorf("a ≤ 0 not reported:\n%s", s)
	}
}

// TestCalibrationDisjoint: calibration runs start from BOS alone, so they
// share no prompt with any evaluated example; the evaluation samples are
// prefixes of each other.
func TestCalibrationDisjoint(t *testing.T) {
	p := &paper{cfg: PaperConfig{NCal: 5}}
	ex, err := p.calibrationExamples()
	if err != nil {
		t.Fatal(err)
	}
	if len(ex) != 5 {
		t.Fatalf("%d calibration runs, want 5", len(ex))
	}
	for _, e := range ex {
		if e.Prompt != "" || e.Reference != "" {
			t.Errorf("calibration example %+v is not BOS-only", e)
		}
	}
}

func TestFisherCI(t *testing.T) {
	lo, hi := fisherCI(0.5, 103) // z = 0.5493, half-width 1.96/10
	if math.Abs(lo-math.Tanh(0.549306-0.195996)) > 1e-5 || math.Abs(hi-math.Tanh(0.549306+0.195996)) > 1e-5 {
		t.Errorf("fisherCI(0.5, 103) = [%v, %v]", lo, hi)
	}
}

// TestCouplingSmall: the coupling rerun at a small size — what a
// researcher shrinks it to for a bigger LLM, since it has no --quick —
// finishes its report: its log-axis SNR curve drops the error bars that
// would reach below zero instead of refusing the plot. HLM's row names
// the bits its codec sends: ids of ⌈log2 512⌉ = 9 bits here (it said the
// papers' 15 whatever the vocabulary).
func TestCouplingSmall(t *testing.T) {
	cfg := PaperConfig{Name: "coupling", Out: t.TempDir(), LLM: builtin.DefaultLLM, N: 3, NCurve: 3, NCal: 5, MaxTokens: 16, Command: "test"}
	runQuickPaper(t, cfg, []string{"per_bit.png", "snr.png", "snr.csv"}, []string{"Throughput vs average SNR", "HLM (full, 8+9 bits) +bonus"})
}

// TestPaperSizesListed: every rerun says which size flags it reads (hlm
// eval paper refuses the others, which it would ignore).
func TestPaperSizesListed(t *testing.T) {
	for _, name := range Papers {
		if _, ok := PaperSizes[name]; !ok {
			t.Errorf("PaperSizes has no entry for %s", name)
		}
	}
	for name := range PaperSizes {
		if !slices.Contains(Papers, name) {
			t.Errorf("PaperSizes lists %s, which is no paper", name)
		}
	}
}

// TestMethodNotes: the header names only the methods the report ran: the
// lossless ones by how they are lossless, and the one-token rule only
// where one-token methods ran (it named HLM, Q-S, … and the rule in every
// report).
func TestMethodNotes(t *testing.T) {
	for _, c := range []struct {
		ran      []string
		want     []string
		wantNot  []string
		wantNone bool
	}{
		{ran: nil, wantNone: true},
		{ran: []string{hybrid.LLM, hybrid.SLM}, wantNone: true},
		{ran: []string{hybrid.KSQS, hybrid.CSQS}, want: []string{"(k-sqs and c-sqs sample each draft"}, wantNot: []string{"one-token", "race"}},
		{ran: []string{hybrid.LLM, hybrid.SLM, hybrid.HLM, hybrid.RandHLM, hybrid.UHLM}, want: []string{"(hlm sample each draft", "one-token methods commit exactly one token"}, wantNot: []string{"u-hlm", "rand-hlm"}},
		{ran: []string{hybrid.QS, hybrid.Replica, hybrid.Coupled, hybrid.CoupledList}, want: []string{"q-s and replica sample", "coupled and coupled-list commit the winner"}, wantNot: []string{"one-token"}},
	} {
		got := methodNotes(c.ran)
		if c.wantNone != (got == "") {
			t.Errorf("%v: %q", c.ran, got)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%v: %q lacks %q", c.ran, got, w)
			}
		}
		for _, w := range c.wantNot {
			if strings.Contains(got, w) {
				t.Errorf("%v: %q has %q", c.ran, got, w)
			}
		}
	}
}

// TestDocLater: a paragraph added with Later is written where it was
// added, with the text its function gives at Save; an empty one leaves
// nothing.
func TestDocLater(t *testing.T) {
	d := &Doc{Dir: t.TempDir()}
	text := "early"
	d.P("a")
	d.Later(func() string { return text })
	d.Later(func() string { return "" })
	d.P("c")
	text = "known at the end"
	if err := d.Save(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(d.Dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "a\n\nknown at the end\n\nc\n\n"; string(b) != want {
		t.Errorf("report %q, want %q", b, want)
	}
}

// failingPlot is a plot whose Save fails with err.
type failingPlot struct{ err error }

func (f failingPlot) Save(string) error { return f.err }

// TestDocPlotThatCannotBeDrawn: a plot that cannot be drawn costs the
// figure, not the rerun (the report says so, and Notice is told); one
// whose file cannot be written is an error. A rerun of pair 2 at a small
// size failed at its end, after every run, on a curve of uplink bits at
// zero on a log axis, and wrote no report.
func TestDocPlotThatCannotBeDrawn(t *testing.T) {
	var told []string
	d := &Doc{Dir: t.TempDir(), Notice: func(msg string) { told = append(told, msg) }}
	if err := d.Plot("fig9b", "Fig. 9b", failingPlot{errors.New("y − err = 0 on a log axis")}); err != nil {
		t.Fatalf("a plot that cannot be drawn: %v", err)
	}
	if !strings.Contains(d.b.String(), "plot fig9b could not be drawn (y − err = 0 on a log axis)") || len(told) != 1 {
		t.Errorf("report %q, told %q: want both to say the plot was not drawn, and why", d.b.String(), told)
	}
	werr := &fs.PathError{Op: "open", Path: "/nowhere/fig.png", Err: fs.ErrPermission}
	if err := d.Plot("fig", "Fig.", failingPlot{werr}); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("a plot whose file cannot be written: %v, want the error", err)
	}
}

// TestRerunStoppedKeepsReport: a rerun that fails writes the report of
// what ran before, ending with the error, and says where it is.
func TestRerunStoppedKeepsReport(t *testing.T) {
	dir := t.TempDir()
	p := &paper{doc: &Doc{Dir: dir}}
	p.doc.P("the table of the first hour")
	boom := errors.New("the LLM failed at the last section")
	err := p.stopped(boom)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), filepath.Join(dir, "report.md")) {
		t.Errorf("error %v: want the failure and where the report is", err)
	}
	b, rerr := os.ReadFile(filepath.Join(dir, "report.md"))
	if rerr != nil || !strings.Contains(string(b), "the table of the first hour") || !strings.Contains(string(b), boom.Error()) {
		t.Errorf("report %q, %v: want what ran before and the error", b, rerr)
	}
}
