package main

import (
	"context"
	"strings"
	"testing"
)

// TestSuggestions: a mistyped command or flag gets the nearest name, a
// retired flag the reason it is gone.
func TestSuggestions(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"generat"}, `did you mean "generate"?`},
		{[]string{"sim", "--promt", "x"}, "did you mean --prompt?"},
		{[]string{"generate", "--max-token", "3"}, "did you mean --max-tokens?"},
		{[]string{"tokenize", "--idz", "x"}, "did you mean --ids?"},
		{[]string{"convert", "--packed", "--out", "x.gguf"}, "--packed: it was removed on 2026-12-02"},
		{[]string{"convert", "-packed=true", "--out", "x.gguf"}, "--packed: it was removed on 2026-12-02"},
	} {
		var out, errb strings.Builder
		if code := run(context.Background(), c.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("hlm %s: exit %d, %q; want %q", strings.Join(c.args, " "), code, errb.String(), c.want)
		}
	}
}
