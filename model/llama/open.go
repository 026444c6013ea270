package llama

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
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
// spec's quantization, early exit and KV cache types. The tokenizer comes from the GGUF
// metadata or the Hugging Face directory, from spec.Tokenizer when given, or
// from a tok<V>.bin / tokenizer.bin beside a llama2.c checkpoint.
//
// Files are loaded once per process: opening "m.bin" and "m.bin@exit=2"
// shares one set of weights. A spec for another backend (@llama.cpp) is
// refused: model/engine opens it.
func Open(spec model.Spec) (*Model, error) {
	if spec.Backend != "" {
		return nil, fmt.Errorf("%w: %s runs on %s, but this needs hlm's own engine for it (the device's draft in hlm edge, weights to convert or distill, an early-exit or quantized view, or a replica bit-identical to the device's): drop @%s", model.ErrUnsupported, spec, spec.Backend, spec.Backend)
	}
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
	if m, err = m.WithCacheTypes(spec.CacheTypeK, spec.CacheTypeV); err != nil {
		return nil, fmt.Errorf("%s: %w", spec, err)
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
	info, err := checkFile(path)
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
	case gguf.IsFile(path):
		if w, tok, err = LoadGGUF(path); err != nil {
			return nil, err
		}
	default:
		if w, err = LoadLlama2C(path); err != nil {
			return nil, inModelDir(path, err)
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
	m, err := New(w, tok, path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() && gguf.IsFile(path) {
		m.recorded = RecordedOrigin(path)
	}
	return m, nil
}

// RecordedOrigin is the origin a GGUF file records (model.OriginKey: hlm
// convert writes it), "" when it records none or something that is no
// fingerprint.
func RecordedOrigin(path string) string {
	f, err := gguf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	s, err := f.String(model.OriginKey)
	if err != nil || !isFingerprint(s) {
		return ""
	}
	return s
}

// checkFile refuses, with a message that says what is wrong, the paths no
// loader can read: a missing one, an empty file, a .gguf file without
// GGUF's magic (which the llama2.c reader would otherwise misreport).
func checkFile(path string) (os.FileInfo, error) {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, notFoundError{path}
	case err != nil:
		return nil, err
	case info.IsDir():
		return info, nil
	case info.Size() == 0:
		return nil, fmt.Errorf("%s: %w: the file is empty (an interrupted download or conversion?)", path, model.ErrFormat)
	case strings.EqualFold(filepath.Ext(path), ".gguf") && !gguf.IsFile(path):
		return nil, fmt.Errorf("%s: %w: not a GGUF file (it does not start with GGUF's magic bytes \"GGUF\")", path, model.ErrFormat)
	}
	return info, nil
}

// inModelDir adds to err, the failure to read the file path as a model
// or tokenizer, what to do when path is a file of a Hugging Face model's
// directory (its model.safetensors or config.json): name the directory.
// Read as a llama2.c checkpoint, such a file otherwise reports a header of
// nonsense sizes.
func inModelDir(path string, err error) error {
	dir := filepath.Dir(path)
	if info, serr := os.Stat(filepath.Join(dir, "config.json")); serr != nil || info.IsDir() {
		return err
	}
	return fmt.Errorf("%s is a file of the Hugging Face model in %s: name the directory, not a file in it (%w)", path, dir, err)
}

// notFoundError is a model or tokenizer path that does not exist; it
// wraps fs.ErrNotExist.
type notFoundError struct{ path string }

func (e notFoundError) Error() string {
	return e.path + ": no such file or directory (a model is a llama2.c .bin, a .gguf, a Hugging Face directory or builtin:NAME)"
}

func (e notFoundError) Unwrap() error { return fs.ErrNotExist }

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
	info, statErr := checkFile(path)
	switch {
	case statErr != nil:
		return nil, statErr
	case info.IsDir(), strings.HasSuffix(path, ".json"):
		tok, err = tokenizer.Load(path)
	case gguf.IsFile(path):
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
	info, err := checkFile(path)
	if err != nil {
		return nil, err
	}
	if info.IsDir() || gguf.IsFile(path) {
		return LoadTokenizer(path, 0)
	}
	if strings.HasSuffix(path, ".json") {
		tok, err := LoadTokenizer(path, 0)
		if err != nil {
			return nil, inModelDir(path, err)
		}
		return tok, nil
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
		if cfg, _, floats, err := parseLlama2CHeader(h[:]); err == nil {
			if info.Size() == llama2cHeader+4*floats {
				p := findLlama2CTokenizer(filepath.Dir(path), cfg.Vocab)
				if p == "" {
					return nil, fmt.Errorf("%s: no tok%d.bin or tokenizer.bin beside the llama2.c checkpoint: pass --tokenizer", path, cfg.Vocab)
				}
				return LoadTokenizer(p, cfg.Vocab)
			}
			// A header of a model's shape: a checkpoint of the wrong size
			// rather than a tokenizer.bin, unless it reads as one.
			tok, terr := LoadTokenizer(path, 0)
			if terr != nil {
				return nil, fmt.Errorf("%s: %w", path, weightsSizeError(cfg, 4*floats, info.Size()-llama2cHeader))
			}
			return tok, nil
		}
	}
	tok, err := LoadTokenizer(path, 0)
	if err != nil {
		return nil, inModelDir(path, fmt.Errorf("%w (not a llama2.c checkpoint either: hlm reads a llama2.c checkpoint or tokenizer.bin, a GGUF file, a Hugging Face directory or a tokenizer.json)", err))
	}
	return tok, nil
}
