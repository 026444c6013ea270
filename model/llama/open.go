package llama

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/model/gguf"
	"github.com/hlmproject/hlm/tensor"
	"github.com/hlmproject/hlm/tokenizer"
)

// Open loads the model a spec names (see model.ParseSpec): a llama2.c
// checkpoint, a .gguf file, a Hugging Face directory or a model built into
// the binary (builtin:NAME, package model/builtin), then applies the
// spec's quantization and early exit. The tokenizer comes from the GGUF
// metadata or the Hugging Face directory, from spec.Tokenizer when given, or
// from a tok<V>.bin / tokenizer.bin beside a llama2.c checkpoint.
//
// Files are loaded once per process: opening "m.bin" and "m.bin@exit=2"
// shares one set of weights.
func Open(spec model.Spec) (*Model, error) {
	base, err := openBase(spec.Path, spec.Tokenizer)
	if err != nil {
		return nil, err
	}
	m := base
	switch spec.Quantize {
	case "":
	case "q8", "q4":
		t := tensor.Q8_0
		if spec.Quantize == "q4" {
			t = tensor.Q4_0
		}
		if m, _, err = m.Quantized(t); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown quantization %q", spec.Quantize)
	}
	if spec.Exit > 0 {
		if m, err = m.EarlyExit(spec.Exit); err != nil {
			return nil, fmt.Errorf("%s: %w", spec.Path, err)
		}
	}
	if m != base {
		// A view's name is its spec without the tokenizer: PATH@exit=N@q8
		// (base is shared through the cache and keeps its name, the path).
		m.name = spec.String()
	}
	return m, nil
}

// OpenSpec parses and opens a model spec string.
func OpenSpec(s string, tokenizerPath string) (*Model, error) {
	sp, err := model.ParseSpec(s)
	if err != nil {
		return nil, err
	}
	sp.Tokenizer = tokenizerPath
	return Open(sp)
}

var (
	cacheMu sync.Mutex
	cache   = map[string]*Model{}
)

func openBase(path, tokPath string) (*Model, error) {
	key := path + "\x00" + tokPath
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if m, ok := cache[key]; ok {
		return m, nil
	}
	file := path
	if builtin.IsBuiltin(path) {
		var err error
		if file, err = builtin.Path(path); err != nil {
			return nil, err
		}
	}
	m, err := load(file, tokPath)
	if err != nil {
		return nil, err
	}
	m.name = path
	cache[key] = m
	return m, nil
}

func load(path, tokPath string) (*Model, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	var (
		w   *Weights
		tok *tokenizer.Tokenizer
	)
	switch {
	case info.IsDir():
		if w, err = LoadHF(path); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if tokPath == "" {
			tokPath = path
		}
	case isGGUF(path):
		if w, tok, err = LoadGGUF(path); err != nil {
			return nil, err
		}
	default:
		if w, err = LoadLlama2C(path); err != nil {
			return nil, err
		}
		if tokPath == "" {
			tokPath = findLlama2CTokenizer(filepath.Dir(path), w.Config.Vocab)
		}
	}
	if tokPath != "" {
		if tok, err = LoadTokenizer(tokPath, w.Config.Vocab); err != nil {
			return nil, err
		}
	}
	return New(w, tok, path)
}

func isGGUF(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	magic := make([]byte, 4)
	_, err = io.ReadFull(f, magic)
	return err == nil && bytes.Equal(magic, []byte("GGUF"))
}

func findLlama2CTokenizer(dir string, vocab int) string {
	for _, name := range []string{fmt.Sprintf("tok%d.bin", vocab), "tokenizer.bin"} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// LoadTokenizer reads a tokenizer without weights: the vocabulary of a
// GGUF file (weights or vocabulary only), a Hugging Face tokenizer.json, a
// directory holding tokenizer.json or vocab.json + merges.txt, or a
// llama2.c tokenizer.bin. vocab > 0 is the model's vocabulary size: a
// tokenizer may have fewer tokens (Hugging Face models pad their
// embedding), never more; a llama2.c file must have exactly that many.
func LoadTokenizer(path string, vocab int) (*tokenizer.Tokenizer, error) {
	var (
		tok *tokenizer.Tokenizer
		err error
	)
	info, statErr := os.Stat(path)
	switch {
	case statErr != nil:
		return nil, statErr
	case info.IsDir(), strings.HasSuffix(path, ".json"):
		tok, err = tokenizer.Load(path)
	case isGGUF(path):
		tok, err = ggufTokenizer(path)
	case strings.HasSuffix(path, ".model"):
		return nil, fmt.Errorf("%s: SentencePiece protobuf tokenizers are not read; use the llama2.c tokenizer.bin export, a tokenizer.json or a GGUF", path)
	default:
		tok, err = tokenizer.LoadLlama2C(path, vocab)
	}
	if err != nil {
		return nil, err
	}
	if vocab > 0 && tok.VocabSize() > vocab {
		return nil, fmt.Errorf("%s: %w: tokenizer has %d tokens, more than the model's vocabulary of %d", path, model.ErrFormat, tok.VocabSize(), vocab)
	}
	return tok, nil
}

// ggufTokenizer reads the vocabulary of a GGUF file.
func ggufTokenizer(path string) (*tokenizer.Tokenizer, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tok, err := tokenizerFromGGUF(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if tok == nil {
		return nil, fmt.Errorf("%s: %w: no tokenizer.ggml.tokens", path, model.ErrFormat)
	}
	return tok, nil
}

// OpenTokenizer returns the tokenizer of a model spec without loading its
// weights: a GGUF file's vocabulary (its metadata only), a Hugging Face
// directory's tokenizer.json or vocab.json + merges.txt (a directory with
// only tokenizer files will do), a tokenizer file itself, or the
// tok<V>.bin / tokenizer.bin beside a llama2.c checkpoint (V from its
// header), for a model built into the binary (builtin:NAME) too. tokPath,
// when given, names the tokenizer instead.
func OpenTokenizer(spec, tokPath string) (*tokenizer.Tokenizer, error) {
	sp, err := model.ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	if tokPath != "" {
		return LoadTokenizer(tokPath, 0)
	}
	path := sp.Path
	if builtin.IsBuiltin(path) {
		if path, err = builtin.Path(path); err != nil {
			return nil, err
		}
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if info.IsDir() || isGGUF(path) || strings.HasSuffix(path, ".json") {
		return LoadTokenizer(path, 0)
	}
	// A llama2.c checkpoint (its header has the vocabulary size) or a
	// llama2.c tokenizer.bin.
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var h [llama2cHeader]byte
	if _, err := io.ReadFull(f, h[:]); err == nil {
		if cfg, _, floats, err := parseLlama2CHeader(h[:]); err == nil && info.Size() == llama2cHeader+4*floats {
			p := findLlama2CTokenizer(filepath.Dir(path), cfg.Vocab)
			if p == "" {
				return nil, fmt.Errorf("%s: no tok%d.bin or tokenizer.bin beside the llama2.c checkpoint: pass --tokenizer", path, cfg.Vocab)
			}
			return LoadTokenizer(p, cfg.Vocab)
		}
	}
	return LoadTokenizer(path, 0)
}
