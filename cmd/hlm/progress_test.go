package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
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
