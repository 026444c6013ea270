package uregex

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The parser reads Oniguruma's default syntax (ONIG_SYNTAX_ONIGURUMA, what
// Rust's onig crate and so Hugging Face's tokenizers use) into a tree of
// nodes. Capture groups are parsed as plain groups: only the whole match
// is reported.

type nodeOp uint8

const (
	nEmpty  nodeOp = iota
	nChar          // one code point of set
	nConcat        // subs in sequence
	nAlt           // subs in order of preference
	nRepeat        // subs[0] from min to max (-1: unbounded) times, mode
	nLook          // lookahead (?=subs[0]), or (?!subs[0]) when neg
	nAtomic        // (?>subs[0])
	nAssert        // a zero-width anchor
)

type repMode uint8

const (
	greedy repMode = iota
	lazy
	possessive
)

type anchor uint8

const (
	aBeginLine anchor = iota // ^
	aEndLine                 // $
	aBeginText               // \A
	aEndText                 // \z
	aEndTextNL               // \Z
	aWordB                   // \b
	aNotWordB                // \B
)

type node struct {
	op     nodeOp
	subs   []*node
	set    runeSet // nChar
	lit    rune    // nChar from a case-insensitive literal: the literal; else -1
	min    int     // nRepeat
	max    int     // nRepeat; -1 is unbounded
	mode   repMode // nRepeat
	neg    bool    // nLook
	anchor anchor  // nAssert

	// Caches of the compilers: nodes are shared by the copies of counted
	// repeats.
	cls       *class  // nChar: the class of set
	firstSet  runeSet // first(n)
	firstNull bool
	firstDone bool
	firstCls  *class // the class of firstSet
}

// class is the class of an nChar node.
func (n *node) class() *class {
	if n.cls == nil {
		n.cls = newClass(n.set)
	}
	return n.cls
}

// firstClass is the class of the code points a match of n starts with.
func (n *node) firstClass() *class {
	if n.firstCls == nil {
		set, _ := first(n)
		n.firstCls = newClass(set)
	}
	return n.firstCls
}

// maxRepeat is Oniguruma's ONIG_MAX_REPEAT_NUM.
const maxRepeat = 100000

// maxDepth bounds the nesting of groups and classes.
const maxDepth = 200

type flags struct {
	fold   bool // (?i)
	dotAll bool // (?m): Oniguruma's Ruby-style m, where . matches \n
}

type parser struct {
	src   string
	pos   int
	depth int
}

func (p *parser) fail(kind error, at int, format string, args ...any) {
	detail := format
	if len(args) > 0 {
		detail = fmt.Sprintf(format, args...)
	}
	panic(&Error{Kind: kind, Pattern: p.src, Offset: at, Detail: detail})
}

func parse(src string) (n *node, err error) {
	p := &parser{src: src}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			n, err = nil, e
		}
	}()
	if !utf8.ValidString(src) {
		p.fail(ErrSyntax, invalidAt(src), "invalid UTF-8 in the pattern")
	}
	n = p.alternation(flags{})
	if p.pos < len(src) {
		p.fail(ErrSyntax, p.pos, "unmatched close parenthesis")
	}
	return n, nil
}

func invalidAt(s string) int {
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && w == 1 {
			return i
		}
		i += w
	}
	return 0
}

func (p *parser) more() bool { return p.pos < len(p.src) }

func (p *parser) peek() byte { return p.src[p.pos] }

func (p *parser) next() rune {
	r, w := utf8.DecodeRuneInString(p.src[p.pos:])
	p.pos += w
	return r
}

func (p *parser) enter(at int) {
	p.depth++
	if p.depth > maxDepth {
		p.fail(ErrUnsupported, at, "nesting deeper than %d", maxDepth)
	}
}

// alternation parses alternatives up to a ')' or the end.
func (p *parser) alternation(f flags) *node {
	var alts []*node
	for {
		alts = append(alts, p.concat(&f))
		if !p.more() || p.peek() != '|' {
			break
		}
		p.pos++
	}
	if len(alts) == 1 {
		return alts[0]
	}
	return &node{op: nAlt, subs: alts}
}

