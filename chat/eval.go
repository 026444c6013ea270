package chat

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// eval evaluates an expression.
func (ev *evaluator) eval(n node, env *scope) (value, error) {
	if err := ev.tick(); err != nil {
		return nil, err
	}
	switch n := n.(type) {
	case nil:
		return undefined{}, nil
	case stringNode:
		return n.s, nil
	case textNode:
		return n.text, nil
	case numberNode:
		return n.n, nil
	case identNode:
		return ev.lookup(env, n.name)
	case listNode:
		items, err := ev.evalAll(n.items, env)
		return &list{items: items}, err
	case tupleNode:
		items, err := ev.evalAll(n.items, env)
		return &list{items: items, tuple: true}, err
	case objectNode:
		o := newObject(plainObject)
		for i := range n.keys {
			k, err := ev.eval(n.keys[i], env)
			if err != nil {
				return nil, err
			}
			ks, ok := unmark(k).(string)
			if !ok {
				return nil, renderErr("object keys must be strings, not %s", typeName(k))
			}
			v, err := ev.eval(n.vals[i], env)
			if err != nil {
				return nil, err
			}
			o.set(ks, v)
		}
		return o, nil
	case memberNode:
		return ev.member(n, env)
	case callNode:
		args, kwargs, err := ev.args(n.args, env)
		if err != nil {
			return nil, err
		}
		callee, err := ev.eval(n.callee, env)
		if err != nil {
			return nil, err
		}
		fn, ok := callee.(*function)
		if !ok {
			return nil, renderErr("cannot call a %s%s", typeName(callee), calleeName(n.callee))
		}
		return fn.call(ev, args, kwargs, env)
	case unaryNode:
		x, err := ev.eval(n.x, env)
		if err != nil {
			return nil, err
		}
		return unary(n.op, unmark(x))
	case binaryNode:
		l, err := ev.eval(n.l, env)
		if err != nil {
			return nil, err
		}
		switch n.op {
		case "and", "or":
			ok, err := truth(l)
			if err != nil {
				return nil, err
			}
			if ok == (n.op == "or") {
				return l, nil
			}
			return ev.eval(n.r, env)
		}
		r, err := ev.eval(n.r, env)
		if err != nil {
			return nil, err
		}
		return ev.binary(n.op, l, r)
	case chainNode:
		return ev.chain(n, env)
	case filterNode:
		x, err := ev.eval(n.x, env)
		if err != nil {
			return nil, err
		}
		return ev.applyFilter(x, n.filter, env)
	case testNode:
		x, err := ev.eval(n.x, env)
		if err != nil {
			return nil, err
		}
		ok, err := runTest(n.name, unmark(x), nil)
		return ok != n.negate, err
	case selectNode:
		test, err := ev.eval(n.test, env)
		if err != nil {
			return nil, err
		}
		if ok, err := truth(test); err != nil || !ok {
			return undefined{}, err
		}
		return ev.eval(n.x, env)
	case ternaryNode:
		cond, err := ev.eval(n.cond, env)
		if err != nil {
			return nil, err
		}
		ok, err := truth(cond)
		if err != nil {
			return nil, err
		}
		if ok {
			return ev.eval(n.then, env)
		}
		return ev.eval(n.els, env)
	}
	return nil, renderErr("cannot evaluate %T here", n)
}

// chain evaluates a chainNode: the reference's left fold, checked against
// Python's grouping (each run of ~ first).
func (ev *evaluator) chain(n chainNode, env *scope) (value, error) {
	xs, err := ev.evalAll(n.xs, env)
	if err != nil {
		return nil, err
	}
	js := xs[0]
	for i, op := range n.ops {
		if js, err = ev.binary(op, js, xs[i+1]); err != nil {
			return nil, err
		}
	}
	// Python: fold each run of ~, then + and - over the runs.
	var terms []value
	var termOps []string
	cur := xs[0]
	for i, op := range n.ops {
		if op == "~" {
			if cur, err = ev.binary("~", cur, xs[i+1]); err != nil {
				break
			}
			continue
		}
		terms, termOps = append(terms, cur), append(termOps, op)
		cur = xs[i+1]
	}
	py := value(nil)
	if err == nil {
		terms = append(terms, cur)
		py = terms[0]
		for i, op := range termOps {
			if py, err = ev.binary(op, py, terms[i+1]); err != nil {
				break
			}
		}
	}
	if err != nil || typeName(unmark(py)) != typeName(unmark(js)) || !pyEqual(py, js) {
		return nil, unsupported("+ or - before ~ (Python's Jinja binds ~ tighter, and here the result differs)")
	}
	return js, nil
}

// calleeName names what a failed call tried to call, for the error.
func calleeName(n node) string {
	switch n := n.(type) {
	case identNode:
		return " (" + n.name + ")"
	case memberNode:
		if id, ok := n.prop.(identNode); ok && !n.computed {
			return " (." + id.name + ")"
		}
	}
	return ""
}

