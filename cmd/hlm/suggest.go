package main

import (
	"flag"
	"fmt"
	"sort"
	"strings"
)

// withSuggestion adds to the flag package's "flag provided but not
// defined: -promt" the defined flag nearest to it, when one is near.
func withSuggestion(fs *flag.FlagSet, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return err
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if s := closest(name, names); s != "" {
		dash := "--"
		if len(s) == 1 {
			dash = "-"
		}
		return fmt.Errorf("%w; did you mean %s%s?", err, dash, s)
	}
	return err
}

// closest is the candidate nearest to s — within two edits, or having s as
// its prefix — or "" when none is; ties go to the first in sorted order.
func closest(s string, candidates []string) string {
	sorted := append([]string(nil), candidates...)
	sort.Strings(sorted)
	best, bestD := "", 3
	for _, c := range sorted {
		if len(s) >= 3 && strings.HasPrefix(c, s) && bestD > 1 {
			best, bestD = c, 1
			continue
		}
		if d := editDistance(s, c); d < bestD && d < len(s) {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b (bytes).
func editDistance(a, b string) int {
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
