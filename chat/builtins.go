package chat

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// objectMethod is o.name for the reference's mapping methods (get, items,
// keys, values, dictsort), or nil.
func objectMethod(o *object, name string) *function {
	noArgs := func(f func() value) *function {
		return &function{name: name, call: func(_ *evaluator, args []value, kw *object, _ *scope) (value, error) {
			if len(args) > 0 || kw != nil {
				return nil, unsupported(".%s() with arguments", name)
			}
			return f(), nil
		}}
	}
	switch name {
	case "get":
		return &function{name: name, call: func(_ *evaluator, args []value, kw *object, _ *scope) (value, error) {
			if kw != nil {
				return nil, unsupported(".get() with keyword arguments")
			}
			if len(args) == 0 {
				return nil, renderErr(".get() needs a key")
			}
			key, ok := args[0].(string)
			if !ok {
				return nil, renderErr("a mapping's key must be a string, not %s", typeName(args[0]))
			}
			if len(args) > 2 {
				return nil, unsupported(".get() with more than two arguments")
			}
			if v, ok := o.get(key); ok {
				return v, nil
			}
			if len(args) == 2 {
				return args[1], nil
			}
			return null{}, nil
		}}
	case "items":
		return noArgs(func() value {
			l := items(o)
			l.py = pyView
			return l
		})
	case "keys":
		return noArgs(func() value {
			l := &list{items: make([]value, len(o.keys)), py: pyView}
			for i, k := range o.keys {
				l.items[i] = k
			}
			return l
		})
	case "values":
		return noArgs(func() value {
			l := &list{items: make([]value, len(o.keys)), py: pyView}
			copy(l.items, o.vals)
			return l
		})
	case "dictsort":
		return &function{name: name, call: func(_ *evaluator, args []value, kw *object, _ *scope) (value, error) {
			return dictsort(o, args, kw)
		}}
	}
	return nil
}

// dictsort sorts a mapping's (key, value) pairs by key or value.
func dictsort(o *object, args []value, kw *object) (value, error) {
	caseSensitive, ok1 := arg(args, kw, 0, "case_sensitive", false).(bool)
	by, ok2 := arg(args, kw, 1, "by", "key").(string)
	reverse, ok3 := arg(args, kw, 2, "reverse", false).(bool)
	if !ok1 || !ok2 || !ok3 || (by != "key" && by != "value") {
		return nil, renderErr("dictsort takes case_sensitive (a boolean), by ('key' or 'value') and reverse (a boolean)")
	}
	pairs := items(o)
	idx := 0
	if by == "value" {
		idx = 1
	}
	var err error
	sort.SliceStable(pairs.items, func(i, j int) bool {
		a := pairs.items[i].(*list).items[idx]
		b := pairs.items[j].(*list).items[idx]
		c, e := compareValues(a, b, caseSensitive)
		if e != nil && err == nil {
			err = e
		}
		if reverse {
			return c > 0
		}
		return c < 0
	})
	return pairs, err
}

// The global functions: namespace(), range(), raise_exception() and
// strftime_now(), as transformers and the reference define them.

var namespaceFunc = &function{name: "namespace", call: func(_ *evaluator, args []value, kw *object, _ *scope) (value, error) {
	if len(args) > 1 {
		return nil, renderErr("namespace expected at most 1 argument, got %d", len(args))
	}
	ns := newObject(namespaceObject)
	if len(args) == 1 {
		switch src := args[0].(type) {
		case *object:
			if src.kind == namespaceObject {
				return nil, renderErr("'NamespaceValue' object is not iterable")
			}
			for i, k := range src.keys {
				ns.set(k, src.vals[i])
			}
		case *list:
			for _, pair := range src.items {
				var kv []value
				switch p := pair.(type) {
				case *list:
					kv = p.items
				case string:
					for _, r := range p {
						kv = append(kv, string(r))
					}
				}
				if len(kv) != 2 {
					return nil, renderErr("namespace expected a mapping or an iterable of (key, value) pairs")
				}
				k, ok := kv[0].(string)
				if !ok {
					return nil, renderErr("namespace keys must be strings")
				}
				ns.set(k, kv[1])
			}
		default:
			return nil, renderErr("'%s' object is not iterable", typeName(src))
		}
	}
	if kw != nil {
		for i, k := range kw.keys {
			ns.set(k, kw.vals[i])
		}
	}
	return ns, nil
}}

