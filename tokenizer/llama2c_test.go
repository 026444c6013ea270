package tokenizer

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// binToken is one entry of a llama2.c tokenizer.bin.
type binToken struct {
	piece string
	score float32
}

// llama2cBin lays tokens out as a llama2.c tokenizer.bin.
func llama2cBin(maxLen int32, toks []binToken) []byte {
	out := binary.LittleEndian.AppendUint32(nil, uint32(maxLen))
	for _, tk := range toks {
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(tk.score))
		out = binary.LittleEndian.AppendUint32(out, uint32(len(tk.piece)))
		out = append(out, tk.piece...)
	}
	return out
}

// tinyLlama2CTokens is a small llama2.c vocabulary in the standard layout
// (<unk>, BOS, EOS, 256 byte tokens) followed by the pieces listed, whose
// ids start at 259.
func tinyLlama2CTokens(extra ...binToken) []binToken {
	toks := []binToken{{"<unk>", 0}, {"\n<s>\n", 0}, {"\n</s>\n", 0}}
	for b := 0; b < 256; b++ {
		toks = append(toks, binToken{bytePiece(byte(b)), 0})
	}
	return append(toks, extra...)
}

// tinyExtra are the pieces of the tiny llama2.c vocabulary used by the
// table tests; the comment gives each id.
var tinyExtra = []binToken{
	{" ", -100},                     // 259
	{"a", -100},                     // 260
	{"b", -100},                     // 261
	{"c", -100},                     // 262
	{"ab", -1},                      // 263
	{"bc", -2},                      // 264
	{"abc", -3},                     // 265
	{" a", -5},                      // 266
	{"aa", -4},                      // 267
	{"x", -100},                     // 268
	{"y", -100},                     // 269
	{"xy", -2e10},                   // 270: at or below -1e10: never merged
	{"yx", float32(math.NaN())},     // 271: NaN: never merged
	{"日", -100},                     // 272
	{" 日", -6},                      // 273
	{"ca", -4},                      // 274: ties with "aa"
	{"  ", -7},                      // 275
	{"\n<s>", -1},                   // 276: pieces that concatenate to BOS
	{"\n", -100},                    // 277
	{"<s>\n", -1},                   // 278
	{"q", -100},                     // 279
	{string([]byte{0xC3, 0xA9}), 1}, // 280: é
	{"<", -100},                     // 281
	{"s", -100},                     // 282
	{">", -100},                     // 283
	{"<s", -1},                      // 284
	{"<s>", -1},                     // 285
}

