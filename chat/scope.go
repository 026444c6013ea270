package chat

import (
	"errors"
	"fmt"
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

// DefaultLimits are far above what real chat templates need — the
// reference templates take at most about 4,000 steps on the test
// conversations — and far below a hang: a million steps run in under a
// second.
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
