package tokenizer

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// streamAll pushes ids one at a time and returns every Push result, then
// the Flush result last.
func streamAll(tok *Tokenizer, ids []int) []string {
	d := tok.NewStreamDecoder()
	out := make([]string, 0, len(ids)+1)
	for _, id := range ids {
		out = append(out, d.Push(id))
	}
	return append(out, d.Flush())
}

// checkStream checks that streaming ids emits only valid UTF-8 and adds up
// to Decode(ids).
func checkStream(t *testing.T, tok *Tokenizer, ids []int) {
	t.Helper()
	parts := streamAll(tok, ids)
	for i, p := range parts {
		if !utf8.ValidString(p) {
			t.Errorf("ids %v: part %d %q is not valid UTF-8", ids, i, p)
		}
	}
	if got, want := strings.Join(parts, ""), tok.Decode(ids); got != want {
		t.Errorf("ids %v: stream %q (parts %q), Decode %q", ids, got, parts, want)
	}
}

func TestStreamDecoderHoldsBackBytes(t *testing.T) {
	tok := tinyLlama2C(t)
	// 日 = E6 97 A5 and 🙂 = F0 9F 99 82 spelled with byte tokens (byte+3).
	ids := []int{1, 260, 0xE6 + 3, 0x97 + 3, 0xA5 + 3, 0xF0 + 3, 0x9F + 3, 0x99 + 3, 0x82 + 3, 260}
	want := []string{"", "a", "", "", "日", "", "", "", "🙂", "a", ""}
	got := streamAll(tok, ids)
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("parts %q, want %q", got, want)
	}
	checkStream(t, tok, ids)

	for _, c := range []struct {
		name string
		ids  []int
		want []string
	}{
		// A byte that cannot continue the character ends it: U+FFFD per byte.
		{"broken by a piece", []int{0xE6 + 3, 0x97 + 3, 260}, []string{"", "", "\uFFFD\uFFFDa", ""}},
		{"broken by a byte", []int{0xE6 + 3, 0x41 + 3}, []string{"", "\uFFFDA", ""}},
		{"invalid at once", []int{0xFF + 3}, []string{"\uFFFD", ""}},
		{"surrogate prefix", []int{0xED + 3, 0xA0 + 3}, []string{"", "\uFFFD\uFFFD", ""}},
		{"incomplete at the end", []int{0xF0 + 3, 0x9F + 3}, []string{"", "", "\uFFFD\uFFFD"}},
		{"out of range", []int{0xE6 + 3, 1 << 20, 260}, []string{"", "\uFFFD\uFFFD", "a", ""}},
		{"BOS strips the next piece", []int{1, 266, 1, 266}, []string{"", "a", "", "a", ""}},
	} {
		if got := streamAll(tok, c.ids); strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s: parts %q, want %q", c.name, got, c.want)
		}
		checkStream(t, tok, c.ids)
	}
}

func TestStreamDecoderStripAtStart(t *testing.T) {
	tok := tinyHF(t, nil) // ids: 3 "▁", 4 "a", 11/12 é bytes
	for _, ids := range [][]int{
		{3, 3, 4},      // "  a" → " a"
		{1, 3, 4, 2},   // control tokens do not count as text
		{11, 12, 3, 4}, // é, then " a"
		{3},
		{},
	} {
		checkStream(t, tok, ids)
	}
	if got := streamAll(tok, []int{1, 3, 3, 4}); strings.Join(got, "|") != "|| |a|" {
		t.Errorf("parts %q", got)
	}
}

func TestStreamDecoderResetAndFlush(t *testing.T) {
	tok := tinyHF(t, nil)
	d := tok.NewStreamDecoder()
	if got := d.Push(13); got != "" { // first byte of 日
		t.Errorf("Push = %q", got)
	}
	if got := d.Flush(); got != "\uFFFD" {
		t.Errorf("Flush = %q, want U+FFFD", got)
	}
	if got := d.Push(8); got != " a" { // the start is past: no strip
		t.Errorf("Push after Flush = %q, want \" a\"", got)
	}
	d.Push(13)
	d.Reset()
	if got := d.Push(8); got != "a" { // a new sequence: strip again
		t.Errorf("Push after Reset = %q, want \"a\"", got)
	}
	if got := d.Flush(); got != "" {
		t.Errorf("Flush after Reset = %q, want \"\"", got)
	}
}

// TestStreamDecoderShared streams the golden texts of the shared tokenizers,
// whose emoji and CJK are spelled with byte tokens in the 32k and 512
// vocabularies.
func TestStreamDecoderShared(t *testing.T) {
	for _, c := range sharedTokenizers {
		t.Run(c.name, func(t *testing.T) {
			tok := c.load(t)
			for _, g := range loadGolden(t, c.golden) {
				checkStream(t, tok, g.IDs)
				ids := append(append([]int(nil), g.IDs...), tok.EOS())
				checkStream(t, tok, ids)
			}
		})
	}
}

// encode is Encode in the explicit form the older tests use: BOS first if
// bos and EOS last if eos (each only when the tokenizer has one), special
// tokens written in the text encoded as plain text.
func encode(tok *Tokenizer, text string, bos, eos bool) []int {
	ids := tok.EncodeWith(text, EncodeOptions{PlainSpecial: true})
	if bos && tok.BOS() >= 0 {
		ids = append([]int{tok.BOS()}, ids...)
	}
	if eos && tok.EOS() >= 0 {
		ids = append(ids, tok.EOS())
	}
	return ids
}
