package uregex

import (
	"math/bits"
	"unicode/utf8"
)

// The fast matcher. A pattern without unbounded loops over groups (all
// the pre-tokenizer patterns but a few of llama.cpp's adaptations) is
// also compiled into a tree of closures in continuation-passing style:
// each node is a matcher that consumes its part of the text and calls the
// matcher of what follows, which reports whether the rest of the pattern
// matched. Backtracking is returning false. Each call to a continuation
// has one target, so a processor predicts it, where the interpreter's
// dispatch on the next instruction is one jump with many targets; the
// recursion is as deep as the pattern, since the only loops are class
// repeats, which loop in place. The interpreter (exec.go) stays the
// reference: FuzzFastMatcher checks that both give the same matches.

// A matcher matches its node and what follows it at pos.
type matcher func(m *machine, pos int) bool

// maxMatchers bounds the size of a fast matcher (counted repeats are
// expanded); larger patterns run on the interpreter only.
const maxMatchers = 4096

type fastCompiler struct {
	count int
	ok    bool
	memos int // failure memos of greedy unbounded class repeats
}

// compileFast is the fast matcher of n, or nil if n has an unbounded
// loop over a group or is too large, and the number of failure memos it
// uses.
func compileFast(n *node) (matcher, int) {
	if !loopFree(n) {
		return nil, 0
	}
	c := &fastCompiler{ok: true}
	accept := func(m *machine, pos int) bool {
		m.end = pos
		return true
	}
	f := c.node(n, succeed, accept, true)
	if !c.ok {
		return nil, 0
	}
	return f, c.memos
}

// loopFree reports whether every unbounded repeat in n repeats a class.
func loopFree(n *node) bool {
	if n.op == nRepeat && n.max < 0 && n.subs[0].op != nChar {
		return false
	}
	for _, s := range n.subs {
		if !loopFree(s) {
			return false
		}
	}
	return true
}

func (c *fastCompiler) grow() {
	if c.count++; c.count > maxMatchers {
		c.ok = false
	}
}

// retry counts a backtracking step and reports whether another may be
// taken.
func (m *machine) retry() bool {
	if m.steps++; m.steps > m.limit {
		m.err = ErrStepLimit
		return false
	}
	return true
}

// node is the matcher of n followed by next, which matches after. With
// tail, next is the final accept, and a class step records the end
// itself instead of calling it.
func (c *fastCompiler) node(n *node, after follow, next matcher, tail bool) matcher {
	c.grow()
	if !c.ok {
		return next
	}
	switch n.op {
	case nEmpty:
		return next
	case nChar:
		cls := n.class()
		if tail {
			return func(m *machine, pos int) bool {
				s := m.s
				if pos >= len(s) {
					return false
				}
				w := cls.at(s, pos)
				m.end = pos + w
				return w > 0
			}
		}
		return func(m *machine, pos int) bool {
			s := m.s
			if pos >= len(s) {
				return false
			}
			w := cls.at(s, pos)
			return w > 0 && next(m, pos+w)
		}
	case nConcat:
		fol := make([]follow, len(n.subs))
		fol[len(n.subs)-1] = after
		for i := len(n.subs) - 2; i >= 0; i-- {
			fol[i] = then(n.subs[i+1], fol[i+1])
		}
		f := c.node(n.subs[len(n.subs)-1], after, next, tail)
		for i := len(n.subs) - 2; i >= 0; i-- {
			f = c.node(n.subs[i], fol[i], f, false)
		}
		return f
	case nAlt:
		return c.alt(n.subs, after, next, tail)
	case nRepeat:
		return c.repeat(n, after, next, tail)
	case nLook:
		neg := n.neg
		if s := n.subs[0]; s.op == nChar {
			cls := s.class()
			return func(m *machine, pos int) bool {
				if classStarts(cls, m.s, pos) == neg {
					return false
				}
				return next(m, pos)
			}
		}
		body := c.node(n.subs[0], succeed, func(*machine, int) bool { return true }, false)
		return func(m *machine, pos int) bool {
			ok := body(m, pos)
			if m.err != nil || ok == neg {
				return false
			}
			return next(m, pos)
		}
	case nAtomic:
		body := c.node(n.subs[0], succeed, func(m *machine, pos int) bool {
			m.atomicEnd = pos
			return true
		}, false)
		return func(m *machine, pos int) bool {
			if !body(m, pos) {
				return false
			}
			return next(m, m.atomicEnd)
		}
	case nAssert:
		a := n.anchor
		return func(m *machine, pos int) bool {
			return assert(a, m.s, pos) && next(m, pos)
		}
	}
	c.ok = false
	return next
}

