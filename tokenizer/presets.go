package tokenizer

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/hlmproject/hlm/tokenizer/internal/uregex"
)

// A preset is what a GGUF tokenizer.ggml.pre name stands for: the
// pre-tokenizer's regular expressions, applied in order (each a Split
// whose matches and the text between them become words), and the flags
// llama.cpp sets for it (src/llama-vocab.cpp, llama_vocab::impl::load and
// llm_tokenizer_bpe). The patterns are the originals of the models'
// tokenizer.json files (llama.cpp adapts a few of them to its regex
// engine; hlm's engine reads the originals).
type preset struct {
	patterns     []string
	ignoreMerges bool // a word in the vocabulary is one token (tokenizer.json ignore_merges)
	addBOS       bool // llama.cpp's default add_bos for this type (the GGUF key overrides it)
	noBOS        bool // llama.cpp drops the BOS id for this type
	// gemma4: SentencePiece-style BPE on raw UTF-8 (no byte-level
	// alphabet): spaces become "▁", byte fallback through <0xHH> tokens,
	// and a word made only of newlines that is a token is that token.
	sentencePiece bool
}

// The pre-tokenizer patterns.
const (
	patGPT2     = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
	patLlama3   = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patQwen2    = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patQwen35   = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patTekken   = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patGPT4o    = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patDSV3     = `[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_` + "`" + `{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patDSLetter = "\\s?[A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a\U00010400-\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-\U00010cb2\U00010cc0-\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943]+"
	patDSPunct  = "\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+"
	patDSCJK    = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+"
	patDSV3CJK  = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"
	patFalcon   = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)`
	patPoro     = " ?[^(\\s|.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c)]+"
)

// presets maps every tokenizer.ggml.pre name hlm reads to its preset.
// Each entry is checked against llama.cpp's own tokenizer tests or
// Hugging Face's tokenizer where one exists (see the package tests); a
// name not listed is refused, never tokenized with another's rules.
var presets = func() map[string]*preset {
	m := map[string]*preset{}
	add := func(p *preset, names ...string) {
		for _, n := range names {
			m[n] = p
		}
	}
	add(&preset{patterns: []string{patGPT2}},
		"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
		"mellum", "modern-bert", "mpt", "olmo", "jais", "trillion", "granite-docling", "exaone4",
		"jina-v1-en", "jina-v2-code", "roberta-bpe")
	add(&preset{patterns: []string{patLlama3}, ignoreMerges: true, addBOS: true},
		"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano")
	add(&preset{patterns: []string{patLlama3}}, "dbrx", "smaug-bpe")
	add(&preset{patterns: []string{patLlama3}, noBOS: true}, "glm4", "chatglm-bpe")
	add(&preset{patterns: []string{patQwen2}},
		"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "stablelm2", "megrez", "hunyuan", "solar-open", "grok-2")
	add(&preset{patterns: []string{patQwen35}}, "qwen35")
	add(&preset{patterns: []string{`\p{N}`, patGPT2}},
		"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b", "mellum2")
	add(&preset{patterns: []string{`[\r\n]`, patDSLetter, patDSPunct, `\s+$`, patDSCJK, `\p{N}+`}},
		"deepseek-llm")
	add(&preset{patterns: []string{`[\r\n]`, `\s?\p{L}+`, `\s?\p{P}+`, patDSCJK, `\p{N}`}},
		"deepseek-coder")
	add(&preset{patterns: []string{`\p{N}{1,3}`, patDSV3CJK, patDSV3}},
		"deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4")
	add(&preset{patterns: []string{"[\\p{P}\\$\\+<=>\\^~\\|`]+", patFalcon, `[0-9][0-9][0-9]`}}, "falcon")
	add(&preset{patterns: []string{patTekken}, ignoreMerges: true, addBOS: true}, "tekken")
	add(&preset{patterns: []string{patGPT4o}}, "gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2")
	add(&preset{patterns: []string{patPoro}}, "poro-chat", "bloom", "gpt3-finnish")
	add(&preset{patterns: []string{patPoro, `\p{N}`}}, "viking")
	add(&preset{patterns: []string{`[^\n]+|[\n]+`}, addBOS: true, sentencePiece: true}, "gemma4")
	return m
}()

// presetNames lists the names of presets, sorted, for error messages.
func presetNames() string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// compiled remembers compiled patterns (a Regexp is safe for concurrent
// use): every tokenizer of a family shares its pattern, and compiling one
// takes milliseconds. At most maxCompiled are kept.
var (
	compiledMu sync.Mutex
	compiled   = map[string]*uregex.Regexp{}
)

const maxCompiled = 64

// compilePattern compiles a pre-tokenizer pattern, naming it on error.
func compilePattern(p string) (*uregex.Regexp, error) {
	compiledMu.Lock()
	re, ok := compiled[p]
	compiledMu.Unlock()
	if ok {
		return re, nil
	}
	re, err := uregex.Compile(p)
	if err != nil {
		return nil, fmt.Errorf("%w: pre-tokenizer pattern %q: %v", ErrUnsupported, p, err)
	}
	compiledMu.Lock()
	if len(compiled) < maxCompiled {
		compiled[p] = re
	}
	compiledMu.Unlock()
	return re, nil
}

// splitSteps compiles patterns as Isolated Split steps.
func splitSteps(patterns []string) ([]preStep, error) {
	steps := make([]preStep, len(patterns))
	for i, p := range patterns {
		re, err := compilePattern(p)
		if err != nil {
			return nil, err
		}
		steps[i] = splitStep{pattern: p, re: re, behavior: isolated}
	}
	return steps, nil
}

// presetByPatterns returns the name of a preset whose patterns are
// patterns (Isolated Splits, not inverted), preferring the canonical names
// llama.cpp's converter writes; "" if none. Patterns compare equal when
// they differ only in spelling a carriage return, newline or tab as the
// character itself or as its escape.
func presetByPatterns(patterns []string, ignoreMerges bool) string {
	patterns = slices.Clone(patterns)
	for i, p := range patterns {
		patterns[i] = controlEscapes.Replace(p)
	}
	for _, name := range []string{"gpt-2", "llama-bpe", "dbrx", "qwen2", "qwen35", "smollm", "deepseek-llm",
		"deepseek-coder", "deepseek-v3", "falcon", "tekken", "gpt-4o", "poro-chat", "viking"} {
		p := presets[name]
		if slices.EqualFunc(p.patterns, patterns, func(a, b string) bool { return controlEscapes.Replace(a) == b }) &&
			p.ignoreMerges == ignoreMerges {
			return name
		}
	}
	return ""
}

// controlEscapes spells the control characters that patterns hold either
// literally or escaped as their escapes.
var controlEscapes = strings.NewReplacer("\r", `\r`, "\n", `\n`, "\t", `\t`)
