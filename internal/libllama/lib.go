package libllama

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Sentinel errors, wrapped with details.
var (
	// ErrUnavailable: this platform cannot call libllama (see the package doc).
	ErrUnavailable = errors.New("the llama.cpp backend is not available on this platform")
	// ErrLibrary: the file is missing, is not a shared library, or is not llama.cpp's.
	ErrLibrary = errors.New("cannot use the llama.cpp library")
	// ErrVersion: the library is llama.cpp, but not a version whose structs hlm knows.
	ErrVersion = errors.New("unsupported llama.cpp version")
	// ErrLoad: llama.cpp could not load a model or make a context.
	ErrLoad = errors.New("llama.cpp could not load the model")
	// ErrDecode: llama_decode failed (see DecodeError).
	ErrDecode = errors.New("llama_decode failed")
)

// SupportedVersions names the llama.cpp versions this binding accepts.
const SupportedVersions = "llama.cpp 0.4.x and 0.5.x (llama_version() \"0.4.*\" or \"0.5.*\"; the structs of include/llama.h at 0.5.0, commit de3ff81, which are 0.4.0's too)"

// BuildHint says how to get a library hlm accepts.
const BuildHint = "build one with internal/libllama/build.sh in hlm's repository (or llama.cpp 0.5.x or 0.4.x with -DBUILD_SHARED_LIBS=ON -DLLAMA_CURL=OFF) and pass its libllama.so with --llama-lib or HLM_LLAMA_LIB"

// DecodeError is a llama_decode return code other than 0.
type DecodeError struct {
	Code int32
	Log  string // llama.cpp's error lines logged during the call
}

func (e *DecodeError) Error() string {
	var what string
	switch {
	case e.Code == 1:
		what = "no KV cache slot for the batch (context full)"
	case e.Code == 2:
		what = "aborted"
	case e.Code == -1:
		what = "invalid input batch"
	case e.Code < -1:
		what = "fatal error"
	default:
		what = "unexpected return code"
	}
	s := fmt.Sprintf("%v: code %d: %s", ErrDecode, e.Code, what)
	if e.Log != "" {
		s += " (llama.cpp: " + e.Log + ")"
	}
	return s
}

// Unwrap makes errors.Is(err, ErrDecode) hold.
func (e *DecodeError) Unwrap() error { return ErrDecode }

// Lib is an opened libllama. It is safe for concurrent use; the models and
// contexts it makes are not (their users serialise them).
type Lib struct {
	path    string
	version string
	commit  string
	f       funcs

	rpcMu    sync.Mutex
	rpcSet   map[string]bool
	rpcMajor uint8 // the RPC protocol's major version (checkVersion)

	tp cpuThreadpool // resolved on first use
}

// Path is the file the library was opened from.
func (l *Lib) Path() string { return l.path }

// Version is llama_version(), e.g. "0.5.0-dev".
func (l *Lib) Version() string { return l.version }

// Commit is ggml_commit(): the source commit the library was built from.
func (l *Lib) Commit() string { return l.commit }

// SystemInfo is llama_print_system_info(): the CPU features and backends
// the library was built with.
func (l *Lib) SystemInfo() string { return strings.TrimSpace(l.f.printSystemInfo()) }

// OpenMP reports whether the CPU backend was built with OpenMP
// (llama_print_system_info's "OPENMP = 1"): its graphs then run on
// OpenMP's worker teams, one per OS thread that starts them, rather than
// on the context's ggml threadpool.
func (l *Lib) OpenMP() bool { return strings.Contains(l.SystemInfo(), "OPENMP = 1") }

// SupportsGPUOffload reports whether the library has a GPU (or RPC) backend.
func (l *Lib) SupportsGPUOffload() bool { return l.f.supportsGPUOffload() }

// MaxDevices is llama_max_devices(): the length of a tensor split.
func (l *Lib) MaxDevices() int { return int(l.f.maxDevices()) }

// Devices lists the backend devices llama.cpp sees ("CPU: AMD EPYC", "CUDA0:
// NVIDIA H100 …", "RPC0: 10.0.0.2:50052").
func (l *Lib) Devices() []string { return l.devicesOf(func(int32) bool { return true }) }

// Accelerators are the devices a model's layers can be offloaded to (GPUs,
// integrated GPUs, RPC servers' devices), named as Devices names them;
// none on a CPU-only library.
func (l *Lib) Accelerators() []string {
	return l.devicesOf(func(typ int32) bool { return typ == devGPU || typ == devIGPU })
}

// devicesOf names the devices whose type keep accepts.
func (l *Lib) devicesOf(keep func(typ int32) bool) []string {
	var out []string
	for i := range l.f.backendDevCount() {
		if d := l.f.backendDevGet(i); keep(l.f.backendDevType(d)) {
			out = append(out, l.f.backendDevName(d)+": "+l.f.backendDevDescription(d))
		}
	}
	return out
}

// LibraryFile is the library's file name on this system: a directory
// given as the library is searched for it.
var LibraryFile = libraryFile()

func libraryFile() string {
	if runtime.GOOS == "darwin" {
		return "libllama.dylib"
	}
	return "libllama.so"
}

// fileExists reports whether path is a file (not a directory).
func fileExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir()
}

// BuiltPath is the library internal/libllama/build.sh built last
// ($HLM_PEERS/libllama/current/libllama.so, $HLM_PEERS defaulting to
// ~/.cache/hlm-peers), or "" when there is none.
func BuiltPath() string {
	peers := os.Getenv("HLM_PEERS")
	if peers == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		peers = filepath.Join(home, ".cache", "hlm-peers")
	}
	p := filepath.Join(peers, "libllama", "current", LibraryFile)
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

