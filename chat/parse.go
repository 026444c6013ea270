package chat

import (
	"slices"
	"strconv"
	"strings"
)

// maxNesting bounds how deeply expressions and blocks nest, so that a
// hostile template cannot exhaust the stack of the recursive-descent parser
// or of the evaluator that walks its tree.
const maxNesting = 200

// parser is a recursive-descent parser with the reference's grammar and
// precedence (lowest first): ternary and "x if test", or, and, not,
// comparison and membership (left-associative, not chained as in Python),
// + - ~, * / // %, ** (left-associative), "is" tests, filters, unary signs,
// calls and member access, primaries.
type parser struct {
	toks  []token
	pos   int
	depth int

	// Python's Jinja fails to compile a template that names a filter or
	// test it lacks, unless the name is inside an if or a conditional
	// expression (a "soft" frame, where the failure waits for the call).
	soft    bool
	unknown []unknownName
}

type unknownName struct {
	what, name string
	soft       bool
}

// pyFilters and pyTests are the filters and tests of Python's Jinja.
var pyFilters = setOf("abs", "attr", "batch", "capitalize", "center", "count", "d", "default", "dictsort", "e",
	"escape", "filesizeformat", "first", "float", "forceescape", "format", "groupby", "indent", "int", "items",
	"join", "last", "length", "list", "lower", "map", "max", "min", "pprint", "random", "reject", "rejectattr",
	"replace", "reverse", "round", "safe", "select", "selectattr", "slice", "sort", "string", "striptags", "sum",
	"title", "tojson", "trim", "truncate", "unique", "upper", "urlencode", "urlize", "wordcount", "wordwrap", "xmlattr")

var pyTests = setOf("boolean", "callable", "defined", "divisibleby", "eq", "equalto", "escaped", "even", "false",
	"filter", "float", "ge", "greaterthan", "gt", "in", "integer", "iterable", "le", "lessthan", "lower", "lt",
	"mapping", "ne", "none", "number", "odd", "sameas", "sequence", "string", "test", "true", "undefined", "upper")

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// name records the use of a filter or test.
func (p *parser) name(what, name string, known map[string]bool) {
	if !known[name] {
		p.unknown = append(p.unknown, unknownName{what, name, p.soft})
	}
}

// setSoft sets whether what follows is in a soft frame, returning the
// previous state.
func (p *parser) setSoft(soft bool) bool {
	prev := p.soft
	p.soft = soft
	return prev
}

func parse(toks []token) ([]node, error) {
	p := &parser{toks: toks}
	var body []node
	for p.pos < len(p.toks) {
		n, err := p.any()
		if err != nil {
			return nil, err
		}
		body = append(body, n)
	}
	for _, u := range p.unknown {
		if !u.soft {
			return nil, unsupported("the %s %q outside an if (Python's Jinja has no such %s and fails to compile the template)", u.what, u.name, u.what)
		}
	}
	return body, nil
}

// peek is the token at pos+i, or a zero token past the end (a text token
// with no text, which nothing in a tag accepts).
func (p *parser) peek(i int) (token, bool) {
	if p.pos+i < len(p.toks) {
		return p.toks[p.pos+i], true
	}
	return token{}, false
}

func (p *parser) is(types ...tokenType) bool {
	for i, t := range types {
		tok, ok := p.peek(i)
		if !ok || tok.typ != t {
			return false
		}
	}
	return true
}

func (p *parser) isIdent(names ...string) bool {
	for i, name := range names {
		tok, ok := p.peek(i)
		if !ok || tok.typ != tIdent || tok.val != name {
			return false
		}
	}
	return true
}

// isStatement reports whether a {% name … %} with one of names starts here.
func (p *parser) isStatement(names ...string) bool {
	t0, ok0 := p.peek(0)
	t1, ok1 := p.peek(1)
	return ok0 && ok1 && t0.typ == tOpenStatement && t1.typ == tIdent && slices.Contains(names, t1.val)
}

func (p *parser) next() (token, error) {
	tok, ok := p.peek(0)
	if !ok {
		return token{}, syntaxErr("unexpected end of template")
	}
	p.pos++
	return tok, nil
}

func (p *parser) expect(t tokenType, what string) error {
	tok, ok := p.peek(0)
	if !ok {
		return syntaxErr("expected %s, found the end of the template", what)
	}
	if tok.typ != t {
		return syntaxErr("expected %s, found %s", what, describe(tok))
	}
	p.pos++
	return nil
}