var rangeFunc = &function{name: "range", call: func(ev *evaluator, args []value, kw *object, _ *scope) (value, error) {
	if kw != nil {
		return nil, unsupported("range() with keyword arguments")
	}
	if len(args) == 0 || len(args) > 3 {
		return nil, unsupported("range() with %d arguments", len(args))
	}
	var n [3]float64
	for i, a := range args {
		x, ok := a.(number)
		if !ok || x.float || x.pyFloat {
			return nil, unsupported("range() of a %s (Python takes integers only)", typeName(a))
		}
		n[i] = x.f
	}
	start, stop, step := 0.0, n[0], 1.0
	if len(args) > 1 {
		start, stop = n[0], n[1]
	}
	if len(args) > 2 {
		step = n[2]
	}
	if step == 0 {
		return nil, renderErr("range() step must not be zero")
	}
	count := math.Max(0, math.Ceil((stop-start)/step))
	if count > float64(ev.limits.Steps-ev.steps) {
		return nil, fmt.Errorf("%w: range() of %v items", ErrLimit, count)
	}
	l := &list{items: make([]value, int(count)), py: pyRange}
	for i := range l.items {
		l.items[i] = number{f: start + float64(i)*step}
	}
	ev.steps += len(l.items)
	return l, nil
}}

var raiseFunc = &function{name: "raise_exception", call: func(_ *evaluator, args []value, kw *object, _ *scope) (value, error) {
	msg := ""
	if len(args) > 0 {
		if s, ok := args[0].(string); ok {
			msg = s
		} else {
			msg = fmt.Sprint(fromValue(args[0]))
		}
	}
	return nil, fmt.Errorf("%w: %s", ErrRaised, msg)
}}

var strftimeFunc = &function{name: "strftime_now", call: func(ev *evaluator, args []value, kw *object, _ *scope) (value, error) {
	if len(args) != 1 || kw != nil {
		return nil, unsupported("strftime_now() takes one format string")
	}
	format, ok := args[0].(string)
	if !ok {
		return nil, renderErr("strftime_now() takes a format string, not %s", typeName(args[0]))
	}
	return strftime(ev.now(), format)
}}

// strftime writes t with the directives the reference knows (%Y %m %d %b
// %B %H %M %%), in English; any other directive, which Python would expand
// and the reference would leave as it is, is refused.
func strftime(t time.Time, format string) (value, error) {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(format) {
			return nil, unsupported("strftime_now format %q ends in %%", format)
		}
		i++
		switch format[i] {
		case 'Y':
			fmt.Fprintf(&b, "%d", t.Year())
		case 'm':
			fmt.Fprintf(&b, "%02d", int(t.Month()))
		case 'd':
			fmt.Fprintf(&b, "%02d", t.Day())
		case 'b':
			b.WriteString(t.Month().String()[:3])
		case 'B':
			b.WriteString(t.Month().String())
		case 'H':
			fmt.Fprintf(&b, "%02d", t.Hour())
		case 'M':
			fmt.Fprintf(&b, "%02d", t.Minute())
		case '%':
			b.WriteByte('%')
		default:
			return nil, unsupported("the strftime_now directive %%%c (@huggingface/jinja knows %%Y %%m %%d %%b %%B %%H %%M only)", format[i])
		}
	}
	return b.String(), nil
}

// globals are the names every render starts with.
func globals() *scope {
	s := newScope(nil)
	s.set("false", false)
	s.set("true", true)
	s.set("none", null{})
	s.set("False", false)
	s.set("True", true)
	s.set("None", null{})
	s.set("raise_exception", raiseFunc)
	s.set("range", rangeFunc)
	s.set("strftime_now", strftimeFunc)
	return s
}
