// Package words writes counts in the sentences hlm prints: "1 session",
// "2 sessions"; "once", "twice", "3 times"; "137 MiB"; and finds the name nearest to a
// mistyped one for a "did you mean".
package words

import (
	"fmt"
	"sort"
	"strings"
)

// Plural is n and noun, with an s after it unless n is 1: "1 session",
// "2 sessions".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Times writes a count of repetitions: "once", "twice", "3 times".
func Times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}

// Bytes writes a size in binary units, with three significant digits
// above 1 KiB: "512 B", "1.50 KiB", "137 MiB", "2.25 GiB".
func Bytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	switch {
	case v < 10:
		return fmt.Sprintf("%.2f %s", v, units[u])
	case v < 100:
		return fmt.Sprintf("%.1f %s", v, units[u])
	}
	return fmt.Sprintf("%.0f %s", v, units[u])
}

// Closest is the candidate nearest to s — within two edits, or having s as
// its prefix — or "" when none is; ties go to the first in sorted order.
func Closest(s string, candidates []string) string {
	sorted := append([]string(nil), candidates...)
	sort.Strings(sorted)
	best, bestD := "", 3
	for _, c := range sorted {
		if len(s) >= 3 && strings.HasPrefix(c, s) && bestD > 1 {
			best, bestD = c, 1
			continue
		}
		if d := EditDistance(s, c); d < bestD && d < len(s) {
			best, bestD = c, d
		}
	}
	return best
}

// EditDistance is the Levenshtein distance of a and b (bytes).
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