func (c *fastCompiler) alt(subs []*node, after follow, next matcher, tail bool) matcher {
	if len(subs) > maxBranches {
		rest := &node{op: nAlt, subs: subs[maxBranches-1:]}
		subs = append(subs[:maxBranches-1:maxBranches-1], rest)
	}
	t := newAltTable(subs)
	branches := make([]matcher, len(subs))
	for i, s := range subs {
		branches[i] = c.node(s, after, next, tail)
	}
	return func(m *machine, pos int) bool {
		s := m.s
		var mask uint64
		if pos < len(s) {
			if b := s[pos]; b < utf8.RuneSelf {
				mask = t.ascii[b]
			} else {
				r, _ := utf8.DecodeRuneInString(s[pos:])
				mask = t.high(r)
			}
		} else {
			mask = t.nullable
		}
		for mask != 0 {
			if branches[bits.TrailingZeros64(mask)](m, pos) {
				return true
			}
			if !m.retry() {
				return false
			}
			mask &= mask - 1
		}
		return false
	}
}

func (c *fastCompiler) repeat(n *node, after follow, next matcher, tail bool) matcher {
	body := n.subs[0]
	if body.op == nChar {
		return c.classRepeat(n, after, next, tail)
	}
	if n.mode == possessive {
		inner := &node{op: nRepeat, subs: n.subs, min: n.min, max: n.max, mode: greedy}
		return c.node(&node{op: nAtomic, subs: []*node{inner}}, after, next, false)
	}
	// Only bounded repeats of groups get here: X{n,m} is n copies, then
	// m-n nested optional copies, X(?:X(?:X)?)?, built from the end.
	opt := after
	if n.max != n.min {
		opt = loopFollow(body, after)
	}
	f := next
	_, nullable := first(body)
	var guard *class
	if !nullable {
		guard = body.firstClass()
	}
	for i := n.max; i > n.min; i-- {
		f = c.optional(c.node(body, opt, f, false), next, guard, n.mode == lazy)
	}
	fol := opt
	for i := n.min; i > 0; i-- {
		f = c.node(body, fol, f, false)
		fol = then(body, fol)
	}
	return f
}

// optional tries body (whose continuation goes on) and skip, in the order
// of mode; guard, when not nil, is what body must start with.
func (c *fastCompiler) optional(body, skip matcher, guard *class, lazy bool) matcher {
	if lazy {
		return func(m *machine, pos int) bool {
			if skip(m, pos) {
				return true
			}
			if m.err != nil || guard != nil && !classStarts(guard, m.s, pos) || !m.retry() {
				return false
			}
			return body(m, pos)
		}
	}
	return func(m *machine, pos int) bool {
		if guard == nil || classStarts(guard, m.s, pos) {
			if body(m, pos) {
				return true
			}
			if m.err != nil || !m.retry() {
				return false
			}
		}
		return skip(m, pos)
	}
}

