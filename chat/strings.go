package chat

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// String methods and filters. The reference implements a few of Python's
// string methods in JavaScript, some with other rules (strip ignores its
// argument; title and capitalize touch only what they upper-case). For each
// hlm computes what the reference gives and, where the rules differ, what
// Python gives, and refuses when the two results differ.

// stringMethod is s.name as a bound method, or nil if the reference has
// no such method.
func stringMethod(s, name string) *function {
	m := func(call func(ev *evaluator, args []value, kw *object) (value, error)) *function {
		return &function{name: name, call: func(ev *evaluator, args []value, kw *object, _ *scope) (value, error) {
			v, err := call(ev, args, kw)
			if err != nil {
				return nil, err
			}
			if str, ok := v.(string); ok && ev != nil {
				return v, ev.checkLen(str)
			}
			return v, nil
		}}
	}
	noArgs := func(f func() (value, error)) *function {
		return m(func(_ *evaluator, args []value, kw *object) (value, error) {
			if len(args) > 0 || kw != nil {
				return nil, unsupported(".%s() with arguments (@huggingface/jinja ignores them, Python rejects them)", name)
			}
			return f()
		})
	}
	switch name {
	case "upper", "lower":
		return noArgs(func() (value, error) { return changeCase(s, name == "upper") })
	case "title":
		return noArgs(func() (value, error) { return title(s, pyStrTitle(s)) })
	case "capitalize":
		return noArgs(func() (value, error) { return capitalize(s) })
	case "strip", "lstrip", "rstrip":
		return m(func(_ *evaluator, args []value, kw *object) (value, error) {
			if len(args) > 1 || kw != nil {
				return nil, unsupported(".%s() with more than one argument", name)
			}
			var chars value = null{}
			if len(args) == 1 {
				chars = args[0]
			}
			return strip(s, name, chars)
		})
	case "startswith", "endswith":
		return m(func(_ *evaluator, args []value, kw *object) (value, error) { return affix(s, name, args, kw) })
	case "split":
		return m(func(_ *evaluator, args []value, kw *object) (value, error) { return split(s, args, kw) })
	case "replace":
		return m(func(ev *evaluator, args []value, kw *object) (value, error) {
			return replaceString(ev, s, args, kw, false)
		})
	}
	return nil
}

// changeCase is upper() and lower(): JavaScript and Python both map full
// Unicode case (ß to SS, final sigma); Go maps one rune to one rune, so
// strings with such characters are refused.
func changeCase(s string, upper bool) (value, error) {
	if hasSpecialCasing(s) {
		return nil, unsupported("changing the case of %q (characters with multi-character case mappings)", shorten(s))
	}
	if upper {
		return strings.ToUpper(s), nil
	}
	return strings.ToLower(s), nil
}

// hasSpecialCasing reports characters whose full case mapping (what
// JavaScript and Python use) differs from the one-rune mapping: ß, the
// ligatures ﬀ–ﬆ, the Greek letters with ypogegrammeni, İ, and Σ (whose
// lower case depends on its position).
func hasSpecialCasing(s string) bool {
	for _, r := range s {
		switch {
		case r < 0xdf:
		case r == 0xdf, r == 0x130, r == 0x149, r == 0x1f0, r == 0x390, r == 0x3a3, r == 0x3b0, r == 0x587,
			r >= 0x1e96 && r <= 0x1e9a, r >= 0x1f50 && r <= 0x1f56 && r%2 == 0, r >= 0x1f80 && r <= 0x1faf,
			r >= 0x1fb2 && r <= 0x1fb7 && r != 0x1fb5, r == 0x1fbc, r >= 0x1fc2 && r <= 0x1fc7 && r != 0x1fc5, r == 0x1fcc,
			r >= 0x1fd2 && r <= 0x1fd7 && r != 0x1fd4 && r != 0x1fd5, r >= 0x1fe2 && r <= 0x1fe7 && r != 0x1fe5,
			r >= 0x1ff2 && r <= 0x1ff7 && r != 0x1ff5, r == 0x1ffc, r >= 0xfb00 && r <= 0xfb06, r >= 0xfb13 && r <= 0xfb17:
			return true
		}
	}
	return false
}

// isPySpace is Python's str.isspace for one character.
func isPySpace(r rune) bool {
	switch {
	case r >= 0x1c && r <= 0x1f, r == 0x85:
		return true
	case r == 0xfeff:
		return false
	}
	return isSpace(r)
}

