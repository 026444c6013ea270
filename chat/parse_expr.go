package chat

import (
	"strconv"
	"strings"
)

func (p *parser) expression() (node, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	start := len(p.unknown)
	x, err := p.or()
	if err != nil || !p.isIdent("if") {
		return x, err
	}
	// The whole conditional expression is soft, its first part too.
	defer func() {
		for i := start; i < len(p.unknown); i++ {
			p.unknown[i].soft = true
		}
	}()
	p.pos++
	test, err := p.or()
	if err != nil {
		return nil, err
	}
	if !p.isIdent("else") {
		return selectNode{x: x, test: test}, nil
	}
	p.pos++
	els, err := p.expression()
	if err != nil {
		return nil, err
	}
	return ternaryNode{cond: test, then: x, els: els}, nil
}

// binary parses a left-associative chain of operands joined by operators
// that match.
func (p *parser) binary(operand func() (node, error), match func() (string, int)) (node, error) {
	l, err := operand()
	if err != nil {
		return nil, err
	}
	for {
		op, n := match()
		if n == 0 {
			return l, nil
		}
		p.pos += n
		r, err := operand()
		if err != nil {
			return nil, err
		}
		l = binaryNode{op: op, l: l, r: r}
	}
}

func (p *parser) ident(name string) func() (string, int) {
	return func() (string, int) {
		if p.isIdent(name) {
			return name, 1
		}
		return "", 0
	}
}

func (p *parser) tokenOf(t tokenType) func() (string, int) {
	return func() (string, int) {
		if tok, ok := p.peek(0); ok && tok.typ == t {
			return tok.val, 1
		}
		return "", 0
	}
}

func (p *parser) or() (node, error)  { return p.binary(p.and, p.ident("or")) }
func (p *parser) and() (node, error) { return p.binary(p.not, p.ident("and")) }

