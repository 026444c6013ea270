package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// LoadHFJSON reads a Hugging Face tokenizer.json; see ParseHFJSONWithConfig.
// If a tokenizer_config.json sits in the same directory it is read too, for
// the bos_token, eos_token, add_bos_token and add_eos_token it declares.
func LoadHFJSON(path string) (*Tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	config, err := os.ReadFile(filepath.Join(filepath.Dir(path), "tokenizer_config.json"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	t, err := ParseHFJSONWithConfig(data, config)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// ParseHFJSON parses a Hugging Face tokenizer.json; it is
// ParseHFJSONWithConfig without a tokenizer_config.json.
func ParseHFJSON(data []byte) (*Tokenizer, error) {
	return ParseHFJSONWithConfig(data, nil)
}

// ParseHFJSONWithConfig parses a Hugging Face tokenizer.json of the
// SentencePiece-BPE kind that Llama-family models use, and optionally its
// tokenizer_config.json (nil or empty to omit).
//
// Supported, and required: model type "BPE" (byte_fallback, fuse_unk and
// ignore_merges honoured; dropout, continuing_subword_prefix and
// end_of_word_suffix must be unset); a normalizer made of Replace " " →
// "▁" and optionally Prepend "▁"; no pre-tokenizer; a decoder made of
// Replace "▁" → " ", ByteFallback, Fuse and optionally a final Strip of
// leading spaces. Anything else is ErrUnsupported. Merges may be "a b"
// strings or ["a", "b"] pairs.
//
// BOS and EOS come from the post_processor's TemplateProcessing (a special
// token before the sequence is BOS and sets AddBOS, one after it is EOS and
// sets AddEOS), then from the config, and otherwise from the names of the
// special added tokens ("<s>", "<|begin_of_text|>", "<bos>",
// "<|startoftext|>" or a name containing "start", "begin" or "bos"; "</s>",
// "<|endoftext|>", "<|end_of_text|>", "<|eot_id|>", "<eos>",
// "<|im_end|>" or a name containing "end" or "eos"; lowest id first).
//
// Added tokens are not split out of the input: special tokens written in
// the text are tokenized as plain text.
func ParseHFJSONWithConfig(data, config []byte) (*Tokenizer, error) {
	var f struct {
		AddedTokens   []hfAddedToken  `json:"added_tokens"`
		Normalizer    json.RawMessage `json:"normalizer"`
		PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
		PostProcessor json.RawMessage `json:"post_processor"`
		Decoder       json.RawMessage `json:"decoder"`
		Model         json.RawMessage `json:"model"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%w: tokenizer.json: %v", ErrFormat, err)
	}
	if isNull(f.Model) {
		return nil, fmt.Errorf("%w: tokenizer.json has no model", ErrFormat)
	}
	var m struct {
		Type                    string            `json:"type"`
		Dropout                 *float64          `json:"dropout"`
		UnkToken                *string           `json:"unk_token"`
		ContinuingSubwordPrefix *string           `json:"continuing_subword_prefix"`
		EndOfWordSuffix         *string           `json:"end_of_word_suffix"`
		FuseUnk                 bool              `json:"fuse_unk"`
		ByteFallback            bool              `json:"byte_fallback"`
		IgnoreMerges            bool              `json:"ignore_merges"`
		Vocab                   map[string]int64  `json:"vocab"`
		Merges                  []json.RawMessage `json:"merges"`
	}
	if err := json.Unmarshal(f.Model, &m); err != nil {
		return nil, fmt.Errorf("%w: tokenizer.json model: %v", ErrFormat, err)
	}
	switch {
	case m.Type != "BPE":
		return nil, fmt.Errorf("%w: tokenizer.json model type %q, only \"BPE\" is implemented", ErrUnsupported, m.Type)
	case m.Dropout != nil && *m.Dropout != 0:
		return nil, fmt.Errorf("%w: tokenizer.json BPE dropout %g", ErrUnsupported, *m.Dropout)
	case m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "":
		return nil, fmt.Errorf("%w: tokenizer.json BPE continuing_subword_prefix %q", ErrUnsupported, *m.ContinuingSubwordPrefix)
	case m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "":
		return nil, fmt.Errorf("%w: tokenizer.json BPE end_of_word_suffix %q", ErrUnsupported, *m.EndOfWordSuffix)
	case len(m.Vocab) == 0:
		return nil, fmt.Errorf("%w: tokenizer.json model has no vocab", ErrFormat)
	}
	addPrefix, err := parseNormalizer(f.Normalizer)
	if err != nil {
		return nil, err
	}
	if !isNull(f.PreTokenizer) {
		return nil, fmt.Errorf("%w: tokenizer.json pre_tokenizer %s, only null is implemented",
			ErrUnsupported, describe(f.PreTokenizer))
	}
	stripN, err := parseDecoder(f.Decoder)
	if err != nil {
		return nil, err
	}
	merges, err := parseMerges(m.Merges)
	if err != nil {
		return nil, err
	}

	// Lay the pieces out by id. Ids must be dense, 0..n-1; bounding them by
	// the number of entries bounds the allocation by the input.
	bound := int64(len(m.Vocab)) + int64(len(f.AddedTokens))
	pieces := make([]string, bound)
	filled := make([]bool, bound)
	inModel := make([]bool, bound)
	for p, id := range m.Vocab {
		if id < 0 || id >= bound {
			return nil, fmt.Errorf("%w: tokenizer.json vocab piece %q has id %d, out of range [0, %d)", ErrFormat, p, id, bound)
		}
		if filled[id] {
			return nil, fmt.Errorf("%w: tokenizer.json vocab id %d is used by %q and %q", ErrFormat, id, pieces[id], p)
		}
		pieces[id], filled[id], inModel[id] = p, true, true
	}
	for _, a := range f.AddedTokens {
		if a.ID < 0 || a.ID >= bound {
			return nil, fmt.Errorf("%w: tokenizer.json added token %q has id %d, out of range [0, %d)", ErrFormat, a.Content, a.ID, bound)
		}
		if filled[a.ID] && pieces[a.ID] != a.Content {
			return nil, fmt.Errorf("%w: tokenizer.json added token %q has id %d, which is %q", ErrFormat, a.Content, a.ID, pieces[a.ID])
		}
		pieces[a.ID], filled[a.ID] = a.Content, true
	}
	n := 0
	for id, ok := range filled {
		if ok {
			n = id + 1
		}
	}
	for id := 0; id < n; id++ {
		if !filled[id] {
			return nil, fmt.Errorf("%w: tokenizer.json has no token with id %d (ids must be 0..%d)", ErrFormat, id, n-1)
		}
	}

	t := &Tokenizer{
		alg:          byRank,
		src:          fromHFJSON,
		pieces:       pieces[:n],
		types:        make([]int32, n),
		space:        space,
		addPrefix:    addPrefix,
		bos:          -1,
		eos:          -1,
		unk:          -1,
		fuseUnk:      m.FuseUnk,
		ignoreMerges: m.IgnoreMerges,
	}
	if stripN > 0 {
		t.strip, t.stripN = stripAtStart, stripN
	}
	for id := range t.types {
		t.types[id] = TypeNormal
	}
	for b := range t.byteToken {
		t.byteToken[b] = -1
		if !m.ByteFallback {
			continue
		}
		if id, ok := m.Vocab[bytePiece(byte(b))]; ok {
			t.byteToken[b] = int32(id)
			t.types[id] = TypeByte
		}
	}
	for _, a := range f.AddedTokens {
		t.types[a.ID] = TypeUserDefined
		if a.Special {
			t.types[a.ID] = TypeControl
		}
	}
	if m.UnkToken != nil {
		id, ok := m.Vocab[*m.UnkToken]
		if !ok {
			return nil, fmt.Errorf("%w: tokenizer.json unk_token %q is not in the vocab", ErrFormat, *m.UnkToken)
		}
		t.unk = int(id)
		t.types[id] = TypeUnknown
	}
	if err := t.index(func(id int) bool { return inModel[id] }); err != nil {
		return nil, err
	}
	if err := t.setMerges(merges); err != nil {
		return nil, err
	}
	if err := t.parsePostProcessor(f.PostProcessor); err != nil {
		return nil, err
	}
	if len(config) > 0 {
		if err := t.applyConfig(config); err != nil {
			return nil, err
		}
	}
	if t.bos < 0 {
		t.bos = t.specialByName(bosNames, bosWords)
	}
	if t.eos < 0 {
		t.eos = t.specialByName(eosNames, eosWords)
	}
	return t, nil
}

// Names of special tokens taken for BOS and EOS when neither the
// post-processor nor the config says: exact names first, then names
// containing one of the words.
var (
	bosNames = []string{"<s>", "<|begin_of_text|>", "<bos>", "<|startoftext|>"}
	bosWords = []string{"start", "begin", "bos"}
	eosNames = []string{"</s>", "<|endoftext|>", "<|end_of_text|>", "<|eot_id|>", "<eos>", "<|im_end|>"}
	eosWords = []string{"end", "eos"}
)

// hfAddedToken is an entry of tokenizer.json's added_tokens.
type hfAddedToken struct {
	ID      int64  `json:"id"`
	Content string `json:"content"`
	Special bool   `json:"special"`
}
