package main

import (
	"context"
	"strings"
	"testing"
)

func TestClosest(t *testing.T) {
	cands := []string{"prompt", "max-tokens", "method", "model", "t", "threads", "temperature"}
	for _, c := range []struct{ in, want string }{
		{"promt", "prompt"}, {"max-token", "max-tokens"}, {"metod", "method"}, {"temp", "temperature"},
		{"thread", "threads"}, {"zzzzzz", ""}, {"x", ""}, {"", ""}, {"prompts", "prompt"},
	} {
		if got := closest(c.in, cands); got != c.want {
			t.Errorf("closest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"flaw", "lawn", 2}, {"same", "same", 0}} {
		if got := editDistance(c.a, c.b); got != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}

// TestSuggestions: a mistyped command or flag gets the nearest name.
func TestSuggestions(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"generat"}, `did you mean "generate"?`},
		{[]string{"sim", "--promt", "x"}, "did you mean --prompt?"},
		{[]string{"generate", "--max-token", "3"}, "did you mean --max-tokens?"},
		{[]string{"tokenize", "--idz", "x"}, "did you mean --ids?"},
	} {
		var out, errb strings.Builder
		if code := run(context.Background(), c.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("hlm %s: exit %d, %q; want %q", strings.Join(c.args, " "), code, errb.String(), c.want)
		}
	}
}
