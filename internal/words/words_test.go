package words

import "testing"

func TestWords(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Plural(0, "session"), "0 sessions"},
		{Plural(1, "session"), "1 session"},
		{Plural(2, "upload"), "2 uploads"},
		{Times(1), "once"},
		{Times(2), "twice"},
		{Times(3), "3 times"},
		{Bytes(0), "0 B"},
		{Bytes(1023), "1023 B"},
		{Bytes(1536), "1.50 KiB"},
		{Bytes(137 << 20), "137 MiB"},
		{Bytes(45 << 20), "45.0 MiB"},
		{Bytes(9 << 29), "4.50 GiB"},
		{Bytes(3 << 50), "3.00 PiB"},
		{Bytes(5000 << 50), "5000 PiB"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}

func TestClosest(t *testing.T) {
	cands := []string{"prompt", "max-tokens", "method", "model", "t", "threads", "temperature"}
	for _, c := range []struct{ in, want string }{
		{"promt", "prompt"}, {"max-token", "max-tokens"}, {"metod", "method"}, {"temp", "temperature"},
		{"thread", "threads"}, {"zzzzzz", ""}, {"x", ""}, {"", ""}, {"prompts", "prompt"},
	} {
		if got := Closest(c.in, cands); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"flaw", "lawn", 2}, {"same", "same", 0}} {
		if got := EditDistance(c.a, c.b); got != c.d {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}
