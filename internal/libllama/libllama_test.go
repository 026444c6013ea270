package libllama

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// testLib opens the library named by HLM_LLAMA_LIB or built by build.sh,
// or skips.
func testLib(t testing.TB) *Lib {
	t.Helper()
	p := os.Getenv("HLM_LLAMA_LIB")
	if p == "" {
		p = BuiltPath()
	}
	if p == "" {
		t.Skip("no libllama: run internal/libllama/build.sh (about 4 minutes on 2 cores) or set HLM_LLAMA_LIB")
	}
	l, err := Open(p)
	if err != nil {
		t.Fatalf("Open(%s): %v", p, err)
	}
	return l
}

// TestLayout pins the Go structs to the offsets of include/llama.h at
// llama.cpp 0.5.0 (printed by a C program with offsetof against that
// header; sizes 80, 160, 56).
func TestLayout(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the layouts are LP64's")
	}
	for _, tc := range []struct {
		v    any
		size uintptr
		offs map[string]uintptr
	}{
		{ModelParams{}, modelParamsSize, map[string]uintptr{
			"Devices": 0, "TensorBuftOverrides": 8, "NGPULayers": 16, "SplitMode": 20, "LoadMode": 24, "LazyMode": 28,
			"MainGPU": 32, "TensorSplit": 40, "ProgressCallback": 48, "ProgressUserData": 56, "KVOverrides": 64,
			"VocabOnly": 72, "CheckTensors": 73, "UseExtraBufts": 74, "NoHost": 75, "NoAlloc": 76, "LoadMTP": 77}},
		{ContextParams{}, contextParamsSize, map[string]uintptr{
			"NCtx": 0, "NBatch": 4, "NUBatch": 8, "NSeqMax": 12, "NRSSeq": 16, "NOutputsMax": 20, "NOutputsMaxPerSeq": 24,
			"NThreads": 28, "NThreadsBatch": 32, "CtxType": 36, "RopeScalingType": 40, "PoolingType": 44, "AttentionType": 48,
			"FlashAttnType": 52, "RopeFreqBase": 56, "RopeFreqScale": 60, "YarnExtFactor": 64, "YarnAttnFactor": 68,
			"YarnBetaFast": 72, "YarnBetaSlow": 76, "YarnOrigCtx": 80, "DefragThold": 84, "CbEval": 88, "CbEvalUserData": 96,
			"TypeK": 104, "TypeV": 108, "AbortCallback": 112, "AbortCallbackData": 120, "Embeddings": 128, "OffloadKQV": 129,
			"NoPerf": 130, "OpOffload": 131, "SWAFull": 132, "KVUnified": 133, "Samplers": 136, "NSamplers": 144, "CtxOther": 152}},
		{Batch{}, batchSize, map[string]uintptr{
			"NTokens": 0, "Token": 8, "Embd": 16, "Pos": 24, "NSeqID": 32, "SeqID": 40, "Logits": 48}},
	} {
		ty := reflect.TypeOf(tc.v)
		if ty.Size() != tc.size {
			t.Errorf("%s is %d bytes, llama.h's %d", ty.Name(), ty.Size(), tc.size)
		}
		named := 0
		for i := range ty.NumField() {
			f := ty.Field(i)
			if f.Name == "_" {
				continue
			}
			named++
			want, ok := tc.offs[f.Name]
			if !ok {
				t.Errorf("%s.%s is not in llama.h's table", ty.Name(), f.Name)
			} else if f.Offset != want {
				t.Errorf("%s.%s at offset %d, llama.h's at %d", ty.Name(), f.Name, f.Offset, want)
			}
		}
		if named != len(tc.offs) {
			t.Errorf("%s has %d fields, llama.h's %d", ty.Name(), named, len(tc.offs))
		}
	}
}

func TestCheckVersion(t *testing.T) {
	for _, tc := range []struct {
		v   string
		rpc uint8 // the RPC protocol's major version; 0: refused
	}{
		{"0.5.0", 7}, {"0.5.0-dev", 7}, {"0.5.12", 7}, {"0.4.0", 6}, {"0.4.9-dev", 6},
		{"0.3.9", 0}, {"0.6.0", 0}, {"1.5.0", 0}, {"0.5", 0}, {"0.5.x", 0}, {"", 0}, {"b6000", 0}, {"0.0.5.0", 0},
	} {
		rpc, err := checkVersion(tc.v)
		if (err == nil) != (tc.rpc != 0) || rpc != tc.rpc {
			t.Errorf("checkVersion(%q) = %d, %v, want RPC protocol %d (0: refused)", tc.v, rpc, err, tc.rpc)
		}
		if err != nil && (!errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), "0.5.x")) {
			t.Errorf("checkVersion(%q) = %v: want ErrVersion naming the supported range", tc.v, err)
		}
	}
}

