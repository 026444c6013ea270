//go:build (linux || darwin) && (amd64 || arm64)

package libllama

import (
	"fmt"
	"runtime"
	"sort"
	"sync"

	"github.com/ebitengine/purego"
)

// bind opens the shared library and resolves every function of funcs.
func bind(l *Lib, path string) error {
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		// The loader's message names the file.
		return fmt.Errorf("%w: %v; %s", ErrLibrary, err, BuildHint)
	}
	syms := l.f.symbols()
	// The version first: a library without it is not llama.cpp's.
	names := make([]string, 0, len(syms))
	for name := range syms {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range append([]string{"llama_version", "ggml_commit"}, names...) {
		if i == 2 {
			// The version is known: a library of another one is refused
			// by it, not by the first symbol it lacks.
			if _, err := checkVersion(l.f.version()); err != nil {
				return fmt.Errorf("%s: %w (build %s)", path, err, l.f.ggmlCommit())
			}
		}
		p, err := purego.Dlsym(h, name)
		if err != nil || p == 0 {
			if name == "llama_version" || name == "ggml_commit" {
				return fmt.Errorf("%w: %s does not export %s: not llama.cpp's libllama; %s", ErrLibrary, path, name, BuildHint)
			}
			return fmt.Errorf("%w: %s (llama.cpp %s) does not export %s: hlm supports %s", ErrVersion, path, l.f.version(), name, SupportedVersions)
		}
		purego.RegisterFunc(syms[name], p)
	}
	if runtime.GOARCH == "amd64" {
		for name, fn := range map[string]*func(*byte) uintptr{
			"llama_model_default_params":   &l.f.rawModelDefaults,
			"llama_context_default_params": &l.f.rawContextDefaults,
		} {
			p, _ := purego.Dlsym(h, name)
			purego.RegisterFunc(fn, p)
		}
	}
	return nil
}

// registerAt makes the func variable fn points to call the C function at
// addr (found at run time, e.g. through a backend's registry).
func registerAt(fn any, addr uintptr) { purego.RegisterFunc(fn, addr) }

// callPtrString calls a C function `void *f(const char *)` found at run time.
func callPtrString(fn uintptr, s string) uintptr {
	var f func(string) uintptr
	purego.RegisterFunc(&f, fn)
	return f(s)
}

var logCB = sync.OnceValue(func() uintptr {
	return purego.NewCallback(func(level int32, text *byte, _ uintptr) {
		logMessage(int(level), cString(text))
	})
})

// logCallback is a C function pointer for llama_log_set.
func logCallback() uintptr { return logCB() }

// abortState is what a context's abort callback asks.
type abortState struct{ fn func() bool }

var aborts struct {
	mu   sync.Mutex
	next uintptr
	m    map[uintptr]*abortState
}

var abortCB = sync.OnceValue(func() uintptr {
	return purego.NewCallback(func(data uintptr) uintptr {
		var fn func() bool
		aborts.mu.Lock()
		if a := aborts.m[data]; a != nil {
			fn = a.fn // SetAbort writes it under the lock
		}
		aborts.mu.Unlock()
		if fn != nil && fn() {
			return 1
		}
		return 0
	})
})

// SetAbort makes llama_decode stop (return code 2) when fn returns true;
// nil removes it. llama.cpp asks between graph nodes on the CPU backend.
func (c *Context) SetAbort(fn func() bool) {
	aborts.mu.Lock()
	defer aborts.mu.Unlock()
	if aborts.m == nil {
		aborts.m = map[uintptr]*abortState{}
	}
	if c.abort == nil {
		aborts.next++
		c.abort = &abortState{}
		aborts.m[aborts.next] = c.abort
		c.m.l.f.setAbortCallback(c.h, abortCB(), aborts.next)
	}
	c.abort.fn = func() bool { return false }
	if fn != nil {
		c.abort.fn = fn
	}
}
