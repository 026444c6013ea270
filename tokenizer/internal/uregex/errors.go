package uregex

import (
	"errors"
	"fmt"
)

var (
	// ErrSyntax is wrapped by the errors of patterns Oniguruma rejects too.
	ErrSyntax = errors.New("uregex: syntax error")
	// ErrUnsupported is wrapped by the errors of valid Oniguruma patterns
	// that uregex does not implement; it never matches them differently.
	ErrUnsupported = errors.New("uregex: unsupported construct")
	// ErrStepLimit is returned by FindAll when one match attempt backtracks
	// more than the step limit (see Regexp.WithStepLimit).
	ErrStepLimit = errors.New("uregex: backtracking step limit exceeded")
)

// An Error tells where in a pattern compiling failed and why.
type Error struct {
	Kind    error  // ErrSyntax or ErrUnsupported
	Pattern string // the whole pattern
	Offset  int    // byte offset of the offending construct
	Detail  string // what is wrong, naming the construct
}

func (e *Error) Error() string {
	return fmt.Sprintf("%v: %s at offset %d of %q", e.Kind, e.Detail, e.Offset, e.Pattern)
}

func (e *Error) Unwrap() error { return e.Kind }
