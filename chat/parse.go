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

	// generation makes {% generation %}…{% endgeneration %} a block, for
	// checking how transformers would parse the template.
	generation bool
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
	case "generation":
		if !p.generation {
			break
		}
		if err := p.expect(tCloseStatement, "'%}' after generation"); err != nil {
			return nil, err
		}
		if _, err := p.until("endgeneration"); err != nil {
			return nil, err
		}
		return nil, p.expectEnd("endgeneration")
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
