package channel

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const sampleTrace = `# time_seconds rate_bps
0    350e3   # low
1.5  4e6

2	1e6
3    1e6   # end of the looped trace
`

func TestParseTrace(t *testing.T) {
	tr, err := ParseTrace(strings.NewReader(sampleTrace))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Len() != 4 || tr.Period() != 3*time.Second {
		t.Fatalf("Len %d Period %v", tr.Len(), tr.Period())
	}
	for _, tc := range []struct {
		at   time.Duration
		loop bool
		want float64
	}{
		{0, false, 350e3},
		{1499 * time.Millisecond, false, 350e3},
		{1500 * time.Millisecond, false, 4e6},
		{2 * time.Second, false, 1e6},
		{100 * time.Second, false, 1e6},      // the last rate holds
		{3 * time.Second, true, 350e3},       // looped: 3 s ≡ 0
		{4600 * time.Millisecond, true, 4e6}, // ≡ 1.6 s
		{-time.Second, true, 1e6},            // ≡ 2 s
	} {
		if got := tr.RateAt(tc.at, tc.loop); got != tc.want {
			t.Errorf("RateAt(%v, loop=%v) = %g, want %g", tc.at, tc.loop, got, tc.want)
		}
	}

	// Before its first time a trace has its first rate; a one-line trace is
	// constant even when looped.
	tr, err = ParseTrace(strings.NewReader("2 5e5\n"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.RateAt(0, true) != 5e5 || tr.RateAt(time.Hour, true) != 5e5 {
		t.Errorf("one-line trace is not constant")
	}
}

func TestParseTraceErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "no \"time_seconds rate_bps\" lines"},
		{"# only a comment\n\n", "no "},
		{"0 1e6\n1\n", "line 2: want 2 fields"},
		{"0 1e6 7\n", "line 1: want 2 fields"},
		{"x 1e6\n", `line 1: time "x" is not a number`},
		{"0 fast\n", `line 1: rate "fast" is not a number`},
		{"-1 1e6\n", "line 1: time -1 s is not in"},
		{"NaN 1e6\n", "line 1: time NaN"},
		{"1e10 1e6\n", "line 1: time 1e10"},
		{"0 0\n", "line 1: rate 0 bit/s must be positive"},
		{"0 -5\n", "line 1: rate -5"},
		{"0 +Inf\n", "line 1: rate +Inf"},
		{"0 1e6\n\n# gap\n0 2e6\n", "line 4: time 0 s is not after the previous time 0 s"},
		{"1 1e6\n0.5 1e6\n", "line 2: time 0.5 s is not after"},
		{"0 1e6\n" + strings.Repeat(" ", 5000) + "1 1e6\n", "line 2: bufio.Scanner: token too long"},
	} {
		_, err := ParseTrace(strings.NewReader(tc.in))
		if !errors.Is(err, ErrTrace) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseTrace(%.40q): %v, want ErrTrace containing %q", tc.in, err, tc.want)
		}
	}
}

func TestTraceLink(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rates.trace")
	if err := os.WriteFile(path, []byte(sampleTrace), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Channel = ChannelTrace
	cfg.TraceFile = path
	cfg.TraceLoop = true
	cfg.DownlinkBps = 2e6
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := l.Round(4600 * time.Millisecond)
	if s.UpRate != 4e6 || s.DownRate != 2e6 || !math.IsNaN(s.SNR) {
		t.Errorf("state %+v", s)
	}

	cfg.TraceFile = filepath.Join(dir, "missing")
	if _, err := New(cfg); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.trace")
	if err := os.WriteFile(bad, []byte("0 1e6\n1 x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.TraceFile = bad
	if _, err := New(cfg); !errors.Is(err, ErrTrace) || !strings.Contains(err.Error(), "bad.trace: ") || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad file: %v", err)
	}
}

// FuzzParseTrace: the parser never panics, and whatever it accepts obeys the
// invariants RateAt relies on.
func FuzzParseTrace(f *testing.F) {
	for _, s := range []string{
		sampleTrace, "", "0 1\n", "0 1e6\n0 1e6\n", "1e-9 1\n2e-9 2\n", "0x10 0x1p4\n", "9.2e9 1\n",
		"# c\n\t0\t1 # c\n", "0 1\r\n1 2\r\n", "inf 1\n", "0 1e-320\n",
	} {
		f.Add(s, int64(0))
	}
	f.Fuzz(func(t *testing.T, in string, at int64) {
		tr, err := ParseTrace(strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrTrace) {
				t.Fatalf("error %v does not wrap ErrTrace", err)
			}
			return
		}
		if tr.Len() == 0 {
			t.Fatal("accepted an empty trace")
		}
		for i := range tr.times {
			if tr.times[i] < 0 || (i > 0 && tr.times[i] <= tr.times[i-1]) {
				t.Fatalf("times not strictly increasing from 0: %v", tr.times)
			}
			if r := tr.rates[i]; !(r > 0) || math.IsInf(r, 0) {
				t.Fatalf("rate %g accepted", r)
			}
		}
		for _, loop := range []bool{false, true} {
			if r := tr.RateAt(time.Duration(at), loop); !(r > 0) || math.IsInf(r, 0) {
				t.Fatalf("RateAt(%d, %v) = %g", at, loop, r)
			}
		}
	})
}
