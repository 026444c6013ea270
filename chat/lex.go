package chat

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// tokenType is the kind of a lexical token.
type tokenType uint8

const (
	tText            tokenType = iota // text between tags
	tNumber                           // 123, 1.5, -2 (a sign is part of the number after an operator)
	tString                           // 'string' or "string", escapes resolved
	tIdent                            // names and keywords
	tEquals                           // =
	tOpenParen                        // (
	tCloseParen                       // )
	tOpenStatement                    // {%
	tCloseStatement                   // %}
	tOpenExpression                   // {{
	tCloseExpression                  // }}
	tOpenBracket                      // [
	tCloseBracket                     // ]
	tOpenBrace                        // {
	tCloseBrace                       // }
	tComma                            // ,
	tDot                              // .
	tColon                            // :
	tPipe                             // |
	tAdditive                         // + - ~
	tMultiplicative                   // * / // %
	tPower                            // **
	tComparison                       // < > <= >= == !=
	tUnary                            // a sign with no number after it
	tComment                          // {# … #}
)

var tokenNames = [...]string{
	tText: "text", tNumber: "number", tString: "string", tIdent: "identifier",
	tEquals: "'='", tOpenParen: "'('", tCloseParen: "')'",
	tOpenStatement: "'{%'", tCloseStatement: "'%}'", tOpenExpression: "'{{'", tCloseExpression: "'}}'",
	tOpenBracket: "'['", tCloseBracket: "']'", tOpenBrace: "'{'", tCloseBrace: "'}'",
	tComma: "','", tDot: "'.'", tColon: "':'", tPipe: "'|'",
	tAdditive: "operator", tMultiplicative: "operator", tPower: "'**'", tComparison: "comparison",
	tUnary: "sign", tComment: "comment",
}

func (t tokenType) String() string { return tokenNames[t] }

type token struct {
	typ tokenType
	val string
}

// operators in the order the lexer tries them (longest first where one is
// the prefix of another).
var operators = []struct {
	seq string
	typ tokenType
}{
	{"{%", tOpenStatement}, {"%}", tCloseStatement}, {"{{", tOpenExpression}, {"}}", tCloseExpression},
	{"(", tOpenParen}, {")", tCloseParen}, {"{", tOpenBrace}, {"}", tCloseBrace},
	{"[", tOpenBracket}, {"]", tCloseBracket}, {",", tComma}, {".", tDot}, {":", tColon}, {"|", tPipe},
	{"<=", tComparison}, {">=", tComparison}, {"==", tComparison}, {"!=", tComparison},
	{"<", tComparison}, {">", tComparison},
	{"+", tAdditive}, {"-", tAdditive}, {"~", tAdditive},
	{"**", tPower}, {"*", tMultiplicative}, {"//", tMultiplicative}, {"/", tMultiplicative}, {"%", tMultiplicative},
	{"=", tEquals},
}

// isSpace is JavaScript's \s (and what String.prototype.trim removes).
func isSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// isLineBreak is a JavaScript line terminator, where a multiline ^ matches.
func isLineBreak(r rune) bool {
	return r == '\n' || r == '\r' || r == 0x2028 || r == 0x2029
}

func trimSpaceJS(s string) string { return strings.TrimFunc(s, isSpace) }
func trimLeftJS(s string) string  { return strings.TrimLeftFunc(s, isSpace) }
func trimRightJS(s string) string { return strings.TrimRightFunc(s, isSpace) }
func isDigit(c byte) bool         { return c >= '0' && c <= '9' }
func isWordByte(c byte) bool      { return c == '_' || isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'z' }
func syntaxErr(f string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrSyntax, fmt.Sprintf(f, a...))
}

// preprocess applies the whitespace rules transformers configures
// (trim_blocks, lstrip_blocks, no keep_trailing_newline) as the reference
// does, on the source text before lexing, and drops transformers' own
// {% generation %} / {% endgeneration %} tags.
func preprocess(src string) string {
	return dropGenerationTags(whitespaceRules(src))
}

