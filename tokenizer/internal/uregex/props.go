package uregex

import (
	"strings"
	"sync"
	"unicode"
)

// Shorthand classes, with Oniguruma's Unicode meanings.
var (
	// \s is White_Space.
	spaceSet = fromTable(unicode.White_Space)
	// \d is Decimal_Number.
	digitSet = fromTable(unicode.Nd)
	// \h is a hexadecimal digit (ASCII only).
	hexSet = runeSet{{'0', '9'}, {'A', 'F'}, {'a', 'f'}}
)

// wordSet is \w: Alphabetic, Mark, Decimal_Number and
// Connector_Punctuation, except that below U+0100 Oniguruma consults its
// ISO-8859-1 ctype table, which also calls ² ³ ¹ ¼ ½ ¾ word characters.
var wordSet = func() runeSet {
	s := union(alphabeticSet(), fromTable(unicode.M))
	s = union(s, fromTable(unicode.Nd))
	s = union(s, fromTable(unicode.Pc))
	return union(s, runeSet{{0xB2, 0xB3}, {0xB9, 0xB9}, {0xBC, 0xBE}})
}()

// alphabeticSet is the Alphabetic property: letters, letter numbers and
// Other_Alphabetic.
func alphabeticSet() runeSet {
	s := union(fromTable(unicode.L), fromTable(unicode.Nl))
	return union(s, fromTable(unicode.Other_Alphabetic))
}

