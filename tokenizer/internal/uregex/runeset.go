package uregex

import (
	"cmp"
	"slices"
	"sort"
	"sync"
	"unicode"
)

// A runeSet is a set of code points as sorted, disjoint, non-adjacent
// inclusive ranges. It is the exact form of a class while compiling; the
// matcher uses the faster class built from it.
type runeSet []rng

type rng struct{ lo, hi rune }

// normalize sorts and merges arbitrary ranges.
func normalize(rs []rng) runeSet {
	if len(rs) == 0 {
		return nil
	}
	slices.SortFunc(rs, func(a, b rng) int { return cmp.Compare(a.lo, b.lo) })
	out := runeSet{rs[0]}
	for _, r := range rs[1:] {
		last := &out[len(out)-1]
		if r.lo <= last.hi+1 {
			last.hi = max(last.hi, r.hi)
			continue
		}
		out = append(out, r)
	}
	return out
}

func single(r rune) runeSet { return runeSet{{r, r}} }

func union(a, b runeSet) runeSet {
	rs := make([]rng, 0, len(a)+len(b))
	rs = append(rs, a...)
	rs = append(rs, b...)
	return normalize(rs)
}

func complement(a runeSet) runeSet {
	var out runeSet
	next := rune(0)
	for _, r := range a {
		if r.lo > next {
			out = append(out, rng{next, r.lo - 1})
		}
		next = r.hi + 1
	}
	if next <= unicode.MaxRune {
		out = append(out, rng{next, unicode.MaxRune})
	}
	return out
}

func intersect(a, b runeSet) runeSet {
	var out runeSet
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		lo, hi := max(a[i].lo, b[j].lo), min(a[i].hi, b[j].hi)
		if lo <= hi {
			out = append(out, rng{lo, hi})
		}
		if a[i].hi < b[j].hi {
			i++
		} else {
			j++
		}
	}
	return out
}

// intersectSize is the number of code points in both a and b.
func intersectSize(a, b runeSet) int {
	n := 0
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		lo, hi := max(a[i].lo, b[j].lo), min(a[i].hi, b[j].hi)
		if lo <= hi {
			n += int(hi-lo) + 1
		}
		if a[i].hi < b[j].hi {
			i++
		} else {
			j++
		}
	}
	return n
}

// subtract is a without the code points of b.
func subtract(a, b runeSet) runeSet {
	var out runeSet
	j := 0
	for _, r := range a {
		lo := r.lo
		for j < len(b) && b[j].hi < lo {
			j++
		}
		for k := j; k < len(b) && b[k].lo <= r.hi; k++ {
			if b[k].lo > lo {
				out = append(out, rng{lo, b[k].lo - 1})
			}
			lo = b[k].hi + 1
		}
		if lo <= r.hi {
			out = append(out, rng{lo, r.hi})
		}
	}
	return out
}

func (s runeSet) has(r rune) bool {
	i := sort.Search(len(s), func(i int) bool { return s[i].hi >= r })
	return i < len(s) && s[i].lo <= r
}

func equalSets(a, b runeSet) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func fromTable(t *unicode.RangeTable) runeSet {
	var rs []rng
	for _, r := range t.R16 {
		if r.Stride == 1 {
			rs = append(rs, rng{rune(r.Lo), rune(r.Hi)})
			continue
		}
		for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
			rs = append(rs, rng{c, c})
		}
	}
	for _, r := range t.R32 {
		if r.Stride == 1 {
			rs = append(rs, rng{rune(r.Lo), rune(r.Hi)})
			continue
		}
		for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
			rs = append(rs, rng{c, c})
		}
	}
	return normalize(rs)
}

var kindsSets sync.Map // mask -> runeSet

// kindsSet is the set of code points whose kind is in mask.
func kindsSet(mask uint32) runeSet {
	if s, ok := kindsSets.Load(mask); ok {
		return s.(runeSet)
	}
	var rs []rng
	for k := kind(0); k < numKinds; k++ {
		if mask&(1<<k) != 0 {
			rs = append(rs, kindSets[k]...)
		}
	}
	s := normalize(rs)
	kindsSets.Store(mask, s)
	return s
}