func (ev *evaluator) evalAll(ns []node, env *scope) ([]value, error) {
	out := make([]value, len(ns))
	for i, n := range ns {
		v, err := ev.eval(n, env)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// args evaluates call arguments: all positional ones (with *spreads)
// first, then the keyword ones (with **spreads). kwargs is nil when there
// are none.
func (ev *evaluator) args(ns []node, env *scope) ([]value, *object, error) {
	var args []value
	for _, n := range ns {
		switch n := n.(type) {
		case kwargNode, kwspreadNode:
		case spreadNode:
			v, err := ev.eval(n.x, env)
			if err != nil {
				return nil, nil, err
			}
			l, ok := v.(*list)
			if !ok {
				return nil, nil, renderErr("cannot unpack a %s with *", typeName(v))
			}
			args = append(args, l.items...)
		default:
			v, err := ev.eval(n, env)
			if err != nil {
				return nil, nil, err
			}
			args = append(args, unmark(v))
		}
	}
	var kwargs *object
	add := func(k string, v value) error {
		if kwargs == nil {
			kwargs = newObject(plainObject)
		}
		if _, dup := kwargs.get(k); dup {
			return renderErr("got multiple values for keyword argument %q", k)
		}
		kwargs.set(k, v)
		return nil
	}
	for _, n := range ns {
		switch n := n.(type) {
		case kwargNode:
			v, err := ev.eval(n.value, env)
			if err != nil {
				return nil, nil, err
			}
			if err := add(n.name, unmark(v)); err != nil {
				return nil, nil, err
			}
		case kwspreadNode:
			v, err := ev.eval(n.x, env)
			if err != nil {
				return nil, nil, err
			}
			o, ok := v.(*object)
			if !ok || o.kind == namespaceObject {
				return nil, nil, renderErr("the argument after ** must be a mapping, not %s", typeName(v))
			}
			for i, k := range o.keys {
				if err := add(k, o.vals[i]); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	return args, kwargs, nil
}

func unary(op string, x value) (value, error) {
	if op == "not" {
		ok, err := truth(x)
		return !ok, err
	}
	sign := 1.0
	if op == "-" {
		sign = -1
	}
	switch x := x.(type) {
	case number:
		return number{f: sign * x.f, float: x.float, pyFloat: x.pyFloat}, nil
	case bool:
		return number{f: sign * float64(boolInt(x))}, nil
	}
	return nil, renderErr("unary %s of a %s", op, typeName(x))
}

// binary applies an operator the way the reference does, refusing where
// Python's Jinja would give another result.
func (ev *evaluator) binary(op string, l, r value) (value, error) {
	if op == "+" {
		_, lok := l.(markup)
		_, rok := r.(markup)
		if lok || rok {
			ls, lstr := unmark(l).(string)
			rs, rstr := unmark(r).(string)
			if lstr && rstr {
				if (!lok && strings.ContainsAny(ls, "&<>\"'")) || (!rok && strings.ContainsAny(rs, "&<>\"'")) {
					return nil, unsupported("+ of a |safe string and a string with &<>\"' (Python's Jinja escapes the second as HTML, @huggingface/jinja does not)")
				}
				s := ls + rs
				return markup(s), ev.checkLen(s)
			}
		}
	}
	l, r = unmark(l), unmark(r)
	if err := ev.workOn(l); err != nil {
		return nil, err
	}
	if err := ev.workOn(r); err != nil {
		return nil, err
	}
	switch op {
	case "==", "!=":
		eq, err := equal(l, r)
		return eq == (op == "=="), err
	}
	_, lu := l.(undefined)
	_, ru := r.(undefined)
	if lu || ru {
		if ru && (op == "in" || op == "not in") {
			return op == "not in", nil
		}
		return nil, renderErr("cannot apply %s to an undefined value", op)
	}
	_, ln := l.(null)
	_, rn := r.(null)
	if ln || rn {
		return nil, renderErr("cannot apply %s to none", op)
	}
	if op == "~" {
		a, err := concatString(l)
		if err != nil {
			return nil, err
		}
		b, err := concatString(r)
		if err != nil {
			return nil, err
		}
		s := a + b
		return s, ev.checkLen(s)
	}
	if op == "**" && numericLike(l) && numericLike(r) {
		return power(l, r)
	}
	ln2, lnum := l.(number)
	rn2, rnum := r.(number)
	switch {
	case lnum && rnum:
		if v, ok, err := arithmetic(op, ln2, rn2); ok || err != nil {
			return v, err
		}
	case isList(l) && isList(r):
		if op == "+" {
			a, b := l.(*list), r.(*list)
			if a.py != pyList || b.py != pyList {
				return nil, unsupported("+ of a %s and a %s (Python cannot add them)", pyKindNames[a.py], pyKindNames[b.py])
			}
			if a.tuple != b.tuple {
				return nil, unsupported("+ of a tuple and a list (Python cannot add them)")
			}
			if len(a.items)+len(b.items) > ev.limits.Steps {
				return nil, fmt.Errorf("%w: a list longer than %d items", ErrLimit, ev.limits.Steps)
			}
			return &list{items: slices.Concat(a.items, b.items)}, nil
		}
	case isList(r):
		if op == "in" || op == "not in" {
			in, err := contains(r.(*list), l)
			return in == (op == "in"), err
		}
	}
	ls, lstr := l.(string)
	rs, rstr := r.(string)
	if (lstr || rstr) && op == "+" {
		if !lstr || !rstr {
			return nil, unsupported("+ of a %s and a %s (@huggingface/jinja joins them as strings, Python raises)", typeName(l), typeName(r))
		}
		s := ls + rs
		return s, ev.checkLen(s)
	}
	if lstr && rstr && (op == "in" || op == "not in") {
		return strings.Contains(rs, ls) == (op == "in"), nil
	}
	if o, ok := r.(*object); ok && lstr && o.kind != namespaceObject && (op == "in" || op == "not in") {
		_, has := o.get(ls)
		return has == (op == "in"), nil
	}
	return nil, renderErr("unknown operator %q between %s and %s", op, typeName(l), typeName(r))
}

func isList(v value) bool {
	_, ok := v.(*list)
	return ok
}

func numericLike(v value) bool {
	switch v.(type) {
	case number, bool:
		return true
	}
	return false
}

func asNumber(v value) number {
	if b, ok := v.(bool); ok {
		return number{f: float64(boolInt(b))}
	}
	return v.(number)
}

// maxSafe is the largest integer a float64 (a JavaScript number) holds
// exactly; beyond it Python's integers and the reference's differ.
const maxSafe = 1<<53 - 1

func power(l, r value) (value, error) {
	a, b := asNumber(l), asNumber(r)
	if a.f == 0 && b.f < 0 {
		return nil, renderErr("0.0 cannot be raised to a negative power")
	}
	res := math.Pow(a.f, b.f)
	if math.IsInf(res, 0) || math.IsNaN(res) {
		return nil, renderErr("** gives no finite real number")
	}
	n := number{f: res, float: a.float || b.float || b.f < 0, pyFloat: a.pyFloat || b.pyFloat}
	if !n.float && math.Abs(res) > maxSafe {
		return nil, unsupported("an integer beyond 2^53 (@huggingface/jinja rounds it, Python does not)")
	}
	return n, nil
}

// arithmetic applies op to two numbers; ok is false for operators that do
// not apply to numbers.
func arithmetic(op string, a, b number) (v value, ok bool, err error) {
	float := a.float || b.float
	py := a.pyFloat || b.pyFloat
	result := func(f float64, isFloat bool) (value, bool, error) {
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, true, unsupported("arithmetic without a finite result")
		}
		if !isFloat && math.Abs(f) > maxSafe {
			return nil, true, unsupported("an integer beyond 2^53 (@huggingface/jinja rounds it, Python does not)")
		}
		return number{f: f, float: isFloat, pyFloat: py && !isFloat}, true, nil
	}
	switch op {
	case "+":
		return result(a.f+b.f, float)
	case "-":
		return result(a.f-b.f, float)
	case "*":
		return result(a.f*b.f, float)
	case "/":
		if b.f == 0 {
			return nil, true, unsupported("division by zero (Python raises, @huggingface/jinja gives Infinity or NaN)")
		}
		return result(a.f/b.f, true)
	case "//":
		if b.f == 0 {
			return nil, true, unsupported("division by zero (Python raises, @huggingface/jinja gives Infinity or NaN)")
		}
		return result(math.Floor(a.f/b.f), float)
	case "%":
		if b.f == 0 {
			return nil, true, unsupported("modulo by zero (Python raises, @huggingface/jinja gives NaN)")
		}
		m := math.Mod(a.f, b.f)
		if m != 0 && (m < 0) != (b.f < 0) {
			return nil, true, unsupported("%% with operands of different signs (JavaScript keeps the dividend's sign, Python the divisor's)")
		}
		return result(m, float)
	case "<":
		return a.f < b.f, true, nil
	case ">":
		return a.f > b.f, true, nil
	case "<=":
		return a.f <= b.f, true, nil
	case ">=":
		return a.f >= b.f, true, nil
	}
	return nil, false, nil
}

// concatString is how ~ turns a value into a string: the reference uses
// JavaScript's String() of the raw value, which agrees with Python's str()
// for strings, integers and most floats only.
func concatString(v value) (string, error) {
	switch v := unmark(v).(type) {
	case string:
		return v, nil
	case number:
		if v.float && v.f == math.Trunc(v.f) {
			return "", unsupported("~ of the float %v (JavaScript writes %s, Python %s.0)", v.f, formatInt(v.f), formatInt(v.f))
		}
		return printNumber(v)
	}
	return "", unsupported("~ of a %s (@huggingface/jinja and Python write it differently)", typeName(v))
}