// concat parses a sequence up to '|', ')' or the end. An isolated option
// group such as (?i) applies to the rest of the enclosing group, across
// '|' too, as in Oniguruma: a(?i)b|c is a(?i:b|c).
func (p *parser) concat(f *flags) *node {
	var seq []*node
	for p.more() {
		c := p.peek()
		if c == '|' || c == ')' {
			break
		}
		if c == '(' && strings.HasPrefix(p.src[p.pos:], "(?") {
			if nf, ok := p.isolatedOptions(*f); ok {
				rest := p.alternation(nf)
				seq = append(seq, rest)
				break
			}
		}
		seq = append(seq, p.quantified(*f))
	}
	return concatOf(seq)
}

func concatOf(seq []*node) *node {
	var flat []*node
	for _, n := range seq {
		switch n.op {
		case nEmpty:
		case nConcat:
			flat = append(flat, n.subs...)
		default:
			flat = append(flat, n)
		}
	}
	switch len(flat) {
	case 0:
		return &node{op: nEmpty}
	case 1:
		return flat[0]
	}
	return &node{op: nConcat, subs: flat}
}

// isolatedOptions consumes "(?imx-imx)" and returns the flags it sets.
func (p *parser) isolatedOptions(f flags) (flags, bool) {
	start := p.pos
	i := p.pos + 2
	for i < len(p.src) {
		switch p.src[i] {
		case 'i', 'm', '-':
		case ')':
			p.pos = start + 2
			nf := p.options(f, i)
			p.pos = i + 1
			return nf, true
		default:
			return f, false
		}
		i++
	}
	return f, false
}

// options applies the option letters from p.pos up to end.
func (p *parser) options(f flags, end int) flags {
	on := true
	for p.pos < end {
		switch c := p.src[p.pos]; c {
		case 'i':
			f.fold = on
		case 'm':
			f.dotAll = on
		case '-':
			if !on {
				p.fail(ErrSyntax, p.pos, "invalid option group")
			}
			on = false
		default:
			p.fail(ErrUnsupported, p.pos, "option %q", string(c))
		}
		p.pos++
	}
	return f
}

// quantified parses an atom and the quantifiers after it.
func (p *parser) quantified(f flags) *node {
	start := p.pos
	atom := p.atom(f)
	if !p.more() {
		return atom
	}
	qat := p.pos
	min, max, ok, interval := p.quantifier()
	if !ok {
		return atom
	}
	if atom.op == nAssert || atom.op == nLook || atom.op == nEmpty {
		p.fail(ErrUnsupported, qat, "quantifier on a zero-width assertion")
	}
	mode := greedy
	if p.more() {
		switch p.peek() {
		case '?':
			if interval && min == max {
				// ONIG_SYN_FIXED_INTERVAL_IS_GREEDY_ONLY: a{n}? is (?:a{n})?.
				break
			}
			p.pos++
			mode = lazy
		case '+':
			if interval {
				// a{n,m}+ is (?:a{n,m})+ in this syntax, not possessive.
				break
			}
			p.pos++
			mode = possessive
		}
	}
	n := &node{op: nRepeat, subs: []*node{atom}, min: min, max: max, mode: mode}
	if interval && p.more() {
		// One more quantifier may follow an interval: a{n}? and a{n,m}+,
		// a{n,m}* nest.
		switch p.peek() {
		case '?', '+', '*':
			qmin, qmax, _, _ := p.quantifier()
			n = &node{op: nRepeat, subs: []*node{n}, min: qmin, max: qmax, mode: greedy}
		}
	}
	if p.more() {
		if _, _, ok, _ := p.peekQuantifier(); ok {
			p.fail(ErrUnsupported, p.pos, "nested quantifier (quantifier of %q)", p.src[start:p.pos])
		}
	}
	return n
}

func (p *parser) peekQuantifier() (int, int, bool, bool) {
	save := p.pos
	min, max, ok, interval := p.quantifier()
	p.pos = save
	return min, max, ok, interval
}