// whitespaceRules applies the trailing-newline, lstrip_blocks and
// trim_blocks rules.
func whitespaceRules(src string) string {
	// One trailing newline goes.
	src = strings.TrimSuffix(src, "\n")

	// lstrip_blocks: spaces and tabs from the start of a line to a {% or {#
	// (and, as the reference's pattern has it, to a "{-").
	var b strings.Builder
	lineStart := true
	for i := 0; i < len(src); {
		if lineStart {
			j := i
			for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
				j++
			}
			if j+1 < len(src) && src[j] == '{' && (src[j+1] == '#' || src[j+1] == '%' || src[j+1] == '-') {
				i = j
			}
		}
		r, n := utf8.DecodeRuneInString(src[i:])
		b.WriteString(src[i : i+n])
		lineStart = isLineBreak(r)
		i += n
	}
	src = b.String()

	// trim_blocks: the newline right after a %}, #} (or "-}").
	b.Reset()
	for i := 0; i < len(src); i++ {
		b.WriteByte(src[i])
		if i+2 < len(src) && (src[i] == '#' || src[i] == '%' || src[i] == '-') && src[i+1] == '}' && src[i+2] == '\n' {
			b.WriteByte('}')
			i += 2
		}
	}
	return b.String()
}

// dropGenerationTags removes {% generation %} and {% endgeneration %} with
// the white space around them, keeping that white space unless the tag's
// own "-" strips it.
func dropGenerationTags(src string) string {
	if !strings.Contains(src, "generation") {
		return src
	}
	var b strings.Builder
	last := 0 // end of the last tag removed
	for p := strings.Index(src, "{%"); p >= 0; {
		q, lstrip, rstrip, ok := generationTag(src, p)
		if !ok {
			next := strings.Index(src[p+2:], "{%")
			if next < 0 {
				break
			}
			p += 2 + next
			continue
		}
		before := p
		for before > last {
			r, n := utf8.DecodeLastRuneInString(src[last:before])
			if !isSpace(r) {
				break
			}
			before -= n
		}
		after := q
		for after < len(src) {
			r, n := utf8.DecodeRuneInString(src[after:])
			if !isSpace(r) {
				break
			}
			after += n
		}
		b.WriteString(src[last:before])
		if !lstrip {
			b.WriteString(src[before:p])
		}
		if !rstrip {
			b.WriteString(src[q:after])
		}
		last = after
		next := strings.Index(src[after:], "{%")
		if next < 0 {
			break
		}
		p = after + next
	}
	b.WriteString(src[last:])
	return b.String()
}

// generationSpacing reports whether dropping generation tags as the
// reference does changes white space that transformers, which parses them
// as tags, keeps. Tags separated by white space only form a group; the
// reference's text then runs across the group, so that a "-" next to it
// strips white space Python's Jinja keeps behind a tag.
func generationSpacing(src string) bool {
	type tag struct {
		p, q   int
		l, r   bool
		before int // start of the white space before p
	}
	var tags []tag
	last := 0
	for p := strings.Index(src, "{%"); p >= 0; {
		q, l, r, ok := generationTag(src, p)
		if ok {
			before := p
			for before > last {
				c, n := utf8.DecodeLastRuneInString(src[last:before])
				if !isSpace(c) {
					break
				}
				before -= n
			}
			tags = append(tags, tag{p, q, l, r, before})
			last = skipSpace(src, q)
			p = last
		} else {
			p += 2
		}
		next := strings.Index(src[p:], "{%")
		if next < 0 {
			break
		}
		p += next
	}
	for i := 0; i < len(tags); {
		j := i
		kept := false // white space inside the group that both keep
		for j+1 < len(tags) && skipSpace(src, tags[j].q) == tags[j+1].p {
			if tags[j+1].p > tags[j].q && !tags[j].r {
				if tags[j+1].l {
					return true // Python strips it, the reference keeps it
				}
				kept = true
			}
			j++
		}
		after := skipSpace(src, tags[j].q)
		keptBefore := tags[i].before < tags[i].p && !tags[i].l
		keptAfter := after > tags[j].q && !tags[j].r
		rest, head := src[after:], src[:tags[i].before]
		dashAfter := strings.HasPrefix(rest, "{%-") || strings.HasPrefix(rest, "{{-") || strings.HasPrefix(rest, "{#-")
		dashBefore := strings.HasSuffix(head, "-%}") || strings.HasSuffix(head, "-}}") || strings.HasSuffix(head, "-#}")
		if dashAfter && (keptBefore || kept) || dashBefore && (keptAfter || kept) {
			return true
		}
		i = j + 1
	}
	return false
}