func (c *fastCompiler) classRepeat(n *node, after follow, next matcher, tail bool) matcher {
	r := classRep{cls: n.subs[0].class(), lo: n.min, hi: n.max}
	switch {
	case n.mode == lazy:
		return r.lazy(next)
	case tail:
		// Nothing follows that could use a code point given back.
		return r.possessiveTail()
	case n.mode == possessive || possessiveSafe(n.subs[0].set, after):
		return r.possessive(next)
	}
	if !after.nullable {
		// What follows starts with a code point of after.set: a position
		// where another one is next need not be tried.
		r.guard = newClass(after.set)
	}
	switch {
	case r.lo == 0 && r.hi == 1:
		return r.greedyOptional(next)
	case r.hi < 0:
		c.memos++
		return r.greedyMemo(next, c.memos-1)
	}
	return r.greedy(next)
}

// A classRep is a repeat of a class, lo to hi (-1: unbounded) times.
// When guard is set, what follows a greedy repeat must start with a code
// point of guard.
type classRep struct {
	cls    *class
	lo, hi int
	guard  *class
}

// try calls next at p, a position given back, unless the guard rules it
// out.
func (r *classRep) try(next matcher, m *machine, p int) bool {
	return (r.guard == nil || classStarts(r.guard, m.s, p)) && next(m, p)
}

// scan consumes the mandatory lo code points from pos, then as many more
// as hi allows, and returns the end of the lo and the end of all, or
// false if there are not lo.
func (r *classRep) scan(s string, pos int) (minEnd, end int, ok bool) {
	c, p := r.cls, pos
	for k := 0; k < r.lo; k++ {
		if p >= len(s) {
			return 0, 0, false
		}
		w := c.at(s, p)
		if w == 0 {
			return 0, 0, false
		}
		p += w
	}
	minEnd = p
	if r.hi < 0 {
		return minEnd, c.run(s, p), true
	}
	for k := r.lo; k < r.hi && p < len(s); k++ {
		w := c.at(s, p)
		if w == 0 {
			break
		}
		p += w
	}
	return minEnd, p, true
}

// possessive is the matcher of the repeat without backtracking into it,
// specialized for ?, * and +.
func (r classRep) possessive(next matcher) matcher {
	c := r.cls
	switch {
	case r.lo == 0 && r.hi == 1:
		return func(m *machine, pos int) bool {
			if s := m.s; pos < len(s) {
				pos += c.at(s, pos)
			}
			return next(m, pos)
		}
	case r.lo == 0 && r.hi < 0:
		return func(m *machine, pos int) bool {
			return next(m, c.run(m.s, pos))
		}
	case r.lo == 1 && r.hi < 0:
		return func(m *machine, pos int) bool {
			s := m.s
			if pos >= len(s) {
				return false
			}
			w := c.at(s, pos)
			return w > 0 && next(m, c.run(s, pos+w))
		}
	}
	return func(m *machine, pos int) bool {
		_, p, ok := r.scan(m.s, pos)
		return ok && next(m, p)
	}
}

// possessiveTail is possessive followed by the final accept.
func (r classRep) possessiveTail() matcher {
	c := r.cls
	switch {
	case r.lo == 0 && r.hi < 0:
		return func(m *machine, pos int) bool {
			m.end = c.run(m.s, pos)
			return true
		}
	case r.lo == 1 && r.hi < 0:
		return func(m *machine, pos int) bool {
			s := m.s
			if pos >= len(s) {
				return false
			}
			w := c.at(s, pos)
			m.end = c.run(s, pos+w)
			return w > 0
		}
	}
	return func(m *machine, pos int) bool {
		_, p, ok := r.scan(m.s, pos)
		m.end = p
		return ok
	}
}

// greedy is the matcher of the repeat that gives back code points one by
// one until what follows matches.
func (r classRep) greedy(next matcher) matcher {
	return func(m *machine, pos int) bool {
		s := m.s
		minEnd, p, ok := r.scan(s, pos)
		if !ok {
			return false
		}
		if next(m, p) {
			return true
		}
		for p != minEnd && m.err == nil && m.retry() {
			p -= lastLen(s, minEnd, p)
			if r.try(next, m, p) {
				return true
			}
		}
		return false
	}
}

