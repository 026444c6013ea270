package chat

import (
	"fmt"
)

func (ev *evaluator) member(n memberNode, env *scope) (value, error) {
	obj, err := ev.eval(n.obj, env)
	if err != nil {
		return nil, err
	}
	obj = unmark(obj)
	if _, ok := obj.(string); ok {
		if err := ev.workOn(obj); err != nil {
			return nil, err
		}
	}
	var prop value
	switch {
	case n.computed:
		if sl, ok := n.prop.(sliceNode); ok {
			return ev.slice(obj, sl, env)
		}
		if prop, err = ev.eval(n.prop, env); err != nil {
			return nil, err
		}
		prop = unmark(prop)
	default:
		switch p := n.prop.(type) {
		case numberNode:
			prop = p.n
		case identNode:
			prop = p.name
		}
	}
	if _, ok := obj.(undefined); ok {
		return nil, unsupported("reading %s of an undefined value (Python's Jinja raises, @huggingface/jinja gives undefined)", describeProp(prop))
	}
	return getMember(obj, prop, !n.computed)
}

func describeProp(p value) string {
	switch p := p.(type) {
	case string:
		return "." + p
	case number:
		return fmt.Sprintf("[%s]", formatInt(p.f))
	}
	return "a member"
}

// pyDictMethods are the attributes a Python dict has; the reference has
// only get, items, keys and values (and dictsort, which Python lacks).
var pyDictMethods = map[string]bool{
	"get": true, "items": true, "keys": true, "values": true, "pop": true, "popitem": true,
	"update": true, "copy": true, "clear": true, "setdefault": true, "fromkeys": true,
}

// getMember reads obj.prop (dot is set) or obj[prop].
func getMember(obj, prop value, dot bool) (value, error) {
	switch o := obj.(type) {
	case *object:
		key, ok := prop.(string)
		if !ok {
			return nil, renderErr("cannot read a member of a mapping with a %s key", typeName(prop))
		}
		v, has := o.get(key)
		switch o.kind {
		case loopObject:
			if !has {
				return nil, unsupported("loop.%s (@huggingface/jinja has index, index0, revindex, revindex0, first, last, length, previtem and nextitem only)", key)
			}
		case plainObject:
			if has && dot && pyDictMethods[key] {
				return nil, unsupported(".%s of a mapping that has the key %q (Python's Jinja gives the dict method, @huggingface/jinja the value)", key, key)
			}
			if has {
				break
			}
			if key == "dictsort" {
				return nil, unsupported(".dictsort of a mapping (a filter in Python's Jinja, not a method)")
			}
			if m := objectMethod(o, key); m != nil {
				return m, nil
			}
			if pyDictMethods[key] {
				return nil, unsupported("the dict method .%s (@huggingface/jinja lacks it)", key)
			}
		}
		if !has {
			return undefined{}, nil
		}
		return v, nil
	case *list:
		if err := pyOnly(o, "indexing", pyGenerator, pyView); err != nil {
			return nil, err
		}
		switch p := prop.(type) {
		case number:
			if p.float {
				break
			}
			if p.pyFloat {
				return nil, unsupported("a list index that is a float")
			}
			i := int(p.f)
			if i < 0 {
				i += len(o.items)
			}
			if i < 0 || i >= len(o.items) {
				return undefined{}, nil
			}
			return o.items[i], nil
		case string:
			if p == "length" {
				return nil, unsupported(".length of a list (@huggingface/jinja gives its length, Python's Jinja undefined; use |length)")
			}
			return undefined{}, nil
		}
		return nil, renderErr("cannot index a list with a %s", typeName(prop))
	case string:
		switch p := prop.(type) {
		case number:
			if p.float {
				break
			}
			if hasAstral(o) {
				return nil, unsupported("indexing a string with characters beyond U+FFFF (JavaScript counts UTF-16 code units, Python code points)")
			}
			rs := []rune(o)
			i := int(p.f)
			if i < 0 {
				i += len(rs)
			}
			if i < 0 || i >= len(rs) {
				return undefined{}, nil
			}
			return string(rs[i]), nil
		case string:
			if p == "length" {
				return nil, unsupported(".length of a string (@huggingface/jinja gives its length, Python's Jinja undefined; use |length)")
			}
			if m := stringMethod(o, p); m != nil {
				return m, nil
			}
			return undefined{}, nil
		}
		return nil, renderErr("cannot index a string with a %s", typeName(prop))
	}
	if _, ok := prop.(string); !ok {
		return nil, renderErr("cannot read a member of a %s with a %s", typeName(obj), typeName(prop))
	}
	return undefined{}, nil
}

// slice is x[start:stop:step] of a list or string, with Python's rules
// (which the reference follows), over code points for strings.
func (ev *evaluator) slice(obj value, n sliceNode, env *scope) (value, error) {
	var parts [3]*int
	for i, pn := range []node{n.start, n.stop, n.step} {
		v, err := ev.eval(pn, env)
		if err != nil {
			return nil, err
		}
		switch v := v.(type) {
		case undefined:
		case number:
			if v.float {
				return nil, renderErr("slice indices must be integers")
			}
			if v.pyFloat {
				return nil, unsupported("a slice index that is a float")
			}
			x := int(v.f)
			parts[i] = &x
		default:
			return nil, renderErr("slice indices must be integers or undefined")
		}
	}
	if parts[2] != nil && *parts[2] == 0 {
		return nil, unsupported("a slice step of zero (Python raises)")
	}
	if parts[2] != nil && *parts[2] < 0 && parts[1] != nil && *parts[1] == -1 {
		return nil, unsupported("a slice [start:-1:negative step] (@huggingface/jinja takes the stop -1 literally, Python as the last item)")
	}
	if err := ev.workOn(obj); err != nil {
		return nil, err
	}
	switch o := obj.(type) {
	case *list:
		if err := pyOnly(o, "slicing", pyGenerator, pyView); err != nil {
			return nil, err
		}
		return &list{items: sliceOf(o.items, parts), tuple: o.tuple}, nil
	case string:
		return string(sliceOf([]rune(o), parts)), nil
	}
	return nil, renderErr("cannot slice a %s", typeName(obj))
}

func sliceOf[T any](a []T, p [3]*int) []T {
	n := len(a)
	step := 1
	if p[2] != nil {
		step = *p[2]
	}
	var start, stop int
	if step > 0 {
		start, stop = 0, n
		if p[0] != nil {
			start = clampIndex(*p[0], n, 0)
		}
		if p[1] != nil {
			stop = clampIndex(*p[1], n, 0)
		}
	} else {
		start, stop = n-1, -1
		if p[0] != nil {
			start = clampIndex(*p[0], n, -1)
		}
		if p[1] != nil {
			stop = clampIndex(*p[1], n, -1)
		}
	}
	var out []T
	for i := start; (step > 0 && i < stop) || (step < 0 && i > stop); i += step {
		out = append(out, a[i])
	}
	return out
}

// clampIndex resolves a negative index and clamps to [low, n+low].
func clampIndex(i, n, low int) int {
	if i < 0 {
		i += n
		if i < low {
			i = low
		}
		return i
	}
	if i > n+low {
		i = n + low
	}
	return i
}
