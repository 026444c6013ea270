package openai

import (
	"strings"
	"unicode/utf8"
)

// stopFilter cuts a stream of text pieces at the first stop sequence and
// releases only text that can no longer become part of one.
//
// "First" means the stop string completed earliest in the text (the longest
// one if several end at the same byte), so the result does not depend on how
// the text was split into pieces: every piece boundary gives the same output
// as a single piece. To keep that promise the filter holds back the longest
// suffix that is a proper prefix of some stop string: a stop string can
// therefore never begin in text already released.
//
// The filter also holds back an incomplete UTF-8 sequence at the end, so a
// character split across pieces is released whole.
type stopFilter struct {
	stops []string
	held  string
}

// push adds a piece. It returns the text now safe to release and whether a
// stop string was found; after that the filter is spent.
func (f *stopFilter) push(piece string) (out string, stopped bool) {
	buf := f.held + piece
	if cut := firstStop(buf, f.stops); cut >= 0 {
		f.held = ""
		return buf[:cut], true
	}
	n := len(buf) - holdLen(buf, f.stops)
	n -= partialRune(buf[:n])
	f.held = buf[n:]
	return buf[:n], false
}

// flush releases what is held at the end of the text.
func (f *stopFilter) flush() string {
	s := f.held
	f.held = ""
	return s
}

// firstStop returns where s must be cut: the start of the stop string that
// ends first in s (the longest on a tie), or -1.
func firstStop(s string, stops []string) int {
	cut, end := -1, -1
	for _, st := range stops {
		i := strings.Index(s, st)
		if i < 0 {
			continue
		}
		if e := i + len(st); end < 0 || e < end || e == end && i < cut {
			cut, end = i, e
		}
	}
	return cut
}

// holdLen returns the length of the longest suffix of s that is a proper
// prefix of a stop string.
func holdLen(s string, stops []string) int {
	n := 0
	for _, st := range stops {
		for k := min(len(s), len(st)-1); k > n; k-- {
			if s[len(s)-k] == st[0] && strings.HasPrefix(st, s[len(s)-k:]) {
				n = k
				break
			}
		}
	}
	return n
}

// partialRune returns the length of an incomplete UTF-8 encoding at the end
// of s (0 when s ends with a whole rune or with bytes that can never become
// one).
func partialRune(s string) int {
	for i := 1; i < utf8.UTFMax && i <= len(s); i++ {
		if utf8.RuneStart(s[len(s)-i]) {
			if utf8.FullRuneInString(s[len(s)-i:]) {
				return 0
			}
			return i
		}
	}
	return 0
}
