package tokenizer

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// The parser fuzzers feed hostile bytes to the constructors: they must
// return an error wrapping one of the package's sentinels or a tokenizer
// that encodes and decodes without panicking; every length is bounded by
// the input, so nothing allocates more than a small multiple of it.

// probeTexts are encoded by every tokenizer a fuzzer manages to build.
var probeTexts = []string{"", "a", " hello  world\n", "日本語 🙂 é", "\x80\xff\xe6\x97", "<s></s><unk>", "▁x"}

// checkSentinel fails unless err wraps one of the package's errors.
func checkSentinel(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrVocabSize) {
		t.Fatalf("error does not wrap a sentinel: %v", err)
	}
}

// exercise encodes and decodes the probe texts with a freshly built
// tokenizer, checking ids are in range and streaming matches Decode.
func exercise(t *testing.T, tok *Tokenizer) {
	t.Helper()
	n := tok.VocabSize()
	for _, text := range probeTexts {
		ids := encode(tok, text, true, true)
		for _, id := range ids {
			if id < 0 || id >= n {
				t.Fatalf("Encode(%q) gave id %d outside [0, %d)", text, id, n)
			}
		}
		checkStream(t, tok, ids)
		checkStream(t, tok, append(ids, -1, n, 1<<40))
	}
	for _, id := range []int{-1, 0, n - 1, n} {
		_ = tok.Piece(id)
		_ = tok.Type(id)
	}
}

func FuzzParseLlama2C(f *testing.F) {
	f.Add(llama2cBin(8, tinyLlama2CTokens(tinyExtra...)), 0)
	f.Add(llama2cBin(8, tinyLlama2CTokens()), 259)
	f.Add(llama2cBin(6, []binToken{{"<unk>", 0}, {"\n<s>\n", 0}, {"\n</s>\n", 0}, {" ", -1}, {"a", -2}, {" a", -3}}), 0)
	f.Add([]byte{}, 0)
	f.Add([]byte{0xFF, 0xFF, 0xFF, 0x7F, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0x7F}, 0)
	f.Add([]byte{8, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF}, 3)
	f.Fuzz(func(t *testing.T, data []byte, vocabSize int) {
		tok, err := ParseLlama2C(data, vocabSize)
		if err != nil {
			checkSentinel(t, err)
			return
		}
		exercise(t, tok)
		// The GGUF form may be refused (a piece with a literal "▁"
		// collides with a space) but must not panic.
		if back, err := FromVocab(tok.Vocab()); err != nil {
			checkSentinel(t, err)
		} else {
			exercise(t, back)
		}
	})
}

