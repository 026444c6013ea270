package tokenizer

import "unicode/utf8"

// The BPE model of byRank tokenizers: a word becomes symbols (its
// characters, or its bytes for byte-level vocabularies), and the adjacent
// pair of lowest merge rank is merged, the leftmost among equals, until
// no pair merges (tokenizers' BPE::merge_word, llama.cpp's
// llm_tokenizer_bpe_session).

// maxCachedWord bounds the words whose ids one Encode call remembers
// (longer ones are rare and cheap to redo relative to their length).
const maxCachedWord = 256

// appendWord appends the ids of one pre-tokenized word.
func (t *Tokenizer) appendWord(ids []int32, w string, s *scratch) []int32 {
	if w == "" {
		return ids
	}
	if t.ignoreMerges || t.wholeNewline && onlyNewlines(w) {
		if id, ok := t.lookup[w]; ok {
			return append(ids, id)
		}
	}
	cacheable := len(w) <= maxCachedWord
	if cacheable {
		if c, ok := s.cache[w]; ok {
			return append(ids, c...)
		}
	}
	sym := s.symbols[:0]
	if t.byteLevel {
		for i := 0; i < len(w); i++ {
			if id := t.byteID[w[i]]; id >= 0 {
				sym = append(sym, id)
			} else if t.unk >= 0 {
				sym = append(sym, int32(t.unk))
			}
		}
	} else {
		sym = t.appendChars(sym, w)
	}
	sym = mergeAll(sym, func(a, b int32) (int32, float64, bool) {
		m, ok := t.merges[pairKey(a, b)]
		return m.id, -float64(m.rank), ok
	})
	s.symbols = sym
	if cacheable {
		if s.cache == nil {
			s.cache = make(map[string][]int32)
		}
		s.cache[w] = append([]int32(nil), sym...)
	}
	return append(ids, sym...)
}

// appendChars appends the symbols of a word of a character-level BPE: each
// character that is a piece becomes its id; otherwise, with byte
// fallback, its UTF-8 bytes as <0xHH> tokens if all of them exist;
// otherwise <unk>, consecutive unknown characters fused into one with
// fuse_unk. (As in tokenizers, byte tokens do not end a run of unknown
// characters: the pending <unk> is emitted after them.)
func (t *Tokenizer) appendChars(sym []int32, w string) []int32 {
	pendingUnk := false
	for i := 0; i < len(w); {
		_, n := utf8.DecodeRuneInString(w[i:])
		ch := w[i : i+n]
		i += n
		if id, ok := t.lookup[ch]; ok {
			if pendingUnk {
				sym = append(sym, int32(t.unk))
				pendingUnk = false
			}
			sym = append(sym, id)
			continue
		}
		if t.hasByteTokens(ch) {
			for j := 0; j < len(ch); j++ {
				sym = append(sym, t.byteToken[ch[j]])
			}
			continue
		}
		if t.unk < 0 {
			continue // no unknown token: the character is dropped
		}
		if pendingUnk && !t.fuseUnk {
			sym = append(sym, int32(t.unk))
		}
		pendingUnk = true
	}
	if pendingUnk {
		sym = append(sym, int32(t.unk))
	}
	return sym
}

func onlyNewlines(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] != '\n' {
			return false
		}
	}
	return w != ""
}
