package chat

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

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
