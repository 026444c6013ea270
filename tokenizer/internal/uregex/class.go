package uregex

import (
	"unicode"
	"unicode/utf8"
)

// A class is a set of code points in the form the matcher tests quickly:
// a table by byte for ASCII, and for the rest a mask over kinds (general
// categories) corrected by a short list of exceptions. A class built only
// from categories, like [^\s\p{L}\p{N}], has no exceptions; one with
// literal ranges, like [一-龥], has the ranges as exceptions to an empty
// mask, or the complement of them to a full one.
type class struct {
	tab   [256]uint8       // by byte: 1 an ASCII member, 0 an ASCII non-member, 2 a non-ASCII lead byte
	kinds uint32           // r >= 0x80 is a member if its kind is in kinds,
	exc   runeSet          // unless r is in exc (then the other way round)
	bmp   *[1 << 10]uint64 // with exceptions: the BMP as a bitmap, one load instead of a search
	set   runeSet          // the exact set
}

var nonASCII = runeSet{{0x80, unicode.MaxRune}}

// newClass builds the matcher's form of the exact set s. A kind goes in
// the mask when more than half of its non-ASCII code points are in s, so
// the exceptions are as few as they can be.
func newClass(s runeSet) *class {
	initKinds()
	c := &class{set: s}
	for _, r := range s {
		for x := r.lo; x <= r.hi && x < 0x80; x++ {
			c.tab[x] = 1
		}
	}
	for b := 0x80; b < 0x100; b++ {
		c.tab[b] = 2
	}
	hi := intersect(s, nonASCII)
	for k := kind(0); k < numKinds; k++ {
		if n := kindSizes[k]; n > 0 && 2*intersectSize(hi, kindSets[k]) > n {
			c.kinds |= 1 << k
		}
	}
	m := intersect(kindsSet(c.kinds), nonASCII)
	c.exc = union(subtract(hi, m), subtract(m, hi))
	if len(c.exc) > 0 {
		c.bmp = new([1 << 10]uint64)
		for _, r := range intersect(s, runeSet{{0, 0xFFFF}}) {
			for x := r.lo; x <= r.hi; x++ {
				c.bmp[x>>6] |= 1 << (x & 63)
			}
		}
	}
	return c
}

// has reports whether r is in the class.
func (c *class) has(r rune) bool {
	if r < 0x80 {
		return c.tab[r] == 1
	}
	return c.hasHigh(r)
}

// hasHigh reports whether r >= 0x80 is in the class.
func (c *class) hasHigh(r rune) bool {
	if c.bmp != nil && r <= 0xFFFF {
		return c.bmp[r>>6]&(1<<(r&63)) != 0
	}
	in := c.kinds&(1<<kindOf(r)) != 0
	if len(c.exc) != 0 && c.exc.has(r) {
		in = !in
	}
	return in
}

// at is the length of the code point at s[p:], p < len(s), if it is in
// the class, else 0.
func (c *class) at(s string, p int) int {
	switch c.tab[s[p]] {
	case 1:
		return 1
	case 2:
		return c.highAt(s, p)
	}
	return 0
}

// highAt is at for a non-ASCII lead byte at s[p].
func (c *class) highAt(s string, p int) int {
	r, w := utf8.DecodeRuneInString(s[p:])
	if c.hasHigh(r) {
		return w
	}
	return 0
}

// run is the end of the run of code points of the class from s[p:].
func (c *class) run(s string, p int) int {
	for p < len(s) {
		switch c.tab[s[p]] {
		case 1:
			p++
			continue
		case 2:
			if w := c.highAt(s, p); w > 0 {
				p += w
				continue
			}
		}
		break
	}
	return p
}

// hasByte reports whether the ASCII byte b is in the class.
func (c *class) hasByte(b byte) bool {
	return c.tab[b] == 1
}