func FuzzParseHFJSON(f *testing.F) {
	f.Add(hfSpec{vocab: tinyHFVocab, merges: tinyHFMerges, byteFallback: true, fuseUnk: true}.json())
	f.Add(hfSpec{vocab: tinyHFVocab, merges: []any{[]string{"a", "b"}, []string{"▁", "ab"}}, ignoreMerges: true}.json())
	f.Add([]byte(`{"normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
		"decoder": {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
		"added_tokens": [{"id": 3, "content": "<x>", "special": true}],
		"model": {"type": "BPE", "unk_token": null, "vocab": {"a": 0, "▁": 1, "▁a": 2}, "merges": ["▁ a"]}}`))
	f.Add([]byte(`{"model": {"type": "BPE", "vocab": {"a": 99999999999}, "merges": []}}`))
	f.Add([]byte(`{"model": {"type": "Unigram"}}`))
	f.Add([]byte(`{"added_tokens": [{"id": -1}], "model": null}`))
	f.Add([]byte(`[]`))
	f.Add(tinyByteLevelJSON(patLlama3, true))
	f.Add(tinyByteLevelJSON(`(?i:'s)|\s+(?!\S)|[^\s]+`, false))
	f.Add([]byte(`{"added_tokens": [{"id": 3, "content": "<x>", "special": false, "lstrip": true, "rstrip": true, "single_word": true, "normalized": true}],
		"normalizer": {"type": "NFKC"}, "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": true},
		{"type": "Split", "pattern": {"String": "a"}, "behavior": "MergedWithNext", "invert": true}, {"type": "ByteLevel", "use_regex": true}]},
		"decoder": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]}}`))
	f.Add([]byte(`{"pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": true},
		"decoder": {"type": "Metaspace"}, "model": {"type": "BPE", "vocab": {"a": 0, "▁": 1, "▁a": 2}, "merges": ["▁ a"]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tok, err := ParseHFJSON(data)
		if err != nil {
			checkSentinel(t, err)
			return
		}
		exercise(t, tok)
		v := tok.Vocab()
		back, err := FromVocab(v)
		if tok.byteLevel && tok.Pre() == "" {
			// A pre-tokenizer llama.cpp does not know has no GGUF name.
			if !errors.Is(err, ErrUnsupported) {
				t.Fatalf("FromVocab(Vocab()) of a byte-level BPE with an unnamed pre-tokenizer: err %v, want ErrUnsupported", err)
			}
			return
		}
		if len(v.Merges) == 0 {
			// BPE without merges has no GGUF form: neither scores nor
			// merges, which FromVocab refuses.
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("FromVocab(Vocab()) of a BPE without merges: err %v, want ErrFormat", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("FromVocab(Vocab()) of a valid tokenizer.json: %v", err)
		}
		exercise(t, back)
	})
}

// FuzzFromVocab builds vocabularies from fuzzed pieces, types and merges.
// Whatever FromVocab accepts must survive Vocab and FromVocab unchanged.
func FuzzFromVocab(f *testing.F) {
	f.Add("<unk>\n<s>\n</s>\n▁\na\nb\n▁a\nab\n<0x41>", []byte{2, 3, 3, 1, 1, 1, 1, 1, 6}, "", uint32(0x00020100), uint8(1))
	f.Add("<unk>\n▁\na\nb\nab\n▁ab", []byte{}, "a b\n▁ ab", uint32(0x00FFFF00), uint8(1))
	f.Add("a\na", []byte{1, 1}, "", uint32(0xFFFFFF), uint8(0))
	f.Add("a\nb\nab", []byte{1, 9, 1}, "a c", uint32(0xFFFFFF), uint8(2))
	f.Add("x", []byte{6}, "", uint32(0xFFFFFF), uint8(0))
	f.Add("Ġ\nt\nĠt\n<|x|>", []byte{1, 1, 1, 3}, "Ġ t", uint32(0xFFFFFF03), uint8(0x88))
	f.Add("▁\na\n▁a\n\n\n\n<0x41>", []byte{1, 1, 1, 1, 6}, "▁ a", uint32(0xFFFFFFFF), uint8(0xC0))
	f.Fuzz(func(t *testing.T, tokens string, types []byte, merges string, specials uint32, flags uint8) {
		v := Vocab{
			Model:          []string{"llama", "llama", "gpt2", "gemma4"}[flags>>6],
			Pre:            []string{"gpt-2", "llama-bpe", "qwen2", "nonesuch"}[flags>>3&3],
			Tokens:         strings.Split(tokens, "\n"),
			AddSpacePrefix: flags&1 != 0,
			AddBOS:         flags&2 != 0,
			BOS:            int(int8(specials)),
			EOS:            int(int8(specials >> 8)),
			UNK:            int(int8(specials >> 16)),
			EOT:            noneOrID(int(int8(specials >> 24))),
		}
		if merges != "" {
			v.Merges = strings.Split(merges, "\n")
		}
		if flags&4 == 0 {
			v.Scores = make([]float32, len(v.Tokens))
			for i := range v.Scores {
				v.Scores[i] = float32(-i)
			}
		}
		if len(types) > 0 {
			v.Types = make([]int32, len(v.Tokens))
			for i := range v.Types {
				v.Types[i] = int32(types[i%len(types)] % 8)
			}
		}
		tok, err := FromVocab(v)
		if err != nil {
			checkSentinel(t, err)
			return
		}
		exercise(t, tok)
		back, err := FromVocab(tok.Vocab())
		if err != nil {
			t.Fatalf("FromVocab(Vocab()): %v", err)
		}
		for _, text := range append(probeTexts, tokens, merges) {
			a, b := encode(tok, text, true, true), encode(back, text, true, true)
			if !slices.Equal(a, b) {
				t.Fatalf("Vocab round trip: Encode(%q) = %v, want %v", text, b, a)
			}
			if tok.Decode(a) != back.Decode(b) {
				t.Fatalf("Vocab round trip: Decode(%v) differs", a)
			}
		}
	})
}

// fuzzTokenizers are small tokenizers of every kind, each with byte tokens
// for all 256 bytes (so that any valid UTF-8 text round-trips), except the
// tiny HF one.
func fuzzTokenizers(tb testing.TB) map[string]*Tokenizer {
	tb.Helper()
	l2c := tinyLlama2C(tb)
	l2cBack, err := FromVocab(l2c.Vocab())
	if err != nil {
		tb.Fatal(err)
	}
	hfVocab := append([]string(nil), tinyHFVocab[:11]...) // no byte tokens
	hfVocab = append(hfVocab, "bc", "▁abc", "é", "日", "▁日")
	for b := 0; b < 256; b++ {
		hfVocab = append(hfVocab, bytePiece(byte(b)))
	}
	hfFull, err := ParseHFJSON(hfSpec{vocab: hfVocab, merges: append(tinyHFMerges, "▁ 日"), byteFallback: true, fuseUnk: true}.json())
	if err != nil {
		tb.Fatal(err)
	}
	hfBack, err := FromVocab(hfFull.Vocab())
	if err != nil {
		tb.Fatal(err)
	}
	spm, err := FromVocab(tinySPMVocab())
	if err != nil {
		tb.Fatal(err)
	}
	return map[string]*Tokenizer{
		"llama2c":       l2c,
		"llama2c-vocab": l2cBack,
		"hf":            hfFull,
		"hf-vocab":      hfBack,
		"hf-tiny":       tinyHF(tb, nil),
		"hf-nofuse":     tinyHF(tb, func(s *hfSpec) { s.fuseUnk = false }),
		"spm":           spm,
	}
}

// FuzzEncode checks, on arbitrary text, that the fast encoders agree with
// the reference ones, that ids are in range, that streaming matches
// Decode, that the Vocab round trip encodes identically, and that valid
// UTF-8 round-trips through Decode where the vocabulary can represent it.
func FuzzEncode(f *testing.F) {
	for _, s := range []string{"", " ", "a", "abc ab", "aaa caa", "xy yx", "日本語 🙂", "é\x80\xff", "\n<s>\n",
		"  leading and  double", "▁literal", "zéz", "Once upon a time, there was a little girl named Lily."} {
		f.Add(s)
	}
	toks := fuzzTokenizers(f)
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 512 {
			text = text[:512] // keep the O(n²) reference quick
		}
		for name, tok := range toks {
			checkAgainstReference(t, tok, text)
			ids := encode(tok, text, true, false)
			for _, id := range ids {
				if id < 0 || id >= tok.VocabSize() {
					t.Fatalf("%s: id %d out of range", name, id)
				}
			}
			checkStream(t, tok, ids)
			if name == "hf-tiny" || name == "hf-nofuse" || !utf8.ValidString(text) {
				continue
			}
			if strings.Contains(text, "▁") && name != "llama2c" {
				continue // U+2581 is a space in SentencePiece form
			}
			if got := tok.Decode(ids); got != text {
				t.Errorf("%s: Decode(Encode(%q)) = %q", name, text, got)
			}
		}
		if !strings.Contains(text, "▁") {
			for _, pair := range [][2]string{{"llama2c", "llama2c-vocab"}, {"hf", "hf-vocab"}} {
				a, b := encode(toks[pair[0]], text, true, true), encode(toks[pair[1]], text, true, true)
				if !slices.Equal(a, b) {
					t.Errorf("%s vs %s: Encode(%q) = %v vs %v", pair[0], pair[1], text, a, b)
				}
			}
		}
	})
}

// FuzzStreamDecoder streams arbitrary id sequences, in range or not.
func FuzzStreamDecoder(f *testing.F) {
	f.Add([]byte{1, 0, 0xE9, 0, 0x9A, 0, 0xA8, 0}) // BOS, then 日 as bytes
	f.Add([]byte{0xFF, 0xFF, 0x00, 0x80, 3, 0})
	f.Add([]byte{0xF3, 0, 0xA2, 0, 1, 0, 3, 1})
	toks := fuzzTokenizers(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		ids := make([]int, 0, len(data)/2)
		for i := 0; i+1 < len(data); i += 2 {
			ids = append(ids, int(int16(uint16(data[i])|uint16(data[i+1])<<8)))
		}
		for _, tok := range toks {
			checkStream(t, tok, ids)
		}
	})
}
