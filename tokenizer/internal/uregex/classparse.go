package uregex

import "strings"

// class parses a bracket expression at p.pos ('[') and returns its set.
// Under (?i) the set is closed under case folding before the class's own
// negation is applied, as Oniguruma does
// (CASE_FOLD_IS_APPLIED_INSIDE_NEGATIVE_CCLASS).
func (p *parser) class(f flags) runeSet {
	at := p.pos
	inner, neg := p.bracket()
	if f.fold {
		if !neg {
			if r, ok := multiFoldIn(inner); ok {
				p.fail(ErrUnsupported, at, "class with %U under (?i), which Oniguruma also matches against its multi-character case folding", r)
			}
		}
		inner = foldClosure(inner)
	}
	if neg {
		return complement(inner)
	}
	return inner
}

// bracket parses '[' ... ']' and returns the set it lists (the
// intersection of its && operands) and whether it starts with '^'.
func (p *parser) bracket() (runeSet, bool) {
	at := p.pos
	p.enter(at)
	defer func() { p.depth-- }()
	p.pos++ // [
	neg := false
	if p.more() && p.peek() == '^' {
		neg = true
		p.pos++
	}
	var acc runeSet
	haveAcc := false
	var cur []rng
	// last is what the previous item was, for the rules about '-'.
	const (
		lastStart = iota // nothing yet in this operand
		lastChar
		lastRange
		lastSet
	)
	last := lastStart
	first := true
	for {
		if !p.more() {
			p.fail(ErrSyntax, at, "premature end of char-class")
		}
		rest := p.src[p.pos:]
		c := rest[0]
		switch {
		case c == ']' && first && closeLater(p.src, p.pos+1):
			// []a] and [^]a]: a leading ']' is a literal when another
			// one follows.
			p.pos++
			cur = append(cur, rng{']', ']'})
			last = lastChar
		case c == ']':
			if first {
				p.fail(ErrSyntax, at, "empty char-class")
			}
			p.pos++
			operand := normalize(cur)
			if haveAcc {
				operand = intersect(acc, operand)
			}
			return operand, neg
		case strings.HasPrefix(rest, "&&"):
			p.pos += 2
			operand := normalize(cur)
			if haveAcc {
				acc = intersect(acc, operand)
			} else {
				acc, haveAcc = operand, true
			}
			cur = nil
			last = lastStart
		case strings.HasPrefix(rest, "[:") || strings.HasPrefix(rest, "[=") || strings.HasPrefix(rest, "[."):
			p.fail(ErrUnsupported, p.pos, "POSIX bracket expression %q", rest[:min(len(rest), 2)])
		case c == '[':
			inner, innerNeg := p.bracket()
			if innerNeg {
				inner = complement(inner)
			}
			cur = append(cur, inner...)
			last = lastSet
		case c == '-':
			next := rest[1:]
			endOfOperand := strings.HasPrefix(next, "]") || strings.HasPrefix(next, "&&")
			if last == lastSet && !endOfOperand {
				p.fail(ErrSyntax, p.pos, "unmatched range specifier in char-class")
			}
			// [-a], [a-], [a-b-c] and [a&&-b]: a literal '-'.
			p.pos++
			cur = append(cur, rng{'-', '-'})
			last = lastChar
		default:
			set, isSet, r := p.classItem()
			if isSet {
				cur = append(cur, set...)
				last = lastSet
				break
			}
			if p.more() && p.peek() == '-' {
				next := p.src[p.pos+1:]
				if next != "" && !strings.HasPrefix(next, "]") && !strings.HasPrefix(next, "&&") {
					dash := p.pos
					p.pos++
					hi := p.rangeEnd(dash)
					if hi < r {
						p.fail(ErrSyntax, dash, "empty range in char class")
					}
					cur = append(cur, rng{r, hi})
					last = lastRange
					break
				}
			}
			cur = append(cur, rng{r, r})
			last = lastChar
		}
		first = false
	}
}

// rangeEnd parses the code point after the '-' of a range.
func (p *parser) rangeEnd(dash int) rune {
	if !p.more() {
		p.fail(ErrSyntax, dash, "premature end of char-class")
	}
	if p.peek() == '[' {
		p.fail(ErrSyntax, dash, "char-class value at end of range")
	}
	if p.peek() == '-' {
		// [!--x]: the range ends at '-'.
		p.pos++
		return '-'
	}
	_, isSet, r := p.classItem()
	if isSet {
		p.fail(ErrSyntax, dash, "char-class value at end of range")
	}
	return r
}

// classItem parses one code point or escape inside a class.
func (p *parser) classItem() (runeSet, bool, rune) {
	if p.peek() == '\\' {
		at := p.pos
		if strings.HasPrefix(p.src[p.pos:], `\A`) || strings.HasPrefix(p.src[p.pos:], `\z`) ||
			strings.HasPrefix(p.src[p.pos:], `\Z`) || strings.HasPrefix(p.src[p.pos:], `\B`) ||
			strings.HasPrefix(p.src[p.pos:], `\G`) {
			p.fail(ErrUnsupported, at, "anchor %q in a char-class", p.src[at:at+2])
		}
		if len(p.src) > at+1 && p.src[at+1] >= '1' && p.src[at+1] <= '9' {
			p.fail(ErrUnsupported, at, "%q in a char-class", p.src[at:at+2])
		}
		return p.escapeItem(true)
	}
	return nil, false, p.next()
}

// closeLater reports whether an unescaped ']' occurs in s from i on, the
// test Oniguruma makes before reading a leading ']' as a literal.
func closeLater(s string, i int) bool {
	for ; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case ']':
			return true
		}
	}
	return false
}
