package tokenizer

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// addedToken is a token matched in the text before the model sees it:
// a Hugging Face added token, or a GGUF control, user-defined or unknown
// token (llama.cpp's special tokens).
type addedToken struct {
	id      int32
	content string
	// control tokens (HF "special", GGUF control and unknown) are matched
	// only when the caller parses special tokens; the others always.
	control bool
	// normalized tokens are matched in the normalized text, by their
	// normalized content; the others in the raw text.
	normalized bool
	// lstrip and rstrip remove the whitespace before and after a match.
	lstrip, rstrip bool
	// singleWord tokens match only where no word character is next to
	// them.
	singleWord bool
}

// addedVocab finds added tokens in text: the leftmost match, the longest
// there (tokenizers' AddedVocabulary with its leftmost-longest
// Aho-Corasick automaton).
type addedVocab struct {
	tokens    []addedToken
	raw, norm trie // tokens matched in raw and in normalized text
	// asciiSpace: lstrip/rstrip remove ASCII whitespace only (llama.cpp's
	// isspace) instead of Unicode White_Space (Rust's char::is_whitespace).
	asciiSpace bool
}

// trie is a byte trie of token contents.
type trie struct {
	nodes []trieNode
	first [256]bool // bytes that start some token
}

type trieNode struct {
	next  map[byte]int32
	token int32 // index into tokens, -1 if no token ends here
}

func (tr *trie) empty() bool { return len(tr.nodes) <= 1 }

func (tr *trie) add(content string, tok int32) {
	if len(tr.nodes) == 0 {
		tr.nodes = append(tr.nodes, trieNode{token: -1})
	}
	n := int32(0)
	for i := 0; i < len(content); i++ {
		c := content[i]
		nx, ok := tr.nodes[n].next[c]
		if !ok {
			if tr.nodes[n].next == nil {
				tr.nodes[n].next = make(map[byte]int32, 1)
			}
			nx = int32(len(tr.nodes))
			tr.nodes[n].next[c] = nx
			tr.nodes = append(tr.nodes, trieNode{token: -1})
		}
		n = nx
	}
	if tr.nodes[n].token < 0 { // the first token with this content wins
		tr.nodes[n].token = tok
	}
	tr.first[content[0]] = true
}

// fragment is a piece of the input: text still to tokenize (id < 0), or an
// added token.
type fragment struct {
	text    string
	id      int32
	atStart bool // the text begins at the start of the input
}

// newAddedVocab indexes tokens; nil when there are none to match.
func newAddedVocab(tokens []addedToken, n normalizer, asciiSpace bool) *addedVocab {
	a := &addedVocab{tokens: tokens, asciiSpace: asciiSpace}
	for i, tok := range tokens {
		if tok.content == "" {
			continue
		}
		if tok.normalized && len(n) > 0 {
			if c := n.apply(tok.content); c != "" {
				a.norm.add(c, int32(i))
			}
			continue
		}
		a.raw.add(tok.content, int32(i))
	}
	if a.raw.empty() && a.norm.empty() {
		return nil
	}
	return a
}

// split cuts text at the added tokens tr holds, leftmost-longest, and
// appends the pieces to dst. Control tokens match only when
// parseSpecial.
func (a *addedVocab) split(dst []fragment, tr *trie, text string, atStart, parseSpecial bool) []fragment {
	if tr.empty() {
		return append(dst, fragment{text: text, id: -1, atStart: atStart})
	}
	start := 0 // of the pending text
	stripLeft := false
	emitText := func(s string, at int) {
		if stripLeft {
			s = a.trimLeft(s)
			stripLeft = false
		}
		if s != "" {
			dst = append(dst, fragment{text: s, id: -1, atStart: atStart && at == 0})
		}
	}
	for i := 0; i < len(text); {
		if !tr.first[text[i]] {
			i++
			continue
		}
		best, end := int32(-1), 0
		n := int32(0)
		for j := i; j < len(text); j++ {
			nx, ok := tr.nodes[n].next[text[j]]
			if !ok {
				break
			}
			n = nx
			if k := tr.nodes[n].token; k >= 0 {
				tok := &a.tokens[k]
				if (!tok.control || parseSpecial) && (!tok.singleWord || a.isSingleWord(text, i, j+1)) {
					best, end = k, j+1
				}
			}
		}
		if best < 0 {
			i++
			continue
		}
		tok := &a.tokens[best]
		pending := text[start:i]
		if tok.lstrip {
			pending = a.trimRight(pending)
		}
		emitText(pending, start)
		dst = append(dst, fragment{id: tok.id})
		stripLeft = tok.rstrip
		i, start = end, end
	}
	emitText(text[start:], start)
	return dst
}

func (a *addedVocab) isSpace(r rune) bool {
	if a.asciiSpace {
		return r == ' ' || '\t' <= r && r <= '\r'
	}
	return unicode.IsSpace(r)
}

func (a *addedVocab) trimLeft(s string) string  { return strings.TrimLeftFunc(s, a.isSpace) }
func (a *addedVocab) trimRight(s string) string { return strings.TrimRightFunc(s, a.isSpace) }

// isSingleWord reports whether text[start:end] is not preceded or followed
// by a word character (letters, digits and '_').
func (a *addedVocab) isSingleWord(text string, start, end int) bool {
	isWord := func(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
	if start > 0 {
		if r, _ := utf8.DecodeLastRuneInString(text[:start]); isWord(r) {
			return false
		}
	}
	if end < len(text) {
		if r, _ := utf8.DecodeRuneInString(text[end:]); isWord(r) {
			return false
		}
	}
	return true
}