// FuzzCheckVersion: any string a library's llama_version() returns is
// accepted only as a supported major.minor with a numeric patch, with
// that version's RPC protocol, and refused otherwise with ErrVersion.
func FuzzCheckVersion(f *testing.F) {
	for _, s := range []string{"0.5.0", "0.4.0-dev", "0.5", "0.6.1", "", "0.5.-1", "0..5.0", "b6000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		rpc, err := checkVersion(v)
		if err != nil {
			if rpc != 0 || !errors.Is(err, ErrVersion) {
				t.Fatalf("checkVersion(%q) = %d, %v", v, rpc, err)
			}
			return
		}
		base, _, _ := strings.Cut(v, "-")
		for _, s := range versions {
			if mm, _, _ := cutLast(base, "."); mm == s.minor {
				if rpc != s.rpcMajor {
					t.Fatalf("checkVersion(%q) = %d, want %d", v, rpc, s.rpcMajor)
				}
				return
			}
		}
		t.Fatalf("checkVersion(%q) accepted a version hlm does not support (RPC %d)", v, rpc)
	})
}

// TestLayoutCheck feeds the layout check the bytes of a library whose
// struct grew, shrank or changed a default: each is refused.
func TestLayoutCheck(t *testing.T) {
	good := func(out *byte) uintptr {
		b := unsafe.Slice(out, contextParamsSize)
		for i := range b {
			b[i] = 0
		}
		for _, f := range contextDefaults {
			for k := range f.size {
				b[f.off+k] = byte(f.want >> (8 * k))
			}
		}
		return 0
	}
	if b, err := defaultsBytes("ctx", good, contextParamsSize, nil); err != nil {
		t.Fatalf("the pinned defaults: %v", err)
	} else if err := checkFields("ctx", b, contextDefaults); err != nil {
		t.Fatalf("the pinned defaults: %v", err)
	}
	for name, raw := range map[string]func(*byte) uintptr{
		"grown": func(out *byte) uintptr {
			good(out)
			unsafe.Slice(out, contextParamsSize+8)[contextParamsSize+3] = 1
			return 0
		},
		"shrunk": func(out *byte) uintptr {
			good(out)
			b := unsafe.Slice(out, contextParamsSize)
			for i := contextParamsSize - 16; i < contextParamsSize; i++ {
				b[i] = canary
			}
			return 0
		},
		"moved default": func(out *byte) uintptr {
			good(out)
			unsafe.Slice(out, contextParamsSize)[12] = 4 // n_seq_max
			return 0
		},
	} {
		b, err := defaultsBytes("ctx", raw, contextParamsSize, nil)
		if err == nil {
			err = checkFields("ctx", b, contextDefaults)
		}
		if !errors.Is(err, ErrVersion) {
			t.Errorf("%s: %v, want ErrVersion", name, err)
		}
	}
}

// TestOpenBadLibrary: a missing file, a file that is no library and a
// library that is not llama.cpp's are errors, not crashes.
func TestOpenBadLibrary(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("uses linux paths")
	}
	dir := t.TempDir()
	text := filepath.Join(dir, "libllama.so")
	os.WriteFile(text, []byte("not an ELF file\n"), 0o644)
	libm := ""
	for _, p := range []string{"/lib/x86_64-linux-gnu/libm.so.6", "/lib/aarch64-linux-gnu/libm.so.6", "/usr/lib/libm.so.6", "/lib64/libm.so.6"} {
		if _, err := os.Stat(p); err == nil {
			libm = p
			break
		}
	}
	cases := []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "nothing.so"), "no such file"},
		{"empty", "", "no library given"},
		{"not a library", text, "build one with"},
		// A directory is searched for the library: this one holds the
		// text file above under the library's name.
		{"directory", dir, filepath.Join(dir, LibraryFile)},
		{"directory without it", t.TempDir(), "is a directory without " + LibraryFile},
	}
	if libm != "" {
		cases = append(cases, struct{ name, path, want string }{"libm", libm, "does not export llama_version"})
	}
	for _, tc := range cases {
		_, err := Open(tc.path)
		if !errors.Is(err, ErrLibrary) && !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: Open = %v, want ErrLibrary", tc.name, err)
			continue
		}
		if errors.Is(err, ErrLibrary) && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Open = %v, want it to say %q", tc.name, err, tc.want)
		}
	}
}

func TestOpen(t *testing.T) {
	l := testLib(t)
	if _, err := checkVersion(l.Version()); err != nil {
		t.Fatal(err)
	}
	if l.Commit() == "" || l.SystemInfo() == "" {
		t.Errorf("commit %q, system info %q", l.Commit(), l.SystemInfo())
	}
	if err := l.checkLayout(); err != nil {
		t.Errorf("layout of the library: %v", err)
	}
	if d := l.Devices(); len(d) == 0 {
		t.Errorf("no devices")
	} else {
		t.Logf("llama.cpp %s (%s), devices %q", l.Version(), l.Commit(), d)
	}
	if again, err := Open(l.Path()); err != nil || again != l {
		t.Errorf("second Open = %p, %v; want the same library", again, err)
	}
}

// TestLoadErrors: files llama.cpp cannot load give ErrLoad with its reason.
func TestLoadErrors(t *testing.T) {
	l := testLib(t)
	dir := t.TempDir()
	trunc := filepath.Join(dir, "trunc.gguf")
	os.WriteFile(trunc, []byte("GGUF\x03\x00\x00\x00\x01"), 0o644)
	for _, p := range []string{filepath.Join(dir, "missing.gguf"), trunc} {
		_, err := l.LoadModel(p, l.ModelDefaults(), nil, nil)
		if !errors.Is(err, ErrLoad) {
			t.Errorf("LoadModel(%s) = %v, want ErrLoad", p, err)
		} else {
			t.Logf("%v", err)
		}
	}
}
