package model

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Spec names a model and a view of it: "PATH" (as is), "PATH@exit=N" (the
// first N layers, then the final norm and the output head: an early-exit draft
// that shares the target's vocabulary) and "PATH@q8" (a copy with its matrices
// quantized to Q8_0). Options combine: "PATH@exit=2@q8" or "PATH@exit=2,q8".
//
// "PATH.gguf@llama.cpp" runs the model on llama.cpp's library instead of
// hlm's engine (model/llamacpp), with llama.cpp's own flag names as options
// (LlamaCppOptions): "m.gguf@llama.cpp@ngl=99@sm=row@ts=3,1@np=8".
//
// Both engines take the KV cache's types as llama.cpp names them:
// "PATH@ctk=f16@ctv=f16" keeps keys and values in half precision,
// "PATH@ctk=q8_0@ctv=q8_0" in Q8_0 blocks.
type Spec struct {
	Path      string
	Exit      int    // 0: all layers
	Quantize  string // "" or "q8" (also "q4" for Q4_0)
	Tokenizer string // explicit tokenizer path, "" to look beside the model
	// CacheTypeK and CacheTypeV (ctk, ctv) are the KV cache's types: "f32",
	// "f16" or "q8_0" on both engines, also "bf16" on llama.cpp's; "" is
	// the engine's default (hlm's f32, llama.cpp's f16).
	CacheTypeK, CacheTypeV string
	// Backend is the engine that runs the model: "" hlm's own (model/llama)
	// or BackendLlamaCpp.
	Backend string
	// LlamaCpp configures the llama.cpp backend (Backend BackendLlamaCpp).
	LlamaCpp LlamaCppOptions
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
		if len(s) == 1 {
			return Spec{}, fmt.Errorf("model spec %q: no path before '@'", s)
		}
		path := s[:len(s)-1]
		if _, err := os.Stat(path); err != nil {
			// "FILE@llama.cpp@": options with a stray '@' at the end, not
			// a file name with '@' in it.
			if sp, perr := ParseSpec(path); perr == nil && sp.Path != path {
				return Spec{}, fmt.Errorf("model spec %q: %s does not exist, and a trailing '@' makes all before it one file name (for names that hold '@'): drop the last '@' to give %s the options", s, path, sp.Path)
			}
		}
		return Spec{Path: path}, nil
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
	var llamaOpts []string // llama.cpp options given (checkLlamaCpp)
	for _, opt := range splitOptions(s[i+1:]) {
		key, val, hasVal := strings.Cut(opt, "=")
		if key == BackendLlamaCpp && sp.Backend == BackendLlamaCpp {
			return Spec{}, fmt.Errorf("model spec %q: %s given twice", s, BackendLlamaCpp)
		}
		if ok, err := sp.setLlamaCpp(key, val, hasVal); ok || err != nil {
			if err != nil {
				return Spec{}, fmt.Errorf("model spec %q: %w", s, err)
			}
			if key != BackendLlamaCpp {
				llamaOpts = append(llamaOpts, key)
			}
			continue
		}
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
			if k := listOptionMidSegment(s[i+1:]); k != "" {
				return Spec{}, fmt.Errorf("model spec %q: unknown option %q: %s= takes the rest of its '@' segment, commas included, so give it a segment of its own (…@%s=3,1@np=8, not …,%s=3,1)", s, opt, k, k, k)
			}
			return Spec{}, fmt.Errorf("model spec %q: unknown option %q (want exit=N, q8, q4, ctk=TYPE, ctv=TYPE, or llama.cpp and its options %s)", s, opt, strings.Join(llamaCppKeys, ", "))
		}
	}
	if err := sp.checkLlamaCpp(llamaOpts); err != nil {
		return Spec{}, fmt.Errorf("model spec %q: %w", s, err)
	}
	return sp, nil
}

// OnOwnEngine is the spec of the same model on hlm's own engine: without
// the llama.cpp backend and its options, KV cache types included (what an
// early exit, a draft's teacher or a bit-identical replica needs).
func (s Spec) OnOwnEngine() Spec {
	if s.Backend != "" {
		s.CacheTypeK, s.CacheTypeV = "", ""
	}
	s.Backend, s.LlamaCpp = "", LlamaCppOptions{}
	return s
}

// String formats the spec back into its canonical text form. (A file name
// with '@' in it round-trips only without options, as "PATH@".)
func (s Spec) String() string {
	out := s.Path
	if strings.Contains(s.Path[strings.LastIndexAny(s.Path, `/\`)+1:], "@") && s.Exit == 0 && s.Quantize == "" && s.Backend == "" && s.CacheTypeK == "" && s.CacheTypeV == "" {
		return out + "@"
	}
	if s.Exit > 0 {
		out += "@exit=" + strconv.Itoa(s.Exit)
	}
	if s.Quantize != "" {
		out += "@" + s.Quantize
	}
	if s.Backend == "" {
		out += s.cacheTypeString()
	}
	return out + s.llamaCppString()
}
