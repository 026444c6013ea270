package chat

import (
	"math"
	"strings"
)

// tests are the reference's "is" tests.
var tests = map[string]bool{
	"boolean": true, "callable": true, "odd": true, "even": true, "false": true, "true": true,
	"none": true, "string": true, "number": true, "integer": true, "iterable": true,
	"mapping": true, "sequence": true, "lower": true, "upper": true, "defined": true,
	"undefined": true, "equalto": true, "eq": true,
}

// runTest applies a test, refusing where Python's Jinja would answer
// otherwise. other is the second operand of equalto (undefined if none).
func runTest(name string, x, other value) (bool, error) {
	x, other = unmark(x), unmark(other)
	if !tests[name] {
		return false, renderErr("unknown test %q", name)
	}
	switch name {
	case "boolean":
		_, ok := x.(bool)
		return ok, nil
	case "callable":
		if _, ok := x.(undefined); ok {
			return false, unsupported("an undefined value `is callable` (Python says yes, @huggingface/jinja no)")
		}
		_, ok := x.(*function)
		return ok, nil
	case "odd", "even":
		n, ok := x.(number)
		if !ok || n.float {
			return false, renderErr("the test %s needs an integer, not a %s", name, typeName(x))
		}
		return (math.Mod(n.f, 2) != 0) == (name == "odd"), nil
	case "false", "true":
		b, ok := x.(bool)
		return ok && b == (name == "true"), nil
	case "none":
		_, ok := x.(null)
		return ok, nil
	case "string":
		_, ok := x.(string)
		return ok, nil
	case "number":
		if _, ok := x.(bool); ok {
			return false, unsupported("a boolean `is number` (Python says yes, @huggingface/jinja no)")
		}
		_, ok := x.(number)
		return ok, nil
	case "integer":
		n, ok := x.(number)
		if ok && n.pyFloat {
			return false, unsupported("%s.0, a float of the input, `is integer` (@huggingface/jinja says yes, Python no)", formatInt(n.f))
		}
		return ok && !n.float, nil
	case "iterable":
		switch x := x.(type) {
		case *list:
			if x.tuple {
				return false, unsupported("a tuple `is iterable` (Python says yes, @huggingface/jinja no)")
			}
			return true, nil
		case string:
			return true, nil
		case *object:
			if x.kind == plainObject {
				return false, unsupported("a mapping `is iterable` (Python says yes, @huggingface/jinja no)")
			}
		case undefined:
			return false, unsupported("an undefined value `is iterable` (Python says yes, @huggingface/jinja no)")
		}
		return false, nil
	case "mapping":
		o, ok := x.(*object)
		if ok && o.kind == loopObject {
			return false, unsupported("the loop object `is mapping`")
		}
		return ok && o.kind == plainObject, nil
	case "sequence":
		if err := pyOnly(x, "`is sequence`", pyGenerator, pyView); err != nil {
			return false, err
		}
		switch x := x.(type) {
		case *list, string:
			return true, nil
		case *object:
			return x.kind == plainObject, nil
		case undefined:
			return false, unsupported("an undefined value `is sequence` (Python says yes, @huggingface/jinja no)")
		}
		return false, nil
	case "lower", "upper":
		s, ok := x.(string)
		if !ok {
			if isRef(x) {
				return false, unsupported("a %s `is %s`", typeName(x), name)
			}
			return false, nil
		}
		js := s == strings.ToLower(s)
		if name == "upper" {
			js = s == strings.ToUpper(s)
		}
		if js != pyIsCase(s, name == "upper") || hasSpecialCasing(s) {
			return false, unsupported("%q `is %s` (Python needs a cased letter)", s, name)
		}
		return js, nil
	case "defined":
		_, undef := x.(undefined)
		return !undef, nil
	case "undefined":
		_, undef := x.(undefined)
		return undef, nil
	case "equalto", "eq":
		js := jsStrictEqual(x, other)
		if js != pyEqual(x, other) {
			return false, unsupported("%s of a %s and a %s (@huggingface/jinja compares with ===, Python by value)", name, typeName(x), typeName(other))
		}
		return js, nil
	}
	return false, renderErr("unknown test %q", name)
}
