package chat

import (
	"math"
	"math/bits"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// applyFilter applies x | filter. Which filters exist, and for which types,
// is the reference's table: a filter it lacks, or applies to a type it does
// not take, is an error (ErrRender), as there.
func (ev *evaluator) applyFilter(x value, f node, env *scope) (value, error) {
	if id, ok := f.(identNode); ok && id.name == "safe" {
		switch s := x.(type) {
		case string:
			return markup(s), nil
		case markup:
			return s, nil
		}
		return nil, unsupported("|safe of a %s (Python's Jinja makes it a string, @huggingface/jinja keeps it)", typeName(x))
	}
	x = unmark(x)
	if err := ev.workOn(x); err != nil {
		return nil, err
	}
	if l, ok := x.(*list); ok && len(l.items) > 1 {
		// Sorting and deduplicating cost more than a pass.
		if err := ev.work(len(l.items)*bits.Len(uint(len(l.items))), 0); err != nil {
			return nil, err
		}
	}
	switch f := f.(type) {
	case identNode:
		return ev.filterPlain(x, f.name)
	case callNode:
		id, ok := f.callee.(identNode)
		if !ok {
			return nil, renderErr("a filter must be a name")
		}
		return ev.filterCall(x, id.name, f.args, env)
	}
	return nil, renderErr("a filter must be a name or a call")
}

// filterPlain is a filter without parentheses.
func (ev *evaluator) filterPlain(x value, name string) (value, error) {
	switch name {
	case "safe":
		return x, nil
	case "tojson":
		s, err := toJSON(x, defaultJSON(), 0)
		if err != nil {
			return nil, err
		}
		return s, ev.checkLen(s)
	}
	switch x := x.(type) {
	case *list:
		switch name {
		case "list":
			return &list{items: x.items}, nil
		case "first", "last":
			if name == "last" {
				if err := pyOnly(x, "|last", pyGenerator); err != nil {
					return nil, err
				}
			}
			if len(x.items) == 0 {
				return nil, unsupported("|%s of an empty list (Python's Jinja gives undefined, @huggingface/jinja fails)", name)
			}
			if name == "first" {
				return x.items[0], nil
			}
			return x.items[len(x.items)-1], nil
		case "length":
			if err := pyOnly(x, "|length", pyGenerator); err != nil {
				return nil, err
			}
			return intNum(len(x.items)), nil
		case "reverse":
			out := slices.Clone(x.items)
			slices.Reverse(out)
			// Python reverses a list into an iterator, anything else into
			// a list.
			py := pyGenerator
			if x.py == pyGenerator {
				py = pyList
			}
			return &list{items: out, py: py}, nil
		case "sort":
			return sortList(x, false, false, nil)
		case "join":
			return joinList(x, "")
		case "string":
			return nil, unsupported("|string of a list (@huggingface/jinja writes JSON, Python a repr)")
		case "unique":
			return unique(x)
		}
		return nil, renderErr("unknown filter %q for a list", name)
	case string:
		switch name {
		case "length":
			if hasAstral(x) {
				return nil, unsupported("|length of a string with characters beyond U+FFFF (JavaScript counts UTF-16 code units, Python code points)")
			}
			return intNum(utf16Len(x)), nil
		case "upper", "lower":
			return changeCase(x, name == "upper")
		case "title":
			return title(x, pyFilterTitle(x))
		case "capitalize":
			return capitalize(x)
		case "trim":
			return strip(x, "strip", null{})
		case "indent":
			return indent(x, 4, false, false)
		case "join", "string":
			return x, nil
		case "int":
			return intFilter(x, intNum(0))
		case "float":
			return floatFilter(x, number{float: true})
		}
		return nil, renderErr("unknown filter %q for a string", name)
	case number:
		switch name {
		case "abs":
			return number{f: math.Abs(x.f), float: x.float, pyFloat: x.pyFloat}, nil
		case "int":
			if x.float && x.f < 0 && x.f != math.Trunc(x.f) {
				return nil, unsupported("|int of a negative float (@huggingface/jinja rounds down, Python toward zero)")
			}
			return number{f: math.Floor(x.f)}, nil
		case "float":
			if !x.float {
				return number{f: x.f, float: true}, nil
			}
			return x, nil
		case "string":
			return printNumber(x)
		}
		return nil, renderErr("unknown filter %q for a number", name)
	case *object:
		if x.kind == namespaceObject {
			break
		}
		switch name {
		case "items":
			l := items(x)
			l.py = pyGenerator
			return l, nil
		case "length":
			return intNum(x.len()), nil
		case "get", "keys", "values":
			return nil, unsupported("|%s (a method in @huggingface/jinja, no filter in Python's Jinja)", name)
		}
		if m := objectMethod(x, name); m != nil {
			return m.call(ev, nil, nil, nil)
		}
		return nil, renderErr("unknown filter %q for a mapping", name)
	case bool:
		switch name {
		case "bool":
			return nil, unsupported("|bool (@huggingface/jinja has it, Python's Jinja has no such filter)")
		case "int":
			return intNum(boolInt(x)), nil
		case "float":
			return number{f: float64(boolInt(x)), float: true}, nil
		case "string":
			return nil, unsupported("|string of a boolean (@huggingface/jinja writes true, Python True)")
		}
		return nil, renderErr("unknown filter %q for a boolean", name)
	}
	return nil, renderErr("cannot apply the filter %q to a %s", name, typeName(x))
}

// filterCall is a filter with arguments, f(…).
func (ev *evaluator) filterCall(x value, name string, argNodes []node, env *scope) (value, error) {
	evalArgs := func() ([]value, *object, error) { return ev.args(argNodes, env) }
	switch name {
	case "tojson":
		_, kw, err := evalArgs()
		if err != nil {
			return nil, err
		}
		o, err := jsonArgs(kw)
		if err != nil {
			return nil, err
		}
		s, err := toJSON(x, o, 0)
		if err != nil {
			return nil, err
		}
		return s, ev.checkLen(s)
	case "join":
		args, kw, err := evalArgs()
		if err != nil {
			return nil, err
		}
		sep := arg(args, kw, 0, "separator", "")
		sepStr, ok := sep.(string)
		if !ok {
			return nil, renderErr("join's separator must be a string")
		}
		switch x := x.(type) {
		case string:
			chars := strings.Split(x, "")
			if len(x)+len(chars)*len(sepStr) > ev.limits.Bytes {
				return nil, ev.checkLen(strings.Repeat(" ", ev.limits.Bytes+1))
			}
			return strings.Join(chars, sepStr), nil
		case *list:
			if len(x.items)*len(sepStr) > ev.limits.Bytes {
				return nil, ev.checkLen(strings.Repeat(" ", ev.limits.Bytes+1))
			}
			v, err := joinList(x, sepStr)
			if err != nil {
				return nil, err
			}
			return v, ev.checkLen(v.(string))
		}
		return nil, renderErr("cannot apply the filter join to a %s", typeName(x))
	case "int", "float":
		args, kw, err := evalArgs()
		if err != nil {
			return nil, err
		}
		var def value = intNum(0)
		if name == "float" {
			def = number{float: true}
		}
		def = arg(args, kw, 0, "default", def)
		switch x := x.(type) {
		case string:
			if name == "int" {
				return intFilter(x, def)
			}
			return floatFilter(x, def)
		case number:
			if name == "int" && x.float {
				return nil, unsupported("|int(…) of a float (@huggingface/jinja keeps the float, Python truncates it)")
			}
			if name == "float" && !x.float {
				return nil, unsupported("|float(…) of an integer (@huggingface/jinja keeps the integer, Python makes a float)")
			}
			return x, nil
		case bool:
			return number{f: float64(boolInt(x)), float: name == "float"}, nil
		}
		return nil, renderErr("cannot apply the filter %s to a %s", name, typeName(x))
	case "default":
		args, kw, err := evalArgs()
		if err != nil {
			return nil, err
		}
		def := arg(args, nil, 0, "", "")
		boolean, ok := arg(args, kw, 1, "boolean", false).(bool)
		if !ok {
			return nil, renderErr("default's boolean flag must be a boolean")
		}
		if boolean {
			if _, err := truth(x); err != nil {
				return nil, err
			}
		}
		if _, undef := x.(undefined); undef || (boolean && !truthy(x)) {
			return def, nil
		}
		return x, nil
	}
	switch x := x.(type) {
	case *list:
		switch name {
		case "sort":
			args, kw, err := evalArgs()
			if err != nil {
				return nil, err
			}
			reverse, ok1 := arg(args, kw, 0, "reverse", false).(bool)
			caseSensitive, ok2 := arg(args, kw, 1, "case_sensitive", false).(bool)
			if !ok1 || !ok2 {
				return nil, renderErr("sort's reverse and case_sensitive must be booleans")
			}
			var attr *string
			switch a := arg(args, kw, 2, "attribute", null{}).(type) {
			case null:
			case string:
				attr = &a
			case number:
				s := formatInt(a.f)
				attr = &s
			default:
				return nil, renderErr("sort's attribute must be a string or an integer")
			}
			return sortList(x, reverse, caseSensitive, attr)
		case "selectattr", "rejectattr":
			return ev.selectAttr(x, name == "selectattr", argNodes, env)
		case "map":
			_, kw, err := evalArgs()
			if err != nil {
				return nil, err
			}
			attr, has := kwGet(kw, "attribute")
			if !has {
				return nil, renderErr("map without attribute= is not supported by @huggingface/jinja")
			}
			path, ok := attr.(string)
			if !ok {
				return nil, renderErr("map's attribute must be a string")
			}
			def, hasDef := kwGet(kw, "default")
			out := &list{items: make([]value, len(x.items)), py: pyGenerator}
			for i, item := range x.items {
				if o, ok := item.(*object); !ok || (o.kind != plainObject && o.kind != namespaceObject) {
					return nil, renderErr("map(attribute=…) needs a list of mappings")
				}
				v := attribute(item, path)
				if _, undef := v.(undefined); undef && hasDef {
					v = def
				}
				out.items[i] = v
			}
			return out, nil
		}
		return nil, renderErr("unknown filter %q for a list", name)
	case string:
		switch name {
		case "indent":
			args, kw, err := evalArgs()
			if err != nil {
				return nil, err
			}
			width, ok := arg(args, kw, 0, "width", intNum(4)).(number)
			if !ok || width.float {
				return nil, renderErr("indent's width must be an integer")
			}
			first := truthyJS(arg(args, kw, 1, "first", false))
			blank := truthyJS(arg(args, kw, 2, "blank", false))
			if width.f < 0 {
				return nil, renderErr("indent's width must not be negative")
			}
			if width.f*float64(strings.Count(x, "\n")+1) > float64(ev.limits.Bytes) {
				return nil, ev.checkLen(strings.Repeat(" ", ev.limits.Bytes+1))
			}
			return indent(x, int(width.f), first, blank)
		case "replace":
			args, kw, err := evalArgs()
			if err != nil {
				return nil, err
			}
			return replaceString(ev, x, args, kw, true)
		}
		return nil, renderErr("unknown filter %q for a string", name)
	case *object:
		if x.kind == namespaceObject {
			break
		}
		if name == "get" || name == "keys" || name == "values" || name == "items" {
			return nil, unsupported("|%s(…) (a method in @huggingface/jinja, not such a filter in Python's Jinja)", name)
		}
		if m := objectMethod(x, name); m != nil {
			args, kw, err := evalArgs()
			if err != nil {
				return nil, err
			}
			return m.call(ev, args, kw, env)
		}
		return nil, renderErr("unknown filter %q for a mapping", name)
	}
	return nil, renderErr("cannot apply the filter %q to a %s", name, typeName(x))
}

// arg is the i-th positional argument, else the keyword argument key, else
// def.
func arg(args []value, kw *object, i int, key string, def value) value {
	if i < len(args) {
		return args[i]
	}
	if v, ok := kwGet(kw, key); ok {
		return v
	}
	return def
}

func kwGet(kw *object, key string) (value, bool) {
	if kw == nil || key == "" {
		return nil, false
	}
	return kw.get(key)
}

// truthyJS is the truth of a raw JavaScript value (!!x.value), which the
// reference uses for indent's flags: it differs from truthy for lists and
// mappings, which are always true in JavaScript.
func truthyJS(v value) bool {
	if isRef(v) {
		return true
	}
	return truthy(v)
}

func jsonArgs(kw *object) (jsonOptions, error) {
	o := defaultJSON()
	if v, ok := kwGet(kw, "indent"); ok {
		switch v := v.(type) {
		case null:
		case number:
			if v.float {
				return o, renderErr("tojson's indent must be an integer")
			}
			switch {
			case v.f < 0:
				return o, renderErr("tojson's indent must not be negative")
			case v.f == 0:
				return o, unsupported("tojson(indent=0) (@huggingface/jinja writes no line breaks, Python does)")
			case v.f > 64:
				return o, unsupported("tojson(indent=%s)", formatInt(v.f))
			}
			o.indent = int(v.f)
			o.itemSep = ","
		default:
			return o, renderErr("tojson's indent must be an integer")
		}
	}
	if v, ok := kwGet(kw, "ensure_ascii"); ok {
		b, isBool := v.(bool)
		if !isBool {
			return o, renderErr("tojson's ensure_ascii must be a boolean")
		}
		o.ensureASCI = b
	}
	if v, ok := kwGet(kw, "sort_keys"); ok {
		b, isBool := v.(bool)
		if !isBool {
			return o, renderErr("tojson's sort_keys must be a boolean")
		}
		o.sortKeys = b
	}
	if v, ok := kwGet(kw, "separators"); ok {
		switch v := v.(type) {
		case null:
		case *list:
			if len(v.items) != 2 {
				return o, renderErr("tojson's separators must be two strings")
			}
			item, ok1 := v.items[0].(string)
			key, ok2 := v.items[1].(string)
			if !ok1 || !ok2 {
				return o, renderErr("tojson's separators must be two strings")
			}
			o.itemSep, o.keySep = item, key
		default:
			return o, renderErr("tojson's separators must be two strings")
		}
	}
	return o, nil
}

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
