package tokenizer

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"
)

// byteFallbackVariant returns the TinyStories tokenizer.json with byte
// tokens appended as testdata/gen_hf_golden.js does: <0x00>..<0xFF> at ids
// 2048.., except <0x40> and <0xF0>.
func byteFallbackVariant(tb testing.TB, data []byte) []byte {
	tb.Helper()
	var f map[string]any
	if err := json.Unmarshal(data, &f); err != nil {
		tb.Fatal(err)
	}
	vocab := f["model"].(map[string]any)["vocab"].(map[string]any)
	next := len(vocab)
	for b := 0; b < 256; b++ {
		if b == 0x40 || b == 0xF0 {
			continue
		}
		vocab[fmt.Sprintf("<0x%02X>", b)] = next
		next++
	}
	out, err := json.Marshal(f)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// TestHFGoldenExtra compares with ids from the tokenizers library itself
// (testdata/hf_golden.json, made by testdata/gen_hf_golden.js), including
// byte fallback and its ordering with fused unknowns.
func TestHFGoldenExtra(t *testing.T) {
	data, err := os.ReadFile(sharedFile(t, tinyStoriesHF))
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("testdata/hf_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Tokenizer string `json:"tokenizer"`
		Text      string `json:"text"`
		IDs       []int  `json:"ids"`
	}
	if err := json.Unmarshal(golden, &cases); err != nil {
		t.Fatal(err)
	}
	toks := map[string]*Tokenizer{}
	backs := map[string]*Tokenizer{} // through Vocab and FromVocab
	for name, src := range map[string][]byte{"tinystories": data, "bytes": byteFallbackVariant(t, data)} {
		if toks[name], err = ParseHFJSON(src); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if backs[name], err = FromVocab(toks[name].Vocab()); err != nil {
			t.Fatalf("%s: FromVocab(Vocab()): %v", name, err)
		}
	}
	for _, c := range cases {
		tok, back := toks[c.Tokenizer], backs[c.Tokenizer]
		if tok == nil {
			t.Fatalf("unknown tokenizer %q in golden", c.Tokenizer)
		}
		if got := encode(tok, c.Text, true, false); !slices.Equal(got, c.IDs) {
			t.Errorf("%s: Encode(%q)\n got %v\nwant %v", c.Tokenizer, c.Text, got, c.IDs)
		}
		if got := encode(back, c.Text, true, false); !slices.Equal(got, c.IDs) {
			t.Errorf("%s after Vocab round trip: Encode(%q)\n got %v\nwant %v", c.Tokenizer, c.Text, got, c.IDs)
		}
	}
}