// generationTag matches {%-? \s* (end)?generation \s* -?%} at p and returns
// the index after it.
func generationTag(src string, p int) (end int, lstrip, rstrip, ok bool) {
	i := p + 2
	if i < len(src) && src[i] == '-' {
		lstrip = true
		i++
	}
	i = skipSpace(src, i)
	i += len("end") * boolInt(strings.HasPrefix(src[i:], "endgeneration"))
	if !strings.HasPrefix(src[i:], "generation") {
		return 0, false, false, false
	}
	i = skipSpace(src, i+len("generation"))
	if i < len(src) && src[i] == '-' {
		rstrip = true
		i++
	}
	if !strings.HasPrefix(src[i:], "%}") {
		return 0, false, false, false
	}
	return i + 2, lstrip, rstrip, true
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func skipSpace(s string, i int) int {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isSpace(r) {
			break
		}
		i += n
	}
	return i
}

// lex splits a preprocessed template into tokens, exactly as the
// reference's tokenizer does: text outside tags, whitespace control by
// "-" on either side of a tag, and the tokens inside tags.
func lex(src string) ([]token, error) {
	var toks []token
	pos := 0
	last := func() (tokenType, bool) {
		if len(toks) == 0 {
			return 0, false
		}
		return toks[len(toks)-1].typ, true
	}
	// stripText removes the trailing white space of a text token before a
	// {%-, {{- or {#-.
	stripText := func() {
		if n := len(toks); n > 0 && toks[n-1].typ == tText {
			toks[n-1].val = trimRightJS(toks[n-1].val)
			if toks[n-1].val == "" {
				toks = toks[:n-1]
			}
		}
	}
	// run consumes bytes while ok holds; like the reference, reaching the
	// end of the input inside a tag is an error.
	run := func(ok func(byte) bool) (string, error) {
		start := pos
		for pos < len(src) && ok(src[pos]) {
			pos++
		}
		if pos >= len(src) && pos > start {
			return "", syntaxErr("unexpected end of input")
		}
		return src[start:pos], nil
	}
	braces := 0 // depth of { … } inside an expression, where }} is two braces

	for pos < len(src) {
		if lt, ok := last(); !ok || lt == tCloseStatement || lt == tCloseExpression || lt == tComment {
			start := pos
			for pos < len(src) && !(src[pos] == '{' && pos+1 < len(src) && (src[pos+1] == '%' || src[pos+1] == '{' || src[pos+1] == '#')) {
				pos++
			}
			if pos > start {
				toks = append(toks, token{tText, src[start:pos]})
				continue
			}
		}

		if strings.HasPrefix(src[pos:], "{#") {
			pos += 2
			stripBefore := pos < len(src) && src[pos] == '-'
			if stripBefore {
				pos++
			}
			end := strings.Index(src[pos:], "#}")
			if end < 0 {
				return nil, syntaxErr("missing end of comment tag")
			}
			comment := src[pos : pos+end]
			pos += end + 2
			if stripBefore {
				stripText()
			}
			toks = append(toks, token{tComment, strings.TrimSuffix(comment, "-")})
			if strings.HasSuffix(comment, "-") {
				pos = skipSpace(src, pos)
			}
			continue
		}
		if strings.HasPrefix(src[pos:], "{%-") {
			stripText()
			toks = append(toks, token{tOpenStatement, "{%"})
			pos += 3
			continue
		}
		if strings.HasPrefix(src[pos:], "{{-") {
			stripText()
			toks = append(toks, token{tOpenExpression, "{{"})
			braces = 0
			pos += 3
			continue
		}

		// White space inside a tag separates tokens.
		if p := skipSpace(src, pos); p > pos {
			if p >= len(src) {
				return nil, syntaxErr("unexpected end of input")
			}
			pos = p
		}
		if strings.HasPrefix(src[pos:], "-%}") {
			toks = append(toks, token{tCloseStatement, "%}"})
			pos = skipSpace(src, pos+3)
			continue
		}
		if strings.HasPrefix(src[pos:], "-}}") {
			toks = append(toks, token{tCloseExpression, "}}"})
			pos = skipSpace(src, pos+3)
			continue
		}
		if pos >= len(src) {
			break
		}

		c := src[pos]
		if c == '-' || c == '+' {
			lt, ok := last()
			if !ok || lt == tText {
				return nil, syntaxErr("unexpected character %q", c)
			}
			switch lt {
			case tIdent, tNumber, tString, tCloseParen, tCloseBracket:
				// A binary operator: the table below takes it.
			default:
				pos++
				num, err := run(isDigit)
				if err != nil {
					return nil, err
				}
				if num != "" && pos+1 < len(src) && src[pos] == '.' && isDigit(src[pos+1]) {
					pos++
					frac, err := run(isDigit)
					if err != nil {
						return nil, err
					}
					num += "." + frac
				}
				if num != "" {
					toks = append(toks, token{tNumber, string(c) + num})
				} else {
					toks = append(toks, token{tUnary, string(c)})
				}
				continue
			}
		}

		matched := false
		for _, op := range operators {
			if op.seq == "}}" && braces > 0 {
				continue
			}
			if strings.HasPrefix(src[pos:], op.seq) {
				toks = append(toks, token{op.typ, op.seq})
				switch op.typ {
				case tOpenExpression:
					braces = 0
				case tOpenBrace:
					braces++
				case tCloseBrace:
					braces--
				}
				pos += len(op.seq)
				matched = true
				break
			}
		}
		if matched {
			continue
		}

		switch {
		case c == '\'' || c == '"':
			s, err := lexString(src, &pos)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{tString, s})
		case isDigit(c):
			num, err := run(isDigit)
			if err != nil {
				return nil, err
			}
			if lt, _ := last(); lt != tDot && pos+1 < len(src) && src[pos] == '.' && isDigit(src[pos+1]) {
				pos++
				frac, err := run(isDigit)
				if err != nil {
					return nil, err
				}
				num += "." + frac
			}
			toks = append(toks, token{tNumber, num})
		case isWordByte(c):
			word, err := run(isWordByte)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{tIdent, word})
		default:
			r, _ := utf8.DecodeRuneInString(src[pos:])
			return nil, syntaxErr("unexpected character %q", r)
		}
	}
	return toks, nil
}

