package chat

import (
	"errors"
	"fmt"
	"slices"
)

// macro makes the function a {% macro %} defines.
func (ev *evaluator) macro(n macroNode, def *scope) *function {
	special := specialArgs(n.params, n.body)
	return &function{name: n.name, call: func(ev *evaluator, args []value, kwargs *object, caller *scope) (value, error) {
		ms := newScope(caller)
		ms.def = def
		if err := ev.bindArgs("'"+n.name+"'", n.params, special, args, kwargs, ms); err != nil {
			return nil, err
		}
		return ev.runBody(n.body, ms)
	}}
}

// runBody renders a macro's or call block's body one call deeper.
func (ev *evaluator) runBody(body []node, env *scope) (value, error) {
	ev.depth++
	defer func() { ev.depth-- }()
	if ev.depth > ev.limits.Depth {
		return nil, fmt.Errorf("%w: macro calls nested deeper than %d", ErrLimit, ev.limits.Depth)
	}
	s, err := ev.block(body, env)
	if errors.Is(err, errBreak) || errors.Is(err, errContinue) {
		return nil, unsupported("break or continue inside a macro leaves the loop of its caller in @huggingface/jinja; Python's Jinja rejects it")
	}
	return s, err
}

// bindArgs binds a macro's (or call block's) parameters: positional
// arguments first, then keyword arguments by name, then defaults, which
// may refer to the parameters before them. kwargs and varargs collect the
// rest when the body reads them.
func (ev *evaluator) bindArgs(display string, params []node, special map[string]bool, args []value, kwargs *object, env *scope) error {
	kw := newObject(plainObject)
	if kwargs != nil {
		for i, k := range kwargs.keys {
			kw.set(k, kwargs.vals[i])
		}
	}
	type pending struct {
		name string
		def  node
	}
	var defaults []pending
	for i, p := range params {
		name, def := paramName(p)
		var v value
		if i < len(args) {
			v = args[i]
		} else if x, ok := kw.get(name); ok {
			v = x
			kw.remove(name)
		}
		if v == nil && def != nil {
			defaults = append(defaults, pending{name, def})
		}
		if v == nil {
			v = undefined{}
		}
		env.set(name, v)
	}
	if special["kwargs"] {
		env.set("kwargs", kw)
	} else if kw.len() > 0 {
		return renderErr("macro %s takes no keyword argument %q", display, kw.keys[0])
	}
	if special["varargs"] {
		rest := &list{}
		if len(args) > len(params) {
			rest.items = slices.Clone(args[len(params):])
		}
		env.set("varargs", rest)
	} else if len(args) > len(params) {
		return renderErr("macro %s takes not more than %d argument(s)", display, len(params))
	}
	for _, d := range defaults {
		v, err := ev.eval(d.def, env)
		if err != nil {
			return err
		}
		env.set(d.name, v)
	}
	return nil
}

func paramName(p node) (string, node) {
	switch p := p.(type) {
	case identNode:
		return p.name, nil
	case kwargNode:
		return p.name, p.value
	}
	return "", nil
}

func (ev *evaluator) callBlock(n callBlockNode, env *scope) (value, error) {
	special := specialArgs(n.params, n.body)
	caller := &function{name: "caller", call: func(ev *evaluator, args []value, kwargs *object, _ *scope) (value, error) {
		cs := newScope(env)
		if err := ev.bindArgs("None", n.params, special, args, kwargs, cs); err != nil {
			return nil, err
		}
		return ev.runBody(n.body, cs)
	}}
	args, kwargs, err := ev.args(n.call.args, env)
	if err != nil {
		return nil, err
	}
	callee, err := ev.eval(n.call.callee, env)
	if err != nil {
		return nil, err
	}
	fn, ok := callee.(*function)
	if !ok {
		return nil, renderErr("cannot call a %s", typeName(callee))
	}
	ce := newScope(env)
	ce.set("caller", caller)
	if kwargs == nil {
		kwargs = newObject(plainObject)
	}
	return fn.call(ev, args, kwargs, ce)
}

// specialArgs reports which of kwargs and varargs a macro's body reads
// before declaring them, as Jinja decides whether a macro accepts extra
// keyword or positional arguments.
func specialArgs(params []node, body []node) map[string]bool {
	declared := map[string]bool{}
	accessed := map[string]bool{}
	declare := func(name string) {
		if name == "kwargs" || name == "varargs" {
			declared[name] = true
		}
	}
	var declareTarget func(n node)
	declareTarget = func(n node) {
		switch n := n.(type) {
		case identNode:
			declare(n.name)
		case tupleNode:
			for _, x := range n.items {
				declareTarget(x)
			}
		}
	}
	var visit func(n node)
	visitAll := func(ns []node) {
		for _, n := range ns {
			visit(n)
		}
	}
	defaults := func(ps []node) {
		for _, p := range ps {
			if _, def := paramName(p); def != nil {
				visit(def)
			}
		}
	}
	visitFilter := func(f node) {
		if c, ok := f.(callNode); ok {
			visitAll(c.args)
		}
	}
	visit = func(n node) {
		switch n := n.(type) {
		case nil:
		case identNode:
			if (n.name == "kwargs" || n.name == "varargs") && !declared[n.name] {
				accessed[n.name] = true
			}
		case forNode:
			declareTarget(n.target)
			if sel, ok := n.iter.(selectNode); ok {
				visit(sel.x)
				visitAll(n.body)
				visitAll(n.els)
				visit(sel.test)
				return
			}
			visit(n.iter)
			visitAll(n.body)
			visitAll(n.els)
		case setNode:
			declareTarget(n.target)
			visit(n.value)
			visitAll(n.body)
		case macroNode:
			for _, p := range n.params {
				name, _ := paramName(p)
				declare(name)
			}
			defaults(n.params)
			visitAll(n.body)
		case callBlockNode:
			visit(*n.call)
			for _, p := range n.params {
				name, _ := paramName(p)
				declare(name)
			}
			defaults(n.params)
			visitAll(n.body)
		case filterBlockNode:
			visitAll(n.body)
			visitFilter(n.filter)
		case memberNode:
			visit(n.obj)
			if n.computed {
				visit(n.prop)
			}
		case filterNode:
			visit(n.x)
			visitFilter(n.filter)
		case testNode:
			visit(n.x)
		case selectNode:
			visit(n.test)
			visit(n.x)
		case kwargNode:
			visit(n.value)
		case ifNode:
			visit(n.test)
			visitAll(n.body)
			visitAll(n.els)
		case listNode:
			visitAll(n.items)
		case tupleNode:
			visitAll(n.items)
		case objectNode:
			for i := range n.keys {
				visit(n.keys[i])
				visit(n.vals[i])
			}
		case sliceNode:
			visit(n.start)
			visit(n.stop)
			visit(n.step)
		case callNode:
			visit(n.callee)
			visitAll(n.args)
		case spreadNode:
			visit(n.x)
		case kwspreadNode:
			visit(n.x)
		case binaryNode:
			visit(n.l)
			visit(n.r)
		case chainNode:
			visitAll(n.xs)
		case unaryNode:
			visit(n.x)
		case ternaryNode:
			visit(n.cond)
			visit(n.then)
			visit(n.els)
		}
	}
	for _, p := range params {
		name, _ := paramName(p)
		declare(name)
	}
	visitAll(body)
	return accessed
}
