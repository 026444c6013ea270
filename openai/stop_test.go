package openai

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStopFilter(t *testing.T) {
	cases := []struct {
		name    string
		stops   []string
		pieces  []string
		want    []string // released after each piece, then by flush
		stopped bool
	}{
		{"no stops", nil, []string{"a", "b"}, []string{"a", "b", ""}, false},
		{"split stop", []string{"o w"}, []string{"Hel", "lo wor", "ld"}, []string{"Hel", "l"}, true},
		{"held prefix", []string{"world"}, []string{"hello wo", "rld"}, []string{"hello ", ""}, true},
		{"held then released", []string{"abc"}, []string{"xab", "d"}, []string{"x", "abd", ""}, false},
		{"held until flush", []string{"abc"}, []string{"xab"}, []string{"x", "ab"}, false},
		{"longest hold of several", []string{"ab", "xyzab"}, []string{"1xyza"}, []string{"1", "xyza"}, false},
		{"stop inside a piece", []string{"END"}, []string{"one END two"}, []string{"one "}, true},
		{"stop over three pieces", []string{"<|end|>"}, []string{"ok<|", "en", "d|>more"}, []string{"ok", "", ""}, true},
		{"first completed wins", []string{"bcd", "ab"}, []string{"xabcd"}, []string{"x"}, true},
		{"longest on a tie", []string{"b", "ab"}, []string{"xab"}, []string{"x"}, true},
		{"split rune", nil, []string{"caf\xc3", "\xa9"}, []string{"caf", "é", ""}, false},
		{"split 4-byte rune", nil, []string{"\xf0\x9f", "\x98", "\x80!"}, []string{"", "", "😀!", ""}, false},
		{"invalid bytes pass", nil, []string{"a\xff", "\x80b"}, []string{"a\xff", "\x80b", ""}, false},
		{"multibyte stop", []string{"é."}, []string{"caf\xc3", "\xa9", ". x"}, []string{"caf", "", ""}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := stopFilter{stops: c.stops}
			var got []string
			stopped := false
			for _, p := range c.pieces {
				out, hit := f.push(p)
				got = append(got, out)
				if hit {
					stopped = true
					break
				}
			}
			if !stopped {
				got = append(got, f.flush())
			}
			if !slices.Equal(got, c.want) || stopped != c.stopped {
				t.Errorf("released %q (stopped %v), want %q (%v)", got, stopped, c.want, c.stopped)
			}
		})
	}
}

func TestPartialRune(t *testing.T) {
	for s, want := range map[string]int{
		"": 0, "a": 0, "é": 0, "\xc3": 1, "a\xe2\x82": 2, "\xf0\x9f\x98": 3, "\xf0\x9f\x98\x80": 0,
		"\x80": 0, "\xff": 0, "a\x80\x80\x80": 0,
	} {
		if got := partialRune(s); got != want {
			t.Errorf("partialRune(%q) = %d, want %d", s, got, want)
		}
	}
}

// refStop cuts text the slow, obvious way: walk the end positions and stop
// at the first one where some stop string ends (the longest if several).
func refStop(text string, stops []string) (string, bool) {
	for e := 0; e <= len(text); e++ {
		best := -1
		for _, s := range stops {
			if s != "" && strings.HasSuffix(text[:e], s) && (best < 0 || len(s) > len(stops[best])) {
				best = slices.Index(stops, s)
			}
		}
		if best >= 0 {
			return text[:e-len(stops[best])], true
		}
	}
	return text, false
}

// runFilter feeds the pieces and returns the released chunks.
func runFilter(stops, pieces []string) (chunks []string, stopped bool) {
	f := stopFilter{stops: stops}
	for _, p := range pieces {
		out, hit := f.push(p)
		chunks = append(chunks, out)
		if hit {
			return chunks, true
		}
	}
	return append(chunks, f.flush()), false
}

// split cuts text at positions drawn from cuts.
func split(text string, cuts []byte) []string {
	var pieces []string
	for _, c := range cuts {
		n := min(int(c)%8, len(text))
		pieces = append(pieces, text[:n])
		text = text[n:]
	}
	return append(pieces, text)
}

// FuzzStopFilter checks that however the text is split, the filter releases
// exactly the reference cut, and only whole UTF-8 characters.
func FuzzStopFilter(f *testing.F) {
	f.Add("Hello world", "o w", "", []byte{3, 6})
	f.Add("xabcd", "bcd", "ab", []byte{1, 1, 1, 1})
	f.Add("café. ok", "é.", "k", []byte{4, 1})
	f.Add("aaaaab", "aab", "aaaa", []byte{1, 2, 3})
	f.Add("\xf0\x9f\x98\x80 ok", "ok", "\x80", []byte{1, 1, 1})
	f.Fuzz(func(t *testing.T, text, s1, s2 string, cuts []byte) {
		var stops []string
		for _, s := range []string{s1, s2} {
			if s != "" {
				stops = append(stops, s)
			}
		}
		want, wantStop := refStop(text, stops)
		chunks, stopped := runFilter(stops, split(text, cuts))
		if got := strings.Join(chunks, ""); got != want || stopped != wantStop {
			t.Fatalf("stops %q: released %q (stopped %v), want %q (%v)", stops, chunks, stopped, want, wantStop)
		}
		whole := utf8.ValidString(text)
		for _, s := range stops {
			whole = whole && utf8.ValidString(s)
		}
		for _, c := range chunks {
			if whole && !utf8.ValidString(c) {
				t.Fatalf("chunk %q of %q is not whole UTF-8", c, chunks)
			}
		}
	})
}