// greedyOptional is greedy for ?.
func (r classRep) greedyOptional(next matcher) matcher {
	c := r.cls
	return func(m *machine, pos int) bool {
		s := m.s
		if pos < len(s) {
			if w := c.at(s, pos); w > 0 {
				if next(m, pos+w) {
					return true
				}
				if m.err != nil || !m.retry() {
					return false
				}
				return r.try(next, m, pos)
			}
		}
		return next(m, pos)
	}
}

// A repMemo remembers, for one greedy unbounded class repeat, that the run
// of its class from start ends at end and that what follows it fails at
// every position from low to end. A later attempt that starts inside the
// run ends its run at end too and needs no scan, and fails at once if
// its positions are all at or after low; this keeps patterns such as
// \s+$ linear where plain backtracking is quadratic (a run of n spaces
// not at a line end is scanned n times). It holds for one text: what
// follows a repeat is a fixed matcher, whose result depends only on the
// position.
type repMemo struct {
	gen             uint64
	start, end, low int
}

// greedyMemo is greedy for an unbounded repeat, with failure memo slot.
func (r classRep) greedyMemo(next matcher, slot int) matcher {
	return func(m *machine, pos int) bool {
		s := m.s
		memo := &m.memos[slot]
		var minEnd, end, p int
		if memo.gen == m.gen && memo.start <= pos && pos < memo.end {
			// Inside a run already scanned: only the mandatory part.
			minEnd = pos
			for k := 0; k < r.lo; k++ {
				if minEnd >= memo.end {
					return false
				}
				minEnd += r.cls.at(s, minEnd)
			}
			if minEnd >= memo.low {
				return false
			}
			// What follows fails from memo.low on: go on below it.
			end, p = memo.end, memo.low
		} else {
			var ok bool
			if minEnd, end, ok = r.scan(s, pos); !ok {
				return false
			}
			if next(m, end) {
				return true
			}
			p = end
		}
		for p != minEnd && m.err == nil && m.retry() {
			p -= lastLen(s, minEnd, p)
			if r.try(next, m, p) {
				return true
			}
		}
		if m.err == nil {
			if memo.gen == m.gen && memo.end == end {
				memo.start, memo.low = min(memo.start, pos), min(memo.low, minEnd)
			} else {
				*memo = repMemo{gen: m.gen, start: pos, end: end, low: minEnd}
			}
		}
		return false
	}
}

// lazy is the matcher of the repeat that takes code points one by one
// until what follows matches.
func (r classRep) lazy(next matcher) matcher {
	return func(m *machine, pos int) bool {
		s := m.s
		minEnd, _, ok := r.scan(s, pos)
		if !ok {
			return false
		}
		p := minEnd
		for k := r.lo; ; k++ {
			if next(m, p) {
				return true
			}
			if m.err != nil || r.hi >= 0 && k >= r.hi || p >= len(s) {
				return false
			}
			w := r.cls.at(s, p)
			if w == 0 || !m.retry() {
				return false
			}
			p += w
		}
	}
}

// newAltTable builds the dispatch table of an alternation (the program's
// jump targets are filled in by the caller).
func newAltTable(subs []*node) altTable {
	t := altTable{branch: make([]int32, len(subs))}
	for i, s := range subs {
		bit := uint64(1) << i
		_, nullable := first(s)
		if nullable {
			t.nullable |= bit
			for b := range t.ascii {
				t.ascii[b] |= bit
			}
			for k := range t.kinds {
				t.kinds[k] |= bit
			}
			continue
		}
		cls := s.firstClass()
		for b := 0; b < 128; b++ {
			if cls.hasByte(byte(b)) {
				t.ascii[b] |= bit
			}
		}
		for k := kind(0); k < numKinds; k++ {
			if cls.kinds&(1<<k) != 0 {
				t.kinds[k] |= bit
			}
		}
		if len(cls.exc) > 0 {
			t.exc = append(t.exc, altExc{bit, cls.exc})
		}
	}
	return t
}
