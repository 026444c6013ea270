package tokenizer

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hlmproject/hlm/tokenizer/internal/uregex"
)

// A preStep is one pre-tokenizer: it splits each word the previous steps
// produced into smaller words (Hugging Face's pre_tokenizer, llama.cpp's
// regex_exprs). A Sequence is a list of steps.
type preStep interface {
	// split appends the words of w to dst. atStart reports whether w
	// begins at the start of the whole input text.
	split(dst []string, w string, atStart bool, s *scratch) []string
}

// scratch holds buffers that one Encode call reuses.
type scratch struct {
	matches [][2]int
	words   [2][]string
	symbols []int32
	cache   map[string][]int32
}

// splitBehavior is what becomes of the matches of a Split pre-tokenizer
// (tokenizers' SplitDelimiterBehavior).
type splitBehavior uint8

const (
	isolated           splitBehavior = iota // matches and the text between them are words
	removed                                 // only the text between matches
	mergedWithPrevious                      // a match ends the word before it
	mergedWithNext                          // a match starts the word after it
	contiguous                              // runs of matches, and of non-matches, are words
)

var behaviorNames = map[string]splitBehavior{
	"Isolated": isolated, "Removed": removed, "MergedWithPrevious": mergedWithPrevious,
	"MergedWithNext": mergedWithNext, "Contiguous": contiguous,
}

// splitStep is a Split pre-tokenizer: a regex (or a literal string) whose
// matches, or with invert the text between them, are the delimiters.
type splitStep struct {
	pattern  string         // the regex's source
	re       *uregex.Regexp // nil for a literal
	literal  string
	behavior splitBehavior
	invert   bool
}

func (p splitStep) split(dst []string, w string, _ bool, s *scratch) []string {
	if w == "" {
		return dst
	}
	if p.re != nil {
		s.matches = findAll(p.re, w, s.matches[:0])
	} else {
		s.matches = findLiteral(w, p.literal, s.matches[:0])
	}
	return splitByMatches(dst, w, s.matches, p.behavior, p.invert)
}

// findAll appends the matches of re in w. A pattern that backtracks past
// Oniguruma's retry limit on some text (only pathological patterns of a
// hostile tokenizer.json do) ends the matching there: the rest of w is one
// word, where the tokenizers library would fail the whole encoding.
func findAll(re *uregex.Regexp, w string, dst [][2]int) [][2]int {
	dst, _ = re.FindAll(w, dst)
	return dst
}

// findLiteral appends the non-overlapping occurrences of lit in w.
func findLiteral(w, lit string, dst [][2]int) [][2]int {
	if lit == "" {
		return dst
	}
	for off := 0; ; {
		i := strings.Index(w[off:], lit)
		if i < 0 {
			return dst
		}
		dst = append(dst, [2]int{off + i, off + i + len(lit)})
		off += i + len(lit)
	}
}

// splitByMatches cuts w at the matches (ascending, non-overlapping) and
// appends the words the behavior keeps, as tokenizers'
// NormalizedString::split does: the pieces are the matches and the gaps
// between them, each flagged as a delimiter or not (invert flips the
// flags), then folded by the behavior; empty words are dropped, as
// PreTokenizedString::split drops them.
func splitByMatches(dst []string, w string, matches [][2]int, b splitBehavior, invert bool) []string {
	if b == isolated && !invert {
		// The common case, without the fold: matches and gaps in order.
		prev := 0
		for _, m := range matches {
			if m[0] > prev {
				dst = append(dst, w[prev:m[0]])
			}
			if m[1] > m[0] {
				dst = append(dst, w[m[0]:m[1]])
			}
			prev = m[1]
		}
		if prev < len(w) {
			dst = append(dst, w[prev:])
		}
		return dst
	}
	var pieces []splitPiece
	prev := 0
	for _, m := range matches {
		if m[0] > prev {
			pieces = append(pieces, splitPiece{prev, m[0], invert})
		}
		pieces = append(pieces, splitPiece{m[0], m[1], !invert})
		prev = m[1]
	}
	if prev < len(w) {
		pieces = append(pieces, splitPiece{prev, len(w), invert})
	}
	for _, p := range foldPieces(pieces, b) {
		if !p.delim && p.end > p.start {
			dst = append(dst, w[p.start:p.end])
		}
	}
	return dst
}

// splitPiece is a match (delim) or a gap of a split; after foldPieces,
// delim means "remove".
type splitPiece struct {
	start, end int
	delim      bool
}

