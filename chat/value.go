package chat

import (
	"fmt"
	"math"
	"unicode/utf8"
)

// The values a template computes with. They follow @huggingface/jinja's
// runtime values one for one:
//
//	undefined        UndefinedValue: a missing variable, key or attribute
//	null             NullValue: none, JSON null
//	bool             BooleanValue
//	number           IntegerValue or FloatValue (a JavaScript number either way)
//	string           StringValue
//	*list            ArrayValue, or TupleValue when tuple is set
//	*object          ObjectValue, KeywordArgumentsValue, NamespaceValue
//	*function        FunctionValue: a macro, a builtin, a bound method
//	markup           a string that went through |safe (see below)
type value any

// markup is a string that went through |safe. The reference treats it as
// any string; Python's Jinja makes it a Markup, and Markup + str escapes
// the str's &<>"' — so hlm keeps the mark for +, and refuses a + that
// would escape. Everything else sees a plain string (unmark).
type markup string

func unmark(v value) value {
	if m, ok := v.(markup); ok {
		return string(m)
	}
	return v
}

type undefined struct{}

type null struct{}

// number is a JavaScript number: an IntegerValue unless float is set.
// pyFloat marks an integral number that came in as a float (1.0): the
// reference turns it into an IntegerValue (JSON.parse forgets the ".0") while
// Python keeps a float, so the two print it differently ("1" and "1.0") and
// hlm refuses to print it.
type number struct {
	f       float64
	float   bool
	pyFloat bool
}

func intNum(n int) number { return number{f: float64(n)} }

// list is an array; identity (the pointer) is what the reference's == and
// `in` compare for lists. py is what Python's Jinja would hold instead of
// a list, where that matters.
type list struct {
	items []value
	tuple bool
	py    pyKind
}

// pyKind is the Python type behind a list the reference makes.
type pyKind uint8

const (
	pyList      pyKind = iota // a list (or a tuple, with tuple set)
	pyGenerator               // map, selectattr, rejectattr, |items, |unique, |reverse: no len, no index, always true, not JSON
	pyView                    // dict.items(), .keys(), .values(): no index, not JSON
	pyRange                   // range(): not JSON
)

var pyKindNames = [...]string{pyList: "list", pyGenerator: "generator", pyView: "dict view", pyRange: "range"}

// pyOnly refuses an operation on a list that Python's Jinja holds as
// another type (a generator, a dict view, a range) where that type lacks it.
func pyOnly(v value, what string, kinds ...pyKind) error {
	l, ok := v.(*list)
	if !ok || l.py == pyList {
		return nil
	}
	for _, k := range kinds {
		if l.py == k {
			return unsupported("%s of a %s (@huggingface/jinja makes a list, Python's Jinja a %s, which has no such thing)", what, pyKindNames[k], pyKindNames[k])
		}
	}
	return nil
}

// objectKind tells the kinds of mapping apart: plain objects are mappings
// with methods (.get, .items, …), keyword arguments are objects too,
// namespaces have attributes only, and the loop object is a plain object
// whose missing attributes (loop.depth, loop.cycle) exist in Python's Jinja
// only.
type objectKind uint8

const (
	plainObject objectKind = iota
	namespaceObject
	loopObject
)

// object is an insertion-ordered map from strings, as a JavaScript Map:
// keys[i] holds vals[i]. Small objects (most) are searched in order; an
// index is built once they grow.
type object struct {
	keys  []string
	vals  []value
	index map[string]int
	kind  objectKind
}

const objectIndexAt = 12

func newObject(kind objectKind) *object {
	return &object{kind: kind}
}

func (o *object) find(k string) int {
	if o.index != nil {
		if i, ok := o.index[k]; ok {
			return i
		}
		return -1
	}
	for i, x := range o.keys {
		if x == k {
			return i
		}
	}
	return -1
}

func (o *object) get(k string) (value, bool) {
	if i := o.find(k); i >= 0 {
		return o.vals[i], true
	}
	return nil, false
}

func (o *object) set(k string, v value) {
	if i := o.find(k); i >= 0 {
		o.vals[i] = v
		return
	}
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
	switch {
	case o.index != nil:
		o.index[k] = len(o.keys) - 1
	case len(o.keys) > objectIndexAt:
		o.index = make(map[string]int, len(o.keys))
		for i, x := range o.keys {
			o.index[x] = i
		}
	}
}

func (o *object) remove(k string) {
	i := o.find(k)
	if i < 0 {
		return
	}
	o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
	o.vals = append(o.vals[:i:i], o.vals[i+1:]...)
	if o.index != nil {
		o.index = nil
		if len(o.keys) > objectIndexAt {
			o.index = make(map[string]int, len(o.keys))
			for j, x := range o.keys {
				o.index[x] = j
			}
		}
	}
}

func (o *object) len() int { return len(o.keys) }

// function is a callable value. kwargs is nil when the call has none.
type function struct {
	name string
	call func(ev *evaluator, args []value, kwargs *object, env *scope) (value, error)
}

// typeName names a value's kind as the reference's error messages do.
func typeName(v value) string {
	switch v := v.(type) {
	case undefined:
		return "UndefinedValue"
	case null:
		return "NullValue"
	case bool:
		return "BooleanValue"
	case number:
		if v.float {
			return "FloatValue"
		}
		return "IntegerValue"
	case string, markup:
		return "StringValue"
	case *list:
		if v.tuple {
			return "TupleValue"
		}
		return "ArrayValue"
	case *object:
		if v.kind == namespaceObject {
			return "NamespaceValue"
		}
		return "ObjectValue"
	case *function:
		return "FunctionValue"
	}
	return fmt.Sprintf("%T", v)
}

// truth is truthy, refusing an empty generator (Python's generators are
// always true).
func truth(v value) (bool, error) {
	if l, ok := v.(*list); ok && l.py == pyGenerator && len(l.items) == 0 {
		return false, unsupported("the truth of an empty generator (Python's Jinja says true, @huggingface/jinja false for its empty list)")
	}
	return truthy(v), nil
}

// truthy is the reference's __bool__: empty strings, lists and objects, zero,
// NaN, none and undefined are false; namespaces and functions are true.
func truthy(v value) bool {
	switch v := v.(type) {
	case undefined, null:
		return false
	case bool:
		return v
	case number:
		return v.f != 0 && !math.IsNaN(v.f)
	case string:
		return v != ""
	case markup:
		return v != ""
	case *list:
		return len(v.items) > 0
	case *object:
		if v.kind == namespaceObject {
			return true
		}
		return v.len() > 0
	}
	return true
}

// utf16Len is the length of s in UTF-16 code units, JavaScript's length.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// hasAstral reports whether s has characters outside the Basic Multilingual
// Plane, where JavaScript's string lengths and indices (UTF-16 code units)
// differ from Python's (code points).
func hasAstral(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r >= 0x10000 {
			return true
		}
		i += n
	}
	return false
}
