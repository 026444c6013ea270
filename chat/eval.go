package chat

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Limits bound the work of one render, so that a template that loops or
// recurses without end, or builds an enormous string, fails with ErrLimit
// instead of hanging or exhausting memory.
type Limits struct {
	Steps int // nodes evaluated plus loop iterations
	Bytes int // length of any one string the template builds, the output included
	Depth int // nested macro calls
}

// DefaultLimits are far above what real chat templates need (a few
// thousand steps, kilobytes of output) and far below a hang.
var DefaultLimits = Limits{Steps: 1_000_000, Bytes: 8 << 20, Depth: 100}

// scope is one level of variables. Lookups walk up the parents.
type scope struct {
	vars   map[string]value
	parent *scope
	// stale names the variables a {% set %} made in an earlier iteration
	// of the loop that owns this scope: the reference keeps them for the
	// next iterations, Python's Jinja does not, so reading one is refused.
	stale map[string]bool
	// def is set on the scope of a macro call: the scope the macro was
	// defined in. The reference resolves a macro's free names in its
	// caller's scopes; Python's Jinja in its definition's, so a name found
	// in the caller's scopes but not the definition's is refused.
	def *scope
}

func newScope(parent *scope) *scope {
	return &scope{vars: map[string]value{}, parent: parent}
}

func (s *scope) set(name string, v value) {
	s.vars[name] = v
	if s.stale != nil {
		delete(s.stale, name)
	}
}

// within reports whether s is t or one of t's ancestors.
func (s *scope) within(t *scope) bool {
	for ; t != nil; t = t.parent {
		if t == s {
			return true
		}
	}
	return false
}

// loop control travels as errors up to the enclosing for loop.
var (
	errBreak    = errors.New("break outside a loop")
	errContinue = errors.New("continue outside a loop")
)

// evaluator renders one template once.
type evaluator struct {
	limits Limits
	steps  int
	depth  int
	now    func() time.Time
}

func renderErr(f string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrRender, fmt.Sprintf(f, a...))
}

// unsupported is a refusal: the construct renders differently in the
// reference and in Python's Jinja (or hlm does not render it at all).
func unsupported(f string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(f, a...))
}

func (ev *evaluator) tick() error {
	ev.steps++
	if ev.steps > ev.limits.Steps {
		return fmt.Errorf("%w: more than %d steps", ErrLimit, ev.limits.Steps)
	}
	return nil
}

// work charges an operation over items list items and bytes bytes of
// text: a step per item and per 256 bytes, so that list and string
// operations count in the step limit by their size.
func (ev *evaluator) work(items, bytes int) error {
	ev.steps += items + bytes>>8
	if ev.steps > ev.limits.Steps {
		return fmt.Errorf("%w: more than %d steps", ErrLimit, ev.limits.Steps)
	}
	return nil
}

// workOn charges an operation on v by its size.
func (ev *evaluator) workOn(v value) error {
	switch v := v.(type) {
	case *list:
		return ev.work(len(v.items), 0)
	case *object:
		return ev.work(v.len(), 0)
	case string:
		return ev.work(0, len(v))
	case markup:
		return ev.work(0, len(v))
	}
	return nil
}

func (ev *evaluator) checkLen(s string) error {
	if len(s) > ev.limits.Bytes {
		return fmt.Errorf("%w: a string longer than %d bytes", ErrLimit, ev.limits.Bytes)
	}
	return nil
}

// lookup finds a variable; a missing one is undefined.
func (ev *evaluator) lookup(env *scope, name string) (value, error) {
	if name == "namespace" {
		// Every scope of the reference holds its own namespace().
		if v, ok := env.vars[name]; ok {
			return v, nil
		}
		return namespaceFunc, nil
	}
	var lexical *scope
	for s := env; s != nil; s = s.parent {
		if v, ok := s.vars[name]; ok {
			if s.stale[name] {
				return nil, unsupported("%q was set in an earlier iteration of the loop (Python's Jinja forgets it at the end of each iteration, @huggingface/jinja keeps it)", name)
			}
			if lexical != nil && name != "caller" && !s.within(lexical) {
				return nil, unsupported("macro reads %q from the scope it is called in (Python's Jinja sees the scope it is defined in)", name)
			}
			return v, nil
		}
		if s.def != nil && lexical == nil {
			lexical = s.def
		}
	}
	return undefined{}, nil
}

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
