package policy

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ErrUnknown is returned (wrapped) for an unknown policy name or parameter.
var ErrUnknown = errors.New("policy: unknown name")

// Uploader names accepted by ByName and Parse, with their parameters and
// defaults (policies, not methods: which method uses which is hybrid's
// method table):
//
//	always                              upload everything
//	never                               upload nothing
//	random              p=0.5           Random
//	threshold           u_th=0.431      Threshold (U-HLM's default)
//	u+i, ui             u_th=0.431 k=3 gamma=1.5   UncertaintyImportance
//	importance, i       k=3 gamma=1.5   ImportanceOnly
//
// Draft-length names accepted by DraftLengthByName and ParseDraftLength:
//
//	fixed               l=1             Fixed
//	heuristic           initial=4 min=1 max=16     Heuristic
var (
	uploaderParams = map[string][]string{
		"always": nil, "never": nil, "random": {"p"}, "threshold": {"u_th"},
		"u+i": {"u_th", "k", "gamma"}, "importance": {"k", "gamma"},
	}
	uploaderAlias = map[string]string{
		"always": "always", "never": "never", "random": "random", "threshold": "threshold",
		"u+i": "u+i", "ui": "u+i", "importance": "importance", "i": "importance",
	}
)

// ByName returns the uploader called name with the given parameters;
// missing parameters take their defaults, unknown ones are an error
// (ErrUnknown), and the result is validated (ErrInvalid).
func ByName(name string, params map[string]float64) (Uploader, error) {
	canon, ok := uploaderAlias[strings.ToLower(name)]
	if !ok {
		return nil, fmt.Errorf("%w: uploader %q", ErrUnknown, name)
	}
	if err := checkParams(name, params, uploaderParams[canon]); err != nil {
		return nil, err
	}
	get := func(key string, def float64) float64 {
		if v, ok := params[key]; ok {
			return v
		}
		return def
	}
	var u interface {
		Uploader
		Validate() error
	}
	switch canon {
	case "always":
		u = Always{}
	case "never":
		u = Never{}
	case "random":
		u = Random{P: get("p", DefaultRandomP)}
	case "threshold":
		u = Threshold{UTh: get("u_th", UHLMThreshold)}
	case "u+i":
		k, err := intParam("k", get("k", DefaultK))
		if err != nil {
			return nil, err
		}
		u = UncertaintyImportance{UTh: get("u_th", UHLMThreshold), K: k, Gamma: get("gamma", DefaultGamma)}
	case "importance":
		k, err := intParam("k", get("k", DefaultK))
		if err != nil {
			return nil, err
		}
		u = ImportanceOnly{K: k, Gamma: get("gamma", DefaultGamma)}
	}
	if err := u.Validate(); err != nil {
		return nil, err
	}
	return u, nil
}

// DraftLengthByName returns the draft-length policy called name (see
// ByName for the conventions). Heuristic is returned as a fresh *Heuristic.
func DraftLengthByName(name string, params map[string]float64) (DraftLength, error) {
	get := func(key string, def int) (int, error) {
		if v, ok := params[key]; ok {
			return intParam(key, v)
		}
		return def, nil
	}
	switch strings.ToLower(name) {
	case "fixed":
		if err := checkParams(name, params, []string{"l"}); err != nil {
			return nil, err
		}
		l, err := get("l", 1)
		if err != nil {
			return nil, err
		}
		f := Fixed{L: l}
		if err := f.Validate(); err != nil {
			return nil, err
		}
		return f, nil
	case "heuristic":
		if err := checkParams(name, params, []string{"initial", "min", "max"}); err != nil {
			return nil, err
		}
		h := DefaultHeuristic()
		var err error
		if h.Initial, err = get("initial", h.Initial); err != nil {
			return nil, err
		}
		if h.Min, err = get("min", h.Min); err != nil {
			return nil, err
		}
		if h.Max, err = get("max", h.Max); err != nil {
			return nil, err
		}
		if err := h.Validate(); err != nil {
			return nil, err
		}
		return h, nil
	}
	return nil, fmt.Errorf("%w: draft length %q", ErrUnknown, name)
}

// Parse parses an uploader specification "name" or
// "name:key=value,key=value" (the form String returns), e.g.
// "u+i:u_th=0.431,k=5,gamma=1". Spaces around names, keys and values are
// ignored; a key may appear once.
func Parse(spec string) (Uploader, error) {
	name, params, err := splitSpec(spec)
	if err != nil {
		return nil, err
	}
	return ByName(name, params)
}

// ParseDraftLength parses a draft-length specification such as "fixed:l=4"
// or "heuristic:initial=4,min=1,max=12".
func ParseDraftLength(spec string) (DraftLength, error) {
	name, params, err := splitSpec(spec)
	if err != nil {
		return nil, err
	}
	return DraftLengthByName(name, params)
}

// maxSpec bounds the length of a specification.
const maxSpec = 1024

func splitSpec(spec string) (string, map[string]float64, error) {
	if len(spec) > maxSpec {
		return "", nil, fmt.Errorf("%w: specification of %d bytes (max %d)", ErrInvalid, len(spec), maxSpec)
	}
	name, rest, hasParams := strings.Cut(spec, ":")
	name = strings.TrimSpace(name)
	if name == "" {
		return "", nil, fmt.Errorf("%w: empty policy name in %q", ErrInvalid, spec)
	}
	params := map[string]float64{}
	if !hasParams {
		return name, params, nil
	}
	for _, kv := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return "", nil, fmt.Errorf("%w: parameter %q in %q (want key=value)", ErrInvalid, kv, spec)
		}
		if _, dup := params[k]; dup {
			return "", nil, fmt.Errorf("%w: parameter %q given twice in %q", ErrInvalid, k, spec)
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return "", nil, fmt.Errorf("%w: parameter %s=%q: not a number", ErrInvalid, k, v)
		}
		params[k] = f
	}
	return name, params, nil
}

func checkParams(name string, params map[string]float64, allowed []string) error {
	for k := range params {
		if !slices.Contains(allowed, k) {
			return fmt.Errorf("%w: parameter %q for %q (allowed: %v)", ErrUnknown, k, name, allowed)
		}
	}
	return nil
}

// intParam converts a parameter that must be a whole number.
func intParam(key string, v float64) (int, error) {
	if v != math.Trunc(v) || math.Abs(v) > maxK {
		return 0, fmt.Errorf("%w: parameter %s = %v (want a whole number ≤ %d)", ErrInvalid, key, v, maxK)
	}
	return int(v), nil
}
