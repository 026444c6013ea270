package tokenizer

import (
	"strings"

	"golang.org/x/text/unicode/norm"
)

// normalizer is a Hugging Face normalizer as a list of steps applied in
// order to each fragment of text between added tokens (and to the content
// of the added tokens that are matched after normalization).
type normalizer []normStep

// normStep is one normalizer: a Unicode normalization form, a literal
// replacement, or a prefix.
type normStep struct {
	kind     normKind
	form     norm.Form // normForm
	from, to string    // normReplace: every from becomes to; normPrepend: to
}

type normKind uint8

const (
	normForm    normKind = iota // NFC, NFD, NFKC, NFKD
	normReplace                 // Replace with a String pattern
	normPrepend                 // Prepend to non-empty text
)

// apply normalizes s.
func (n normalizer) apply(s string) string {
	for _, st := range n {
		switch st.kind {
		case normForm:
			s = st.form.String(s)
		case normReplace:
			s = strings.ReplaceAll(s, st.from, st.to)
		case normPrepend:
			if s != "" {
				s = st.to + s
			}
		}
	}
	return s
}

// spmStyle reports whether n is the SentencePiece-style normalizer that
// GGUF "llama" vocabularies with merges express as add_space_prefix:
// spaces become "▁", optionally with "▁" prepended, and nothing else; and
// whether it prepends.
func (n normalizer) spmStyle() (ok, prepend bool) {
	replace := false
	for _, st := range n {
		switch {
		case st.kind == normReplace && st.from == " " && st.to == space && !replace:
			replace = true
		case st.kind == normPrepend && st.to == space && !prepend:
			prepend = true
		default:
			return false, false
		}
	}
	return replace, prepend
}
