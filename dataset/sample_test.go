package dataset

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

func numbered(n int) []Example {
	ex := make([]Example, n)
	for i := range ex {
		ex[i].ID = fmt.Sprint(i)
	}
	return ex
}

func ids(ex []Example) []string {
	out := make([]string, len(ex))
	for i, e := range ex {
		out[i] = e.ID
	}
	return out
}

func TestSample(t *testing.T) {
	ex := numbered(50)
	for _, tc := range []struct {
		n, want int
	}{{-1, 0}, {0, 0}, {1, 1}, {10, 10}, {50, 50}, {80, 50}} {
		got := Sample(ex, tc.n, 7)
		if len(got) != tc.want {
			t.Errorf("Sample(50 examples, %d) has %d, want %d", tc.n, len(got), tc.want)
		}
		seen := map[string]bool{}
		for _, e := range got {
			if seen[e.ID] {
				t.Errorf("Sample(%d) repeats %s", tc.n, e.ID)
			}
			seen[e.ID] = true
		}
	}
	a, b := ids(Sample(ex, 20, 7)), ids(Sample(ex, 20, 7))
	if !slices.Equal(a, b) {
		t.Errorf("same seed, different samples:\n%v\n%v", a, b)
	}
	if c := ids(Sample(ex, 10, 7)); !slices.Equal(c, a[:10]) {
		t.Errorf("Sample(10) = %v is not a prefix of Sample(20) = %v", c, a)
	}
	if d := ids(Sample(ex, 20, 8)); slices.Equal(a, d) {
		t.Error("seeds 7 and 8 give the same sample")
	}
	// Pinned, so that a change of algorithm is noticed (it would change
	// which prompts past experiments ran on).
	if got, want := ids(Sample(ex, 5, 1)), []string{"44", "49", "45", "5", "13"}; !slices.Equal(got, want) {
		t.Errorf("Sample(50 examples, 5, seed 1) = %v, want %v", got, want)
	}
	if len(Sample(nil, 3, 1)) != 0 {
		t.Error("sample of nothing is not empty")
	}
}

// TestSampleUniform draws the first element of Sample(10 examples, 1, seed)
// for seeds 0..99,999: each example should be first with probability 1/10.
// Tolerance: 5 standard deviations of a binomial(1e5, 0.1) count (±474).
func TestSampleUniform(t *testing.T) {
	const n, k = 100_000, 10
	ex := numbered(k)
	var count [k]int
	for seed := range uint64(n) {
		var i int
		fmt.Sscan(Sample(ex, 1, seed)[0].ID, &i)
		count[i]++
	}
	mean, sd := float64(n)/k, math.Sqrt(n*0.1*0.9)
	for i, c := range count {
		if math.Abs(float64(c)-mean) > 5*sd {
			t.Errorf("example %d first %d times in %d, want %.0f ± %.0f", i, c, n, mean, 5*sd)
		}
	}
}