// quantifier consumes ?, *, + or a valid interval {n}, {n,}, {,m}, {n,m}.
// A '{' that does not start a valid interval is a literal, as in
// Oniguruma.
func (p *parser) quantifier() (min, max int, ok, interval bool) {
	switch p.peek() {
	case '?':
		p.pos++
		return 0, 1, true, false
	case '*':
		p.pos++
		return 0, -1, true, false
	case '+':
		p.pos++
		return 1, -1, true, false
	case '{':
		min, max, end, ok := parseInterval(p.src, p.pos)
		if !ok {
			return 0, 0, false, false
		}
		if min > maxRepeat || max > maxRepeat {
			p.fail(ErrSyntax, p.pos, "too big number for repeat range")
		}
		if max >= 0 && max < min {
			p.fail(ErrSyntax, p.pos, "upper bound smaller than lower bound in repeat range")
		}
		p.pos = end
		return min, max, true, true
	}
	return 0, 0, false, false
}

// parseInterval reads {n}, {n,}, {,m} or {n,m} at s[i].
func parseInterval(s string, i int) (min, max, end int, ok bool) {
	j := strings.IndexByte(s[i:], '}')
	if j < 0 {
		return 0, 0, 0, false
	}
	body := s[i+1 : i+j]
	end = i + j + 1
	lo, hi, comma := strings.Cut(body, ",")
	num := func(t string) (int, bool) {
		if t == "" || len(t) > 9 {
			return 0, false
		}
		for k := 0; k < len(t); k++ {
			if t[k] < '0' || t[k] > '9' {
				return 0, false
			}
		}
		v, err := strconv.Atoi(t)
		return v, err == nil
	}
	if !comma {
		n, ok := num(lo)
		return n, n, end, ok
	}
	if lo == "" {
		m, ok := num(hi)
		return 0, m, end, ok
	}
	n, ok := num(lo)
	if !ok {
		return 0, 0, 0, false
	}
	if hi == "" {
		return n, -1, end, true
	}
	m, ok := num(hi)
	return n, m, end, ok
}

func (p *parser) atom(f flags) *node {
	at := p.pos
	switch c := p.peek(); c {
	case '(':
		return p.group(f)
	case '[':
		return charNode(p.class(f))
	case '.':
		p.pos++
		if f.dotAll {
			return charNode(runeSet{{0, maxRune}})
		}
		return charNode(complement(single('\n')))
	case '^':
		p.pos++
		return &node{op: nAssert, anchor: aBeginLine}
	case '$':
		p.pos++
		return &node{op: nAssert, anchor: aEndLine}
	case '\\':
		return p.escape(f)
	case '?', '*', '+':
		p.fail(ErrSyntax, at, "target of repeat operator is not specified")
	case '{':
		if _, _, _, ok := parseInterval(p.src, p.pos); ok {
			p.fail(ErrSyntax, at, "target of repeat operator is not specified")
		}
	}
	r := p.next()
	return literal(r, f)
}

const maxRune = 0x10FFFF

// literal is the node of a literal code point.
func literal(r rune, f flags) *node {
	if f.fold {
		return &node{op: nChar, set: foldClosure(single(r)), lit: r}
	}
	return &node{op: nChar, set: single(r), lit: -1}
}

// charNode is a node matching one code point of a class or shorthand.
func charNode(set runeSet) *node {
	return &node{op: nChar, set: set, lit: -1}
}