func tinyLlama2C(tb testing.TB) *Tokenizer {
	tb.Helper()
	tok, err := ParseLlama2C(llama2cBin(8, tinyLlama2CTokens(tinyExtra...)), 0)
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

func TestLlama2CEncodeTiny(t *testing.T) {
	tok := tinyLlama2C(t)
	for _, c := range []struct {
		text string
		want []int // without BOS
	}{
		{"", nil},
		{"a", []int{266}},                                    // " " + "a" → " a"
		{"ab", []int{259, 263}},                              // "ab" (-1) beats " a" (-5)
		{"abc", []int{259, 265}},                             // ab, then abc
		{"bc", []int{259, 264}},                              // no " b": bc
		{"aaa", []int{259, 267, 260}},                        // "aa" beats " a"; leftmost of two "aa"
		{"caa", []int{259, 274, 260}},                        // "ca" and "aa" tie at -4: leftmost wins
		{"xy", []int{259, 268, 269}},                         // score -2e10: never merged
		{"yx", []int{259, 269, 268}},                         // NaN score: never merged
		{"z", []int{259, 'z' + 3}},                           // unknown code point: byte token
		{"日", []int{273}},                                    // code point piece, then " 日"
		{"é", []int{259, 280}},                               // é is a piece
		{"ü", []int{259, 0xC3 + 3, 0xBC + 3}},                // ü is not: two byte tokens
		{"\x80a", []int{259, 0x80 + 3, 260}},                 // stray continuation byte
		{"a\x80", []int{259, 'a' + 3, 0x83}},                 // "a\x80" is one llama2.c group
		{"  a", []int{275, 266}},                             // "  " (-7) after " a" (-5)
		{"\n<s>\n", []int{259, 276, 277}},                    // never merged into BOS (llama2.c would)
		{"\u2581", []int{259, 0xE2 + 3, 0x96 + 3, 0x81 + 3}}, // U+2581 is no space here
	} {
		got := encode(tok, c.text, false, false)
		if !slices.Equal(got, c.want) {
			t.Errorf("Encode(%q) = %v, want %v", c.text, got, c.want)
		}
		if got, want := encode(tok, c.text, true, true), append(append([]int{1}, c.want...), 2); !slices.Equal(got, want) {
			t.Errorf("Encode(%q, bos, eos) = %v, want %v", c.text, got, want)
		}
	}
}

// TestLlama2CReference pins edge cases against ids printed by llama2.c's
// own encode (run.c, compiled locally) on the shared tokenizers: invalid
// UTF-8 grouped the llama2.c way, stray continuation bytes, special-token
// text, U+2581.
func TestLlama2CReference(t *testing.T) {
	for _, v := range []struct {
		file  string
		size  int
		cases []struct {
			text string
			ids  []int
		}
	}{
		{llama2Bin, 32000, []struct {
			text string
			ids  []int
		}{
			{"", []int{1}},
			{"\n", []int{1, 29871, 13}},
			{"a\x80b", []int{1, 29871, 100, 131, 29890}},
			{"\xe6\x97", []int{1, 29871, 233, 154}},
			{"\xff\xfe", []int{1, 29871, 258, 257}},
			{"<s>", []int{1, 529, 29879, 29958}},
			{"<unk>", []int{1, 529, 2960, 29958}},
			{"  ", []int{1, 1678}},
			{"\xc3\xa9\x80\x80\x80", []int{1, 29871, 198, 172, 131, 131, 131}},
			{"Hello\x80\x80\x80\x80\x80world", []int{1, 19339, 114, 131, 131, 131, 131, 131, 11526}},
			{"\xe2\x96\x81", []int{1, 29871, 229, 153, 132}},
			{"\xe2\x96\x81the", []int{1, 29871, 229, 153, 132, 1552}},
			{" \x80", []int{1, 29871, 35, 131}},
			{"\xf0\x9f\x99\x82\xf0\x9f", []int{1, 29871, 243, 162, 156, 133, 243, 162}},
			{"line one\nline two\n", []int{1, 1196, 697, 13, 1220, 1023, 13}},
			{"\xed\xa0\x80", []int{1, 29871, 240, 163, 131}},
		}},
		{tok512Bin, 512, []struct {
			text string
			ids  []int
		}{
			{"", []int{1}},
			{"\n", []int{1, 410, 13}},
			{"a\x80b", []int{1, 410, 100, 131, 430}},
			{"<unk>", []int{1, 410, 504, 379, 433, 505}},
			{"  ", []int{1, 410, 410, 410}},
			{"Hello\x80\x80\x80\x80\x80world", []int{1, 346, 306, 114, 131, 131, 131, 131, 131, 424, 304, 341}},
			{"\xe2\x96\x81the", []int{1, 410, 229, 153, 132, 413, 260}},
			{"line one\nline two\n", []int{1, 278, 271, 411, 353, 411, 13, 421, 271, 411, 259, 424, 414, 13}},
		}},
	} {
		tok := loadLlama2C(t, v.file, v.size)
		for _, c := range v.cases {
			if got := encode(tok, c.text, true, false); !slices.Equal(got, c.ids) {
				t.Errorf("%s: Encode(%q)\n got %v\nwant %v", v.file, c.text, got, c.ids)
			}
		}
	}
}

func TestLlama2CDecodeTiny(t *testing.T) {
	tok := tinyLlama2C(t)
	for _, c := range []struct {
		ids  []int
		want string
	}{
		{nil, ""},
		{[]int{266}, " a"},                          // no BOS: the space stays
		{[]int{1, 266}, "a"},                        // after BOS it goes
		{[]int{1, 259, 266}, " a"},                  // only from the piece right after BOS
		{[]int{1, ' ' + 3, 260}, " a"},              // a byte token is not stripped
		{[]int{260, 1, 266, 2}, "aa"},               // BOS and EOS decode to nothing
		{[]int{0}, "<unk>"},                         // the unknown token keeps its piece
		{[]int{-1, 99999}, "\uFFFD\uFFFD"},          // out of range
		{[]int{0xE6 + 3, 0x97 + 3, 0xA5 + 3}, "日"},  // bytes forming UTF-8
		{[]int{0xE6 + 3, 0x97 + 3}, "\uFFFD\uFFFD"}, // truncated: one U+FFFD per byte
		{[]int{0xE6 + 3, 0x97 + 3, 260}, "\uFFFD\uFFFDa"},
		{[]int{0xFF + 3, 260}, "\uFFFDa"},
	} {
		if got := tok.Decode(c.ids); got != c.want {
			t.Errorf("Decode(%v) = %q, want %q", c.ids, got, c.want)
		}
	}
}

func TestParseLlama2CErrors(t *testing.T) {
	good := tinyLlama2CTokens()
	for _, c := range []struct {
		name string
		data []byte
		size int
		want error
	}{
		{"empty", nil, 0, ErrFormat},
		{"short header", []byte{1, 0, 0}, 0, ErrFormat},
		{"negative max_token_length", llama2cBin(-1, good), 0, ErrFormat},
		{"truncated token header", append(llama2cBin(8, good), 1, 2, 3, 4, 5), 0, ErrFormat},
		{"truncated piece", llama2cBin(8, good)[:len(llama2cBin(8, good))-1], 0, ErrFormat},
		{"negative length", append(llama2cBin(8, good), 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF), 0, ErrFormat},
		{"huge length", append(llama2cBin(1<<30, good), 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0x7F, 'a'), 0, ErrFormat},
		{"piece longer than max_token_length", llama2cBin(5, good), 0, ErrFormat},
		{"too few tokens", llama2cBin(8, good[:2]), 0, ErrFormat},
		{"duplicate piece", llama2cBin(8, append(tinyLlama2CTokens(), binToken{"a", 0}, binToken{"a", 1})), 0, ErrFormat},
		{"vocab size mismatch", llama2cBin(8, good), 32000, ErrVocabSize},
	} {
		tok, err := ParseLlama2C(c.data, c.size)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err %v, want %v", c.name, err, c.want)
		}
		if tok != nil {
			t.Errorf("%s: non-nil tokenizer with an error", c.name)
		}
	}
	if _, err := ParseLlama2C(llama2cBin(8, good), len(good)); err != nil {
		t.Errorf("exact vocab size: %v", err)
	}
	if _, err := LoadLlama2C("testdata/does-not-exist.bin", 0); err == nil || !strings.Contains(err.Error(), "does-not-exist") {
		t.Errorf("missing file: err %v", err)
	}
}