// jsTitle is the reference's title(): an ASCII letter or digit after a
// non-word character (\b\w) is upper-cased, nothing else changes.
func jsTitle(s string) string {
	b := []byte(s)
	for i := range b {
		if isWordByte(b[i]) && (i == 0 || !isWordByte(b[i-1])) && b[i] >= 'a' && b[i] <= 'z' {
			b[i] -= 'a' - 'A'
		}
	}
	return string(b)
}

func isCased(r rune) bool { return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) }

// pyStrTitle is Python's str.title(): title case after an uncased
// character, lower case after a cased one.
func pyStrTitle(s string) string {
	var b strings.Builder
	prevCased := false
	for _, r := range s {
		if prevCased {
			b.WriteRune(unicode.ToLower(r))
		} else {
			b.WriteRune(unicode.ToTitle(r))
		}
		prevCased = isCased(r)
	}
	return b.String()
}

// pyWordStart splits words as Jinja's title filter does.
var pyWordStart = regexp.MustCompile(`[-\s({\[<]+`)

// pyFilterTitle is Jinja's title filter: each word (split at white space
// and -({[<) with its first character upper-cased and the rest lowered.
func pyFilterTitle(s string) string {
	var b strings.Builder
	last := 0
	word := func(w string) {
		if w == "" {
			return
		}
		r, n := utf8.DecodeRuneInString(w)
		b.WriteString(strings.ToUpper(string(r)))
		b.WriteString(strings.ToLower(w[n:]))
	}
	for _, loc := range pyWordStart.FindAllStringIndex(s, -1) {
		word(s[last:loc[0]])
		b.WriteString(s[loc[0]:loc[1]])
		last = loc[1]
	}
	word(s[last:])
	return b.String()
}

func title(s, py string) (value, error) {
	js := jsTitle(s)
	if js != py || hasSpecialCasing(s) || strings.ContainsFunc(s, func(r rune) bool { return r > 0x7f && isCased(r) }) {
		return nil, unsupported("title case of %q (@huggingface/jinja gives %q, Python %q)", shorten(s), shorten(js), shorten(py))
	}
	return js, nil
}

// capitalize: the reference upper-cases the first UTF-16 unit and keeps
// the rest; Python title-cases the first character and lowers the rest.
func capitalize(s string) (value, error) {
	if s == "" {
		return s, nil
	}
	r, n := utf8.DecodeRuneInString(s)
	js := s
	if r < 0x10000 {
		js = strings.ToUpper(string(r)) + s[n:]
	}
	py := string(unicode.ToTitle(r)) + strings.ToLower(s[n:])
	if js != py || hasSpecialCasing(s) {
		return nil, unsupported("capitalize of %q (@huggingface/jinja gives %q, Python %q)", shorten(s), shorten(js), shorten(py))
	}
	return js, nil
}

// strip is strip, lstrip, rstrip (and the trim filter): the reference
// always removes JavaScript white space; Python removes chars, or its own
// white space when chars is none.
func strip(s, which string, chars value) (value, error) {
	var cut func(rune) bool
	switch c := chars.(type) {
	case null:
		cut = isPySpace
	case string:
		cut = func(r rune) bool { return strings.ContainsRune(c, r) }
	default:
		return nil, unsupported("%s() with a %s argument", which, typeName(chars))
	}
	var js, py string
	switch which {
	case "strip":
		js, py = trimSpaceJS(s), strings.TrimFunc(s, cut)
	case "lstrip":
		js, py = trimLeftJS(s), strings.TrimLeftFunc(s, cut)
	default:
		js, py = trimRightJS(s), strings.TrimRightFunc(s, cut)
	}
	if js != py {
		return nil, unsupported("%s(%s) of %q (@huggingface/jinja strips all white space and gives %q, Python %q)", which, describeChars(chars), shorten(s), shorten(js), shorten(py))
	}
	return js, nil
}

func describeChars(c value) string {
	if s, ok := c.(string); ok {
		return strconv.Quote(s)
	}
	return ""
}

