package dataset

import (
	"errors"
	"strings"
	"testing"
)

func TestSplitStories(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"a. b\n<|endoftext|>\nc! d<|endoftext|>", 2},
		{"one. two\nthree\n\nfour", 2},
		{"l1. x\nl2? y\nl3", 3},
	} {
		got, err := SplitStories(tc.in, "t")
		if err != nil || len(got) != tc.want {
			t.Errorf("SplitStories(%q) = %d stories, %v; want %d", tc.in, len(got), err, tc.want)
		}
	}
	got, _ := SplitStories("Hello there. More.", "t")
	if got[0].Prompt != "Hello there." {
		t.Errorf("prompt %q", got[0].Prompt)
	}
	if _, err := SplitStories(" \n\n ", "t"); err == nil {
		t.Error("empty text: no error")
	}
}

// TestTinyStoriesJSON: TinyStories' published JSON (an array of objects
// with a "story") is read story by story; another dataset's JSON file is
// an error that says so — it was read as one long story.
func TestTinyStoriesJSON(t *testing.T) {
	got, err := parseTinyStories([]byte(` [{"story":"Tom ran. He fell.","instruction":"x"},{"story":"  "},{"story":"Sue sang! Loud."}]`), "t")
	if err != nil || len(got) != 2 || got[0].Prompt != "Tom ran." || got[1].Text != "Sue sang! Loud." {
		t.Fatalf("%+v, %v", got, err)
	}
	for _, in := range []string{
		`[{"instruction":"Give three tips.","input":"","output":"1. Eat."}]`, // Alpaca
		`{"sentence":"s","label":"true"}`,                                    // CREAK
		`[]`, `[{"story":"  "}]`, `[1]`, `[`,
	} {
		if _, err := parseTinyStories([]byte(in), "t"); err == nil || !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: %v, want a malformed-dataset error", in, err)
		}
	}
	if _, err := parseTinyStories([]byte(`[{"instruction":"a"}]`), "alpaca.json"); err == nil || !strings.Contains(err.Error(), "another dataset") {
		t.Errorf("another dataset's file: %v, want the error to say what it may be", err)
	}
}

// FuzzTinyStories: whatever the bytes, a story list or an error, and every
// story has an ID and a prompt.
func FuzzTinyStories(f *testing.F) {
	for _, s := range []string{"Once. Upon\n\nA time.", "[{\"story\":\"a.\"}]", "{", "[null]", "<|endoftext|>x<|endoftext|>"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ex, err := parseTinyStories(data, "fuzz")
		if err != nil {
			return
		}
		if len(ex) == 0 {
			t.Fatal("no stories and no error")
		}
		for _, e := range ex {
			if e.ID == "" || strings.TrimSpace(e.Prompt) == "" {
				t.Fatalf("unusable example %+q", e)
			}
		}
	})
}
