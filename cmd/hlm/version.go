package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/hlmproject/hlm/internal/libllama"
	"github.com/hlmproject/hlm/model/llamacpp"
)

func init() {
	register("version", "print hlm's version, the commit it was built from and the Go release", runVersion)
}

func runVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", "", `
Print the module version hlm was built as (the tag or pseudo-version that go
install records; "(devel)" for a build in a checkout), the commit and its
time when the build knows them, and the Go release and platform. 'hlm
--version' does the same.

--llama also opens the llama.cpp library that model specs ending in
@llama.cpp would run on (--llama-lib, else $HLM_LLAMA_LIB, else the one
internal/libllama/build.sh built) and prints where it came from, its
version and build, and its devices (GPUs, RPC servers' devices): the check
that a deployment finds the library it should. Without a usable library it
says why and exits with 1.`, stdout)
	llama := fs.Bool("llama", false, "also open the llama.cpp library hlm would use and print its path, version and devices")
	addLlamaLibFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	bi, _ := debug.ReadBuildInfo()
	if _, err := io.WriteString(stdout, versionLine(bi)); err != nil || !*llama {
		return err
	}
	lib, err := llamacpp.OpenLibrary()
	if err != nil {
		return err
	}
	_, from := llamacpp.LibrarySource()
	_, err = io.WriteString(stdout, llamaLines(lib.Path(), from, lib.Version(), lib.Commit(), lib.Devices()))
	return err
}

// llamaLines is what hlm version --llama prints about an opened library.
func llamaLines(path, from, version, commit string, devices []string) string {
	return fmt.Sprintf("llama.cpp library: %s (from %s)\n  version: %s (build %s); hlm accepts %s\n  devices: %s\n",
		path, from, version, commit, libllama.SupportedVersions, strings.Join(devices, "; "))
}

// versionLine is `hlm version`'s output for a build's information (nil:
// none recorded): "hlm VERSION (commit REV, TIME[, modified]) GO OS/ARCH".
func versionLine(bi *debug.BuildInfo) string {
	version, goVersion := "(unknown)", runtime.Version()
	var rev, when string
	modified := false
	if bi != nil {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			goVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	out := "hlm " + version
	if rev != "" {
		out += " (commit " + rev[:min(12, len(rev))]
		if when != "" {
			out += ", " + when
		}
		if modified {
			out += ", modified"
		}
		out += ")"
	} else if version == "(devel)" {
		out += " (commit unknown: built without VCS stamping, e.g. -buildvcs=false)"
	}
	return fmt.Sprintf("%s %s %s/%s\n", out, goVersion, runtime.GOOS, runtime.GOARCH)
}