// affix is startswith and endswith.
func affix(s, name string, args []value, kw *object) (value, error) {
	if len(args) == 0 {
		return nil, renderErr("%s() needs an argument", name)
	}
	if len(args) > 1 || kw != nil {
		return nil, unsupported("%s() with start or end (@huggingface/jinja ignores them)", name)
	}
	has := strings.HasPrefix
	if name == "endswith" {
		has = strings.HasSuffix
	}
	switch p := args[0].(type) {
	case string:
		return has(s, p), nil
	case *list:
		for _, x := range p.items {
			if _, ok := x.(string); !ok {
				return nil, renderErr("%s() takes a string or a tuple of strings", name)
			}
		}
		if !p.tuple {
			return nil, unsupported("%s() of a list (Python takes a tuple only)", name)
		}
		for _, x := range p.items {
			if has(s, x.(string)) {
				return true, nil
			}
		}
		return false, nil
	}
	return nil, renderErr("%s() takes a string or a tuple of strings, not %s", name, typeName(args[0]))
}

// split is Python's str.split(sep=None, maxsplit=-1) as the reference
// implements it.
func split(s string, args []value, kw *object) (value, error) {
	if kw != nil {
		if len(args) == 0 {
			return nil, renderErr("split's separator must be a string or none")
		}
		return nil, renderErr("split's maxsplit must be a number")
	}
	var sep value = null{}
	if len(args) > 0 {
		sep = args[0]
	}
	max := -1
	if len(args) > 1 {
		n, ok := args[1].(number)
		if !ok || n.float {
			return nil, renderErr("split's maxsplit must be an integer")
		}
		if n.f < -1 {
			return nil, unsupported("split with a maxsplit below -1")
		}
		max = int(n.f)
	}
	var parts []string
	switch sep := sep.(type) {
	case null:
		if strings.ContainsFunc(s, func(r rune) bool { return isSpace(r) != isPySpace(r) }) {
			return nil, unsupported("split() of a string with characters only JavaScript or only Python counts as white space")
		}
		text := trimLeftJS(s)
		for text != "" {
			end := strings.IndexFunc(text, isSpace)
			if end < 0 {
				end = len(text)
			}
			if max != -1 && len(parts) >= max {
				parts = append(parts, text)
				break
			}
			parts = append(parts, text[:end])
			text = trimLeftJS(text[end:])
		}
	case string:
		if sep == "" {
			return nil, renderErr("empty separator")
		}
		parts = strings.Split(s, sep)
		if max != -1 && len(parts) > max {
			parts = append(parts[:max:max], strings.Join(parts[max:], sep))
		}
	default:
		return nil, renderErr("split's separator must be a string or none")
	}
	out := &list{items: make([]value, len(parts))}
	for i, p := range parts {
		out.items[i] = p
	}
	return out, nil
}

// replaceString is replace(old, new[, count]) as a method (filter false)
// or as the replace filter.
func replaceString(ev *evaluator, s string, args []value, kw *object, filter bool) (value, error) {
	if len(args) < 2 {
		if !filter && kw != nil && len(args) == 1 {
			return nil, renderErr("replace() arguments must be strings")
		}
		return nil, renderErr("replace() needs two arguments")
	}
	old, ok1 := args[0].(string)
	repl, ok2 := args[1].(string)
	if !ok1 || !ok2 {
		return nil, renderErr("replace() arguments must be strings")
	}
	var count value = null{}
	switch {
	case len(args) > 2:
		count = args[2]
	case kw != nil:
		if !filter {
			return nil, unsupported("str.replace with count= (Python takes it positionally only)")
		}
		if c, ok := kw.get("count"); ok {
			count = c
		}
	}
	n := -1
	switch c := count.(type) {
	case null:
		if !filter && len(args) > 2 {
			return nil, unsupported("str.replace with a count of none (Python raises)")
		}
	case number:
		if c.float {
			return nil, renderErr("replace() count must be an integer or none")
		}
		if c.f >= 0 {
			n = int(math.Min(c.f, math.MaxInt32))
		}
	default:
		return nil, renderErr("replace() count must be an integer or none")
	}
	// The result's length, before making it.
	times := strings.Count(s, old)
	if n >= 0 && n < times {
		times = n
	}
	if size := len(s) + times*(len(repl)-len(old)); ev != nil && size > ev.limits.Bytes {
		return nil, fmt.Errorf("%w: a string longer than %d bytes", ErrLimit, ev.limits.Bytes)
	}
	return strings.Replace(s, old, repl, n), nil
}