// TestLlama2CVocab checks the GGUF form of a llama2.c tokenizer: pieces in
// SentencePiece form, types, and special tokens.
func TestLlama2CVocab(t *testing.T) {
	tok := tinyLlama2C(t)
	v := tok.Vocab()
	if v.Model != "llama" || len(v.Merges) != 0 || !v.AddSpacePrefix || !v.AddBOS || v.AddEOS ||
		v.BOS != 1 || v.EOS != 2 || v.UNK != 0 {
		t.Errorf("Vocab header %+v", Vocab{Model: v.Model, BOS: v.BOS, EOS: v.EOS, UNK: v.UNK,
			AddBOS: v.AddBOS, AddEOS: v.AddEOS, AddSpacePrefix: v.AddSpacePrefix})
	}
	for id, want := range map[int]struct {
		piece string
		typ   int32
	}{
		// BOS keeps its llama2.c piece: "<s>" is taken by a normal piece.
		0: {"<unk>", TypeUnknown}, 1: {"\n<s>\n", TypeControl}, 2: {"</s>", TypeControl},
		3: {"<0x00>", TypeByte}, 258: {"<0xFF>", TypeByte},
		259: {"▁", TypeNormal}, 266: {"▁a", TypeNormal}, 275: {"▁▁", TypeNormal},
	} {
		if v.Tokens[id] != want.piece || v.Types[id] != want.typ {
			t.Errorf("token %d: %q type %d, want %q type %d", id, v.Tokens[id], v.Types[id], want.piece, want.typ)
		}
	}
	if tok.Piece(266) != " a" || tok.Piece(-1) != "" || tok.Piece(1<<20) != "" {
		t.Errorf("Piece keeps llama2.c pieces: %q %q %q", tok.Piece(266), tok.Piece(-1), tok.Piece(1<<20))
	}
	if v.Scores[266] != -5 {
		t.Errorf("score of 266 = %g, want -5", v.Scores[266])
	}
	back, err := FromVocab(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"", "a", "abc aaa caa", " 日 é ü", "xy yx", "\n<s>\n", "  a  b", "\x80a\xff"} {
		if got, want := encode(back, text, true, true), encode(tok, text, true, true); !slices.Equal(got, want) {
			t.Errorf("after Vocab round trip Encode(%q) = %v, want %v", text, got, want)
		}
		ids := encode(tok, text, true, true)
		if got, want := back.Decode(ids), tok.Decode(ids); got != want {
			t.Errorf("after Vocab round trip Decode(%v) = %q, want %q", ids, got, want)
		}
	}
}

