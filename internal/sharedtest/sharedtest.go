// Package sharedtest finds the read-only material that tests use beside the
// repository (../shared: models, data, goldens; see its README), and skips a
// test with a clear message when it is absent.
package sharedtest

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir is the shared directory: $HLM_SHARED, or ../shared next to the
// repository root (the directory holding go.mod), found from the test's
// working directory (its package directory).
func Dir() string {
	if d := os.Getenv("HLM_SHARED"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		return filepath.Join("..", "shared")
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return filepath.Join("..", "shared")
		}
		dir = parent
	}
}

// Path is rel under Dir; it skips the test when the file is not there.
func Path(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(Dir(), rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared material %s not present (%v); skipping", rel, err)
	}
	return p
}
