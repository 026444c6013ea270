package uregex

import (
	"fmt"
	"math"
	"sync"
)

// The compiled program is a list of instructions for a backtracking
// matcher. Repeats of a single class are one instruction (opRep) that
// loops in place and backtracks by stepping back a character;
// alternations dispatch on the next character to the branches that can
// start with it; lookaheads and atomic groups run a sub-program of their
// own to its first match.

type opcode uint8

const (
	opMatch     opcode = iota // success
	opClass                   // one code point in cls
	opRep                     // cls from min to max times, mode
	opAlt                     // alternation alts[x]
	opSplit                   // try x first, then y; x is skipped when cls (its first set) rules it out
	opSplitLazy               // try y first, then x (cls as for opSplit)
	opJmp                     // go to x
	opAssert                  // anchor
	opLook                    // lookahead: sub-program at x, negated when neg
	opLookClass               // lookahead of one code point in cls, negated when neg
	opAtomic                  // sub-program at x, without backtracking into it
	opNullStart               // regs[x] = position
	opNullEnd                 // if the position is still regs[x], go to y (an empty iteration ends the loop)
)

type inst struct {
	op     opcode
	mode   repMode
	neg    bool
	anchor anchor
	x, y   int32
	min    int32
	max    int32 // -1: unbounded
	cls    *class
}

// altTable is the dispatch table of one alternation: which branches can
// start with a given character. Bit i of a mask is branch i.
type altTable struct {
	branch   []int32
	ascii    [128]uint64      // by ASCII byte
	kinds    [numKinds]uint64 // by kind of a non-ASCII code point...
	exc      []altExc         // ...corrected for branches whose first set has exceptions
	nullable uint64           // branches that can match the empty string
}

type altExc struct {
	bit uint64
	exc runeSet
}

// maxBranches is the most branches one dispatch table holds; longer
// alternations nest.
const maxBranches = 64

// maxProg bounds the program, as counted repeats are expanded.
const maxProg = 1 << 16

type compiler struct {
	pattern string
	prog    []inst
	alts    []altTable
	nregs   int
	subs    []pendingSub
}

type pendingSub struct {
	n  *node
	pc int // instruction whose x is the sub-program's start
}

// Regexp is a compiled pattern. It is safe for concurrent use.
type Regexp struct {
	expr     string
	prog     []inst
	alts     []altTable
	nregs    int
	first    *class  // what a match can start with; nil if it can be empty
	fast     matcher // the fast matcher (cps.go), nil if the pattern has none
	nmemos   int     // failure memos of the fast matcher
	limit    int
	machines *sync.Pool
}

// DefaultStepLimit is the number of backtracking steps one match attempt
// may take before FindAll gives up with ErrStepLimit. It is Oniguruma's
// default retry limit in a match (ONIG_DEFAULT_RETRY_LIMIT_IN_MATCH).
const DefaultStepLimit = 10_000_000

// Compile parses an Oniguruma pattern (ONIG_SYNTAX_ONIGURUMA, UTF-8, no
// options). Errors wrap ErrSyntax or ErrUnsupported.
func Compile(pattern string) (*Regexp, error) {
	initKinds()
	n, err := parse(pattern)
	if err != nil {
		return nil, err
	}
	if err := checkFolds(pattern, n); err != nil {
		return nil, err
	}
	c := &compiler{pattern: pattern}
	if err := c.compile(n); err != nil {
		return nil, err
	}
	re := &Regexp{expr: pattern, prog: c.prog, alts: c.alts, nregs: c.nregs, limit: DefaultStepLimit}
	if set, nullable := first(n); !nullable && !equalSets(set, runeSet{{0, maxRune}}) {
		re.first = newClass(set)
	}
	re.fast, re.nmemos = compileFast(n)
	re.machines = &sync.Pool{}
	return re, nil
}

