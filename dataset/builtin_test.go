package dataset

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/hlmproject/hlm"
)

// TestLoadBuiltin: the TinyStories sample built into hlm loads without the
// shared directory, with the same stories as the shared validation sample
// (when it is there), and its bytes are the ones data/tinystories/README.md
// gives the checksum of.
func TestLoadBuiltin(t *testing.T) {
	ex, err := LoadBuiltin("tinystories")
	if err != nil {
		t.Fatal(err)
	}
	if len(ex) != 19 || ex[0].ID != "builtin:tinystories#0" ||
		ex[0].Prompt != "once upon a time there was a little girl who wanted to explore the world." {
		t.Errorf("%d examples, first %+q", len(ex), ex[0])
	}
	for _, e := range ex {
		if strings.TrimSpace(e.Prompt) == "" || len(e.Text) <= len(e.Prompt) {
			t.Errorf("%s: prompt %q, text of %d bytes: want a prompt and a continuation", e.ID, e.Prompt, len(e.Text))
		}
	}
	b, err := hlm.Files.ReadFile("data/tinystories/TinyStories-valid-sample.txt")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	readme, err := os.ReadFile("../data/tinystories/README.md")
	if err != nil {
		t.Fatal(err)
	}
	if h := hex.EncodeToString(sum[:]); !strings.Contains(string(readme), h+"  TinyStories-valid-sample.txt") {
		t.Errorf("data/tinystories/README.md does not give the embedded file's sha256 %s", h)
	}
	path := Default("tinystories", shared)
	if _, err := os.Stat(path); err != nil {
		t.Logf("shared sample not present (%v): not compared", err)
		return
	}
	want, err := Load("tinystories", path)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != len(ex) {
		t.Fatalf("%d built-in stories, %d in %s", len(ex), len(want), path)
	}
	for i := range ex {
		if ex[i].Prompt != want[i].Prompt || ex[i].Text != want[i].Text {
			t.Errorf("story %d differs from %s's", i, path)
		}
	}
}

func TestHasBuiltin(t *testing.T) {
	for _, c := range []struct {
		name string
		want bool
	}{{"tinystories", true}, {"alpaca", false}, {"prompts", false}, {"nonesuch", false}} {
		if got := HasBuiltin(c.name); got != c.want {
			t.Errorf("HasBuiltin(%q) = %v, want %v", c.name, got, c.want)
		}
		if _, err := LoadBuiltin(c.name); (err == nil) != c.want || err != nil && !errors.Is(err, ErrUnknownDataset) {
			t.Errorf("LoadBuiltin(%q): %v", c.name, err)
		}
	}
}
