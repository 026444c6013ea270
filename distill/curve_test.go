package distill

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteCurve(t *testing.T) {
	dir := t.TempDir()
	var curve []Point
	for i := 1; i <= 1000; i++ {
		h := math.NaN()
		if i%100 == 0 {
			h = 0.5
		}
		curve = append(curve, Point{Step: i, Tokens: int64(64 * i), Loss: 1, TrainAccept: 0.4, HeldoutAccept: h, HeldoutLoss: h})
	}
	csv, png := filepath.Join(dir, "c.csv"), filepath.Join(dir, "c.png")
	if err := writeCurve(curve, csv, png); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(csv)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 1001 || !strings.HasSuffix(lines[1], ",0.4,,,0") {
		t.Fatalf("CSV: %d lines, second %q (held-out NaN must be empty)", len(lines), lines[1])
	}
	if st, err := os.Stat(png); err != nil || st.Size() < 1000 {
		t.Fatalf("PNG: %v", err)
	}
}
