package main

import (
	"bytes"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/distill"
)

// TestProgressNotATerminal: written to a file or a pipe, eval's progress is
// one line per finished cell (no carriage returns), also across the
// several series a paper rerun reports.
func TestProgressNotATerminal(t *testing.T) {
	var buf bytes.Buffer
	p := progressBar(&buf)
	for series := 0; series < 2; series++ {
		for i := 1; i <= 6; i++ {
			p(i, 6, []string{"q-s", "u-hlm", "llm"}[(i-1)/2])
		}
	}
	out := buf.String()
	if strings.Contains(out, "\r") {
		t.Fatalf("carriage return in non-terminal output:\n%q", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	re := regexp.MustCompile(`^\[\d+/6 +\d+% \d+s\] (q-s|u-hlm|llm): 2 runs$`)
	want := []string{"q-s", "u-hlm", "llm", "q-s", "u-hlm", "llm"}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, l := range lines {
		if !re.MatchString(l) || !strings.Contains(l, "] "+want[i]+":") {
			t.Errorf("line %d = %q, want the cell %s", i, l, want[i])
		}
	}
}

// TestProgressReusedRow: a call that counts several runs at once (a row
// eval reuses, reported once for all its prompts) is that cell's, not the
// one before it (the cell before was said to have 3 runs and the reused one 1).
func TestProgressReusedRow(t *testing.T) {
	var buf bytes.Buffer
	p := progressBar(&buf)
	p(1, 6, "hlm l=2")
	p(2, 6, "hlm l=2")
	p(4, 6, "hlm l=3 (as hlm l=2)")
	p(5, 6, "q-s l=2")
	p(6, 6, "q-s l=2")
	got := regexp.MustCompile(`\] (.*): (\d+) runs`).FindAllStringSubmatch(buf.String(), -1)
	want := [][2]string{{"hlm l=2", "2"}, {"hlm l=3 (as hlm l=2)", "2"}, {"q-s l=2", "2"}}
	if len(got) != len(want) {
		t.Fatalf("%d cells, want %d:\n%s", len(got), len(want), buf.String())
	}
	for i, w := range want {
		if got[i][1] != w[0] || got[i][2] != w[1] {
			t.Errorf("cell %d: %s with %s runs, want %s with %s", i, got[i][1], got[i][2], w[0], w[1])
		}
	}
}

// TestTrainBarOldEstimate: a checkpoint line between two held-out
// evaluations shows the latest estimate with the step it was made after,
// not as if it were measured at that line's step.
func TestTrainBarOldEstimate(t *testing.T) {
	var buf bytes.Buffer
	b := newTrainBar(&buf)
	nan := math.NaN()
	b.update(distill.Progress{Step: 1, Steps: 20, Point: distill.Point{HeldoutAccept: 0.25}, HeldoutAccept: 0.25, HeldoutStep: 1, Evaluated: true})
	b.update(distill.Progress{Step: 5, Steps: 20, Point: distill.Point{HeldoutAccept: nan}, HeldoutAccept: 0.25, HeldoutStep: 1, Saved: true})
	b.update(distill.Progress{Step: 6, Steps: 20, Point: distill.Point{HeldoutAccept: nan}, HeldoutAccept: 0.25, HeldoutStep: 1})
	b.update(distill.Progress{Step: 10, Steps: 20, Point: distill.Point{HeldoutAccept: 0.5}, HeldoutAccept: 0.5, HeldoutStep: 10, Evaluated: true})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{"accept(held-out) 0.2500  ", "accept(held-out) 0.2500 (step 1)  ", "accept(held-out) 0.5000  "}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d: %q, want it to hold %q", i+1, lines[i], w)
		}
	}
}

// TestLeadingSpaceTrimmer: hlm generate --chat writes a reply from its
// first visible character on, as the OpenAI endpoint sends it, whatever
// pieces the text arrives in.
func TestLeadingSpaceTrimmer(t *testing.T) {
	for _, tc := range []struct {
		pieces []string
		want   string
	}{
		{[]string{" Hello", " world"}, "Hello world"},
		{[]string{" ", "\n", " Hi", " "}, "Hi "},
		{[]string{"Hi", "  there"}, "Hi  there"},
		{[]string{"\u00a0é"}, "é"},
		{[]string{"  "}, ""},
	} {
		var buf bytes.Buffer
		w := &leadingSpaceTrimmer{w: &buf}
		for _, p := range tc.pieces {
			if n, err := w.Write([]byte(p)); n != len(p) || err != nil {
				t.Fatalf("Write(%q) = %d, %v", p, n, err)
			}
		}
		if buf.String() != tc.want {
			t.Errorf("%q: wrote %q, want %q", tc.pieces, buf.String(), tc.want)
		}
	}
}
