package tokenizer

// minScore is llama2.c's initial best score: a pair whose merged piece
// scores at or below it (or NaN) is never merged.
const minScore = float32(-1e10)

// EncodeOptions say how EncodeWith treats special tokens.
type EncodeOptions struct {
	// AddSpecial adds BOS and EOS as the tokenizer's configuration says
	// (GGUF add_bos_token/add_eos_token, tokenizer.json's
	// TemplateProcessing, tokenizer_config.json): llama.cpp's add_special,
	// Hugging Face's add_special_tokens.
	AddSpecial bool
	// PlainSpecial encodes control tokens written in the text ("<s>",
	// "<|im_start|>") as plain text instead of their ids (llama.cpp's
	// parse_special = false). Added tokens that are not control tokens
	// are matched either way, as in llama.cpp and Hugging Face.
	PlainSpecial bool
}

// Encode returns the token ids of text, with BOS and EOS added as the
// tokenizer's configuration says when addSpecial is true. Special tokens
// written in the text ("<s>", "<|im_start|>") become their ids, as Hugging
// Face's tokenizers and llama.cpp with parse_special do; EncodeWith can
// spell them as plain text instead.
func (t *Tokenizer) Encode(text string, addSpecial bool) []int {
	return t.EncodeWith(text, EncodeOptions{AddSpecial: addSpecial})
}

// EncodeWith returns the token ids of text under o (see EncodeOptions).
func (t *Tokenizer) EncodeWith(text string, o EncodeOptions) []int {
	var s scratch
	ids := make([]int32, 0, len(text)/3+2)
	parse := !o.PlainSpecial
	if t.added == nil {
		ids = t.encodeFragment(ids, text, true, parse, &s)
	} else {
		for _, f := range t.added.split(nil, &t.added.raw, text, true, parse) {
			if f.id >= 0 {
				ids = append(ids, f.id)
			} else {
				ids = t.encodeFragment(ids, f.text, f.atStart, parse, &s)
			}
		}
	}
	out := make([]int, 0, len(ids)+2)
	if o.AddSpecial && t.addBOS && t.bos >= 0 {
		out = append(out, t.bos)
	}
	for _, id := range ids {
		out = append(out, int(id))
	}
	if o.AddSpecial && t.addEOS && t.eos >= 0 {
		out = append(out, t.eos)
	}
	return out
}

// encodeFragment appends the ids of a piece of text between added tokens.
func (t *Tokenizer) encodeFragment(ids []int32, text string, atStart, parseSpecial bool, s *scratch) []int32 {
	if t.alg == byScore {
		return append(ids, t.encodeScores(text)...)
	}
	text = t.norm.apply(text)
	if t.added == nil || t.added.norm.empty() {
		return t.encodeNormalized(ids, text, atStart, s)
	}
	for _, f := range t.added.split(nil, &t.added.norm, text, atStart, parseSpecial) {
		if f.id >= 0 {
			ids = append(ids, f.id)
		} else {
			ids = t.encodeNormalized(ids, f.text, f.atStart, s)
		}
	}
	return ids
}

// encodeNormalized appends the ids of normalized text: pre-tokenized into
// words, each encoded by the BPE model.
func (t *Tokenizer) encodeNormalized(ids []int32, text string, atStart bool, s *scratch) []int32 {
	if t.pre == nil {
		return t.appendWord(ids, text, s)
	}
	for _, w := range pretokenize(t.pre, text, atStart, s) {
		ids = t.appendWord(ids, w, s)
	}
	return ids
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
