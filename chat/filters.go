package chat

import (
	"math"
	"math/bits"
	"slices"
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
	case "tojson", "join", "int", "float", "default": // filters of any value
		args, kw, err := evalArgs()
		if err != nil {
			return nil, err
		}
		switch name {
		case "tojson":
			return ev.filterToJSON(x, kw)
		case "join":
			return ev.filterJoin(x, args, kw)
		case "default":
			return filterDefault(x, args, kw)
		}
		return filterNumber(x, name, args, kw)
	}
	switch x := x.(type) {
	case *list:
		switch name {
		case "sort":
			args, kw, err := evalArgs()
			if err != nil {
				return nil, err
			}
			return filterSort(x, args, kw)
		case "selectattr", "rejectattr":
			return ev.selectAttr(x, name == "selectattr", argNodes, env)
		case "map":
			_, kw, err := evalArgs()
			if err != nil {
				return nil, err
			}
			return filterMap(x, kw)
		}
		return nil, renderErr("unknown filter %q for a list", name)
	case string:
		switch name {
		case "indent":
			args, kw, err := evalArgs()
			if err != nil {
				return nil, err
			}
			return ev.filterIndent(x, args, kw)
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

// filterToJSON is |tojson(indent=…, …).
func (ev *evaluator) filterToJSON(x value, kw *object) (value, error) {
	o, err := jsonArgs(kw)
	if err != nil {
		return nil, err
	}
	s, err := toJSON(x, o, 0)
	if err != nil {
		return nil, err
	}
	return s, ev.checkLen(s)
}

// filterJoin is |join(separator) of a string's characters or a list's
// items.
func (ev *evaluator) filterJoin(x value, args []value, kw *object) (value, error) {
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
}

// filterNumber is |int(default) and |float(default) (name says which).
func filterNumber(x value, name string, args []value, kw *object) (value, error) {
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
}

// filterDefault is |default(value, boolean).
func filterDefault(x value, args []value, kw *object) (value, error) {
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

// filterSort is a list's |sort(reverse, case_sensitive, attribute).
func filterSort(x *list, args []value, kw *object) (value, error) {
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
}

// filterMap is a list's |map(attribute=…, default=…).
func filterMap(x *list, kw *object) (value, error) {
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

// filterIndent is a string's |indent(width, first, blank).
func (ev *evaluator) filterIndent(x string, args []value, kw *object) (value, error) {
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
