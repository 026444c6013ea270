package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// minScore is llama2.c's initial best score: a pair whose merged piece
// scores at or below it (or NaN) is never merged.
const minScore = float32(-1e10)

// Encode returns the token ids of text, with BOS first if bos and EOS last
// if eos (each only when the tokenizer has one). Special tokens written
// literally in text (such as "<s>") are encoded as plain text, never as
// their special ids.
func (t *Tokenizer) Encode(text string, bos, eos bool) []int {
	var ids []int32
	if t.alg == byRank {
		ids = t.encodeRanks(text)
	} else {
		ids = t.encodeScores(text)
	}
	out := make([]int, 0, len(ids)+2)
	if bos && t.bos >= 0 {
		out = append(out, t.bos)
	}
	for _, id := range ids {
		out = append(out, int(id))
	}
	if eos && t.eos >= 0 {
		out = append(out, t.eos)
	}
	return out
}

// encodeScores is llama2.c's encode: the text is cut into UTF-8 code
// points (a byte and up to three continuation bytes after it, exactly as
// llama2.c groups bytes, so invalid UTF-8 is grouped the same way), each
// looked up as a piece or else spelled with byte tokens, and then the
// best-scoring adjacent pair is merged until none is left.
func (t *Tokenizer) encodeScores(text string) []int32 {
	ids := make([]int32, 0, len(text)+1)
	if text != "" && t.addPrefix {
		ids = t.appendGroup(ids, " ")
	}
	for i := 0; i < len(text); {
		j := i + 1
		for j < len(text) && text[j]&0xC0 == 0x80 && j-i < 4 {
			j++
		}
		ids = t.appendGroup(ids, text[i:j])
		i = j
	}
	var buf []byte
	return mergeAll(ids, func(a, b int32) (int32, float64, bool) {
		buf = append(append(buf[:0], t.pieces[a]...), t.pieces[b]...)
		id, ok := t.lookup[string(buf)]
		if !ok {
			return 0, 0, false
		}
		s := t.scores[id]
		if !(s > minScore) {
			return 0, 0, false
		}
		return id, float64(s), true
	})
}

// appendGroup appends the token of one code point g of the input: its
// piece (with a space spelled as t.space), or else its byte tokens, or else
// UNK.
func (t *Tokenizer) appendGroup(ids []int32, g string) []int32 {
	key := g
	if g[0] == ' ' && t.space != " " {
		key = t.space
		if len(g) > 1 {
			key = t.space + g[1:]
		}
	}
	if id, ok := t.lookup[key]; ok {
		return append(ids, id)
	}
	if t.hasByteTokens(g) {
		for i := 0; i < len(g); i++ {
			ids = append(ids, t.byteToken[g[i]])
		}
		return ids
	}
	if t.unk >= 0 {
		ids = append(ids, int32(t.unk))
	}
	return ids
}

// hasByteTokens reports whether every byte of s has a byte-fallback token.
func (t *Tokenizer) hasByteTokens(s string) bool {
	for i := 0; i < len(s); i++ {
		if t.byteToken[s[i]] < 0 {
			return false
		}
	}
	return true
}

// encodeRanks is Hugging Face's BPE model (tokenizers' merge_word and
// Word::merge_all) on the normalized text, which is one word since there is
// no pre-tokenizer.
func (t *Tokenizer) encodeRanks(text string) []int32 {
	if text == "" {
		return nil
	}
	s := strings.ReplaceAll(text, " ", t.space)
	if t.addPrefix {
		s = t.space + s
	}
	if t.ignoreMerges {
		if id, ok := t.lookup[s]; ok {
			return []int32{id}
		}
	}
	ids := make([]int32, 0, len(s))
	pendingUnk := false
	for i := 0; i < len(s); {
		_, w := utf8.DecodeRuneInString(s[i:])
		ch := s[i : i+w]
		i += w
		if id, ok := t.lookup[ch]; ok {
			if pendingUnk {
				ids = append(ids, int32(t.unk))
				pendingUnk = false
			}
			ids = append(ids, id)
			continue
		}
		if t.hasByteTokens(ch) {
			// As in tokenizers, byte tokens do not flush a pending
			// unknown: it lands after them.
			for j := 0; j < len(ch); j++ {
				ids = append(ids, t.byteToken[ch[j]])
			}
			continue
		}
		if t.unk < 0 {
			continue // no unknown token: the character is dropped
		}
		if pendingUnk && !t.fuseUnk {
			ids = append(ids, int32(t.unk))
		}
		pendingUnk = true
	}
	if pendingUnk {
		ids = append(ids, int32(t.unk))
	}
	return mergeAll(ids, func(a, b int32) (int32, float64, bool) {
		m, ok := t.merges[pairKey(a, b)]
		return m.id, -float64(m.rank), ok
	})
}

// mergeAll repeatedly merges the adjacent pair of highest priority, the
// leftmost among equals, until pair finds no mergeable pair. pair(a, b)
// returns the merged id and its priority. The symbols form a linked list
// over ids; a priority queue holds candidate pairs, and an entry whose
// symbols have changed since it was pushed is skipped when popped. This is
// O(n log n) and gives the same result as rescanning all pairs each step.
func mergeAll(ids []int32, pair func(a, b int32) (id int32, prio float64, ok bool)) []int32 {
	n := len(ids)
	if n < 2 {
		return ids
	}
	prev := make([]int32, n)
	next := make([]int32, n)
	for i := range ids {
		prev[i] = int32(i - 1)
		next[i] = int32(i + 1)
	}
	next[n-1] = -1
	var q candidates
	push := func(l, r int32) {
		if id, prio, ok := pair(ids[l], ids[r]); ok {
			q.push(candidate{prio: prio, left: l, right: r, idL: ids[l], idR: ids[r], id: id})
		}
	}
	for i := int32(0); i+1 < int32(n); i++ {
		push(i, i+1)
	}
	for len(q) > 0 {
		c := q.pop()
		if ids[c.left] != c.idL || ids[c.right] != c.idR || next[c.left] != c.right {
			continue // stale: one of the symbols was merged since
		}
		ids[c.left] = c.id
		ids[c.right] = -1
		r := next[c.right]
		next[c.left] = r
		if r >= 0 {
			prev[r] = c.left
		}
		if p := prev[c.left]; p >= 0 {
			push(p, c.left)
		}
		if r >= 0 {
			push(c.left, r)
		}
	}
	out := ids[:0]
	for i := int32(0); i >= 0; i = next[i] {
		out = append(out, ids[i])
	}
	return out
}

// candidate is a mergeable adjacent pair of symbols.
type candidate struct {
	prio        float64 // higher merges first
	left, right int32   // symbol indices; left orders equal priorities
	idL, idR    int32   // the symbols' ids when pushed
	id          int32   // the merged id
}

// candidates is a binary heap of candidate pairs, best first.
type candidates []candidate

func (q candidates) before(i, j int) bool {
	if q[i].prio != q[j].prio {
		return q[i].prio > q[j].prio
	}
	return q[i].left < q[j].left
}

func (q *candidates) push(c candidate) {
	*q = append(*q, c)
	h := *q
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.before(i, p) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *candidates) pop() candidate {
	h := *q
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && h.before(l, m) {
			m = l
		}
		if r < len(h) && h.before(r, m) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*q = h
	return top
}
