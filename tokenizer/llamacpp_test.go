package tokenizer_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/internal/refs"
	"github.com/hlmproject/hlm/model/gguf"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/tokenizer"
)

// The vocabularies of llama.cpp's own tokenizer tests (models/ggml-vocab-*
// in its source tree) that hlm reads, and those it refuses. The expected
// ids (.out) were made by Hugging Face's tokenizers from the same texts
// (.inp), as llama.cpp's convert_hf_to_gguf_update.py writes them; llama.cpp's
// test-tokenizer-0 compares itself with them with add_special and
// parse_special off, and so does this test.
var (
	llamaCppAccepted = []string{"command-r", "deepseek-coder", "deepseek-llm", "falcon", "gemma-4", "gpt-2",
		"llama-bpe", "llama-spm", "mpt", "phi-3", "qwen2", "qwen35", "refact", "starcoder"}
	llamaCppRefused = map[string]string{
		"bert-bge":       `vocab model "bert"`,
		"nomic-bert-moe": `vocab model "t5"`,
	}
)

// TestLlamaCppVocabs tokenizes every .inp text of llama.cpp's tokenizer
// tests and requires the .out ids exactly.
func TestLlamaCppVocabs(t *testing.T) {
	dir := filepath.Join(refs.LlamaCpp(t), "models")
	for _, name := range llamaCppAccepted {
		t.Run(name, func(t *testing.T) {
			base := filepath.Join(dir, "ggml-vocab-"+name+".gguf")
			tok := loadGGUFVocab(t, base)
			texts, want := readVocabTest(t, base)
			bad := 0
			for i, text := range texts {
				got := tok.EncodeWith(text, tokenizer.EncodeOptions{PlainSpecial: true})
				if !slices.Equal(got, want[i]) {
					bad++
					if bad <= 5 {
						t.Errorf("test %d %q:\n got %v\nwant %v", i, text, got, want[i])
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d texts differ", bad, len(texts))
			} else {
				t.Logf("%d texts identical", len(texts))
			}
		})
	}
	for name, msg := range llamaCppRefused {
		t.Run(name, func(t *testing.T) {
			f, err := gguf.Open(filepath.Join(dir, "ggml-vocab-"+name+".gguf"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			v, err := llama.VocabFromGGUF(f)
			if err != nil {
				t.Fatal(err)
			}
			_, err = tokenizer.FromVocab(*v)
			if !errors.Is(err, tokenizer.ErrUnsupported) || !strings.Contains(err.Error(), msg) {
				t.Fatalf("FromVocab = %v, want ErrUnsupported naming %s", err, msg)
			}
		})
	}
}

// TestLlamaCppVocabsLoadAll opens every vocabulary of the tree: each is
// read or refused with a clear error, never a panic.
func TestLlamaCppVocabsLoadAll(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join(refs.LlamaCpp(t), "models", "ggml-vocab-*.gguf"))
	for _, p := range paths {
		f, err := gguf.Open(p)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(p), err)
			continue
		}
		v, err := llama.VocabFromGGUF(f)
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(p), err)
			continue
		}
		if _, err := tokenizer.FromVocab(*v); err != nil {
			if !errors.Is(err, tokenizer.ErrUnsupported) && !errors.Is(err, tokenizer.ErrFormat) {
				t.Errorf("%s: error without a sentinel: %v", filepath.Base(p), err)
			}
			t.Logf("%s: refused: %v", filepath.Base(p), err)
		} else {
			t.Logf("%s: read (model %q, pre %q)", filepath.Base(p), v.Model, v.Pre)
		}
	}
}

func loadGGUFVocab(t *testing.T, path string) *tokenizer.Tokenizer {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := llama.VocabFromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.FromVocab(*v)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// readVocabTest reads base.inp (texts separated by
// "\n__ggml_vocab_test__\n") and base.out (one line of ids per text).
func readVocabTest(t *testing.T, base string) ([]string, [][]int) {
	t.Helper()
	inp, err := os.ReadFile(base + ".inp")
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(base + ".out")
	if err != nil {
		t.Fatal(err)
	}
	texts := strings.Split(string(inp), "\n__ggml_vocab_test__\n")
	if texts[len(texts)-1] == "" {
		texts = texts[:len(texts)-1]
	}
	lines := strings.Split(string(out), "\n")
	if len(lines) < len(texts) {
		t.Fatalf("%d texts but %d result lines", len(texts), len(lines))
	}
	ids := make([][]int, len(texts))
	for i := range texts {
		for _, f := range strings.Fields(lines[i]) {
			n, err := strconv.Atoi(f)
			if err != nil {
				t.Fatal(fmt.Errorf("%s.out line %d: %w", base, i+1, err))
			}
			ids[i] = append(ids[i], n)
		}
		if ids[i] == nil {
			ids[i] = []int{}
		}
	}
	return texts, ids
}
