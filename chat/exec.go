package chat

import (
	"errors"
	"strings"
)

// block renders a list of nodes.
func (ev *evaluator) block(nodes []node, env *scope) (string, error) {
	var b strings.Builder
	for _, n := range nodes {
		s, err := ev.statement(n, env)
		if err != nil {
			return "", err
		}
		b.WriteString(s)
		if b.Len() > ev.limits.Bytes {
			return "", ev.checkLen(b.String())
		}
	}
	return b.String(), nil
}

// statement renders one node of a block to the text it adds.
func (ev *evaluator) statement(n node, env *scope) (string, error) {
	if err := ev.tick(); err != nil {
		return "", err
	}
	switch n := n.(type) {
	case textNode:
		return n.text, nil
	case commentNode:
		return "", nil
	case setNode:
		return "", ev.set(n, env)
	case macroNode:
		env.set(n.name, ev.macro(n, env))
		return "", nil
	case ifNode:
		test, err := ev.eval(n.test, env)
		if err != nil {
			return "", err
		}
		ok, err := truth(test)
		if err != nil {
			return "", err
		}
		if ok {
			return ev.block(n.body, env)
		}
		return ev.block(n.els, env)
	case forNode:
		return ev.forLoop(n, env)
	case breakNode:
		return "", errBreak
	case continueNode:
		return "", errContinue
	case callBlockNode:
		v, err := ev.callBlock(n, env)
		if err != nil {
			return "", err
		}
		return ev.print(v)
	case filterBlockNode:
		body, err := ev.block(n.body, env)
		if err != nil {
			return "", err
		}
		v, err := ev.applyFilter(body, n.filter, env)
		if err != nil {
			return "", err
		}
		switch v.(type) {
		case string, markup:
		default:
			return "", unsupported("a filter block whose filter gives a %s (Python's Jinja cannot write it, @huggingface/jinja prints it)", typeName(v))
		}
		return ev.print(v)
	}
	v, err := ev.eval(n, env)
	if err != nil {
		return "", err
	}
	return ev.print(v)
}

// print is how {{ x }} shows a value. The reference prints none as nothing,
// booleans as true/false and lists and mappings as JSON; Python's Jinja
// prints None, True and Python reprs, so those are refused.
func (ev *evaluator) print(v value) (string, error) {
	switch v := unmark(v).(type) {
	case undefined:
		return "", nil
	case string:
		return v, nil
	case number:
		return printNumber(v)
	case null:
		return "", unsupported("printing none (Python's Jinja prints \"None\", @huggingface/jinja nothing)")
	}
	return "", unsupported("printing a %s (Python's Jinja and @huggingface/jinja print it differently)", typeName(v))
}

func (ev *evaluator) set(n setNode, env *scope) error {
	var rhs value
	if n.value != nil {
		v, err := ev.eval(n.value, env)
		if err != nil {
			return err
		}
		rhs = v
	} else {
		s, err := ev.block(n.body, env)
		if err != nil {
			return err
		}
		rhs = s
	}
	switch t := n.target.(type) {
	case identNode:
		env.set(t.name, rhs)
	case tupleNode:
		l, ok := rhs.(*list)
		if !ok {
			return renderErr("cannot unpack a %s in set", typeName(rhs))
		}
		if len(l.items) != len(t.items) {
			return renderErr("set unpacks %d items into %d names", len(l.items), len(t.items))
		}
		for i, x := range t.items {
			id, ok := x.(identNode)
			if !ok {
				return renderErr("set can only unpack into names")
			}
			env.set(id.name, l.items[i])
		}
	case memberNode:
		obj, err := ev.eval(t.obj, env)
		if err != nil {
			return err
		}
		ns, ok := obj.(*object)
		if !ok || ns.kind != namespaceObject {
			return renderErr("cannot assign an attribute of a %s (only of a namespace)", typeName(obj))
		}
		id, ok := t.prop.(identNode)
		if !ok || t.computed {
			return renderErr("a namespace attribute is assigned by name")
		}
		ns.set(id.name, rhs)
	default:
		return renderErr("cannot assign to this expression")
	}
	return nil
}

