package tokenizer_test

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hlmproject/hlm/internal/refs"
	"github.com/hlmproject/hlm/internal/sharedtest"
	"github.com/hlmproject/hlm/tokenizer"
	"golang.org/x/text/unicode/norm"
)

// TestGPT2Directory reads GPT-2's vocab.json + merges.txt and requires the
// ids of llama.cpp's GPT-2 vocabulary (whose own ids the llama.cpp
// tokenizer test checks against Hugging Face's) on the corpus and on
// random text.
func TestGPT2Directory(t *testing.T) {
	dir := sharedtest.Path(t, "models/gpt2-tokenizer")
	tok, err := tokenizer.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	ref := loadGGUFVocab(t, filepath.Join(refs.LlamaCpp(t), "models", "ggml-vocab-gpt-2.gguf"))
	if tok.VocabSize() != ref.VocabSize() {
		t.Fatalf("vocabulary of %d tokens, llama.cpp's has %d", tok.VocabSize(), ref.VocabSize())
	}
	if tok.Pre() != "gpt-2" || tok.BOS() != 50256 || tok.EOS() != 50256 || tok.AddsBOS() {
		t.Errorf("pre %q BOS %d EOS %d adds BOS %v, want gpt-2, 50256, 50256, false", tok.Pre(), tok.BOS(), tok.EOS(), tok.AddsBOS())
	}
	texts := append(slices.Clone(corpus), randomTexts(rand.New(rand.NewPCG(3, 4)), 1000)...)
	for _, text := range texts {
		got, want := tok.Encode(text, true), ref.Encode(text, true)
		if !slices.Equal(got, want) {
			t.Fatalf("%q:\n got %v\nwant %v", text, got, want)
		}
		if a, b := tok.Decode(got), ref.Decode(want); a != b {
			t.Fatalf("Decode: %q, llama.cpp vocabulary %q", a, b)
		}
	}
}

// TestVocabRoundTripReal converts the real tokenizer.json files to GGUF
// form and back: the same ids on the corpus and random text, and the
// pre-tokenizer named as llama.cpp's converter names it.
func TestVocabRoundTripReal(t *testing.T) {
	wantPre := map[string]string{"llama3": "llama-bpe", "qwen3": "qwen2", "deepseek_v3": "deepseek-v3", "gemma3": ""}
	texts := append(slices.Clone(corpus), randomTexts(rand.New(rand.NewPCG(5, 6)), 500)...)
	for _, name := range realTokenizers {
		t.Run(name, func(t *testing.T) {
			tok, _ := realTokenizer(t, name)
			v := tok.Vocab()
			if v.Pre != wantPre[name] {
				t.Errorf("Pre = %q, want %q", v.Pre, wantPre[name])
			}
			back, err := tokenizer.FromVocab(v)
			if err != nil {
				t.Fatal(err)
			}
			for _, text := range texts {
				if name == "qwen3" {
					// GGUF has no normalizer, and llama.cpp applies none:
					// Qwen's NFC is lost, text already in NFC is not.
					text = norm.NFC.String(text)
				}
				a, b := tok.Encode(text, true), back.Encode(text, true)
				if !slices.Equal(a, b) {
					t.Fatalf("%q:\n tokenizer.json %v\n   GGUF form %v", text, a, b)
				}
			}
			if tok.ChatTemplate() != back.ChatTemplate() || tok.ChatTemplate() == "" {
				t.Errorf("chat template lost (%d and %d bytes)", len(tok.ChatTemplate()), len(back.ChatTemplate()))
			}
		})
	}
}

// TestEOG checks the end-of-generation ids of the real tokenizers.
func TestEOG(t *testing.T) {
	for _, c := range []struct {
		name string
		want []string
	}{
		{"llama3", []string{"<|end_of_text|>", "<|eot_id|>"}},
		{"qwen3", []string{"<|endoftext|>", "<|im_end|>"}}, // its fill-in-the-middle tokens are not special
		{"gemma3", []string{"<eos>", "<end_of_turn>"}},
		{"deepseek_v3", []string{"<｜end▁of▁sentence｜>"}},
	} {
		tok, _ := realTokenizer(t, c.name)
		var got []string
		for _, id := range tok.EOG() {
			got = append(got, tok.TokenText(id))
		}
		slices.Sort(got)
		slices.Sort(c.want)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: EOG %q, want %q", c.name, got, c.want)
		}
	}
}
