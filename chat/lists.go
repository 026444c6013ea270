package chat

import (
	"slices"
	"sort"
	"strconv"
	"strings"
)

// joinList joins the items of a list. The reference joins the raw
// JavaScript values; they agree with Python's str() for strings, integers
// and most floats only.
func joinList(l *list, sep string) (value, error) {
	parts := make([]string, len(l.items))
	for i, x := range l.items {
		s, err := concatString(x)
		if err != nil {
			return nil, unsupported("|join of a list holding a %s (@huggingface/jinja and Python write it differently)", typeName(x))
		}
		parts[i] = s
	}
	return strings.Join(parts, sep), nil
}

// unique keeps the first of equal items: the reference compares with ===
// (identity for lists and mappings, case-sensitive strings), Python's
// unique by value and without case; they must agree.
func unique(l *list) (value, error) {
	var out []value
	js := map[any]bool{} // the reference's === of primitives
	py := map[any]bool{} // Python's equality: numbers by value, strings without case
	for _, x := range l.items {
		x := unmark(x)
		if isRef(x) {
			return nil, unsupported("|unique of a list of %ss (Python cannot hash them)", typeName(x))
		}
		jk, pk := uniqueKeys(x)
		if js[jk] != py[pk] {
			return nil, unsupported("|unique of items equal in Python but not in JavaScript (or the other way)")
		}
		if !js[jk] {
			out = append(out, x)
			js[jk], py[pk] = true, true
		}
	}
	return &list{items: out, py: pyGenerator}, nil
}

// uniqueKeys are map keys under which equal items meet: by ===, and by
// Python's == with the unique filter's case folding.
func uniqueKeys(x value) (js, py any) {
	switch x := x.(type) {
	case number:
		return x.f, x.f
	case bool:
		return x, float64(boolInt(x))
	case string:
		return "s" + x, "s" + strings.ToLower(x)
	case null:
		return x, x
	case undefined:
		return x, x
	}
	return x, x
}

// sortList sorts as the reference does: numbers (and booleans) with
// numbers, strings with strings (without case unless caseSensitive), none
// with none; other mixtures are errors. The sort is stable, like Python's.
func sortList(l *list, reverse, caseSensitive bool, attr *string) (value, error) {
	out := slices.Clone(l.items)
	key := func(v value) value {
		if attr == nil {
			return v
		}
		return attribute(v, *attr)
	}
	var err error
	sort.SliceStable(out, func(i, j int) bool {
		c, e := compareValues(key(out[i]), key(out[j]), caseSensitive)
		if e != nil && err == nil {
			err = e
		}
		if reverse {
			return c > 0
		}
		return c < 0
	})
	if err != nil {
		return nil, err
	}
	return &list{items: out}, nil
}

func compareValues(a, b value, caseSensitive bool) (int, error) {
	a, b = unmark(a), unmark(b)
	_, an := a.(null)
	_, bn := b.(null)
	if an && bn {
		return 0, unsupported("sorting none with none (Python raises)")
	}
	if an || bn {
		return 0, renderErr("cannot compare %s with %s", typeName(a), typeName(b))
	}
	_, au := a.(undefined)
	_, bu := b.(undefined)
	if au && bu {
		return 0, unsupported("sorting undefined values (Python raises)")
	}
	if au || bu {
		return 0, renderErr("cannot compare %s with %s", typeName(a), typeName(b))
	}
	if numericLike(a) && numericLike(b) {
		x, y := asNumber(a).f, asNumber(b).f
		switch {
		case x < y:
			return -1, nil
		case x > y:
			return 1, nil
		}
		return 0, nil
	}
	as, ok1 := a.(string)
	bs, ok2 := b.(string)
	if !ok1 || !ok2 {
		return 0, renderErr("cannot compare %s with %s", typeName(a), typeName(b))
	}
	if hasAstral(as) || hasAstral(bs) {
		return 0, unsupported("sorting strings with characters beyond U+FFFF (JavaScript orders UTF-16 code units, Python code points)")
	}
	if !caseSensitive {
		as, bs = strings.ToLower(as), strings.ToLower(bs)
	}
	return strings.Compare(as, bs), nil
}

// attribute follows a dotted path ("function.name", "items.0") through
// mappings and lists; a missing step is undefined.
func attribute(v value, path string) value {
	for _, part := range strings.Split(path, ".") {
		switch o := v.(type) {
		case *object:
			x, ok := o.get(part)
			if !ok {
				return undefined{}
			}
			v = x
		case *list:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(o.items) {
				return undefined{}
			}
			v = o.items[i]
		default:
			return undefined{}
		}
	}
	return v
}

// selectAttr is selectattr and rejectattr: keep (or drop) the mappings
// whose attribute passes a test, truthiness by default.
func (ev *evaluator) selectAttr(l *list, sel bool, argNodes []node, env *scope) (value, error) {
	name := "rejectattr"
	if sel {
		name = "selectattr"
	}
	for _, item := range l.items {
		if o, ok := item.(*object); !ok || (o.kind != plainObject && o.kind != namespaceObject) {
			return nil, renderErr("%s needs a list of mappings", name)
		}
	}
	args := make([]value, len(argNodes))
	for i, a := range argNodes {
		s, ok := a.(stringNode)
		if !ok {
			return nil, renderErr("the arguments of %s must be string literals", name)
		}
		args[i] = s.s
	}
	if len(args) == 0 {
		return nil, renderErr("%s needs an attribute name", name)
	}
	attr := args[0].(string)
	var testName string
	if len(args) > 1 {
		testName = args[1].(string)
		if _, known := tests[testName]; !known {
			return nil, renderErr("unknown test %q", testName)
		}
	}
	var other value = undefined{}
	if len(args) > 2 {
		other = args[2]
	} else if testName == "equalto" || testName == "eq" {
		return nil, renderErr("%s(%q, %q) needs a value to compare with", name, attr, testName)
	}
	var out []value
	for _, item := range l.items {
		v, has := item.(*object).get(attr)
		var pass bool
		switch {
		case !has:
			// The reference fails a missing attribute without testing it;
			// Python tests the undefined value.
			var py bool
			var err error
			if testName != "" {
				py, err = runTest(testName, undefined{}, other)
			}
			if py || err != nil {
				return nil, unsupported("%s(%q, %q) on a mapping without %q", name, attr, testName, attr)
			}
		case testName == "":
			pass = truthy(v)
		default:
			ok, err := runTest(testName, v, other)
			if err != nil {
				return nil, err
			}
			pass = ok
		}
		if pass == sel {
			out = append(out, item)
		}
	}
	return &list{items: out, py: pyGenerator}, nil
}

func items(o *object) *list {
	l := &list{items: make([]value, len(o.keys))}
	for i, k := range o.keys {
		l.items[i] = &list{items: []value{k, o.vals[i]}}
	}
	return l
}