func (p *parser) group(f flags) *node {
	at := p.pos
	p.enter(at)
	defer func() { p.depth-- }()
	p.pos++ // (
	var n *node
	if strings.HasPrefix(p.src[p.pos:], "?") {
		p.pos++
		if !p.more() {
			p.fail(ErrSyntax, at, "end pattern in group")
		}
		switch c := p.peek(); c {
		case ':':
			p.pos++
			n = p.alternation(f)
		case '=', '!':
			p.pos++
			n = &node{op: nLook, neg: c == '!', subs: []*node{p.alternation(f)}}
		case '>':
			p.pos++
			n = &node{op: nAtomic, subs: []*node{p.alternation(f)}}
		case '<':
			if strings.HasPrefix(p.src[p.pos:], "<=") || strings.HasPrefix(p.src[p.pos:], "<!") {
				p.fail(ErrUnsupported, at, "lookbehind")
			}
			p.fail(ErrUnsupported, at, "named group")
		case '\'':
			p.fail(ErrUnsupported, at, "named group")
		case '#':
			p.fail(ErrUnsupported, at, "comment group")
		case '~':
			p.fail(ErrUnsupported, at, "absent operator")
		case '(':
			p.fail(ErrUnsupported, at, "conditional group")
		case '{':
			p.fail(ErrUnsupported, at, "callout")
		case 'i', 'm', '-':
			colon := p.pos
			for colon < len(p.src) && strings.IndexByte("im-", p.src[colon]) >= 0 {
				colon++
			}
			if colon >= len(p.src) || p.src[colon] != ':' {
				// (?i) reaches here only when not followed by ')': e.g. (?x).
				for colon < len(p.src) && (isAlnum(p.src[colon]) || p.src[colon] == '-') {
					colon++
				}
				p.fail(ErrUnsupported, at, "option group %q", p.src[at:min(colon+1, len(p.src))])
			}
			nf := p.options(f, colon)
			p.pos = colon + 1
			n = p.alternation(nf)
		default:
			if isAlnum(c) {
				end := p.pos
				for end < len(p.src) && (isAlnum(p.src[end]) || p.src[end] == '-') {
					end++
				}
				p.fail(ErrUnsupported, at, "option group %q", p.src[at:min(end+1, len(p.src))])
			}
			p.fail(ErrUnsupported, at, "group (?%c", c)
		}
	} else {
		n = p.alternation(f)
	}
	if !p.more() || p.peek() != ')' {
		p.fail(ErrSyntax, at, "end pattern with unmatched parenthesis")
	}
	p.pos++
	return n
}

// escape parses a backslash sequence outside a class.
func (p *parser) escape(f flags) *node {
	at := p.pos
	p.pos++ // backslash
	if !p.more() {
		p.fail(ErrSyntax, at, "end pattern at escape")
	}
	c := p.peek()
	switch c {
	case 'A':
		p.pos++
		return &node{op: nAssert, anchor: aBeginText}
	case 'z':
		p.pos++
		return &node{op: nAssert, anchor: aEndText}
	case 'Z':
		p.pos++
		return &node{op: nAssert, anchor: aEndTextNL}
	case 'b':
		p.pos++
		return &node{op: nAssert, anchor: aWordB}
	case 'B':
		p.pos++
		return &node{op: nAssert, anchor: aNotWordB}
	case 'G':
		p.fail(ErrUnsupported, at, `\G (search start anchor)`)
	case 'K':
		p.fail(ErrUnsupported, at, `\K (keep)`)
	case 'R', 'N', 'O', 'X', 'y', 'Y':
		p.fail(ErrUnsupported, at, `\%c`, c)
	case 'k':
		p.fail(ErrUnsupported, at, `\k (backreference)`)
	case 'g':
		p.fail(ErrUnsupported, at, `\g (subexpression call)`)
	}
	if c >= '1' && c <= '9' {
		p.fail(ErrUnsupported, at, `\%c (backreference)`, c)
	}
	p.pos = at
	set, isSet, r := p.escapeItem(false)
	if isSet {
		if f.fold && !equalSets(foldClosure(set), set) {
			p.fail(ErrUnsupported, at, "%s under (?i), whose case folding uregex does not model", p.src[at:p.pos])
		}
		return charNode(set)
	}
	return literal(r, f)
}