func (ev *evaluator) forLoop(n forNode, env *scope) (string, error) {
	sc := newScope(env)
	iterNode, test := n.iter, node(nil)
	if sel, ok := n.iter.(selectNode); ok {
		iterNode, test = sel.x, sel.test
	}
	it, err := ev.eval(iterNode, sc)
	if err != nil {
		return "", err
	}
	it = unmark(it)
	var all []value
	switch it := it.(type) {
	case *list:
		all = it.items
	case *object:
		if it.kind == namespaceObject {
			return "", renderErr("cannot loop over a namespace")
		}
		for _, k := range it.keys {
			all = append(all, k)
		}
	default:
		return "", renderErr("cannot loop over a %s", typeName(it))
	}

	// Bind the loop variables of one item; the reference checks the
	// shape of every item before the first iteration runs.
	targets, err := loopTargets(n.target)
	if err != nil {
		return "", err
	}
	bind := func(s *scope, item value) error {
		if len(targets) == 1 && !isTuple(n.target) {
			s.set(targets[0], item)
			return nil
		}
		l := item.(*list)
		for i, name := range targets {
			s.set(name, l.items[i])
		}
		return nil
	}
	var items []value
	for _, item := range all {
		if isTuple(n.target) {
			l, ok := item.(*list)
			if !ok || l.tuple {
				return "", renderErr("cannot unpack a %s in a for loop", typeName(item))
			}
			if len(l.items) != len(targets) {
				return "", renderErr("the for loop unpacks %d items into %d names", len(l.items), len(targets))
			}
		}
		if test != nil {
			if err := ev.tick(); err != nil {
				return "", err
			}
			ts := newScope(sc)
			if err := bind(ts, item); err != nil {
				return "", err
			}
			v, err := ev.eval(test, ts)
			if err != nil {
				return "", err
			}
			ok, err := truth(v)
			if err != nil {
				return "", err
			}
			if !ok {
				continue
			}
		}
		items = append(items, item)
	}

	var out strings.Builder
	iterated := false
	for i, item := range items {
		if err := ev.tick(); err != nil {
			return "", err
		}
		if i > 0 {
			// What the last iteration set is gone in Python's Jinja.
			if sc.stale == nil {
				sc.stale = map[string]bool{}
			}
			for name := range sc.vars {
				sc.stale[name] = true
			}
		}
		sc.set("loop", loopInfo(items, i))
		if err := bind(sc, item); err != nil {
			return "", err
		}
		s, err := ev.block(n.body, sc)
		if errors.Is(err, errContinue) {
			continue
		}
		if errors.Is(err, errBreak) {
			break
		}
		if err != nil {
			return "", err
		}
		out.WriteString(s)
		if err := ev.checkLen(out.String()); err != nil {
			return "", err
		}
		iterated = true
	}
	if !iterated {
		if len(items) > 0 && len(n.els) > 0 {
			return "", unsupported("for … else after a loop whose every iteration ended in break or continue (@huggingface/jinja renders the else block, Python's Jinja does not)")
		}
		for name := range sc.vars {
			if sc.stale == nil {
				sc.stale = map[string]bool{}
			}
			sc.stale[name] = true
		}
		s, err := ev.block(n.els, sc)
		if err != nil {
			return "", err
		}
		out.WriteString(s)
	}
	return out.String(), nil
}

func isTuple(n node) bool {
	_, ok := n.(tupleNode)
	return ok
}

func loopTargets(n node) ([]string, error) {
	switch n := n.(type) {
	case identNode:
		return []string{n.name}, nil
	case tupleNode:
		names := make([]string, len(n.items))
		for i, x := range n.items {
			id, ok := x.(identNode)
			if !ok {
				return nil, renderErr("a for loop unpacks into names only")
			}
			names[i] = id.name
		}
		return names, nil
	}
	return nil, renderErr("invalid loop variable")
}

// loopInfo is the loop object of iteration i: what the reference provides
// (Python's also has depth, depth0, cycle and changed, which are refused).
func loopInfo(items []value, i int) *object {
	n := len(items)
	var prev, next value = undefined{}, undefined{}
	if i > 0 {
		prev = items[i-1]
	}
	if i < n-1 {
		next = items[i+1]
	}
	return &object{keys: loopKeys, kind: loopObject, vals: []value{
		boxInt(i + 1), boxInt(i), boxInt(n - i), boxInt(n - i - 1), i == 0, i == n-1, boxInt(n), prev, next,
	}}
}

// loopKeys are the loop object's members, shared by all loop objects
// (which templates cannot change).
var loopKeys = []string{"index", "index0", "revindex", "revindex0", "first", "last", "length", "previtem", "nextitem"}

// smallInts are boxed once, so that loops do not allocate their indices.
var smallInts = func() (v [1024]value) {
	for i := range v {
		v[i] = intNum(i)
	}
	return
}()

func boxInt(n int) value {
	if n >= 0 && n < len(smallInts) {
		return smallInts[n]
	}
	return intNum(n)
}
