package dataset

import "testing"

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