// escapeItem parses an escape that stands for a code point or a set, in
// or out of a class, from the backslash at p.pos.
func (p *parser) escapeItem(inClass bool) (set runeSet, isSet bool, r rune) {
	at := p.pos
	p.pos++ // backslash
	if !p.more() {
		p.fail(ErrSyntax, at, "end pattern at escape")
	}
	c := p.next()
	switch c {
	case 't':
		return nil, false, '\t'
	case 'n':
		return nil, false, '\n'
	case 'r':
		return nil, false, '\r'
	case 'f':
		return nil, false, '\f'
	case 'v':
		return nil, false, '\v'
	case 'a':
		return nil, false, 7
	case 'e':
		return nil, false, 0x1B
	case 'b':
		if inClass {
			return nil, false, 8
		}
	case 'x':
		if p.more() && p.peek() == '{' {
			return nil, false, p.bracedCode(at, 16, 8)
		}
		v, n := 0, 0
		for n < 2 && p.more() && isHex(p.peek()) {
			v = v*16 + hexVal(p.peek())
			p.pos++
			n++
		}
		if n == 0 {
			p.fail(ErrSyntax, at, `invalid \x escape`)
		}
		return nil, false, rune(v)
	case 'u':
		v := 0
		for n := 0; n < 4; n++ {
			if !p.more() || !isHex(p.peek()) {
				p.fail(ErrSyntax, at, `invalid \u escape (four hexadecimal digits)`)
			}
			v = v*16 + hexVal(p.peek())
			p.pos++
		}
		return nil, false, checkCode(p, at, v)
	case 'o':
		if p.more() && p.peek() == '{' {
			return nil, false, p.bracedCode(at, 8, 11)
		}
	case '0':
		v := 0
		for n := 0; n < 2 && p.more() && p.peek() >= '0' && p.peek() <= '7'; n++ {
			v = v*8 + int(p.peek()-'0')
			p.pos++
		}
		return nil, false, rune(v)
	case 'd':
		return digitSet, true, 0
	case 'D':
		return complement(digitSet), true, 0
	case 's':
		return spaceSet, true, 0
	case 'S':
		return complement(spaceSet), true, 0
	case 'w':
		return wordSet, true, 0
	case 'W':
		return complement(wordSet), true, 0
	case 'h':
		return hexSet, true, 0
	case 'H':
		return complement(hexSet), true, 0
	case 'p', 'P':
		return p.propertyEscape(at, c == 'P'), true, 0
	}
	if c < 0x80 && (isAlnum(byte(c))) {
		p.fail(ErrUnsupported, at, `escape \%c`, c)
	}
	// Any other escaped character stands for itself.
	return nil, false, c
}

func (p *parser) bracedCode(at, base, maxDigits int) rune {
	p.pos++ // {
	v, n := 0, 0
	for p.more() && p.peek() != '}' {
		d := -1
		if c := p.peek(); isHex(c) {
			d = hexVal(c)
		}
		if d < 0 || d >= base || n >= maxDigits {
			p.fail(ErrSyntax, at, "invalid code point value")
		}
		v = v*base + d
		if v > maxRune {
			p.fail(ErrSyntax, at, "too big code point value")
		}
		p.pos++
		n++
	}
	if !p.more() || n == 0 {
		p.fail(ErrSyntax, at, "invalid code point value")
	}
	p.pos++ // }
	return checkCode(p, at, v)
}

func checkCode(p *parser, at, v int) rune {
	if v > maxRune {
		p.fail(ErrSyntax, at, "too big code point value")
	}
	return rune(v)
}

func (p *parser) propertyEscape(at int, neg bool) runeSet {
	if !p.more() || p.peek() != '{' {
		p.fail(ErrSyntax, at, "invalid character property name")
	}
	end := strings.IndexByte(p.src[p.pos:], '}')
	if end < 0 {
		p.fail(ErrSyntax, at, "invalid character property name")
	}
	name := p.src[p.pos+1 : p.pos+end]
	p.pos += end + 1
	if strings.HasPrefix(name, "^") {
		neg = !neg
		name = name[1:]
	}
	set, ok := property(name)
	if !ok {
		p.fail(ErrUnsupported, at, "character property %q", name)
	}
	if neg {
		return complement(set)
	}
	return set
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
