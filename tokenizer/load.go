package tokenizer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Load reads a tokenizer without weights: a Hugging Face tokenizer.json
// (see LoadHFJSON), a GPT-2 style vocab.json with merges.txt beside it (see
// LoadGPT2), a llama2.c tokenizer.bin, or a directory holding one of them
// (tokenizer.json first). GGUF files are read by the model loader
// (model/llama), which turns their metadata into a Vocab.
func Load(path string) (*Tokenizer, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	if fi.IsDir() {
		for _, name := range []string{"tokenizer.json", "vocab.json", "tokenizer.bin"} {
			p := filepath.Join(path, name)
			if _, err := os.Stat(p); err == nil {
				return Load(p)
			}
		}
		return nil, fmt.Errorf("tokenizer: %s holds no tokenizer.json, vocab.json + merges.txt or tokenizer.bin", path)
	}
	switch {
	case filepath.Base(path) == "vocab.json":
		return LoadGPT2(filepath.Dir(path))
	case strings.HasSuffix(path, ".json"):
		return LoadHFJSON(path)
	case strings.HasSuffix(path, ".model"):
		return nil, fmt.Errorf("%s: SentencePiece protobuf tokenizers are not read; use the llama2.c tokenizer.bin export, a tokenizer.json or a GGUF", path)
	}
	return LoadLlama2C(path, 0)
}

// LoadGPT2 reads a GPT-2 style tokenizer directory — vocab.json (piece →
// id) and merges.txt (an optional "#version" line, then one "left right"
// merge per line) — the byte-level BPE of GPT-2, GPT-Neo, OPT and RoBERTa,
// with GPT-2's pre-tokenizer, as transformers' GPT2Tokenizer reads it.
// The special tokens are tokenizer_config.json's bos_token, eos_token,
// unk_token and pad_token (add_bos_token adds BOS; add_prefix_space puts a
// space before the text) and the entries of added_tokens.json; without a
// config, "<|endoftext|>" is BOS, EOS and UNK, as in GPT2Tokenizer. A
// chat_template.jinja and generation_config.json beside them are read too.
func LoadGPT2(dir string) (*Tokenizer, error) {
	vocabData, err := os.ReadFile(filepath.Join(dir, "vocab.json"))
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	mergesData, err := os.ReadFile(filepath.Join(dir, "merges.txt"))
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	config, err := readOptional(filepath.Join(dir, "tokenizer_config.json"))
	if err != nil {
		return nil, err
	}
	addedData, err := readOptional(filepath.Join(dir, "added_tokens.json"))
	if err != nil {
		return nil, err
	}
	t, err := ParseGPT2(vocabData, mergesData, config, addedData)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if err := t.readBeside(dir); err != nil {
		return nil, err
	}
	return t, nil
}

// ParseGPT2 parses the files of a GPT-2 style tokenizer directory (see
// LoadGPT2); config and added may be nil. It builds the equivalent
// tokenizer.json — BPE with GPT-2's ByteLevel pre-tokenizer and decoder —
// so that both formats share one reader.
func ParseGPT2(vocab, merges, config, added []byte) (*Tokenizer, error) {
	var v map[string]int64
	if err := json.Unmarshal(vocab, &v); err != nil {
		return nil, fmt.Errorf("%w: vocab.json: %v", ErrFormat, err)
	}
	var mergeList []string
	sc := bufio.NewScanner(bytes.NewReader(merges))
	sc.Buffer(nil, len(merges)+1)
	for line := 0; sc.Scan(); line++ {
		s := strings.TrimRight(sc.Text(), "\r")
		if s == "" || line == 0 && strings.HasPrefix(s, "#version") {
			continue
		}
		mergeList = append(mergeList, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: merges.txt: %v", ErrFormat, err)
	}
	var c struct {
		BOS            json.RawMessage `json:"bos_token"`
		EOS            json.RawMessage `json:"eos_token"`
		UNK            json.RawMessage `json:"unk_token"`
		PAD            json.RawMessage `json:"pad_token"`
		AddBOS         bool            `json:"add_bos_token"`
		AddEOS         bool            `json:"add_eos_token"`
		AddPrefixSpace *bool           `json:"add_prefix_space"`
	}
	if len(config) > 0 {
		if err := json.Unmarshal(config, &c); err != nil {
			return nil, fmt.Errorf("%w: tokenizer_config.json: %v", ErrFormat, err)
		}
	}
	var extra map[string]int64
	if len(added) > 0 {
		if err := json.Unmarshal(added, &extra); err != nil {
			return nil, fmt.Errorf("%w: added_tokens.json: %v", ErrFormat, err)
		}
	}
	// The special tokens: the config's, else GPT-2's <|endoftext|>.
	names := map[string]string{}
	for key, raw := range map[string]json.RawMessage{"bos_token": c.BOS, "eos_token": c.EOS, "unk_token": c.UNK, "pad_token": c.PAD} {
		if s, ok := tokenContent(raw); ok {
			names[key] = s
		}
	}
	if len(config) == 0 {
		for _, k := range []string{"bos_token", "eos_token", "unk_token"} {
			names[k] = "<|endoftext|>"
		}
	}
	var addedTokens []map[string]any
	seen := map[string]bool{}
	addToken := func(content string, id int64, special bool) {
		if seen[content] {
			return
		}
		seen[content] = true
		addedTokens = append(addedTokens, map[string]any{"id": id, "content": content, "special": special,
			"normalized": !special, "lstrip": false, "rstrip": false, "single_word": false})
	}
	for _, content := range names {
		if id, ok := v[content]; ok {
			addToken(content, id, true)
		}
	}
	for content, id := range extra {
		addToken(content, id, false)
	}
	pre := map[string]any{"type": "ByteLevel", "add_prefix_space": c.AddPrefixSpace != nil && *c.AddPrefixSpace, "use_regex": true}
	doc := map[string]any{
		"added_tokens":  addedTokens,
		"normalizer":    nil,
		"pre_tokenizer": pre,
		"decoder":       map[string]any{"type": "ByteLevel"},
		"model":         map[string]any{"type": "BPE", "vocab": v, "merges": mergeList},
	}
	if bos, ok := names["bos_token"]; ok && c.AddBOS {
		id, ok := v[bos]
		if !ok {
			return nil, fmt.Errorf("%w: tokenizer_config.json bos_token %q is not in vocab.json", ErrFormat, bos)
		}
		doc["post_processor"] = map[string]any{
			"type":           "TemplateProcessing",
			"single":         []any{map[string]any{"SpecialToken": map[string]any{"id": bos}}, map[string]any{"Sequence": map[string]any{"id": "A"}}},
			"special_tokens": map[string]any{bos: map[string]any{"ids": []int64{id}}},
		}
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	cfg, _ := json.Marshal(map[string]any{"bos_token": names["bos_token"], "eos_token": names["eos_token"],
		"add_bos_token": c.AddBOS, "add_eos_token": c.AddEOS})
	if len(config) > 0 {
		cfg = config
	}
	return ParseHFJSONWithConfig(data, cfg)
}

// tokenContent reads a special token of tokenizer_config.json: a string or
// {"content": ...}.
func tokenContent(raw json.RawMessage) (string, bool) {
	if isNull(raw) {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var obj struct {
		Content string `json:"content"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Content != "" {
		return obj.Content, true
	}
	return "", false
}