// MustCompile is Compile for patterns known to be valid; it panics on an
// error.
func MustCompile(pattern string) *Regexp {
	re, err := Compile(pattern)
	if err != nil {
		panic(err)
	}
	return re
}

// String is the source pattern.
func (re *Regexp) String() string { return re.expr }

// WithStepLimit is a copy of re whose match attempts may take n
// backtracking steps (n <= 0: no limit) before FindAll returns
// ErrStepLimit.
func (re *Regexp) WithStepLimit(n int) *Regexp {
	c := *re
	if n <= 0 {
		n = math.MaxInt
	}
	c.limit = n
	c.machines = &sync.Pool{}
	return &c
}

func (c *compiler) fail(detail string) error {
	return &Error{Kind: ErrUnsupported, Pattern: c.pattern, Offset: 0, Detail: detail}
}

func (c *compiler) compile(n *node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			err = e
		}
	}()
	c.emitNode(n, succeed)
	c.emit(inst{op: opMatch})
	for len(c.subs) > 0 {
		s := c.subs[0]
		c.subs = c.subs[1:]
		c.prog[s.pc].x = int32(len(c.prog))
		c.emitNode(s.n, succeed)
		c.emit(inst{op: opMatch})
	}
	c.threadJumps()
	return nil
}

// threadJumps points every jump at the end of its chain of jumps, and
// turns a jump to opMatch into opMatch.
func (c *compiler) threadJumps() {
	end := func(pc int32) int32 {
		for n := 0; c.prog[pc].op == opJmp && n < len(c.prog); n++ {
			pc = c.prog[pc].x
		}
		return pc
	}
	for i := range c.prog {
		in := &c.prog[i]
		switch in.op {
		case opJmp:
			if t := end(in.x); c.prog[t].op == opMatch {
				*in = inst{op: opMatch}
			} else {
				in.x = t
			}
		case opSplit, opSplitLazy:
			in.x, in.y = end(in.x), end(in.y)
		case opNullEnd:
			in.y = end(in.y)
		}
	}
	for i := range c.alts {
		for j, b := range c.alts[i].branch {
			c.alts[i].branch[j] = end(b)
		}
	}
}

func (c *compiler) emit(in inst) int {
	if len(c.prog) >= maxProg {
		panic(c.fail("pattern too large once its counted repeats are expanded"))
	}
	c.prog = append(c.prog, in)
	return len(c.prog) - 1
}

// A follow describes what comes after a node in the program: the code
// points it can start with, whether it can match the empty string, and
// whether it can always succeed (match the empty string with no assertion
// on the way to the end of the program or sub-program). The compiler uses
// it to make greedy class repeats possessive where backtracking into them
// could never lead to a match (as PCRE's auto-possessification does),
// which saves the choice points.
type follow struct {
	set      runeSet
	nullable bool
	always   bool
}

// succeed is the follow of the end of a program.
var succeed = follow{nullable: true, always: true}

// then is the follow of n followed by after.
func then(n *node, after follow) follow {
	set, nullable := first(n)
	if !nullable {
		return follow{set: set}
	}
	return follow{
		set:      union(set, after.set),
		nullable: after.nullable,
		always:   after.always && pureEmpty(n),
	}
}

// pureEmpty reports whether n can match the empty string without passing
// an assertion or committing (atomic groups and possessive repeats
// commit to their first match, which may not be the empty one).
func pureEmpty(n *node) bool {
	switch n.op {
	case nEmpty:
		return true
	case nConcat:
		for _, s := range n.subs {
			if !pureEmpty(s) {
				return false
			}
		}
		return true
	case nAlt:
		for _, s := range n.subs {
			if pureEmpty(s) {
				return true
			}
		}
		return false
	case nRepeat:
		return n.mode != possessive && (n.min == 0 || n.max == 0 || pureEmpty(n.subs[0]))
	}
	return false // nChar, nLook, nAtomic, nAssert
}

