package chat

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Numbers print alike in the reference (JavaScript) and in Python only in
// a range: integers up to 2^53, and floats written in fixed notation by
// both — JavaScript switches to exponents below 1e-7 and from 1e21, Python
// below 1e-4 and from 1e16. Both write the shortest digits that read back
// to the same float. Outside that range hlm refuses.

// printNumber writes a number as {{ }} and |string do.
func printNumber(n number) (string, error) {
	switch {
	case n.pyFloat:
		return "", unsupported("printing %s.0, a float of the input (@huggingface/jinja has made it the integer %s, Python prints %s.0)", formatInt(n.f), formatInt(n.f), formatInt(n.f))
	case !n.float:
		if math.Abs(n.f) > maxSafe {
			return "", unsupported("printing an integer beyond 2^53")
		}
		return formatInt(n.f), nil
	}
	if err := floatInRange(n.f); err != nil {
		return "", err
	}
	if n.f == math.Trunc(n.f) {
		if n.f == 0 && math.Signbit(n.f) {
			return "-0.0", nil
		}
		return formatInt(n.f) + ".0", nil
	}
	return strconv.FormatFloat(n.f, 'f', -1, 64), nil
}

func floatInRange(f float64) error {
	a := math.Abs(f)
	if math.IsNaN(f) || math.IsInf(f, 0) || a >= 1e16 || (a < 1e-4 && a != 0 && f != math.Trunc(f)) {
		return unsupported("the float %v (JavaScript and Python write it differently)", f)
	}
	return nil
}

func formatInt(f float64) string {
	if f == 0 {
		return "0"
	}
	return strconv.FormatFloat(f, 'f', 0, 64)
}

// jsonOptions are tojson's arguments, with transformers' defaults
// (json.dumps with ensure_ascii=False).
type jsonOptions struct {
	indent     int // 0: none
	itemSep    string
	keySep     string
	sortKeys   bool
	ensureASCI bool
}

func defaultJSON() jsonOptions { return jsonOptions{itemSep: ", ", keySep: ": "} }