// TestLlama2CVocabCollision: a llama2.c piece holding a literal U+2581
// cannot be told from a space in SentencePiece form, so FromVocab refuses
// the converted vocabulary instead of encoding differently.
func TestLlama2CVocabCollision(t *testing.T) {
	tok, err := ParseLlama2C(llama2cBin(8, tinyLlama2CTokens(binToken{" ", -1}, binToken{"\u2581", -1})), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FromVocab(tok.Vocab()); !errors.Is(err, ErrFormat) {
		t.Errorf("FromVocab of colliding pieces: err %v, want ErrFormat", err)
	}
}

// TestLlama2CSpecialTokens: "<unk>", "<s>" and "</s>" written in a text
// become their ids (0, 1, 2) as in llama.cpp, which gives a llama2.c
// tokenizer's special tokens those names when it converts one; plain text
// with PlainSpecial; and the same ids as the tokenizer's GGUF form
// (FromVocab of Vocab) either way. The GGUF form is what hlm convert
// writes and llama.cpp reads (cmd/hlm TestBuiltinTokenizesInLlamaCpp
// compares with llama.cpp itself).
func TestLlama2CSpecialTokens(t *testing.T) {
	tok, err := ParseLlama2C(llama2cBin(8, tinyLlama2CTokens(
		binToken{" ", -100}, binToken{"a", -100}, binToken{" a", -5}, // 259, 260, 261
		binToken{"<", -100}, binToken{"s", -100}, binToken{">", -100}, // 262, 263, 264
	)), 0)
	if err != nil {
		t.Fatal(err)
	}
	back, err := FromVocab(tok.Vocab())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		text            string
		parsed, spelled []int // without BOS, special tokens parsed / spelled
	}{
		{"<s>", []int{1}, []int{259, 262, 263, 264}},
		{"</s>", []int{2}, []int{259, 262, '/' + 3, 263, 264}},
		{"<unk>", []int{0}, []int{259, 262, 'u' + 3, 'n' + 3, 'k' + 3, 264}},
		{"a<s>a", []int{261, 1, 261}, []int{261, 262, 263, 264, 260}}, // a space before the text after a special token, as llama.cpp adds
		{"<s><s>", []int{1, 1}, []int{259, 262, 263, 264, 262, 263, 264}},
		{"\n<s>\n", []int{259, '\n' + 3, 1, 259, '\n' + 3}, []int{259, '\n' + 3, 262, 263, 264, '\n' + 3}},
		{"<s", []int{259, 262, 263}, []int{259, 262, 263}},
	} {
		for _, mode := range []struct {
			plain bool
			want  []int
		}{{false, c.parsed}, {true, c.spelled}} {
			o := EncodeOptions{PlainSpecial: mode.plain}
			if got := tok.EncodeWith(c.text, o); !slices.Equal(got, mode.want) {
				t.Errorf("Encode(%q, PlainSpecial %v) = %v, want %v", c.text, mode.plain, got, mode.want)
			}
			if got := back.EncodeWith(c.text, o); !slices.Equal(got, mode.want) {
				t.Errorf("GGUF form: Encode(%q, PlainSpecial %v) = %v, want %v", c.text, mode.plain, got, mode.want)
			}
		}
	}
}