// possessiveSafe reports whether a greedy repeat of set followed by after
// can be possessive: giving back a code point could only offer after a
// code point of set, which it cannot start with, or after always
// succeeds anyway.
func possessiveSafe(set runeSet, after follow) bool {
	return after.always || !after.nullable && len(intersect(set, after.set)) == 0
}

// loopFollow is the follow of the body of a loop: another iteration or
// what follows the loop.
func loopFollow(body *node, after follow) follow {
	set, _ := first(body)
	return follow{set: union(set, after.set), nullable: after.nullable, always: after.always}
}

func (c *compiler) emitNode(n *node, after follow) {
	switch n.op {
	case nEmpty:
	case nChar:
		c.emit(inst{op: opClass, cls: n.class()})
	case nConcat:
		fol := make([]follow, len(n.subs))
		fol[len(n.subs)-1] = after
		for i := len(n.subs) - 2; i >= 0; i-- {
			fol[i] = then(n.subs[i+1], fol[i+1])
		}
		for i, s := range n.subs {
			c.emitNode(s, fol[i])
		}
	case nAlt:
		c.emitAlt(n.subs, after)
	case nRepeat:
		c.emitRepeat(n, after)
	case nLook:
		if s := n.subs[0]; s.op == nChar {
			c.emit(inst{op: opLookClass, cls: s.class(), neg: n.neg})
			return
		}
		pc := c.emit(inst{op: opLook, neg: n.neg})
		c.subs = append(c.subs, pendingSub{n.subs[0], pc})
	case nAtomic:
		s := n.subs[0]
		if s.op == nRepeat && s.subs[0].op == nChar && s.mode != lazy {
			c.emitRepeat(&node{op: nRepeat, subs: s.subs, min: s.min, max: s.max, mode: possessive}, after)
			return
		}
		pc := c.emit(inst{op: opAtomic})
		c.subs = append(c.subs, pendingSub{s, pc})
	case nAssert:
		c.emit(inst{op: opAssert, anchor: n.anchor})
	}
}

func (c *compiler) emitAlt(subs []*node, after follow) {
	if len(subs) > maxBranches {
		rest := &node{op: nAlt, subs: subs[maxBranches-1:]}
		subs = append(subs[:maxBranches-1:maxBranches-1], rest)
	}
	t := newAltTable(subs)
	pc := c.emit(inst{op: opAlt, x: int32(len(c.alts))})
	c.alts = append(c.alts, t)
	var jumps []int
	for i, s := range subs {
		c.alts[c.prog[pc].x].branch[i] = int32(len(c.prog))
		c.emitNode(s, after)
		jumps = append(jumps, c.emit(inst{op: opJmp}))
	}
	for _, j := range jumps {
		c.prog[j].x = int32(len(c.prog))
	}
}

