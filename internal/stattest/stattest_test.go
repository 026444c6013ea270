package stattest

import (
	"math"
	"testing"
)

func TestChi2Table(t *testing.T) {
	for df := 1; df < len(crit001); df++ {
		if q := Survival(df, crit001[df]); math.Abs(q-Alpha) > 2e-6 {
			t.Errorf("df=%d: P(χ² > %v) = %.7f, want %v", df, crit001[df], q, Alpha)
		}
	}
	for _, df := range []int{40, 63, 100, 400} {
		if q := Survival(df, Critical(df)); math.Abs(q-Alpha)/Alpha > 0.05 {
			t.Errorf("df=%d: Wilson–Hilferty critical value %v has tail %v, want %v", df, Critical(df), q, Alpha)
		}
	}
}