func (p *parser) not() (node, error) {
	if !p.isIdent("not") {
		return p.comparison()
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	p.pos++
	x, err := p.not()
	if err != nil {
		return nil, err
	}
	return unaryNode{op: "not", x: x}, nil
}

func (p *parser) comparison() (node, error) {
	ops := 0
	n, err := p.binary(p.additive, func() (string, int) {
		op, n := "", 0
		switch {
		case p.isIdent("not", "in"):
			op, n = "not in", 2
		case p.isIdent("in"):
			op, n = "in", 1
		default:
			op, n = p.tokenOf(tComparison)()
		}
		if n > 0 {
			ops++
		}
		return op, n
	})
	if err == nil && ops > 1 {
		return nil, unsupported("a chain of comparisons (Python's Jinja reads a < b < c as a < b and b < c, @huggingface/jinja as (a < b) < c)")
	}
	return n, err
}

// additive parses + - ~, which the reference chains left to right at one
// level; Python's Jinja binds ~ tighter than + and -. Where a ~ follows a +
// or - the groupings differ, and a chainNode renders both ways.
func (p *parser) additive() (node, error) {
	first, err := p.multiplicative()
	if err != nil {
		return nil, err
	}
	xs, ops := []node{first}, []string(nil)
	for p.is(tAdditive) {
		ops = append(ops, p.toks[p.pos].val)
		p.pos++
		x, err := p.multiplicative()
		if err != nil {
			return nil, err
		}
		xs = append(xs, x)
	}
	sawArith := false
	for _, op := range ops {
		if op == "~" && sawArith {
			return chainNode{xs: xs, ops: ops}, nil
		}
		sawArith = sawArith || op != "~"
	}
	l := first
	for i, op := range ops {
		l = binaryNode{op: op, l: l, r: xs[i+1]}
	}
	return l, nil
}

func (p *parser) multiplicative() (node, error) {
	return p.binary(p.power, p.tokenOf(tMultiplicative))
}

func (p *parser) power() (node, error) { return p.binary(p.test, p.tokenOf(tPower)) }

func (p *parser) test() (node, error) {
	x, err := p.filter()
	if err != nil {
		return nil, err
	}
	for p.isIdent("is") {
		p.pos++
		negate := p.isIdent("not")
		if negate {
			p.pos++
		}
		name, err := p.primary()
		if err != nil {
			return nil, err
		}
		id, ok := name.(identNode)
		if !ok {
			return nil, syntaxErr("expected the name of a test after 'is'")
		}
		x = testNode{x: x, negate: negate, name: id.name}
		p.name("test", id.name, pyTests)
		if tok, ok := p.peek(0); ok {
			switch {
			case tok.typ == tIdent && tok.val != "else" && tok.val != "or" && tok.val != "and",
				tok.typ == tString, tok.typ == tNumber, tok.typ == tOpenParen, tok.typ == tOpenBracket, tok.typ == tOpenBrace:
				return nil, unsupported("%s after a test (`is %s %s`: Python's Jinja reads it as the test's argument)", describe(tok), id.name, tok.val)
			}
		}
	}
	return x, nil
}

func (p *parser) filter() (node, error) {
	x, err := p.unary()
	if err != nil {
		return nil, err
	}
	for p.is(tPipe) {
		p.pos++
		f, err := p.primary()
		if err != nil {
			return nil, err
		}
		id, ok := f.(identNode)
		if !ok {
			return nil, syntaxErr("expected the name of a filter after '|'")
		}
		p.name("filter", id.name, pyFilters)
		if p.is(tOpenParen) {
			if f, err = p.call(f); err != nil {
				return nil, err
			}
		}
		x = filterNode{x: x, filter: f}
	}
	return x, nil
}

func (p *parser) unary() (node, error) {
	if tok, ok := p.peek(0); ok && (tok.typ == tUnary || tok.typ == tAdditive) && (tok.val == "-" || tok.val == "+") {
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		p.pos++
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return unaryNode{op: tok.val, x: x}, nil
	}
	signed := false
	if tok, ok := p.peek(0); ok && tok.typ == tNumber && (tok.val[0] == '-' || tok.val[0] == '+') {
		signed = true
	}
	x, err := p.primary()
	if err != nil {
		return nil, err
	}
	if signed && (p.is(tDot) || p.is(tOpenBracket) || p.is(tOpenParen)) {
		return nil, unsupported("a member or call of a signed number (@huggingface/jinja reads -1.x as (-1).x, Python's Jinja as -(1.x))")
	}
	if x, err = p.members(x); err != nil {
		return nil, err
	}
	if p.is(tOpenParen) {
		return p.call(x)
	}
	return x, nil
}

// call parses the arguments of a call of callee, then any member accesses
// and further calls of its result.
func (p *parser) call(callee node) (node, error) {
	for {
		args, err := p.args(false)
		if err != nil {
			return nil, err
		}
		x, err := p.members(callNode{callee: callee, args: args})
		if err != nil {
			return nil, err
		}
		if !p.is(tOpenParen) {
			return x, nil
		}
		callee = x
	}
}

// args parses a parenthesized argument list: for a call, expressions,
// name=value, *list and **mapping; for parameters (of a macro or call
// block), names and name=default.
func (p *parser) args(params bool) ([]node, error) {
	if err := p.expect(tOpenParen, "'('"); err != nil {
		return nil, err
	}
	var args []node
	seen := map[string]bool{}
	sawKeyword, sawSpread := false, false
	for !p.is(tCloseParen) {
		kwspread := p.is(tPower)
		spread := false
		if tok, ok := p.peek(0); ok && tok.typ == tMultiplicative && tok.val == "*" {
			spread = true
		}
		if params && (kwspread || spread) {
			return nil, syntaxErr("argument unpacking is not allowed in parameters")
		}
		if kwspread {
			p.pos++
			x, err := p.expression()
			if err != nil {
				return nil, err
			}
			args = append(args, kwspreadNode{x})
			if p.is(tComma) {
				p.pos++
			}
			if !p.is(tCloseParen) {
				return nil, syntaxErr("** must be the last argument")
			}
			break
		}
		var arg node
		if spread {
			if sawSpread {
				return nil, syntaxErr("only one * argument is allowed")
			}
			sawSpread = true
			p.pos++
			x, err := p.expression()
			if err != nil {
				return nil, err
			}
			arg = spreadNode{x}
		} else {
			x, err := p.expression()
			if err != nil {
				return nil, err
			}
			arg = x
			if p.is(tEquals) {
				p.pos++
				id, ok := x.(identNode)
				if !ok {
					return nil, syntaxErr("expected a name before '='")
				}
				v, err := p.expression()
				if err != nil {
					return nil, err
				}
				arg = kwargNode{name: id.name, value: v}
			}
			if params {
				var name string
				switch a := arg.(type) {
				case identNode:
					name = a.name
				case kwargNode:
					name = a.name
				default:
					return nil, syntaxErr("expected a parameter name")
				}
				if seen[name] {
					return nil, syntaxErr("duplicate parameter %q", name)
				}
				seen[name] = true
			}
			if _, kw := arg.(kwargNode); kw {
				sawKeyword = true
			} else if sawKeyword {
				return nil, syntaxErr("a positional argument follows a keyword argument")
			} else if sawSpread {
				return nil, syntaxErr("a positional argument follows a * argument")
			}
		}
		args = append(args, arg)
		if p.is(tComma) {
			p.pos++
		}
	}
	return args, p.expect(tCloseParen, "')'")
}

// members parses .name, .0 and [subscript] after x.
func (p *parser) members(x node) (node, error) {
	for p.is(tDot) || p.is(tOpenBracket) {
		computed := p.is(tOpenBracket)
		p.pos++
		var prop node
		var err error
		if computed {
			if prop, err = p.subscript(); err != nil {
				return nil, err
			}
			if err := p.expect(tCloseBracket, "']'"); err != nil {
				return nil, err
			}
		} else {
			if prop, err = p.primary(); err != nil {
				return nil, err
			}
			switch prop := prop.(type) {
			case identNode:
			case numberNode:
				if prop.n.float {
					return nil, syntaxErr("expected a name or an integer after '.'")
				}
			default:
				return nil, syntaxErr("expected a name or an integer after '.'")
			}
		}
		x = memberNode{obj: x, prop: prop, computed: computed}
	}
	return x, nil
}

// subscript parses what is inside [ ]: an expression or a slice.
func (p *parser) subscript() (node, error) {
	var parts []node
	slice := false
	for !p.is(tCloseBracket) {
		if p.pos >= len(p.toks) {
			return nil, syntaxErr("missing ']'")
		}
		if p.is(tColon) {
			parts = append(parts, nil)
			p.pos++
			slice = true
			continue
		}
		x, err := p.expression()
		if err != nil {
			return nil, err
		}
		parts = append(parts, x)
		if p.is(tColon) {
			p.pos++
			slice = true
		}
	}
	if len(parts) == 0 {
		return nil, syntaxErr("empty subscript []")
	}
	if !slice {
		return parts[0], nil
	}
	if len(parts) > 3 {
		return nil, syntaxErr("a slice has at most three parts")
	}
	parts = append(parts, nil, nil)
	return sliceNode{start: parts[0], stop: parts[1], step: parts[2]}, nil
}

func (p *parser) primary() (node, error) {
	tok, err := p.next()
	if err != nil {
		return nil, err
	}
	switch tok.typ {
	case tNumber:
		f, err := strconv.ParseFloat(tok.val, 64)
		if err != nil {
			return nil, syntaxErr("number %s: %v", tok.val, err)
		}
		return numberNode{number{f: f, float: strings.Contains(tok.val, ".")}}, nil
	case tString:
		s := tok.val
		for p.is(tString) {
			s += p.toks[p.pos].val
			p.pos++
		}
		return stringNode{s}, nil
	case tIdent:
		return identNode{tok.val}, nil
	case tOpenParen:
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		x, err := p.sequence(false)
		if err != nil {
			return nil, err
		}
		return x, p.expect(tCloseParen, "')'")
	case tOpenBracket:
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		var items []node
		for !p.is(tCloseBracket) {
			x, err := p.expression()
			if err != nil {
				return nil, err
			}
			items = append(items, x)
			if p.is(tComma) {
				p.pos++
			}
		}
		p.pos++
		return listNode{items}, nil
	case tOpenBrace:
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		var n objectNode
		for !p.is(tCloseBrace) {
			k, err := p.expression()
			if err != nil {
				return nil, err
			}
			if err := p.expect(tColon, "':' in an object literal"); err != nil {
				return nil, err
			}
			v, err := p.expression()
			if err != nil {
				return nil, err
			}
			n.keys = append(n.keys, k)
			n.vals = append(n.vals, v)
			if p.is(tComma) {
				p.pos++
			}
		}
		p.pos++
		return n, nil
	}
	return nil, syntaxErr("unexpected %s", describe(tok))
}
