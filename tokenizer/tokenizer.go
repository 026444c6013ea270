package tokenizer

import (
	"errors"
	"fmt"
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
	stripNone stripRule = iota
	// stripAfterBOS drops a leading space from the piece that directly
	// follows BOS (llama2.c's decode, SentencePiece).
	stripAfterBOS
	// stripAtStart drops up to stripN leading spaces from the start of the
	// decoded text (Hugging Face's Strip decoder after Fuse).
	stripAtStart
)

// Tokenizer encodes text to token ids and decodes ids to text. It is
// immutable after construction and safe for concurrent use.
type Tokenizer struct {
	alg algorithm
	src source

	pieces []string  // [vocab] piece of each id, as stored in the source
	scores []float32 // [vocab] merge scores (byScore); nil for HF BPE
	types  []int32   // [vocab] Type* of each id

	// lookup maps a piece to its id for the pieces that text may produce:
	// for byScore every piece except unknown, control, unused and byte
	// tokens; for byRank the BPE model's vocabulary (every piece when
	// built from a Vocab).
	lookup map[string]int32

	space     string // what a ' ' in the text becomes: " " (llama2.c) or "▁"
	addPrefix bool   // prepend a space to non-empty text (add_dummy_prefix)

	bos, eos, unk  int // ids, -1 when absent
	addBOS, addEOS bool

	byteToken [256]int32 // byte-fallback token of each byte, -1 if none

	// byRank only.
	merges       map[uint64]merge // pairKey(left, right) → rank and result
	mergeList    [][2]string      // merges in rank order, for Vocab
	fuseUnk      bool             // consecutive unknown characters give one unk
	ignoreMerges bool             // a whole word in the vocabulary is one token

	// Decoding.
	dec   []decodeEntry // [vocab]
	strip stripRule
	// stripN is how many leading spaces stripAtStart removes.
	stripN int

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
		if inLookup(id) {
			t.lookup[p] = int32(id)
		}
	}
	t.dec = make([]decodeEntry, n)
	for id, p := range t.pieces {
		e := decodeEntry{raw: -1}
		if b, ok := parseBytePiece(p); ok {
			e.raw = int16(b)
		} else if t.types[id] != TypeControl {
			e.text = p
			if t.space != " " {
				e.text = strings.ReplaceAll(p, t.space, " ")
			}
		}
		t.dec[id] = e
	}
	return nil
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
