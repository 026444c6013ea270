package tokenizer

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// tinySPMVocab is a SentencePiece-style GGUF vocabulary with byte tokens.
func tinySPMVocab() Vocab {
	v := Vocab{
		Model:          "llama",
		Tokens:         []string{"<unk>", "<s>", "</s>"},
		Scores:         []float32{0, 0, 0},
		Types:          []int32{TypeUnknown, TypeControl, TypeControl},
		BOS:            1,
		EOS:            2,
		UNK:            0,
		AddBOS:         true,
		AddSpacePrefix: true,
	}
	for b := 0; b < 256; b++ {
		v.Tokens = append(v.Tokens, bytePiece(byte(b)))
		v.Scores = append(v.Scores, 0)
		v.Types = append(v.Types, TypeByte)
	}
	for i, p := range []string{"▁", "h", "e", "l", "o", "he", "ll", "llo", "hello", "▁hello", "▁h", "▁▁", "<s", ">", "<", "s"} {
		v.Tokens = append(v.Tokens, p)
		v.Scores = append(v.Scores, -float32(i))
		v.Types = append(v.Types, TypeNormal)
	}
	return v
}

func TestFromVocabSPM(t *testing.T) {
	v := tinySPMVocab()
	tok, err := FromVocab(v)
	if err != nil {
		t.Fatal(err)
	}
	id := func(p string) int { return slices.Index(v.Tokens, p) }
	for _, c := range []struct {
		text string
		want []int
	}{
		{"hello", []int{1, id("▁hello")}},
		{"hello hello", []int{1, id("▁hello"), id("▁hello")}},
		{" h", []int{1, id("▁"), id("▁h")}}, // "▁h" (-10) beats "▁▁" (-11)
		{"x", []int{1, id("▁"), 'x' + 3}},
		{"<s>", []int{1, id("▁"), id("<s"), id(">")}}, // never the control token
	} {
		if got := encode(tok, c.text, true, false); !slices.Equal(got, c.want) {
			t.Errorf("Encode(%q) = %v, want %v", c.text, got, c.want)
		}
	}
	if got := tok.Decode(encode(tok, "hello hello", true, true)); got != "hello hello" {
		t.Errorf("Decode(Encode) = %q", got)
	}

	// Types nil: derived from the pieces and the special ids.
	v.Types = nil
	derived, err := FromVocab(v)
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[int]int32{0: TypeUnknown, 1: TypeControl, 2: TypeControl, 3: TypeByte, 258: TypeByte, 259: TypeNormal} {
		if got := derived.Type(id); got != want {
			t.Errorf("derived type of %d = %d, want %d", id, got, want)
		}
	}
	if derived.Type(-1) != TypeUndefined || derived.Type(1<<20) != TypeUndefined {
		t.Errorf("Type out of range is not TypeUndefined")
	}
	for _, text := range []string{"hello", " hello  x", "<s>", "é"} {
		if a, b := encode(derived, text, true, true), encode(tok, text, true, true); !slices.Equal(a, b) {
			t.Errorf("derived types: Encode(%q) = %v, want %v", text, a, b)
		}
	}
}

// TestFromVocabMergesWithSpaces: GGUF merges are "left right"; pieces may
// themselves contain spaces, and the split that names two pieces is used.
func TestFromVocabMergesWithSpaces(t *testing.T) {
	v := Vocab{
		Model:  "llama",
		Tokens: []string{"<unk>", "a", " ", "a ", "a a", "b"},
		Merges: []string{"a  ", "a  a"},
		BOS:    -1, EOS: -1, UNK: 0,
	}
	// "a  " is a + " "; "a  a" is "a " + "a".
	tok, err := FromVocab(v)
	if err != nil {
		t.Fatal(err)
	}
	// The text's spaces become "▁", so use the pieces directly: no text
	// reaches " "; check the rules instead.
	if m, ok := tok.merges[pairKey(1, 2)]; !ok || m.id != 3 {
		t.Errorf("merge a + ' ' = %+v %v, want id 3", m, ok)
	}
	if m, ok := tok.merges[pairKey(3, 1)]; !ok || m.id != 4 {
		t.Errorf("merge 'a ' + a = %+v %v, want id 4", m, ok)
	}
	if got := tok.Vocab().Merges; !slices.Equal(got, v.Merges) {
		t.Errorf("Vocab().Merges = %q, want %q", got, v.Merges)
	}
}

func TestFromVocabErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		mod  func(*Vocab)
		want error
	}{
		{"gpt2 model", func(v *Vocab) { v.Model = "gpt2" }, ErrUnsupported},
		{"empty model", func(v *Vocab) { v.Model = "" }, ErrUnsupported},
		{"no tokens", func(v *Vocab) { v.Tokens, v.Scores, v.Types = nil, nil, nil }, ErrFormat},
		{"short scores", func(v *Vocab) { v.Scores = v.Scores[:3] }, ErrFormat},
		{"short types", func(v *Vocab) { v.Types = v.Types[:3] }, ErrFormat},
		{"no scores, no merges", func(v *Vocab) { v.Scores = nil }, ErrFormat},
		{"bad type", func(v *Vocab) { v.Types[5] = 9 }, ErrFormat},
		{"negative type", func(v *Vocab) { v.Types[5] = -2 }, ErrFormat},
		{"BOS out of range", func(v *Vocab) { v.BOS = len(v.Tokens) }, ErrFormat},
		{"EOS out of range", func(v *Vocab) { v.EOS = 1 << 40 }, ErrFormat},
		{"UNK out of range", func(v *Vocab) { v.UNK = len(v.Tokens) + 7 }, ErrFormat},
		{"duplicate piece", func(v *Vocab) { v.Tokens[len(v.Tokens)-1] = "he" }, ErrFormat},
		{"byte type on a normal piece", func(v *Vocab) { v.Types[len(v.Types)-1] = TypeByte }, ErrFormat},
		{"merge of missing pieces", func(v *Vocab) { v.Merges = []string{"x y"} }, ErrFormat},
		{"merge without space", func(v *Vocab) { v.Merges = []string{"he"} }, ErrFormat},
		{"merge result missing", func(v *Vocab) { v.Merges = []string{"o h"} }, ErrFormat},
	} {
		v := tinySPMVocab()
		c.mod(&v)
		tok, err := FromVocab(v)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err %v, want %v", c.name, err, c.want)
		}
		if tok != nil {
			t.Errorf("%s: non-nil tokenizer with an error", c.name)
		}
	}
	// Negative special ids mean absent.
	v := tinySPMVocab()
	v.BOS, v.EOS, v.UNK = -7, -1, -1
	tok, err := FromVocab(v)
	if err != nil {
		t.Fatal(err)
	}
	if tok.BOS() != -1 || tok.EOS() != -1 || tok.UNK() != -1 {
		t.Errorf("absent specials: %d %d %d", tok.BOS(), tok.EOS(), tok.UNK())
	}
	if got := encode(tok, "", true, true); len(got) != 0 {
		t.Errorf("Encode without BOS/EOS ids = %v, want []", got)
	}
}

// TestVocabCopies: Vocab returns fresh slices; changing them does not
// change the tokenizer.
func TestVocabCopies(t *testing.T) {
	tok, err := FromVocab(tinySPMVocab())
	if err != nil {
		t.Fatal(err)
	}
	before := encode(tok, "hello", true, false)
	v := tok.Vocab()
	for i := range v.Tokens {
		v.Tokens[i] = "x"
		v.Scores[i] = 1
		v.Types[i] = TypeUnused
	}
	if after := encode(tok, "hello", true, false); !slices.Equal(before, after) {
		t.Errorf("Encode changed after mutating Vocab(): %v → %v", before, after)
	}
}

// ExampleFromVocab builds a tokenizer from GGUF-style data and encodes,
// decodes and streams a text.
func ExampleFromVocab() {
	v := Vocab{
		Model:  "llama",
		Tokens: []string{"<unk>", "<s>", "</s>", "▁", "h", "i", "hi", "▁hi"},
		Scores: []float32{0, 0, 0, -1, -1, -1, -2, -3},
		Types: []int32{TypeUnknown, TypeControl, TypeControl,
			TypeNormal, TypeNormal, TypeNormal, TypeNormal, TypeNormal},
		BOS: 1, EOS: 2, UNK: 0,
		AddSpacePrefix: true,
	}
	tok, err := FromVocab(v)
	if err != nil {
		panic(err)
	}
	ids := encode(tok, "hi hi", true, false)
	fmt.Println(ids)
	fmt.Printf("%q\n", tok.Decode(ids))
	d := tok.NewStreamDecoder()
	for _, id := range ids {
		fmt.Printf("%q ", d.Push(id))
	}
	fmt.Printf("%q\n", d.Flush())
	// Output:
	// [1 7 7]
	// "hi hi"
	// "" "hi" " hi" ""
}

// TestEOGHasEOS: every kind of tokenizer ends a generation at its EOS, and
// at nothing that is not a token of its vocabulary.
func TestEOGHasEOS(t *testing.T) {
	spm, err := FromVocab(tinySPMVocab())
	if err != nil {
		t.Fatal(err)
	}
	for name, tok := range map[string]*Tokenizer{"llama2c": tinyLlama2C(t), "hf": tinyHF(t, nil), "vocab": spm} {
		if tok.EOS() < 0 || !tok.IsEOG(tok.EOS()) {
			t.Errorf("%s: EOS %d is not an end of generation (EOG %v)", name, tok.EOS(), tok.EOG())
		}
		for _, id := range tok.EOG() {
			if id < 0 || id >= tok.VocabSize() {
				t.Errorf("%s: EOG id %d out of range", name, id)
			}
		}
		if len(tok.EOG()) != 1 {
			t.Errorf("%s: EOG %v, want EOS alone", name, tok.EOG())
		}
	}
}
