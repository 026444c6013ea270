package builtin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/model/llama"
)

// TestBuiltins: every built-in model opens from its materialized file,
// with a tokenizer, and the shipped drafts are found by their teachers'
// fingerprints (the stories260K draft for the built-in stories260K).
func TestBuiltins(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	for _, name := range builtin.Names() {
		m, err := llama.OpenSpec(builtin.Prefix+name, "")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if m.Tokenizer() == nil || m.Name() != builtin.Prefix+name {
			t.Errorf("%s: tokenizer %v, name %q", name, m.Tokenizer() != nil, m.Name())
		}
	}
	llm, err := llama.OpenSpec(builtin.DefaultLLM, "")
	if err != nil {
		t.Fatal(err)
	}
	spec, ok := builtin.DraftFor(llm.Fingerprint())
	if !ok || spec != builtin.Prefix+"stories260K-draft" {
		t.Errorf("DraftFor(stories260K) = %q, %v", spec, ok)
	}
	if spec, ok := builtin.DraftFor("0123"); ok {
		t.Errorf("DraftFor(unknown) = %q", spec)
	}
	p, err := builtin.Path("stories260K")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(p), "tok512.bin")); err != nil {
		t.Errorf("the tokenizer is not beside the model: %v", err)
	}
	if _, err := builtin.Path("nope"); err == nil || !strings.Contains(err.Error(), "stories260K") {
		t.Errorf("unknown built-in: err = %v, want one listing them", err)
	}
}

// TestShippedDraftOfTinyStories: the TinyStories-656K draft is found for
// the real TinyStories-656K (when the shared models are here).
func TestShippedDraftOfTinyStories(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "models", "tinystories-656k")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared model not present (%v)", err)
	}
	m, err := llama.OpenSpec(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if spec, ok := builtin.DraftFor(m.Fingerprint()); !ok || spec != builtin.Prefix+"tinystories656k-draft" {
		t.Errorf("DraftFor(TinyStories-656K) = %q, %v", spec, ok)
	}
}

// TestPathAfterCacheRemoved: a built-in model's files removed while the
// process runs (a cleaned cache, or a test's temporary HOME gone) are
// written again instead of the old path being handed out.
func TestPathAfterCacheRemoved(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	p, err := builtin.Path("stories260K")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Dir(p)); err != nil {
		t.Fatal(err)
	}
	q, err := builtin.Path("stories260K")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{q, filepath.Join(filepath.Dir(q), "tok512.bin")} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("after the cache was removed: %v", err)
		}
	}
}
