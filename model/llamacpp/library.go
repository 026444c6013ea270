package llamacpp

import (
	"fmt"
	"os"
	"sync"

	"github.com/hlmproject/hlm/internal/libllama"
)

// EnvLibrary is the environment variable naming libllama.
const EnvLibrary = "HLM_LLAMA_LIB"

// Notify, when set, is told what a user should know about a model as it
// opens: options that have no effect on this library (GPU options without
// a GPU). hlm's commands print it; nil keeps the package quiet.
var Notify func(msg string)

func notify(format string, args ...any) {
	if Notify != nil {
		Notify(fmt.Sprintf(format, args...))
	}
}

var libFlag struct {
	mu   sync.Mutex
	path string
}

// SetLibrary names the libllama to use (hlm's --llama-lib flag), ahead of
// $HLM_LLAMA_LIB.
func SetLibrary(path string) {
	libFlag.mu.Lock()
	defer libFlag.mu.Unlock()
	libFlag.path = path
}

// LibraryFlag is the path SetLibrary named, if any.
func LibraryFlag() (path string, named bool) {
	libFlag.mu.Lock()
	defer libFlag.mu.Unlock()
	return libFlag.path, libFlag.path != ""
}

// LibraryPath is the libllama the backend loads: SetLibrary's path, else
// $HLM_LLAMA_LIB, else the one internal/libllama/build.sh built last
// ($HLM_PEERS/libllama/current/libllama.so, $HLM_PEERS defaulting to
// ~/.cache/hlm-peers). found is false when none is named or built.
func LibraryPath() (path string, found bool) {
	path, from := LibrarySource()
	return path, from != ""
}

// LibrarySource is LibraryPath with where the path came from ("--llama-lib",
// "$HLM_LLAMA_LIB", internal/libllama/build.sh's build; "" when none), for
// the errors of a library that does not open and for hlm version --llama.
func LibrarySource() (path, from string) {
	libFlag.mu.Lock()
	p := libFlag.path
	libFlag.mu.Unlock()
	if p != "" {
		return p, "--llama-lib"
	}
	if p := os.Getenv(EnvLibrary); p != "" {
		return p, "$" + EnvLibrary
	}
	if p := libllama.BuiltPath(); p != "" {
		return p, "internal/libllama/build.sh's build"
	}
	return "", ""
}

// OpenLibrary opens the libllama LibraryPath names.
func OpenLibrary() (*libllama.Lib, error) {
	p, from := LibrarySource()
	if from == "" {
		return nil, fmt.Errorf("%w: no libllama named (--llama-lib, $%s) or built; %s", libllama.ErrLibrary, EnvLibrary, libllama.BuildHint)
	}
	lib, err := libllama.Open(p)
	if err != nil {
		return nil, fmt.Errorf("%s names %s: %w", from, p, err)
	}
	return lib, nil
}
