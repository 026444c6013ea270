package model

import (
	"fmt"
	"strconv"
	"strings"
)

// Spec names a model and a view of it: "PATH" (as is), "PATH@exit=N" (the
// first N layers, then the final norm and the output head: an early-exit draft
// that shares the target's vocabulary) and "PATH@q8" (a copy with its matrices
// quantized to Q8_0). Options combine: "PATH@exit=2@q8" or "PATH@exit=2,q8".
type Spec struct {
	Path      string
	Exit      int    // 0: all layers
	Quantize  string // "" or "q8" (also "q4" for Q4_0)
	Tokenizer string // explicit tokenizer path, "" to look beside the model
}

// ParseSpec parses a model spec. Options start at the first '@' of the
// path's last element, so directories may contain '@' (npm's
// "node_modules/@scope/pkg"); a file name that itself contains '@' can be
// given with a trailing '@' ("weird@name.bin@", no options).
func ParseSpec(s string) (Spec, error) {
	if s == "" {
		return Spec{}, fmt.Errorf("empty model spec")
	}
	if strings.HasSuffix(s, "@") {
		return Spec{Path: s[:len(s)-1]}, nil
	}
	last := strings.LastIndexAny(s, `/\`) + 1
	i := strings.IndexByte(s[last:], '@')
	if i < 0 {
		return Spec{Path: s}, nil
	}
	i += last
	sp := Spec{Path: s[:i]}
	if sp.Path == "" {
		return Spec{}, fmt.Errorf("model spec %q: no path before '@'", s)
	}
	for _, opt := range strings.FieldsFunc(s[i+1:], func(r rune) bool { return r == '@' || r == ',' }) {
		key, val, hasVal := strings.Cut(opt, "=")
		switch key {
		case "exit":
			n, err := strconv.Atoi(val)
			if !hasVal || err != nil || n <= 0 {
				return Spec{}, fmt.Errorf("model spec %q: exit wants a positive layer count, got %q", s, val)
			}
			sp.Exit = n
		case "q8", "q4":
			if hasVal {
				return Spec{}, fmt.Errorf("model spec %q: %s takes no value", s, key)
			}
			sp.Quantize = key
		default:
			return Spec{}, fmt.Errorf("model spec %q: unknown option %q (want exit=N, q8 or q4)", s, opt)
		}
	}
	return sp, nil
}

// String formats the spec back into its canonical text form. (A file name
// with '@' in it round-trips only without options, as "PATH@".)
func (s Spec) String() string {
	out := s.Path
	if strings.Contains(s.Path[strings.LastIndexAny(s.Path, `/\`)+1:], "@") && s.Exit == 0 && s.Quantize == "" {
		return out + "@"
	}
	if s.Exit > 0 {
		out += "@exit=" + strconv.Itoa(s.Exit)
	}
	if s.Quantize != "" {
		out += "@" + s.Quantize
	}
	return out
}
