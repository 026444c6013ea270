package tokenizer

import "unicode/utf8"

// replacement is what an invalid byte or an out-of-range id decodes to.
const replacement = "\uFFFD"

// Decode returns the text of ids. Each id contributes:
//
//   - a byte piece "<0xHH>": that raw byte;
//   - a control token (BOS, EOS, other special tokens): nothing;
//   - an id out of range: U+FFFD;
//   - any other token: its piece with "▁" turned back into ' ' (the
//     unknown token gives its piece, e.g. "<unk>").
//
// Bytes that do not form valid UTF-8 each become U+FFFD, as
// utf8.DecodeRune reports them. (The tokenizers library's ByteFallback
// decoder instead turns a whole run of byte tokens into U+FFFDs when any
// of it is invalid, which a streaming decoder cannot do; on valid text the
// two agree.)
//
// The space added by the dummy prefix is removed: for SentencePiece-style
// tokenizers (llama2.c, GGUF "llama" with scores) the leading space of the
// piece right after BOS, as llama2.c does; for Hugging Face BPE the leading
// space of the whole text, as its Strip decoder does.
func (t *Tokenizer) Decode(ids []int) string {
	var raw []byte
	prev := -1
	for _, id := range ids {
		raw = t.appendPiece(raw, prev, id)
		prev = id
	}
	s := validUTF8(raw)
	if t.strip == stripAtStart {
		s, _ = stripSpaces(s, t.stripN)
	}
	return s
}

// appendPiece appends the bytes id contributes after prev.
func (t *Tokenizer) appendPiece(raw []byte, prev, id int) []byte {
	if id < 0 || id >= len(t.dec) {
		return append(raw, replacement...)
	}
	e := t.dec[id]
	if e.raw >= 0 {
		return append(raw, byte(e.raw))
	}
	text := e.text
	if t.strip == stripAfterBOS && prev == t.bos && prev >= 0 && text != "" && text[0] == ' ' {
		text = text[1:]
	}
	return append(raw, text...)
}

// validUTF8 returns raw as a string with each byte that utf8.DecodeRune
// rejects replaced by U+FFFD.
func validUTF8(raw []byte) string {
	if utf8.Valid(raw) {
		return string(raw)
	}
	out := make([]byte, 0, len(raw)+8)
	for i := 0; i < len(raw); {
		r, size := utf8.DecodeRune(raw[i:])
		if r == utf8.RuneError && size == 1 {
			out = append(out, replacement...)
		} else {
			out = append(out, raw[i:i+size]...)
		}
		i += size
	}
	return string(out)
}

// stripSpaces removes up to n leading ' ' from s and returns how many of
// the n remain to be removed from text that follows (0 once s has a
// character other than a space).
func stripSpaces(s string, n int) (string, int) {
	for n > 0 && s != "" && s[0] == ' ' {
		s = s[1:]
		n--
	}
	if s != "" {
		n = 0
	}
	return s, n
}

// StreamDecoder turns a stream of token ids into text as they arrive,
// for printing a generation token by token. It never emits part of a
// UTF-8 sequence: bytes of a character spelled with byte tokens are held
// back until the character is complete, and bytes that cannot complete
// become U+FFFD as soon as that is clear. It applies the same rules as
// Decode, so the concatenation of all Push results and a final Flush
// equals Decode of the same ids. A StreamDecoder is not safe for
// concurrent use.
type StreamDecoder struct {
	t         *Tokenizer
	prev      int    // the previous id, -1 at the start
	pending   []byte // decoded bytes not yet emitted (an incomplete character)
	stripLeft int    // leading spaces still to strip (stripAtStart)
}

// NewStreamDecoder returns a StreamDecoder at the start of a sequence.
func (t *Tokenizer) NewStreamDecoder() *StreamDecoder {
	d := &StreamDecoder{t: t}
	d.Reset()
	return d
}

// Reset discards held-back bytes and returns d to the start of a sequence.
func (d *StreamDecoder) Reset() {
	d.prev = -1
	d.pending = d.pending[:0]
	d.stripLeft = 0
	if d.t.strip == stripAtStart {
		d.stripLeft = d.t.stripN
	}
}

// Push adds id to the stream and returns the text that is now complete,
// possibly "". An out-of-range id gives U+FFFD.
func (d *StreamDecoder) Push(id int) string {
	d.pending = d.t.appendPiece(d.pending, d.prev, id)
	d.prev = id
	return d.drain(false)
}

// Flush returns the held-back bytes, each invalid one as U+FFFD, as at the
// end of the stream. Pushing after Flush continues the same stream.
func (d *StreamDecoder) Flush() string {
	return d.drain(true)
}

// drain emits the longest prefix of d.pending whose decoding cannot change
// with more bytes (all of it when final).
func (d *StreamDecoder) drain(final bool) string {
	p := d.pending
	var s string
	if utf8.Valid(p) {
		s = string(p)
		p = p[:0]
	} else {
		out := make([]byte, 0, len(p)+8)
		i := 0
		for i < len(p) {
			if !final && !utf8.FullRune(p[i:]) {
				break // could still complete: hold back
			}
			r, size := utf8.DecodeRune(p[i:])
			if r == utf8.RuneError && size == 1 {
				out = append(out, replacement...)
			} else {
				out = append(out, p[i:i+size]...)
			}
			i += size
		}
		s = string(out)
		p = p[:copy(p, p[i:])]
	}
	d.pending = p
	if d.stripLeft > 0 {
		s, d.stripLeft = stripSpaces(s, d.stripLeft)
	}
	return s
}
