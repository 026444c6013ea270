// Package words writes counts in the sentences hlm prints: "1 session",
// "2 sessions"; "once", "twice", "3 times"; and finds the name nearest to a
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
