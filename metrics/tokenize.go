package metrics

import "strings"

// tokens is a tokenized text: norm holds the tokens separated by single
// spaces, and token i is norm[start[i]:end[i]], so the n-gram i..i+n-1 is
// the substring norm[start[i]:end[i+n-1]].
type tokens struct {
	norm       string
	start, end []int
}

func (t tokens) len() int { return len(t.start) }

// tok is token i.
func (t tokens) tok(i int) string { return t.norm[t.start[i]:t.end[i]] }

// ngram is the n-gram starting at token i, as one string.
func (t tokens) ngram(i, n int) string { return t.norm[t.start[i]:t.end[i+n-1]] }

// tokenize splits text as the rouge-score package does without stemming:
// lower-case (Python str.lower), replace every run of characters other than
// ASCII a–z and 0–9 with a space, split on spaces. Only two non-ASCII
// characters lower-case to ASCII: 'İ' (U+0130), which Python lowers to "i"
// plus a combining dot (so it ends its token), and the Kelvin sign (U+212A),
// which lowers to "k".
func tokenize(text string) tokens {
	var b strings.Builder
	var t tokens
	in := false // inside a token
	end := func() {
		if in {
			t.end = append(t.end, b.Len())
			in = false
		}
	}
	put := func(c byte) {
		if !in {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			t.start = append(t.start, b.Len())
			in = true
		}
		b.WriteByte(c)
	}
	for _, r := range text {
		switch {
		case 'a' <= r && r <= 'z' || '0' <= r && r <= '9':
			put(byte(r))
		case 'A' <= r && r <= 'Z':
			put(byte(r - 'A' + 'a'))
		case r == '\u212a': // KELVIN SIGN
			put('k')
		case r == '\u0130': // LATIN CAPITAL LETTER I WITH DOT ABOVE
			put('i')
			end()
		default:
			end()
		}
	}
	end()
	t.norm = b.String()
	return t
}

// Tokenize returns the tokens ROUGE and the embedding metric compare: the
// maximal runs of ASCII letters and digits of the lower-cased text, as in
// the rouge-score package's default tokenizer (no stemming).
func Tokenize(text string) []string {
	t := tokenize(text)
	out := make([]string, t.len())
	for i := range out {
		out[i] = t.tok(i)
	}
	return out
}