var (
	openMu sync.Mutex
	opened = map[string]*Lib{}
)

// Open loads the library at path (a file name without a directory is
// searched as dlopen searches), checks that it is a llama.cpp version whose
// structs this package knows, and initialises its backends. A library is
// opened once per process; later calls with the same path return it.
func Open(path string) (*Lib, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: no library given; %s", ErrLibrary, BuildHint)
	}
	if strings.ContainsRune(path, os.PathSeparator) {
		fi, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("%w: %v; %s", ErrLibrary, err, BuildHint)
		}
		if fi.IsDir() { // the directory build.sh prints, or one holding the library
			if path = filepath.Join(path, LibraryFile); !fileExists(path) {
				return nil, fmt.Errorf("%w: %s is a directory without %s; give the library's file; %s", ErrLibrary, filepath.Dir(path), LibraryFile, BuildHint)
			}
		}
	}
	openMu.Lock()
	defer openMu.Unlock()
	if l := opened[path]; l != nil {
		return l, nil
	}
	quietAborts()
	l := &Lib{path: path, rpcSet: map[string]bool{}}
	if err := bind(l, path); err != nil {
		return nil, err
	}
	l.version = l.f.version()
	l.commit = l.f.ggmlCommit()
	rpcMajor, err := checkVersion(l.version)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (build %s)", path, err, l.commit)
	}
	l.rpcMajor = rpcMajor
	if err := l.checkLayout(); err != nil {
		return nil, fmt.Errorf("%s (llama.cpp %s, build %s): %w", path, l.version, l.commit, err)
	}
	installLog(l)
	l.f.backendInit()
	opened[path] = l
	return l, nil
}

// quietAborts sets GGML_NO_BACKTRACE (unless it or HLM_LLAMA_LOG=1 is
// set): where llama.cpp still aborts (a ggml-rpc-server lost in the middle
// of a run, a failed assertion), it then prints its one-line reason
// instead of attaching gdb and dumping every thread's stack. os.Setenv
// reaches the C library's environment (purego's runtime sets it there).
func quietAborts() {
	if os.Getenv("GGML_NO_BACKTRACE") == "" && os.Getenv("HLM_LLAMA_LOG") != "1" {
		os.Setenv("GGML_NO_BACKTRACE", "1")
	}
}

// versions are the llama.cpp versions (major.minor, any patch; oldest
// first) the binding accepts, each with the major version of llama.cpp's
// RPC protocol it speaks (RPC_PROTO_MAJOR_VERSION in
// ggml/include/ggml-rpc.h).
var versions = []struct {
	minor    string
	rpcMajor uint8
}{{"0.4", 6}, {"0.5", 7}}

// checkVersion accepts the versions above and returns the RPC protocol's
// major version of v.
func checkVersion(v string) (rpcMajor uint8, err error) {
	base, _, _ := strings.Cut(v, "-")
	if mm, patch, ok := cutLast(base, "."); ok {
		if _, err := strconv.Atoi(patch); err == nil {
			for _, s := range versions {
				if s.minor == mm {
					return s.rpcMajor, nil
				}
			}
		}
	}
	return 0, fmt.Errorf("%w: the library says %q; hlm supports %s", ErrVersion, v, SupportedVersions)
}

// cutLast is strings.Cut at the last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

// AddRPCServers makes llama.cpp's RPC backend offer the devices of the
// ggml-rpc-server at each endpoint ("host:port") to the models loaded
// afterwards (llama.cpp's --rpc). Each endpoint is added once per process.
func (l *Lib) AddRPCServers(endpoints []string) error {
	if len(endpoints) == 0 {
		return nil
	}
	l.rpcMu.Lock()
	defer l.rpcMu.Unlock()
	all := slices.Collect(maps.Keys(l.rpcSet))
	slices.Sort(all)
	if err := sameServer(append(all, endpoints...), net.DefaultResolver.LookupHost); err != nil {
		return fmt.Errorf("%w: %v", ErrLoad, err)
	}
	l.f.backendLoadAll()
	reg := l.f.backendRegByName("RPC")
	if reg == 0 {
		return fmt.Errorf("%w: %s has no RPC backend: build llama.cpp with -DGGML_RPC=ON (internal/libllama/build.sh does)", ErrLibrary, l.path)
	}
	add := l.f.backendRegGetProcAddress(reg, "ggml_backend_rpc_add_server")
	if add == 0 {
		return fmt.Errorf("%w: %s: the RPC backend lacks ggml_backend_rpc_add_server", ErrLibrary, l.path)
	}
	// llama.cpp's RPC client writes to its sockets without MSG_NOSIGNAL,
	// partly from threads of its own: a server that goes away would end
	// the process with SIGPIPE before llama.cpp could report it.
	signal.Ignore(syscall.SIGPIPE)
	for _, ep := range endpoints {
		if l.rpcSet[ep] {
			continue
		}
		if err := probeRPC(ep, l.rpcMajor); err != nil {
			return fmt.Errorf("%w: %v", ErrLoad, err)
		}
		mark := logMark()
		r := callPtrString(add, ep)
		if r == 0 {
			return fmt.Errorf("%w: RPC server %s: %s", ErrLoad, ep, logErrorsSince(mark))
		}
		l.f.backendRegister(r)
		l.rpcSet[ep] = true
	}
	return nil
}

// ModelDefaults is llama_model_default_params().
func (l *Lib) ModelDefaults() ModelParams { return l.f.modelDefaultParams() }

// ContextDefaults is llama_context_default_params().
func (l *Lib) ContextDefaults() ContextParams { return l.f.contextDefaultParams() }
