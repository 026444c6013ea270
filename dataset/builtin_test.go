package dataset

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// TestLoadBuiltin: the stories built into hlm load without the shared
// directory, each a prompt and a continuation, none of them a story of
// the shared TinyStories sample (they are hlm's own text).
func TestLoadBuiltin(t *testing.T) {
	ex, err := LoadBuiltin("stories")
	if err != nil {
		t.Fatal(err)
	}
	if len(ex) != 24 || ex[0].ID != "builtin:stories#0" ||
		ex[0].Prompt != "Once upon a time, there was a little boy named Sam who loved red kites." {
		t.Errorf("%d examples, first %+q", len(ex), ex[0])
	}
	for _, e := range ex {
		if strings.TrimSpace(e.Prompt) == "" || len(e.Text) <= len(e.Prompt) {
			t.Errorf("%s: prompt %q, text of %d bytes: want a prompt and a continuation", e.ID, e.Prompt, len(e.Text))
		}
	}
	path := Default("tinystories", shared)
	if _, err := os.Stat(path); err != nil {
		t.Logf("shared sample not present (%v): not compared", err)
		return
	}
	ts, err := Load("tinystories", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range ex {
		for _, b := range ts {
			if a.Prompt == b.Prompt {
				t.Errorf("%s's prompt is TinyStories' %s", a.ID, b.ID)
			}
		}
	}
}

func TestHasBuiltin(t *testing.T) {
	for _, c := range []struct {
		name string
		want bool
	}{{"stories", true}, {"tinystories", false}, {"alpaca", false}, {"prompts", false}, {"nonesuch", false}} {
		if got := HasBuiltin(c.name); got != c.want {
			t.Errorf("HasBuiltin(%q) = %v, want %v", c.name, got, c.want)
		}
		if _, err := LoadBuiltin(c.name); (err == nil) != c.want || err != nil && !errors.Is(err, ErrUnknownDataset) {
			t.Errorf("LoadBuiltin(%q): %v", c.name, err)
		}
	}
	if Fallback("tinystories") != "stories" || Fallback("alpaca") != "" {
		t.Errorf("fallbacks: tinystories → %q, alpaca → %q", Fallback("tinystories"), Fallback("alpaca"))
	}
}
