package tokenizer

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Errors returned by the constructors, always wrapped with a message that
// names what is wrong; test with errors.Is.
var (
	// ErrFormat reports malformed input: truncated data, bad lengths, ids
	// out of range, duplicate pieces, merges naming missing pieces.
	ErrFormat = errors.New("tokenizer: malformed data")
	// ErrUnsupported reports well-formed input that asks for an algorithm
	// this package does not implement (a model type, normalizer,
	// pre-tokenizer or decoder). Rather than tokenize it wrongly, the
	// constructors refuse it.
	ErrUnsupported = errors.New("tokenizer: unsupported configuration")
	// ErrVocabSize reports a vocabulary whose size differs from the one the
	// caller required.
	ErrVocabSize = errors.New("tokenizer: vocabulary size mismatch")
)

// Token types, as GGUF stores them in tokenizer.ggml.token_type (the values
// of SentencePiece's piece types).
const (
	TypeUndefined   int32 = 0
	TypeNormal      int32 = 1
	TypeUnknown     int32 = 2
	TypeControl     int32 = 3
	TypeUserDefined int32 = 4
	TypeUnused      int32 = 5
	TypeByte        int32 = 6
)

// space is SentencePiece's visible space, U+2581 LOWER ONE EIGHTH BLOCK.
const space = "\u2581"

// algorithm is how adjacent symbols are merged.
type algorithm uint8

const (
	// byScore merges, at each step, the adjacent pair whose concatenation
	// is a piece with the highest score, leftmost on ties (llama2.c,
	// SentencePiece BPE, GGUF "llama").
	byScore algorithm = iota
	// byRank merges, at each step, the adjacent pair that appears earliest
	// in the merges list, leftmost on ties (Hugging Face BPE).
	byRank
)

// source records where a tokenizer came from; Vocab uses it to convert
// llama2.c pieces to SentencePiece form.
type source uint8

const (
	fromLlama2C source = iota
	fromHFJSON
	fromVocab
)

// stripRule is how decoding removes the space that the dummy prefix added.
type stripRule uint8

const (
	// The zero value keeps every space.
	_ stripRule = iota
	// stripAfterBOS drops a leading space from the piece that directly
	// follows BOS (llama2.c's decode, SentencePiece).
	stripAfterBOS
	// stripAtStart drops up to stripN leading spaces from the start of the
	// decoded text (Hugging Face's Strip decoder after Fuse).
	stripAtStart
)

// Tokenizer encodes text to token ids and decodes ids to text. It is
// immutable after construction and safe for concurrent use.
//
// Encoding runs a fixed pipeline whose stages are data (see the package
// documentation): added and special tokens are cut out of the text; each
// remaining fragment is normalized, split into words by the pre-tokenizer,
// and each word turned into ids by the model (merging by score or by
// rank).
type Tokenizer struct {
	alg algorithm
	src source

	pieces []string  // [vocab] piece of each id, as stored in the source
	scores []float32 // [vocab] merge scores (byScore); nil for HF BPE
	types  []int32   // [vocab] Type* of each id

	// lookup maps a piece to its id for the pieces that text may produce:
	// for byScore every piece except unknown, control, unused and byte
	// tokens; for byRank the BPE model's vocabulary (every piece when
	// built from a Vocab), keyed by the piece's raw bytes when byteLevel.
	lookup map[string]int32

	space     string // what a ' ' in the text becomes: " " (llama2.c) or "▁"
	addPrefix bool   // prepend a space to non-empty text (add_dummy_prefix)

	// byRank only: how a fragment becomes words.
	norm      normalizer
	pre       []preStep // pre-tokenizer; nil: the fragment is one word
	preName   string    // GGUF tokenizer.ggml.pre, "" when not byte-level
	byteLevel bool      // pieces spell bytes in GPT-2's byte-to-unicode alphabet

	bos, eos, unk  int // ids, -1 when absent
	eot, eom       int // end of turn, end of message (GGUF), -1 when absent
	addBOS, addEOS bool
	eog            []int // ids that end a generation, ascending

	byteToken [256]int32 // byte-fallback token <0xHH> of each byte, -1 if none
	byteID    [256]int32 // byteLevel: the token of each single byte, -1 if none

	// byRank only.
	merges       map[uint64]merge // pairKey(left, right) → rank and result
	mergeList    [][2]string      // merges in rank order, for Vocab
	fuseUnk      bool             // consecutive unknown characters give one unk
	ignoreMerges bool             // a whole word in the vocabulary is one token
	wholeNewline bool             // a word of newlines in the vocabulary is one token (gemma4)

	// added are the tokens cut out of the text before the model runs
	// (Hugging Face added_tokens; GGUF control, user-defined and unknown
	// tokens); nil when there are none.
	added *addedVocab

	// Decoding.
	dec   []decodeEntry // [vocab]
	strip stripRule
	// stripN is how many leading spaces stripAtStart removes.
	stripN int

	chatTemplate string // Jinja chat template, "" when the source has none
	name         string // GGUF general.name, kept for Vocab

	// Fingerprint, computed on first use.
	fpOnce sync.Once
	fp     string
}