// toJSON writes v as transformers' tojson filter (Python's json.dumps)
// and the reference both do, refusing what only one of them can write.
func toJSON(v value, o jsonOptions, depth int) (string, error) {
	if depth > maxNesting {
		return "", fmt.Errorf("%w: tojson of a value nested deeper than %d", ErrLimit, maxNesting)
	}
	switch v := unmark(v).(type) {
	case null:
		return "null", nil
	case undefined:
		return "", unsupported("tojson of an undefined value (Python cannot serialize it, @huggingface/jinja writes null)")
	case bool:
		if v {
			return "true", nil
		}
		return "false", nil
	case number:
		return jsonNumberText(v)
	case string:
		return jsonString(v, o.ensureASCI), nil
	case *list:
		if v.tuple {
			return "", renderErr("cannot convert a tuple to JSON (@huggingface/jinja cannot)")
		}
		if err := pyOnly(v, "tojson", pyGenerator, pyView, pyRange); err != nil {
			return "", err
		}
		parts := make([]string, len(v.items))
		for i, x := range v.items {
			s, err := toJSON(x, o, depth+1)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		if o.indent > 0 && len(parts) > 0 {
			base := "\n" + strings.Repeat(" ", o.indent*depth)
			child := base + strings.Repeat(" ", o.indent)
			return "[" + child + strings.Join(parts, o.itemSep+child) + base + "]", nil
		}
		return "[" + strings.Join(parts, o.itemSep) + "]", nil
	case *object:
		if v.kind != plainObject {
			return "", unsupported("tojson of a %s (Python cannot serialize it)", map[objectKind]string{namespaceObject: "namespace", loopObject: "loop object"}[v.kind])
		}
		keys := v.keys
		if o.sortKeys && len(keys) > 1 {
			for _, k := range keys {
				if !sortableKey.MatchString(k) {
					return "", unsupported("tojson(sort_keys=true) of the key %q (@huggingface/jinja sorts by locale, Python by code point)", k)
				}
			}
			keys = append([]string(nil), keys...)
			sort.Strings(keys)
		}
		parts := make([]string, len(keys))
		base := "\n" + strings.Repeat(" ", o.indent*depth)
		child := base + strings.Repeat(" ", o.indent)
		for i, k := range keys {
			kv, _ := v.get(k)
			s, err := toJSON(kv, o, depth+1)
			if err != nil {
				return "", err
			}
			parts[i] = jsonString(k, o.ensureASCI) + o.keySep + s
			if o.indent > 0 {
				parts[i] = child + parts[i]
			}
		}
		if o.indent > 0 && len(parts) > 0 {
			return "{" + strings.Join(parts, o.itemSep) + base + "}", nil
		}
		return "{" + strings.Join(parts, o.itemSep) + "}", nil
	}
	return "", renderErr("cannot convert a %s to JSON", typeName(v))
}

// sortableKey matches keys whose order is the same by code point (Python)
// and by the root collation of localeCompare (the reference).
var sortableKey = regexp.MustCompile(`^[a-z0-9]*$`)

func jsonNumberText(n number) (string, error) {
	switch {
	case n.pyFloat:
		return "", unsupported("tojson of %s.0, a float of the input (@huggingface/jinja writes %s, Python %s.0)", formatInt(n.f), formatInt(n.f), formatInt(n.f))
	case !n.float:
		if math.Abs(n.f) > maxSafe {
			return "", unsupported("tojson of an integer beyond 2^53")
		}
		return formatInt(n.f), nil
	}
	if err := floatInRange(n.f); err != nil {
		return "", err
	}
	if n.f == math.Trunc(n.f) {
		return "", unsupported("tojson of the float %s.0 (JavaScript writes %s, Python %s.0)", formatInt(n.f), formatInt(n.f), formatInt(n.f))
	}
	return strconv.FormatFloat(n.f, 'f', -1, 64), nil
}

// jsonString quotes s as JSON.stringify and json.dumps do: \" \\ \b \f \n
// \r \t, other control characters as \u00xx; with ascii set, everything
// from U+007F as \uxxxx (UTF-16 surrogate pairs beyond U+FFFF).
func jsonString(s string, ascii bool) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			switch {
			case r < 0x20:
				fmt.Fprintf(&b, `\u%04x`, r)
			case ascii && r >= 0x10000:
				r -= 0x10000
				fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			case ascii && r >= 0x7f:
				fmt.Fprintf(&b, `\u%04x`, r)
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Equality and membership. The reference compares with JavaScript's ==
// (coercing: 1 == "1", none == undefined, lists by identity) and its `in`
// with === (lists and mappings by identity); Python compares by value
// without coercion. hlm computes both and refuses when they disagree.

func equal(a, b value) (bool, error) {
	a, b = unmark(a), unmark(b)
	js, known := jsLooseEqual(a, b)
	py := pyEqual(a, b)
	if !known || js != py {
		return false, unsupported("comparing a %s with a %s (@huggingface/jinja and Python's Jinja disagree)", typeName(a), typeName(b))
	}
	return py, nil
}

func contains(l *list, x value) (bool, error) {
	x = unmark(x)
	js, py := false, false
	for _, item := range l.items {
		item := unmark(item)
		js = js || jsStrictEqual(item, x)
		py = py || pyEqual(item, x)
	}
	if js != py {
		return false, unsupported("`in` of a %s in a list (@huggingface/jinja compares by identity or type, Python by value)", typeName(x))
	}
	return py, nil
}

func nullish(v value) bool {
	switch v.(type) {
	case null, undefined:
		return true
	}
	return false
}

func isRef(v value) bool {
	switch v.(type) {
	case *list, *object, *function:
		return true
	}
	return false
}

func sameRef(a, b value) bool {
	switch a := a.(type) {
	case *list:
		b, ok := b.(*list)
		return ok && a == b
	case *object:
		b, ok := b.(*object)
		return ok && a == b
	case *function:
		b, ok := b.(*function)
		return ok && a == b
	}
	return false
}

// jsStrictEqual is === of the values' JavaScript representations.
func jsStrictEqual(a, b value) bool {
	a, b = unmark(a), unmark(b)
	switch a := a.(type) {
	case null:
		_, ok := b.(null)
		return ok
	case undefined:
		_, ok := b.(undefined)
		return ok
	case bool:
		b, ok := b.(bool)
		return ok && a == b
	case number:
		b, ok := b.(number)
		return ok && a.f == b.f
	case string:
		b, ok := b.(string)
		return ok && a == b
	}
	return sameRef(a, b)
}

// jsLooseEqual is == of the values' JavaScript representations; known is
// false where hlm does not model the coercion.
func jsLooseEqual(a, b value) (eq, known bool) {
	if nullish(a) || nullish(b) {
		return nullish(a) && nullish(b), true
	}
	if isRef(a) && isRef(b) {
		return sameRef(a, b), true
	}
	var ok bool
	if isRef(a) {
		if a, ok = jsToPrimitive(a); !ok {
			return false, false
		}
	}
	if isRef(b) {
		if b, ok = jsToPrimitive(b); !ok {
			return false, false
		}
	}
	return jsLoosePrimitive(a, b)
}

func jsLoosePrimitive(a, b value) (bool, bool) {
	switch a := a.(type) {
	case bool:
		return jsLoosePrimitive(number{f: float64(boolInt(a))}, b)
	case number:
		switch b := b.(type) {
		case number:
			return a.f == b.f, true
		case bool:
			return a.f == float64(boolInt(b)), true
		case string:
			f, ok := jsToNumber(b)
			return ok && f == a.f, true
		}
	case string:
		switch b := b.(type) {
		case string:
			return a == b, true
		case number, bool:
			return jsLoosePrimitive(b, a)
		}
	}
	return false, false
}

var jsDecimal = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`)

// jsToNumber is JavaScript's Number(s); ok is false for NaN.
func jsToNumber(s string) (float64, bool) {
	s = trimSpaceJS(s)
	switch {
	case s == "":
		return 0, true
	case s == "Infinity" || s == "+Infinity":
		return math.Inf(1), true
	case s == "-Infinity":
		return math.Inf(-1), true
	case jsDecimal.MatchString(s):
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil
	case len(s) > 2 && s[0] == '0' && strings.ContainsRune("xXoObB", rune(s[1])):
		base := map[byte]int{'x': 16, 'o': 8, 'b': 2}[s[1]|0x20]
		n, err := strconv.ParseUint(s[2:], base, 64)
		return float64(n), err == nil && !strings.ContainsAny(s[2:], "+-_")
	}
	return 0, false
}

// jsToPrimitive is the string JavaScript compares a list or mapping as.
func jsToPrimitive(v value) (value, bool) {
	switch v := v.(type) {
	case *object:
		return "[object Map]", true
	case *list:
		parts := make([]string, len(v.items))
		for i, x := range v.items {
			switch x := unmark(x).(type) {
			case string:
				parts[i] = x
			case number:
				s, err := printNumber(number{f: x.f, float: x.float})
				if err != nil {
					return nil, false
				}
				parts[i] = s
			case bool:
				parts[i] = strconv.FormatBool(x)
			default:
				return nil, false
			}
		}
		return strings.Join(parts, ","), true
	}
	return nil, false
}

// pyEqual is Python's == of the values as transformers passes them.
func pyEqual(a, b value) bool {
	a, b = unmark(a), unmark(b)
	switch a := a.(type) {
	case undefined:
		_, ok := b.(undefined)
		return ok
	case null:
		_, ok := b.(null)
		return ok
	case bool, number:
		if !numericLike(b) {
			return false
		}
		return asNumber(a).f == asNumber(b).f
	case string:
		b, ok := b.(string)
		return ok && a == b
	case *list:
		b, ok := b.(*list)
		if !ok || a.py != pyList || b.py != pyList {
			return ok && a == b
		}
		if a.tuple != b.tuple || len(a.items) != len(b.items) {
			return false
		}
		for i := range a.items {
			if !pyEqual(a.items[i], b.items[i]) {
				return false
			}
		}
		return true
	case *object:
		b, ok := b.(*object)
		if !ok {
			return false
		}
		if a.kind != plainObject || b.kind != plainObject {
			return a == b
		}
		if a.len() != b.len() {
			return false
		}
		for i, k := range a.keys {
			bv, has := b.get(k)
			if !has || !pyEqual(a.vals[i], bv) {
				return false
			}
		}
		return true
	}
	return sameRef(a, b)
}
