package uregex

import (
	"math/rand/v2"
	"testing"
)

// TestRuneSetOps checks the set operations against sets of bools over a
// small universe.
func TestRuneSetOps(t *testing.T) {
	const size = 64
	rnd := rand.New(rand.NewPCG(3, 4))
	random := func() (runeSet, [size]bool) {
		var rs []rng
		var bs [size]bool
		for range rnd.IntN(6) {
			lo := rune(rnd.IntN(size))
			hi := min(lo+rune(rnd.IntN(8)), size-1)
			rs = append(rs, rng{lo, hi})
			for r := lo; r <= hi; r++ {
				bs[r] = true
			}
		}
		return normalize(rs), bs
	}
	check := func(op string, got runeSet, want func(r int) bool) {
		t.Helper()
		got = intersect(got, runeSet{{0, size - 1}})
		for r := range size {
			if got.has(rune(r)) != want(r) {
				t.Fatalf("%s: %v: code point %d is %v", op, got, r, got.has(rune(r)))
			}
		}
		for i := 1; i < len(got); i++ {
			if got[i].lo <= got[i-1].hi+1 {
				t.Fatalf("%s: %v not normalized", op, got)
			}
		}
	}
	for range 2000 {
		a, ab := random()
		b, bb := random()
		check("union", union(a, b), func(r int) bool { return ab[r] || bb[r] })
		check("intersect", intersect(a, b), func(r int) bool { return ab[r] && bb[r] })
		check("subtract", subtract(a, b), func(r int) bool { return ab[r] && !bb[r] })
		check("complement", complement(a), func(r int) bool { return !ab[r] })
		n := 0
		for r := range size {
			if ab[r] && bb[r] {
				n++
			}
		}
		if got := intersectSize(a, b); got != n {
			t.Fatalf("intersectSize(%v, %v) = %d, want %d", a, b, got, n)
		}
	}
}

// TestClassMembership checks the matcher's form of classes (ASCII table,
// kind mask, exceptions) against the exact sets, for every code point.
func TestClassMembership(t *testing.T) {
	initKinds()
	sets := []runeSet{
		spaceSet, wordSet, digitSet, complement(spaceSet),
		kindsSet(categoryKinds["L"] | categoryKinds["N"]),
		complement(union(spaceSet, kindsSet(categoryKinds["L"]|categoryKinds["N"]))),
		{{0x3040, 0x309F}, {0x4E00, 0x9FA5}}, complement(runeSet{{0x4E00, 0x9FA5}}),
		foldClosure(single('s')), {{0, 0x10FFFF}}, nil,
	}
	if testing.Short() {
		sets = sets[:3]
	}
	for i, s := range sets {
		c := newClass(s)
		for r := rune(0); r <= 0x10FFFF; r++ {
			if r >= 0xD800 && r <= 0xDFFF {
				continue
			}
			if c.has(r) != s.has(r) {
				t.Fatalf("set %d: %U: class says %v", i, r, c.has(r))
			}
		}
	}
}