func (c *compiler) emitRepeat(n *node, after follow) {
	body := n.subs[0]
	if body.op == nChar {
		mode := n.mode
		if mode == greedy && possessiveSafe(body.set, after) {
			// Giving back a code point of the class could only offer what
			// follows a code point of the class, which it cannot start
			// with; or what follows always succeeds. Nothing to remember.
			mode = possessive
		}
		c.emit(inst{op: opRep, cls: body.class(), min: int32(n.min), max: int32(n.max), mode: mode})
		return
	}
	if n.mode == possessive {
		inner := &node{op: nRepeat, subs: n.subs, min: n.min, max: n.max, mode: greedy}
		c.emitNode(&node{op: nAtomic, subs: []*node{inner}}, after)
		return
	}
	if n.max == 0 {
		return
	}
	// The follow of the i-th mandatory copy is the other copies, then after.
	opt := after
	if n.max != n.min {
		opt = loopFollow(body, after)
	}
	fol := make([]follow, n.min)
	for i := n.min - 1; i >= 0; i-- {
		if i == n.min-1 {
			fol[i] = opt
		} else {
			fol[i] = then(body, fol[i+1])
		}
	}
	for i := 0; i < n.min; i++ {
		c.emitNode(body, fol[i])
	}
	_, nullable := first(body)
	var g *class
	if !nullable {
		g = body.firstClass()
	}
	split := opSplit
	if n.mode == lazy {
		split = opSplitLazy
	}
	if n.max < 0 {
		// loop: split(body, exit); [null start]; body; [null end]; jmp loop
		loop := c.emit(inst{op: split, cls: g})
		c.prog[loop].x = int32(len(c.prog))
		reg := -1
		if nullable {
			reg = c.nregs
			c.nregs++
			c.emit(inst{op: opNullStart, x: int32(reg)})
		}
		c.emitNode(body, opt)
		var nullEnd int
		if nullable {
			nullEnd = c.emit(inst{op: opNullEnd, x: int32(reg)})
		}
		c.emit(inst{op: opJmp, x: int32(loop)})
		exit := int32(len(c.prog))
		c.prog[loop].y = exit
		if nullable {
			c.prog[nullEnd].y = exit
		}
		return
	}
	// X{n,m}: n copies, then m-n nested optional copies, X(?:X(?:X)?)?.
	var splits []int
	for i := n.min; i < n.max; i++ {
		s := c.emit(inst{op: split, cls: g})
		c.prog[s].x = int32(len(c.prog))
		splits = append(splits, s)
		c.emitNode(body, opt)
	}
	for _, s := range splits {
		c.prog[s].y = int32(len(c.prog))
	}
}

// first is the set of code points a match of n can start with, and
// whether n can match the empty string. Zero-width items are transparent.
func first(n *node) (runeSet, bool) {
	if !n.firstDone {
		n.firstSet, n.firstNull = firstOf(n)
		n.firstDone = true
	}
	return n.firstSet, n.firstNull
}

func firstOf(n *node) (runeSet, bool) {
	switch n.op {
	case nChar:
		return n.set, false
	case nConcat:
		var acc runeSet
		for _, s := range n.subs {
			set, nullable := first(s)
			acc = union(acc, set)
			if !nullable {
				return acc, false
			}
		}
		return acc, true
	case nAlt:
		var acc runeSet
		any := false
		for _, s := range n.subs {
			set, nullable := first(s)
			acc = union(acc, set)
			any = any || nullable
		}
		return acc, any
	case nRepeat:
		if n.max == 0 {
			return nil, true
		}
		set, nullable := first(n.subs[0])
		return set, nullable || n.min == 0
	case nAtomic:
		return first(n.subs[0])
	}
	return nil, true // nEmpty, nLook, nAssert
}

// checkFolds refuses case-insensitive literals that Oniguruma would also
// match by a one-to-many case folding: a literal such as ß, or a run of
// literals such as "ss" (the folding of ß).
func checkFolds(pattern string, n *node) error {
	var err error
	var walk func(n *node)
	walk = func(n *node) {
		if err != nil {
			return
		}
		if n.op == nChar && n.lit >= 0 {
			if r, ok := multiFoldIn(single(n.lit)); ok {
				err = &Error{Kind: ErrUnsupported, Pattern: pattern, Detail: fmt.Sprintf("case-insensitive %U, which Oniguruma also matches against its multi-character case folding", r)}
				return
			}
		}
		if n.op == nConcat {
			var run []rune
			flush := func() {
				if r, ok := multiFoldTarget(run); ok && err == nil {
					err = &Error{Kind: ErrUnsupported, Pattern: pattern, Detail: fmt.Sprintf("case-insensitive literal %q, which Oniguruma also matches against %U", string(run), r)}
				}
				run = run[:0]
			}
			for _, s := range n.subs {
				if s.op == nChar && s.lit >= 0 {
					run = append(run, s.lit)
					continue
				}
				flush()
			}
			flush()
		}
		for _, s := range n.subs {
			walk(s)
		}
	}
	walk(n)
	return err
}
