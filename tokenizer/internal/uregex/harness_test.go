package uregex

import (
	"os"
	"runtime/debug"
	"strconv"
	"testing"
)

// TestHarness runs FindAll UREGEX_N times with the pattern named
// UREGEX_PATTERN on the benchmark text (the multilingual one if
// UREGEX_TEXT is "multi"), with the garbage collector off:
// a fixed workload for instruction counters (valgrind), which the noise
// of a shared machine does not touch.
func TestHarness(t *testing.T) {
	name, n := os.Getenv("UREGEX_PATTERN"), os.Getenv("UREGEX_N")
	if name == "" || n == "" {
		t.Skip("UREGEX_PATTERN and UREGEX_N not set")
	}
	times, err := strconv.Atoi(n)
	if err != nil {
		t.Fatal(err)
	}
	text := benchText(t)
	if os.Getenv("UREGEX_TEXT") == "multi" {
		text = multilingualText()
	}
	re := MustCompile(patternByName(name))
	dst, _ := re.FindAll(text, nil)
	debug.SetGCPercent(-1)
	for range times {
		dst, _ = re.FindAll(text, dst[:0])
	}
}