// indent is Jinja's indent filter: width spaces before each line but the
// first (unless first) and blank lines (unless blank). Python splits lines
// at more characters than \n, so strings with them are refused.
func indent(s string, width int, first, blank bool) (value, error) {
	if strings.ContainsFunc(s, func(r rune) bool {
		return r == '\r' || r == '\v' || r == '\f' || (r >= 0x1c && r <= 0x1e) || r == 0x85 || r == 0x2028 || r == 0x2029
	}) {
		return nil, unsupported("indent of text with line breaks other than \\n (Python splits lines at them too)")
	}
	pad := strings.Repeat(" ", width)
	lines := strings.Split(s, "\n")
	if first && !blank && lines[0] == "" && width > 0 {
		return nil, unsupported("indent(first=true) of text whose first line is empty (Python's Jinja indents it, @huggingface/jinja does not)")
	}
	for i, l := range lines {
		if (i == 0 && !first) || (l == "" && !blank) {
			continue
		}
		lines[i] = pad + l
	}
	return strings.Join(lines, "\n"), nil
}

// pyIsCase is Python's str.islower (upper false) or str.isupper: all cased
// characters in that case, and at least one.
func pyIsCase(s string, upper bool) bool {
	cased := false
	for _, r := range s {
		if unicode.IsTitle(r) {
			return false
		}
		if upper && unicode.IsLower(r) || !upper && unicode.IsUpper(r) {
			return false
		}
		cased = cased || isCased(r)
	}
	return cased
}

// intFilter is |int of a string: the reference's parseInt (a leading
// integer, else default), Python's int() (the whole string as an integer
// or float, else default); they must agree.
func intFilter(s string, def value) (value, error) {
	js, jsOK := jsParseInt(s)
	py, pyOK, sure := pyIntString(s)
	if !sure || jsOK != pyOK || (jsOK && js != py) {
		return nil, unsupported("|int of %q (@huggingface/jinja and Python read it differently)", shorten(s))
	}
	if !jsOK {
		return def, nil
	}
	return number{f: js}, nil
}

var jsIntPrefix = regexp.MustCompile(`^[+-]?\d+`)

func jsParseInt(s string) (float64, bool) {
	m := jsIntPrefix.FindString(trimLeftJS(s))
	if m == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(m, 64)
	return f, err == nil
}

var pyIntRE = regexp.MustCompile(`^[+-]?\d+$`)
var pyFloatRE = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`)

// pyIntString is int(s), else int(float(s)); sure is false for forms hlm
// does not model (underscores, inf, nan).
func pyIntString(s string) (float64, bool, bool) {
	t := strings.TrimFunc(s, isPySpace)
	switch {
	case pyIntRE.MatchString(t):
		f, err := strconv.ParseFloat(t, 64)
		return f, err == nil, math.Abs(f) <= maxSafe
	case pyFloatRE.MatchString(t):
		f, err := strconv.ParseFloat(t, 64)
		return math.Trunc(f), err == nil, !math.IsInf(f, 0)
	case strings.ContainsAny(t, "_") || strings.Contains(strings.ToLower(t), "inf") || strings.Contains(strings.ToLower(t), "nan"):
		return 0, false, false
	}
	return 0, false, true
}

// floatFilter is |float of a string: parseFloat (a leading number) against
// Python's float() (the whole string).
func floatFilter(s string, def value) (value, error) {
	js, jsOK := jsParseFloat(s)
	t := strings.TrimFunc(s, isPySpace)
	pyOK := pyFloatRE.MatchString(t)
	if strings.ContainsAny(t, "_") || strings.Contains(strings.ToLower(t), "inf") || strings.Contains(strings.ToLower(t), "nan") {
		return nil, unsupported("|float of %q", shorten(s))
	}
	var py float64
	if pyOK {
		py, _ = strconv.ParseFloat(t, 64)
	}
	if jsOK != pyOK || (jsOK && js != py) {
		return nil, unsupported("|float of %q (@huggingface/jinja and Python read it differently)", shorten(s))
	}
	if !jsOK {
		return def, nil
	}
	return number{f: js, float: true}, nil
}

var jsFloatPrefix = regexp.MustCompile(`^[+-]?(Infinity|\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?)`)

func jsParseFloat(s string) (float64, bool) {
	m := jsFloatPrefix.FindString(trimLeftJS(s))
	if m == "" {
		return 0, false
	}
	if strings.HasSuffix(m, "Infinity") {
		return math.Inf(1), true
	}
	f, err := strconv.ParseFloat(m, 64)
	return f, err == nil
}