// normalizeName is how Oniguruma compares property names: case-insensitive,
// ignoring spaces, hyphens and underscores.
func normalizeName(name string) string {
	var b strings.Builder
	for _, c := range name {
		if c == ' ' || c == '-' || c == '_' {
			continue
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

var (
	propOnce  sync.Once
	propNames map[string]func() runeSet
)

// property is the set of \p{name}, or false if uregex does not know the
// name. It knows the general categories by short and long name, the
// scripts of Go's unicode.Scripts, and Any, Assigned, ASCII, White_Space,
// Alphabetic and Word.
func property(name string) (runeSet, bool) {
	initKinds()
	propOnce.Do(func() {
		propNames = map[string]func() runeSet{
			"any":        func() runeSet { return runeSet{{0, unicode.MaxRune}} },
			"assigned":   func() runeSet { return complement(kindSets[kCn]) },
			"ascii":      func() runeSet { return runeSet{{0, 0x7F}} },
			"whitespace": func() runeSet { return spaceSet },
			"wspace":     func() runeSet { return spaceSet },
			"alphabetic": alphabeticSet,
			"word":       func() runeSet { return wordSet },
		}
		for short, mask := range categoryKinds {
			m := mask
			propNames[strings.ToLower(short)] = func() runeSet { return kindsSet(m) }
		}
		for long, short := range categoryLongNames {
			m := categoryKinds[short]
			propNames[long] = func() runeSet { return kindsSet(m) }
		}
		for script, t := range unicode.Scripts {
			t := t
			key := normalizeName(script)
			if _, taken := propNames[key]; !taken {
				propNames[key] = func() runeSet { return fromTable(t) }
			}
		}
	})
	f, ok := propNames[normalizeName(name)]
	if !ok {
		return nil, false
	}
	return f(), true
}

// Case folding. Oniguruma's (?i) compares characters by Unicode case
// folding; uregex implements the simple (one-to-one) folding, whose
// equivalence classes are the orbits of unicode.SimpleFold, and refuses
// patterns where Oniguruma would also apply a one-to-many folding.

var (
	foldOnce   sync.Once
	foldable   runeSet // code points with another member in their orbit
	multiFolds map[rune][]rune
)

func initFold() {
	foldOnce.Do(func() {
		var rs []rng
		for _, cr := range unicode.CaseRanges {
			for r := rune(cr.Lo); r <= rune(cr.Hi); r++ {
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					rs = append(rs, rng{f, f})
				}
			}
		}
		foldable = normalize(rs)
		multiFolds = map[rune][]rune{}
		for _, e := range fullFoldings {
			multiFolds[e[0]] = e[1:]
		}
	})
}

// orbit is the set of code points equal to r under simple case folding.
func orbit(r rune) runeSet {
	rs := []rng{{r, r}}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		rs = append(rs, rng{f, f})
	}
	return normalize(rs)
}

// foldClosure adds to s every code point equal to a member under simple
// case folding.
func foldClosure(s runeSet) runeSet {
	initFold()
	var rs []rng
	for _, f := range intersect(s, foldable) {
		for r := f.lo; r <= f.hi; r++ {
			rs = append(rs, orbit(r)...)
		}
	}
	return union(s, rs)
}

// fullFoldings are the code points whose full case folding is more than
// one code point (status F of CaseFolding.txt, unchanged since Unicode
// 5.1): code point, then its folding. Oniguruma's default (?i) matches
// such a code point against the sequence; uregex does not, so it refuses
// (?i) patterns where either side of one of these could occur.
var fullFoldings = [][]rune{
	{0x00DF, 0x0073, 0x0073}, {0x0130, 0x0069, 0x0307}, {0x0149, 0x02BC, 0x006E},
	{0x01F0, 0x006A, 0x030C}, {0x0390, 0x03B9, 0x0308, 0x0301}, {0x03B0, 0x03C5, 0x0308, 0x0301},
	{0x0587, 0x0565, 0x0582}, {0x1E96, 0x0068, 0x0331}, {0x1E97, 0x0074, 0x0308},
	{0x1E98, 0x0077, 0x030A}, {0x1E99, 0x0079, 0x030A}, {0x1E9A, 0x0061, 0x02BE},
	{0x1E9E, 0x0073, 0x0073}, {0x1F50, 0x03C5, 0x0313}, {0x1F52, 0x03C5, 0x0313, 0x0300},
	{0x1F54, 0x03C5, 0x0313, 0x0301}, {0x1F56, 0x03C5, 0x0313, 0x0342},
	{0x1F80, 0x1F00, 0x03B9}, {0x1F81, 0x1F01, 0x03B9}, {0x1F82, 0x1F02, 0x03B9}, {0x1F83, 0x1F03, 0x03B9},
	{0x1F84, 0x1F04, 0x03B9}, {0x1F85, 0x1F05, 0x03B9}, {0x1F86, 0x1F06, 0x03B9}, {0x1F87, 0x1F07, 0x03B9},
	{0x1F88, 0x1F00, 0x03B9}, {0x1F89, 0x1F01, 0x03B9}, {0x1F8A, 0x1F02, 0x03B9}, {0x1F8B, 0x1F03, 0x03B9},
	{0x1F8C, 0x1F04, 0x03B9}, {0x1F8D, 0x1F05, 0x03B9}, {0x1F8E, 0x1F06, 0x03B9}, {0x1F8F, 0x1F07, 0x03B9},
	{0x1F90, 0x1F20, 0x03B9}, {0x1F91, 0x1F21, 0x03B9}, {0x1F92, 0x1F22, 0x03B9}, {0x1F93, 0x1F23, 0x03B9},
	{0x1F94, 0x1F24, 0x03B9}, {0x1F95, 0x1F25, 0x03B9}, {0x1F96, 0x1F26, 0x03B9}, {0x1F97, 0x1F27, 0x03B9},
	{0x1F98, 0x1F20, 0x03B9}, {0x1F99, 0x1F21, 0x03B9}, {0x1F9A, 0x1F22, 0x03B9}, {0x1F9B, 0x1F23, 0x03B9},
	{0x1F9C, 0x1F24, 0x03B9}, {0x1F9D, 0x1F25, 0x03B9}, {0x1F9E, 0x1F26, 0x03B9}, {0x1F9F, 0x1F27, 0x03B9},
	{0x1FA0, 0x1F60, 0x03B9}, {0x1FA1, 0x1F61, 0x03B9}, {0x1FA2, 0x1F62, 0x03B9}, {0x1FA3, 0x1F63, 0x03B9},
	{0x1FA4, 0x1F64, 0x03B9}, {0x1FA5, 0x1F65, 0x03B9}, {0x1FA6, 0x1F66, 0x03B9}, {0x1FA7, 0x1F67, 0x03B9},
	{0x1FA8, 0x1F60, 0x03B9}, {0x1FA9, 0x1F61, 0x03B9}, {0x1FAA, 0x1F62, 0x03B9}, {0x1FAB, 0x1F63, 0x03B9},
	{0x1FAC, 0x1F64, 0x03B9}, {0x1FAD, 0x1F65, 0x03B9}, {0x1FAE, 0x1F66, 0x03B9}, {0x1FAF, 0x1F67, 0x03B9},
	{0x1FB2, 0x1F70, 0x03B9}, {0x1FB3, 0x03B1, 0x03B9}, {0x1FB4, 0x03AC, 0x03B9}, {0x1FB6, 0x03B1, 0x0342},
	{0x1FB7, 0x03B1, 0x0342, 0x03B9}, {0x1FBC, 0x03B1, 0x03B9}, {0x1FC2, 0x1F74, 0x03B9},
	{0x1FC3, 0x03B7, 0x03B9}, {0x1FC4, 0x03AE, 0x03B9}, {0x1FC6, 0x03B7, 0x0342},
	{0x1FC7, 0x03B7, 0x0342, 0x03B9}, {0x1FCC, 0x03B7, 0x03B9}, {0x1FD2, 0x03B9, 0x0308, 0x0300},
	{0x1FD3, 0x03B9, 0x0308, 0x0301}, {0x1FD6, 0x03B9, 0x0342}, {0x1FD7, 0x03B9, 0x0308, 0x0342},
	{0x1FE2, 0x03C5, 0x0308, 0x0300}, {0x1FE3, 0x03C5, 0x0308, 0x0301}, {0x1FE4, 0x03C1, 0x0313},
	{0x1FE6, 0x03C5, 0x0342}, {0x1FE7, 0x03C5, 0x0308, 0x0342}, {0x1FF2, 0x1F7C, 0x03B9},
	{0x1FF3, 0x03C9, 0x03B9}, {0x1FF4, 0x03CE, 0x03B9}, {0x1FF6, 0x03C9, 0x0342},
	{0x1FF7, 0x03C9, 0x0342, 0x03B9}, {0x1FFC, 0x03C9, 0x03B9},
	{0xFB00, 0x0066, 0x0066}, {0xFB01, 0x0066, 0x0069}, {0xFB02, 0x0066, 0x006C},
	{0xFB03, 0x0066, 0x0066, 0x0069}, {0xFB04, 0x0066, 0x0066, 0x006C}, {0xFB05, 0x0073, 0x0074},
	{0xFB06, 0x0073, 0x0074}, {0xFB13, 0x0574, 0x0576}, {0xFB14, 0x0574, 0x0565},
	{0xFB15, 0x0574, 0x056B}, {0xFB16, 0x057E, 0x0576}, {0xFB17, 0x0574, 0x056D},
}

// multiFoldIn reports whether some code point of s has a one-to-many
// folding.
func multiFoldIn(s runeSet) (rune, bool) {
	initFold()
	for _, e := range fullFoldings {
		if s.has(e[0]) {
			return e[0], true
		}
	}
	return 0, false
}

// multiFoldTarget reports whether the case-insensitive literal run lits
// contains the full folding of some code point (as "ss" is that of ß), at
// which Oniguruma would also match that code point.
func multiFoldTarget(lits []rune) (rune, bool) {
	for _, e := range fullFoldings {
		seq := e[1:]
		for i := 0; i+len(seq) <= len(lits); i++ {
			match := true
			for j, t := range seq {
				if !orbit(lits[i+j]).has(t) {
					match = false
					break
				}
			}
			if match {
				return e[0], true
			}
		}
	}
	return 0, false
}