func (p *parser) expectIdent(name string) error {
	if !p.isIdent(name) {
		tok, ok := p.peek(0)
		if !ok {
			return syntaxErr("expected %q, found the end of the template", name)
		}
		return syntaxErr("expected %q, found %s", name, describe(tok))
	}
	p.pos++
	return nil
}

// expectEnd reads {% name %}, the end of a block.
func (p *parser) expectEnd(name string) error {
	if err := p.expect(tOpenStatement, "{% "+name+" %}"); err != nil {
		return err
	}
	if err := p.expectIdent(name); err != nil {
		return err
	}
	return p.expect(tCloseStatement, "'%}' after "+name)
}

func describe(t token) string {
	switch t.typ {
	case tText:
		return "text " + strconv.Quote(shorten(t.val))
	case tString:
		return "string " + strconv.Quote(shorten(t.val))
	case tIdent, tNumber:
		return t.typ.String() + " " + t.val
	}
	return t.val
}

func shorten(s string) string {
	if len(s) > 30 {
		return s[:30] + "…"
	}
	return s
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxNesting {
		return syntaxErr("the template nests deeper than %d", maxNesting)
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

// any parses one text, comment, statement or {{ expression }}.
func (p *parser) any() (node, error) {
	tok, _ := p.peek(0)
	switch tok.typ {
	case tComment:
		p.pos++
		return commentNode{}, nil
	case tText:
		p.pos++
		return textNode{tok.val}, nil
	case tOpenStatement:
		return p.statement()
	case tOpenExpression:
		p.pos++
		x, err := p.expression()
		if err != nil {
			return nil, err
		}
		return x, p.expect(tCloseExpression, "'}}'")
	}
	return nil, syntaxErr("unexpected %s", describe(tok))
}

// until parses nodes up to a {% name %} with one of names.
func (p *parser) until(names ...string) ([]node, error) {
	var body []node
	for !p.isStatement(names...) {
		if p.pos >= len(p.toks) {
			return nil, syntaxErr("missing {%% %s %%}", strings.Join(names, " %} or {% "))
		}
		n, err := p.any()
		if err != nil {
			return nil, err
		}
		body = append(body, n)
	}
	return body, nil
}

func (p *parser) statement() (node, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	p.pos++ // {%
	tok, ok := p.peek(0)
	if !ok || tok.typ != tIdent {
		return nil, syntaxErr("expected a statement name after {%%")
	}
	p.pos++
	switch tok.val {
	case "set":
		return p.set()
	case "if":
		defer p.setSoft(p.setSoft(true))
		n, err := p.ifBody()
		if err != nil {
			return nil, err
		}
		return n, p.expectEnd("endif")
	case "macro":
		defer p.setSoft(p.setSoft(false))
		n, err := p.macro()
		if err != nil {
			return nil, err
		}
		return n, p.expectEnd("endmacro")
	case "for":
		defer p.setSoft(p.setSoft(false))
		n, err := p.forBody()
		if err != nil {
			return nil, err
		}
		return n, p.expectEnd("endfor")
	case "call":
		defer p.setSoft(p.setSoft(false))
		return p.callBlock()
	case "break":
		return breakNode{}, p.expect(tCloseStatement, "'%}' after break")
	case "continue":
		return continueNode{}, p.expect(tCloseStatement, "'%}' after continue")
	case "filter":
		f, err := p.primary()
		if err != nil {
			return nil, err
		}
		if id, ok := f.(identNode); ok {
			p.name("filter", id.name, pyFilters)
		}
		defer p.setSoft(p.setSoft(false))
		if _, isIdent := f.(identNode); isIdent && p.is(tOpenParen) {
			if f, err = p.call(f); err != nil {
				return nil, err
			}
		}
		if err := p.expect(tCloseStatement, "'%}' after the filter"); err != nil {
			return nil, err
		}
		body, err := p.until("endfilter")
		if err != nil {
			return nil, err
		}
		return filterBlockNode{filter: f, body: body}, p.expectEnd("endfilter")
	}
	return nil, syntaxErr("unknown statement %q", tok.val)
}

func (p *parser) set() (node, error) {
	target, err := p.sequence(false)
	if err != nil {
		return nil, err
	}
	n := setNode{target: target}
	if p.is(tEquals) {
		p.pos++
		if n.value, err = p.sequence(false); err != nil {
			return nil, err
		}
	} else {
		if err := p.expect(tCloseStatement, "'=' or '%}' in set"); err != nil {
			return nil, err
		}
		if n.body, err = p.until("endset"); err != nil {
			return nil, err
		}
		p.pos++ // {%
		if err := p.expectIdent("endset"); err != nil {
			return nil, err
		}
	}
	return n, p.expect(tCloseStatement, "'%}' after set")
}

// ifBody parses the rest of {% if … %} or {% elif … %} up to, not
// including, the {% endif %}.
func (p *parser) ifBody() (node, error) {
	test, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.isIdent("if") {
		return nil, unsupported("a conditional expression (x if y) as the test of an if without parentheses (Python's Jinja rejects it)")
	}
	if err := p.expect(tCloseStatement, "'%}' after the if test"); err != nil {
		return nil, err
	}
	n := ifNode{test: test}
	if n.body, err = p.until("elif", "else", "endif"); err != nil {
		return nil, err
	}
	switch {
	case p.isStatement("elif"):
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		p.pos += 2
		elif, err := p.ifBody()
		if err != nil {
			return nil, err
		}
		n.els = []node{elif}
	case p.isStatement("else"):
		p.pos += 2
		if err := p.expect(tCloseStatement, "'%}' after else"); err != nil {
			return nil, err
		}
		if n.els, err = p.until("endif"); err != nil {
			return nil, err
		}
	}
	return n, nil
}

func (p *parser) macro() (node, error) {
	name, err := p.primary()
	if err != nil {
		return nil, err
	}
	id, ok := name.(identNode)
	if !ok {
		return nil, syntaxErr("expected a name after macro")
	}
	params, err := p.args(true)
	if err != nil {
		return nil, err
	}
	if err := p.expect(tCloseStatement, "'%}' after the macro's parameters"); err != nil {
		return nil, err
	}
	body, err := p.until("endmacro")
	if err != nil {
		return nil, err
	}
	return macroNode{name: id.name, params: params, body: body}, nil
}

func (p *parser) forBody() (node, error) {
	target, err := p.sequence(true)
	if err != nil {
		return nil, err
	}
	switch target.(type) {
	case identNode, tupleNode:
	default:
		return nil, syntaxErr("expected a name or names to loop over")
	}
	if err := p.expectIdent("in"); err != nil {
		return nil, err
	}
	iter, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.isIdent("if") {
		p.pos++
		test, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.isIdent("else") {
			return nil, unsupported("a conditional expression (x if y else z) as the iterable of a for loop without parentheses (Python's Jinja reads the if as the loop's filter)")
		}
		iter = selectNode{x: iter, test: test}
	}
	if err := p.expect(tCloseStatement, "'%}' after the for loop's iterable"); err != nil {
		return nil, err
	}
	n := forNode{target: target, iter: iter}
	if n.body, err = p.until("endfor", "else"); err != nil {
		return nil, err
	}
	if p.isStatement("else") {
		p.pos += 2
		if err := p.expect(tCloseStatement, "'%}' after else"); err != nil {
			return nil, err
		}
		if n.els, err = p.until("endfor"); err != nil {
			return nil, err
		}
	}
	return n, nil
}

func (p *parser) callBlock() (node, error) {
	var params []node
	var err error
	if p.is(tOpenParen) {
		if params, err = p.args(true); err != nil {
			return nil, err
		}
	}
	callee, err := p.primary()
	if err != nil {
		return nil, err
	}
	if _, ok := callee.(identNode); !ok {
		return nil, syntaxErr("expected a macro name after call")
	}
	args, err := p.args(false)
	if err != nil {
		return nil, err
	}
	if err := p.expect(tCloseStatement, "'%}' after call"); err != nil {
		return nil, err
	}
	body, err := p.until("endcall")
	if err != nil {
		return nil, err
	}
	n := callBlockNode{call: &callNode{callee: callee, args: args}, params: params, body: body}
	return n, p.expectEnd("endcall")
}

// sequence parses one expression, or a tuple of them separated by commas
// (no trailing comma). With primaries set it parses primaries only (loop
// targets).
func (p *parser) sequence(primaries bool) (node, error) {
	parse := p.expression
	if primaries {
		parse = p.primary
	}
	first, err := parse()
	if err != nil {
		return nil, err
	}
	if !p.is(tComma) {
		return first, nil
	}
	items := []node{first}
	for p.is(tComma) {
		p.pos++
		x, err := parse()
		if err != nil {
			return nil, err
		}
		items = append(items, x)
	}
	return tupleNode{items}, nil
}

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