// lexString reads a quoted string at *pos with the reference's escapes:
// \n \t \r \b \f \v \' \" \\, \xHH and \uHHHH; any other escape is an error.
func lexString(src string, pos *int) (string, error) {
	quote := src[*pos]
	i := *pos + 1
	var b strings.Builder
	var high rune // a pending high surrogate from \uD800–\uDBFF
	flushHigh := func() error {
		if high != 0 {
			return fmt.Errorf("%w: a lone surrogate \\u%04x in a string literal", ErrUnsupported, high)
		}
		return nil
	}
	for {
		if i >= len(src) {
			return "", syntaxErr("unexpected end of input in a string literal")
		}
		c := src[i]
		if c == quote {
			break
		}
		if c != '\\' {
			if err := flushHigh(); err != nil {
				return "", err
			}
			r, n := utf8.DecodeRuneInString(src[i:])
			b.WriteRune(r)
			i += n
			if i >= len(src) {
				return "", syntaxErr("unexpected end of input in a string literal")
			}
			continue
		}
		i++
		if i >= len(src) {
			return "", syntaxErr("unexpected end of input in a string literal")
		}
		e := src[i]
		i++
		if e == 'x' || e == 'u' {
			n := 2
			if e == 'u' {
				n = 4
			}
			if i+n > len(src) {
				return "", syntaxErr("invalid hexadecimal escape sequence \\%c%s", e, src[i:])
			}
			hex := src[i : i+n]
			v, err := strconv.ParseUint(hex, 16, 32)
			if err != nil || strings.ContainsAny(hex, "+-_") {
				return "", syntaxErr("invalid hexadecimal escape sequence \\%c%s", e, hex)
			}
			i += n
			r := rune(v)
			switch {
			case r >= 0xd800 && r < 0xdc00:
				if err := flushHigh(); err != nil {
					return "", err
				}
				high = r
				continue
			case r >= 0xdc00 && r < 0xe000:
				if high == 0 {
					return "", fmt.Errorf("%w: a lone surrogate \\u%04x in a string literal", ErrUnsupported, r)
				}
				r = 0x10000 + (high-0xd800)<<10 + (r - 0xdc00)
				high = 0
			default:
				if err := flushHigh(); err != nil {
					return "", err
				}
			}
			b.WriteRune(r)
			continue
		}
		if err := flushHigh(); err != nil {
			return "", err
		}
		switch e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case '\'', '"', '\\':
			b.WriteByte(e)
		default:
			r, _ := utf8.DecodeRuneInString(src[i-1:])
			return "", syntaxErr("unexpected escaped character %q", r)
		}
	}
	if err := flushHigh(); err != nil {
		return "", err
	}
	*pos = i + 1
	return b.String(), nil
}
