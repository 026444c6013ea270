package tokenizer

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
)

// llama2.c tokenizer.bin layout, little-endian, no magic and no count:
//
//	int32   max_token_length   longest piece in bytes
//	repeated until end of file, once per token id 0, 1, 2, ...:
//	  float32 score            merge priority (higher merges first)
//	  int32   len              piece length in bytes
//	  [len]byte piece          raw bytes; ' ' for space (the export
//	                           replaced SentencePiece's "▁")
//
// Ids 0, 1, 2 are <unk>, BOS ("\n<s>\n") and EOS ("\n</s>\n"); ids 3..258
// are the byte tokens <0x00>..<0xFF>, which llama2.c's byte fallback
// addresses as byte+3 without looking at them.
const (
	llama2cBOS       = 1
	llama2cEOS       = 2
	llama2cUNK       = 0
	llama2cByteStart = 3
)

// LoadLlama2C reads a llama2.c tokenizer.bin file; see ParseLlama2C.
func LoadLlama2C(path string, vocabSize int) (*Tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	t, err := ParseLlama2C(data, vocabSize)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// ParseLlama2C parses a llama2.c tokenizer.bin. The file does not store the
// vocabulary size: tokens are read to the end of data. If vocabSize > 0 the
// file must hold exactly that many tokens (ErrVocabSize otherwise).
//
// Encoding is llama2.c's encode; decoding is its decode. BOS is 1, EOS 2,
// UNK 0 (only used when a byte has no byte token, which llama2.c itself
// never checks).
func ParseLlama2C(data []byte, vocabSize int) (*Tokenizer, error) {
	if len(data) < 4 {
		return nil, fmt.Errorf("%w: llama2.c tokenizer: %d bytes, want at least a 4-byte header", ErrFormat, len(data))
	}
	maxLen := int32(binary.LittleEndian.Uint32(data))
	if maxLen < 0 {
		return nil, fmt.Errorf("%w: llama2.c tokenizer: negative max_token_length %d", ErrFormat, maxLen)
	}
	var pieces []string
	var scores []float32
	for off := 4; off < len(data); {
		id := len(pieces)
		if len(data)-off < 8 {
			return nil, fmt.Errorf("%w: llama2.c token %d at offset %d: truncated header (%d of 8 bytes)",
				ErrFormat, id, off, len(data)-off)
		}
		score := math.Float32frombits(binary.LittleEndian.Uint32(data[off:]))
		n := int64(int32(binary.LittleEndian.Uint32(data[off+4:])))
		off += 8
		switch {
		case n < 0:
			return nil, fmt.Errorf("%w: llama2.c token %d: negative length %d", ErrFormat, id, n)
		case n > int64(len(data)-off):
			return nil, fmt.Errorf("%w: llama2.c token %d: length %d exceeds the %d bytes left",
				ErrFormat, id, n, len(data)-off)
		case n > int64(maxLen):
			return nil, fmt.Errorf("%w: llama2.c token %d: length %d exceeds max_token_length %d",
				ErrFormat, id, n, maxLen)
		}
		pieces = append(pieces, string(data[off:off+int(n)]))
		scores = append(scores, score)
		off += int(n)
	}
	if vocabSize > 0 && len(pieces) != vocabSize {
		return nil, fmt.Errorf("%w: llama2.c tokenizer has %d tokens, want %d", ErrVocabSize, len(pieces), vocabSize)
	}
	if len(pieces) < 3 {
		return nil, fmt.Errorf("%w: llama2.c tokenizer has %d tokens, need at least 3 (<unk>, BOS, EOS)",
			ErrFormat, len(pieces))
	}
	t := &Tokenizer{
		alg:       byScore,
		src:       fromLlama2C,
		pieces:    pieces,
		scores:    scores,
		types:     make([]int32, len(pieces)),
		space:     " ",
		addPrefix: true,
		bos:       llama2cBOS,
		eos:       llama2cEOS,
		unk:       llama2cUNK,
		eot:       -1,
		eom:       -1,
		addBOS:    true,
		strip:     stripAfterBOS,
	}
	for id := range t.types {
		t.types[id] = TypeNormal
	}
	t.types[llama2cUNK] = TypeUnknown
	t.types[llama2cBOS] = TypeControl
	t.types[llama2cEOS] = TypeControl
	for b := 0; b < 256; b++ {
		t.byteToken[b] = -1
		id := b + llama2cByteStart
		if id >= len(pieces) {
			continue
		}
		t.byteToken[b] = int32(id)
		if pieces[id] == bytePiece(byte(b)) {
			t.types[id] = TypeByte
		}
	}
	if err := t.index(nil); err != nil {
		return nil, err
	}
	t.added = newAddedVocab(llama2cSpecials(t), nil, true)
	t.eog = t.findEOG(nil)
	return t, nil
}

// llama2cSpecials are the special tokens matched in text: <unk>, BOS and
// EOS by the names the GGUF form gives them (Vocab: "<s>" and "</s>" for
// the export's "\n<s>\n" and "\n</s>\n"). llama.cpp names them so when it
// converts a llama2.c tokenizer (examples/convert-llama2c-to-ggml: ids 0,
// 1, 2 are "<unk>" of type unknown and "<s>", "</s>" of type control), and
// then matches them in text as it matches any GGUF vocabulary's special
// tokens; this keeps a llama2.c tokenizer and its GGUF form id for id
// equal. (llama2.c's own encoder, which has no special tokens, spells them
// as text, as EncodeOptions.PlainSpecial does.)
func llama2cSpecials(t *Tokenizer) []addedToken {
	names := t.Vocab().Tokens
	var out []addedToken
	for _, id := range []int{t.unk, t.bos, t.eos} {
		out = append(out, addedToken{id: int32(id), content: names[id], control: true})
	}
	return out
}
