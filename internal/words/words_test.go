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
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}
