package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/model/llamacpp"
)

func TestVersionLine(t *testing.T) {
	plat := " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	for _, c := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"go install", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.3.1"}},
			"hlm v0.3.1 go1.26.0" + plat},
		{"checkout", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-11-29T07:00:00Z"}, {Key: "vcs.modified", Value: "true"}}},
			"hlm (devel) (commit 0123456789ab, 2026-11-29T07:00:00Z, modified) go1.26.0" + plat},
		{"nothing recorded", nil, "hlm (unknown) " + runtime.Version() + plat},
		{"checkout without VCS stamping", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}},
			"hlm (devel) (commit unknown: built without VCS stamping, e.g. -buildvcs=false) go1.26.0" + plat},
	} {
		if got := versionLine(c.bi); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestVersionCommand: hlm version, --version and -version print one line
// starting "hlm " and exit 0.
func TestVersionCommand(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "hlm ") || strings.Count(out.String(), "\n") != 1 {
			t.Errorf("hlm %s: exit %d, %q (stderr %q)", args[0], code, out.String(), errb.String())
		}
	}
}

// TestGeneratePromptFile: generate -f FILE reads the prompt from a file
// (one final newline dropped, as llama.cpp's -f) and gives what --prompt
// gives; both at once is an error.
func TestGeneratePromptFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "prompt.txt")
	os.WriteFile(f, []byte("Once upon a time\n"), 0o644)
	want, _, err := runHLM(t, "generate", "--prompt", "Once upon a time", "--temperature", "0", "--max-tokens", "12")
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := runHLM(t, "generate", "-f", f, "--temperature", "0", "--max-tokens", "12")
	if err != nil || got != want {
		t.Errorf("-f: %q, %v; --prompt gave %q", got, err, want)
	}
	if _, _, err := runHLM(t, "generate", "-f", f, "--prompt", "x"); err == nil {
		t.Error("-f and --prompt together: no error")
	}
}

// TestBenchCSV: hlm bench -o csv prints a header and one row per test.
func TestBenchCSV(t *testing.T) {
	out, _, err := runHLM(t, "bench", "-o", "csv", "-p", "4", "-n", "4", "-r", "1", "-t", "1", "--no-warmup")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "model_filename,") || !strings.HasPrefix(lines[1], "builtin:stories260K,") {
		t.Errorf("bench -o csv:\n%s", out)
	}
}

// TestVersionLlama: hlm version --llama prints the library hlm would use,
// with its version and devices, after the version line; a library that
// cannot be used is an error naming it, and plain hlm version opens none.
func TestVersionLlama(t *testing.T) {
	keepLlamaLib(t)
	t.Setenv(llamacpp.EnvLibrary, filepath.Join(t.TempDir(), "libllama.so"))
	out, _, err := runHLM(t, "version", "--llama")
	if err == nil || !strings.Contains(err.Error(), "cannot use the llama.cpp library") || !strings.Contains(err.Error(), "$"+llamacpp.EnvLibrary) || strings.Count(out, "\n") != 1 {
		t.Errorf("a missing library: %v, output %q", err, out)
	}
	if out, _, err := runHLM(t, "version"); err != nil || strings.Count(out, "\n") != 1 {
		t.Errorf("hlm version with a missing library: %v, %q", err, out)
	}
	var out2, errb bytes.Buffer
	if code := run(context.Background(), []string{"version", "--llama-lib", "/nope/libllama.so"}, &out2, &errb); code != 0 || !strings.Contains(errb.String(), "without --llama") {
		t.Errorf("hlm version --llama-lib without --llama: exit %d, stderr %q; want a notice", code, errb.String())
	}
	llamacpp.SetLibrary("") // what --llama-lib named
	t.Setenv(llamacpp.EnvLibrary, "")
	if _, found := llamacpp.LibraryPath(); !found {
		t.Skip("no libllama: internal/libllama/build.sh builds one")
	}
	out, _, err = runHLM(t, "version", "--llama")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "hlm ") || !strings.HasPrefix(lines[1], "llama.cpp library: ") ||
		!strings.HasPrefix(lines[2], "  version: 0.") || !strings.Contains(lines[3], "CPU") {
		t.Errorf("hlm version --llama:\n%s", out)
	}
}

// keepLlamaLib restores, after the test, the library --llama-lib named
// before it (the flag sets a process-wide path), and starts the test with
// none named.
func keepLlamaLib(t *testing.T) {
	prev, _ := llamacpp.LibraryFlag()
	llamacpp.SetLibrary("")
	t.Cleanup(func() { llamacpp.SetLibrary(prev) })
}
