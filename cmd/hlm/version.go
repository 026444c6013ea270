package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

func init() {
	register("version", "print hlm's version, the commit it was built from and the Go release", runVersion)
}

func runVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", "", `
Print the module version hlm was built as (the tag or pseudo-version that go
install records; "(devel)" for a build in a checkout), the commit and its
time when the build knows them, and the Go release and platform. 'hlm
--version' does the same.`, stdout)
	if err := parse(fs, args); err != nil {
		return err
	}
	bi, _ := debug.ReadBuildInfo()
	_, err := io.WriteString(stdout, versionLine(bi))
	return err
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