// foldPieces applies a behavior to the flagged pieces, as tokenizers'
// NormalizedString::split: the result's delim flags say which pieces are
// removed.
func foldPieces(pieces []splitPiece, b splitBehavior) []splitPiece {
	var out []splitPiece
	prevMatch := false
	switch b {
	case isolated:
		for _, p := range pieces {
			out = append(out, splitPiece{p.start, p.end, false})
		}
	case removed:
		out = pieces
	case contiguous:
		for _, p := range pieces {
			if p.delim == prevMatch && len(out) > 0 {
				out[len(out)-1].end = p.end
			} else {
				out = append(out, splitPiece{p.start, p.end, false})
			}
			prevMatch = p.delim
		}
	case mergedWithPrevious:
		for _, p := range pieces {
			if p.delim && !prevMatch && len(out) > 0 {
				out[len(out)-1].end = p.end
			} else {
				out = append(out, splitPiece{p.start, p.end, false})
			}
			prevMatch = p.delim
		}
	case mergedWithNext:
		for i := len(pieces) - 1; i >= 0; i-- {
			p := pieces[i]
			if p.delim && !prevMatch && len(out) > 0 {
				out[len(out)-1].start = p.start
			} else {
				out = append(out, splitPiece{p.start, p.end, false})
			}
			prevMatch = p.delim
		}
		slices.Reverse(out)
	}
	return out
}

// byteLevelStep is the ByteLevel pre-tokenizer: optionally a space before
// each word that does not start with one, and with use_regex GPT-2's
// split. (The mapping of bytes to GPT-2's alphabet is not a split: the
// model encodes words from their raw bytes.)
type byteLevelStep struct {
	addPrefixSpace bool
	re             *uregex.Regexp // GPT-2's pattern, nil without use_regex
}

func (p byteLevelStep) split(dst []string, w string, _ bool, s *scratch) []string {
	if p.addPrefixSpace && !strings.HasPrefix(w, " ") {
		w = " " + w
	}
	if p.re == nil {
		if w != "" {
			dst = append(dst, w)
		}
		return dst
	}
	s.matches = findAll(p.re, w, s.matches[:0])
	return splitByMatches(dst, w, s.matches, isolated, false)
}

// digitsStep is the Digits pre-tokenizer: numeric characters (Unicode
// category N, Rust's char::is_numeric) split off, each on its own with
// individual_digits, else in runs.
type digitsStep struct{ individual bool }

func (p digitsStep) split(dst []string, w string, _ bool, s *scratch) []string {
	s.matches = s.matches[:0]
	for i := 0; i < len(w); {
		r, n := utf8.DecodeRuneInString(w[i:])
		if unicode.IsNumber(r) {
			s.matches = append(s.matches, [2]int{i, i + n})
		}
		i += n
	}
	b := contiguous
	if p.individual {
		b = isolated
	}
	return splitByMatches(dst, w, s.matches, b, false)
}

// metaspaceStep is the Metaspace pre-tokenizer: spaces become the
// replacement ("▁"), which is prepended to words that do not start with
// it (always, or only to the start of the text with prepend_scheme
// "first"), and with split the text is cut before each replacement.
type metaspaceStep struct {
	replacement string
	prepend     string // "always", "first" or "never"
	split_      bool
}

func (p metaspaceStep) split(dst []string, w string, atStart bool, s *scratch) []string {
	w = strings.ReplaceAll(w, " ", p.replacement)
	if !strings.HasPrefix(w, p.replacement) && (p.prepend == "always" || p.prepend == "first" && atStart) {
		w = p.replacement + w
	}
	if !p.split_ {
		if w != "" {
			dst = append(dst, w)
		}
		return dst
	}
	s.matches = findLiteral(w, p.replacement, s.matches[:0])
	return splitByMatches(dst, w, s.matches, mergedWithNext, false)
}

// pretokenize splits a normalized fragment into words with steps, using
// the scratch word buffers; the result is valid until the next call.
func pretokenize(steps []preStep, frag string, atStart bool, s *scratch) []string {
	cur := append(s.words[0][:0], frag)
	next := s.words[1][:0]
	for _, st := range steps {
		next = next[:0]
		for i, w := range cur {
			next = st.split(next, w, atStart && i == 0, s)
		}
		cur, next = next, cur
	}
	s.words[0], s.words[1] = cur, next
	return cur
}