// merge is the value of a byRank merge rule.
type merge struct {
	rank int32
	id   int32 // the piece the pair becomes
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// decodeEntry is what one id contributes to decoded text.
type decodeEntry struct {
	text string // text with spaces restored; "" for control tokens
	raw  int16  // the raw byte of a <0xXX> piece, or -1
}

// VocabSize is the number of token ids; valid ids are [0, VocabSize).
func (t *Tokenizer) VocabSize() int { return len(t.pieces) }

// BOS is the beginning-of-sequence id, or -1 if the tokenizer has none.
func (t *Tokenizer) BOS() int { return t.bos }

// EOS is the end-of-sequence id, or -1 if the tokenizer has none.
func (t *Tokenizer) EOS() int { return t.eos }

// UNK is the unknown-token id, or -1 if the tokenizer has none.
func (t *Tokenizer) UNK() int { return t.unk }

// AddsBOS reports whether Encode with addSpecial puts BOS first.
func (t *Tokenizer) AddsBOS() bool { return t.addBOS && t.bos >= 0 }

// EOG returns the ids that end a generation, ascending: EOS, the end of
// turn and end of message tokens, and the end-of-turn tokens of the chat
// formats llama.cpp recognises by name ("<|eot_id|>", "<|im_end|>",
// "<end_of_turn>", ...), as llama.cpp's llama_vocab_is_eog does. The slice
// must not be modified.
func (t *Tokenizer) EOG() []int { return t.eog }

// IsEOG reports whether id ends a generation (see EOG).
func (t *Tokenizer) IsEOG(id int) bool {
	_, ok := slices.BinarySearch(t.eog, id)
	return ok
}

// ChatTemplate is the model's Jinja chat template (GGUF
// tokenizer.chat_template, tokenizer_config.json chat_template), or "" if
// its source has none.
func (t *Tokenizer) ChatTemplate() string { return t.chatTemplate }

// Pre names the pre-tokenizer as GGUF's tokenizer.ggml.pre does ("gpt-2",
// "llama-bpe", "qwen2", ...), or "" for SentencePiece-style tokenizers.
// A tokenizer.json whose pre-tokenizer matches none of the names gives
// "".
func (t *Tokenizer) Pre() string { return t.preName }

// TokenText returns the text of id as a chat template or a user writes
// it: special tokens by their name ("<s>", "<|im_start|>"), other tokens as
// the bytes they decode to. It is "" for an id out of range.
func (t *Tokenizer) TokenText(id int) string {
	if id < 0 || id >= len(t.pieces) {
		return ""
	}
	switch {
	case t.src == fromLlama2C && (id == t.bos || id == t.eos):
		return strings.TrimSpace(t.pieces[id]) // "\n<s>\n" → "<s>"
	case t.types[id] == TypeControl || t.types[id] == TypeUnknown:
		return t.pieces[id]
	}
	return string(t.appendPiece(nil, -1, id))
}

// Piece returns the piece of id as stored in its source (llama2.c pieces
// use ' ' for space, the others "▁"), or "" when id is out of range.
func (t *Tokenizer) Piece(id int) string {
	if id < 0 || id >= len(t.pieces) {
		return ""
	}
	return t.pieces[id]
}

// Type returns the token type (TypeNormal, TypeControl, ...) of id, or
// TypeUndefined when id is out of range.
func (t *Tokenizer) Type(id int) int32 {
	if id < 0 || id >= len(t.types) {
		return TypeUndefined
	}
	return t.types[id]
}

// index builds the lookup tables from pieces, types, scores and the
// special ids. inLookup says which ids text may produce; nil means the
// default of the algorithm (see Tokenizer.lookup).
func (t *Tokenizer) index(inLookup func(id int) bool) error {
	n := len(t.pieces)
	if n == 0 {
		return fmt.Errorf("%w: empty vocabulary", ErrFormat)
	}
	if n > 1<<31-1 {
		return fmt.Errorf("%w: %d tokens do not fit int32 ids", ErrFormat, n)
	}
	all := make(map[string]int32, n)
	for id, p := range t.pieces {
		if prev, dup := all[p]; dup {
			return fmt.Errorf("%w: piece %q has two ids, %d and %d", ErrFormat, p, prev, id)
		}
		all[p] = int32(id)
	}
	if inLookup == nil {
		inLookup = func(id int) bool {
			if t.alg == byRank {
				return true
			}
			switch t.types[id] {
			case TypeUnknown, TypeControl, TypeUnused, TypeByte:
				return false
			}
			return true
		}
	}
	t.lookup = make(map[string]int32, n)
	for id, p := range t.pieces {
		if !inLookup(id) {
			continue
		}
		if t.byteLevel {
			raw, ok := byteLevelBytes(p)
			if !ok {
				continue // only reachable as an added token
			}
			p = raw
		}
		if _, dup := t.lookup[p]; !dup {
			t.lookup[p] = int32(id)
		}
	}
	t.dec = make([]decodeEntry, n)
	for id, p := range t.pieces {
		t.dec[id] = t.decodeEntry(id, p)
	}
	return nil
}

// decodeEntry is what id, of piece p, contributes to decoded text.
func (t *Tokenizer) decodeEntry(id int, p string) decodeEntry {
	ty := t.types[id]
	switch {
	case ty == TypeControl:
		return decodeEntry{raw: -1}
	case t.byteLevel:
		if ty == TypeByte {
			if b, ok := parseBytePiece(p); ok {
				return decodeEntry{raw: int16(b)}
			}
		}
		if ty != TypeUserDefined {
			if raw, ok := byteLevelBytes(p); ok {
				return decodeEntry{text: raw, raw: -1}
			}
		}
		return decodeEntry{text: p, raw: -1}
	}
	if b, ok := parseBytePiece(p); ok {
		return decodeEntry{raw: int16(b)}
	}
	if ty == TypeUserDefined && t.src == fromVocab {
		return decodeEntry{text: p, raw: -1} // llama.cpp copies user-defined tokens verbatim
	}
	if t.space != " " {
		p = strings.ReplaceAll(p, t.space, " ")
	}
	return decodeEntry{text: p, raw: -1}
}

// parseBytePiece reports whether p is a byte piece "<0xHH>" (hex digits of
// either case, as llama2.c's sscanf and Hugging Face's ByteFallback decoder
// accept) and returns the byte.
func parseBytePiece(p string) (byte, bool) {
	if len(p) != 6 || p[0] != '<' || p[1] != '0' || p[2] != 'x' || p[5] != '>' {
		return 0, false
	}
	hi, ok1 := unhex(p[3])
	lo, ok2 := unhex(p[4])
	return hi<<4 | lo, ok1 && ok2
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// bytePiece is the canonical piece of byte b, "<0xHH>" with upper-case hex.
func bytePiece(b byte) string {
	const hex = "0123456789ABCDEF"
	return string([]byte{'<', '0', 'x', hex[b>>4], hex[b&15], '>'})
}

// checkSpecial validates a special id against the vocabulary size,
// normalising every negative value to -1.
func checkSpecial(name string, id, n int) (int, error) {
	if id < 0 {
		return -1, nil
	}
	if id >= n {
		return -1, fmt.Errorf("%w: %s id %d out of range [0, %d)", ErrFormat, name, id, n)
	}
	return id, nil
}
