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
// Files beside it are read too when present: tokenizer_config.json (for
// bos_token, eos_token, add_bos_token, add_eos_token and chat_template),
// chat_template.json and chat_template.jinja (the chat template as recent
// transformers save it) and generation_config.json (its eos_token_id, one
// id or a list, end a generation).
func LoadHFJSON(path string) (*Tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	dir := filepath.Dir(path)
	config, err := readOptional(filepath.Join(dir, "tokenizer_config.json"))
	if err != nil {
		return nil, err
	}
	t, err := ParseHFJSONWithConfig(data, config)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := t.readBeside(dir); err != nil {
		return nil, err
	}
	return t, nil
}

// readOptional returns the contents of path, or nil if it does not exist.
func readOptional(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return b, nil
}

// readBeside reads the chat template files and generation_config.json
// from the directory of a tokenizer.json or vocab.json: as transformers
// does, chat_template.json's "chat_template", then chat_template.jinja,
// replace tokenizer_config.json's template.
func (t *Tokenizer) readBeside(dir string) error {
	js, err := readOptional(filepath.Join(dir, "chat_template.json"))
	if err != nil {
		return err
	}
	if len(js) > 0 {
		var ct struct {
			ChatTemplate json.RawMessage `json:"chat_template"`
		}
		if err := json.Unmarshal(js, &ct); err != nil {
			return fmt.Errorf("%w: chat_template.json: %v", ErrFormat, err)
		}
		tmpl, err := parseChatTemplate(ct.ChatTemplate)
		if err != nil {
			return err
		}
		if tmpl != "" {
			t.chatTemplate = tmpl
		}
	}
	tmpl, err := readOptional(filepath.Join(dir, "chat_template.jinja"))
	if err != nil {
		return err
	}
	if len(tmpl) > 0 {
		t.chatTemplate = string(tmpl)
	}
	gen, err := readOptional(filepath.Join(dir, "generation_config.json"))
	if err != nil || len(gen) == 0 {
		return err
	}
	var g struct {
		EOS json.RawMessage `json:"eos_token_id"`
	}
	if err := json.Unmarshal(gen, &g); err != nil {
		return fmt.Errorf("%w: generation_config.json: %v", ErrFormat, err)
	}
	var ids []int
	var one int
	switch {
	case isNull(g.EOS):
	case json.Unmarshal(g.EOS, &one) == nil:
		ids = []int{one}
	case json.Unmarshal(g.EOS, &ids) == nil:
	default:
		return fmt.Errorf("%w: generation_config.json eos_token_id is %s, want an id or a list of ids", ErrFormat, describe(g.EOS))
	}
	for _, id := range ids {
		if id < 0 || id >= len(t.pieces) {
			return fmt.Errorf("%w: generation_config.json eos_token_id %d out of range [0, %d)", ErrFormat, id, len(t.pieces))
		}
	}
	t.eog = t.findEOG(ids)
	return nil
}

// ParseHFJSON parses a Hugging Face tokenizer.json; it is
// ParseHFJSONWithConfig without a tokenizer_config.json.
func ParseHFJSON(data []byte) (*Tokenizer, error) {
	return ParseHFJSONWithConfig(data, nil)
}

// ParseHFJSONWithConfig parses a Hugging Face tokenizer.json whose model is
// BPE, and optionally its tokenizer_config.json (nil or empty to omit).
//
// Supported: model type "BPE" (byte_fallback, fuse_unk and ignore_merges
// honoured; dropout, continuing_subword_prefix and end_of_word_suffix must
// be unset); normalizers NFC, NFD, NFKC, NFKD, Replace of a string and
// Prepend, in a Sequence or alone; pre-tokenizers Split (regex or string,
// every behavior, invert), ByteLevel, Digits and Metaspace, in a Sequence
// or alone; decoders Replace "▁" → " ", ByteFallback, Fuse and Strip of
// leading spaces, Metaspace, or ByteLevel for a byte-level BPE;
// post-processors TemplateProcessing, RobertaProcessing, BertProcessing
// (for BOS and EOS) and ByteLevel. Anything else is ErrUnsupported,
// naming the component, rather than a tokenization that could differ.
// Merges may be "a b" strings or ["a", "b"] pairs.
//
// The tokenizer is byte-level (GPT-2, Llama-3, Qwen, ...) when the
// pre-tokenizer has a ByteLevel step. Added tokens are cut out of the text
// before the model runs, as tokenizers' AddedVocabulary does (leftmost,
// longest; lstrip, rstrip and single_word honoured; normalized ones matched
// in the normalized text); special ones become control tokens.
//
// BOS and EOS come from the config (an explicit null means none), then
// from the post_processor (a special token before the sequence is BOS and
// sets AddBOS, one after it EOS and sets AddEOS), and otherwise from the
// names of the special added tokens ("<s>", "<|begin_of_text|>", "<bos>",
// "<|startoftext|>" or a name containing "start", "begin" or "bos";
// "</s>", "<|endoftext|>", "<|end_of_text|>", "<|eot_id|>", "<eos>",
// "<|im_end|>" or a name containing "end" or "eos"; lowest id first).
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
	m, err := parseHFModel(f.Model)
	if err != nil {
		return nil, err
	}
	norm, err := parseNormalizer(f.Normalizer)
	if err != nil {
		return nil, err
	}
	pre, byteLevel, err := parsePreTokenizer(f.PreTokenizer)
	if err != nil {
		return nil, err
	}
	stripN, err := parseDecoder(f.Decoder, byteLevel)
	if err != nil {
		return nil, err
	}
	merges, err := parseMerges(m.Merges)
	if err != nil {
		return nil, err
	}
	pieces, inModel, err := hfPieces(m.Vocab, f.AddedTokens)
	if err != nil {
		return nil, err
	}
	t := &Tokenizer{
		alg:          byRank,
		src:          fromHFJSON,
		pieces:       pieces,
		types:        make([]int32, len(pieces)),
		space:        space,
		norm:         norm,
		pre:          pre,
		byteLevel:    byteLevel,
		bos:          -1,
		eos:          -1,
		unk:          -1,
		eot:          -1,
		eom:          -1,
		fuseUnk:      m.FuseUnk,
		ignoreMerges: m.IgnoreMerges,
	}
	if ok, prepend := norm.spmStyle(); ok {
		t.addPrefix = prepend
	}
	if stripN > 0 {
		t.strip, t.stripN = stripAtStart, stripN
	}
	added, err := t.hfTypes(m, f.AddedTokens)
	if err != nil {
		return nil, err
	}
	if err := t.index(func(id int) bool { return inModel[id] }); err != nil {
		return nil, err
	}
	ids := t.lookup
	if byteLevel {
		ids = t.hfByteLevel(m.Vocab)
		t.preName = preNameOf(pre, m.IgnoreMerges)
	}
	if err := t.setMerges(merges, ids); err != nil {
		return nil, err
	}
	t.added = newAddedVocab(added, norm, false)
	if err := t.parsePostProcessor(f.PostProcessor); err != nil {
		return nil, err
	}
	if err := t.hfSpecials(config); err != nil {
		return nil, err
	}
	return t, nil
}

// hfModel is tokenizer.json's model: a BPE model's settings, vocabulary
// and merges.
type hfModel struct {
	Type                    string           `json:"type"`
	Dropout                 *float64         `json:"dropout"`
	UnkToken                *string          `json:"unk_token"`
	ContinuingSubwordPrefix *string          `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string          `json:"end_of_word_suffix"`
	FuseUnk                 bool             `json:"fuse_unk"`
	ByteFallback            bool             `json:"byte_fallback"`
	IgnoreMerges            bool             `json:"ignore_merges"`
	Vocab                   map[string]int64 `json:"vocab"`
	Merges                  json.RawMessage  `json:"merges"`
}

// parseHFModel reads tokenizer.json's model, refusing what hlm does not
// implement (a model other than BPE, dropout, subword prefixes and
// suffixes).
func parseHFModel(raw json.RawMessage) (hfModel, error) {
	var m hfModel
	if isNull(raw) {
		return m, fmt.Errorf("%w: tokenizer.json has no model", ErrFormat)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("%w: tokenizer.json model: %v", ErrFormat, err)
	}
	switch {
	case m.Type != "BPE":
		return m, fmt.Errorf("%w: tokenizer.json model type %q, only \"BPE\" is implemented", ErrUnsupported, m.Type)
	case m.Dropout != nil && *m.Dropout != 0:
		return m, fmt.Errorf("%w: tokenizer.json BPE dropout %g", ErrUnsupported, *m.Dropout)
	case m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "":
		return m, fmt.Errorf("%w: tokenizer.json BPE continuing_subword_prefix %q", ErrUnsupported, *m.ContinuingSubwordPrefix)
	case m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "":
		return m, fmt.Errorf("%w: tokenizer.json BPE end_of_word_suffix %q", ErrUnsupported, *m.EndOfWordSuffix)
	case len(m.Vocab) == 0:
		return m, fmt.Errorf("%w: tokenizer.json model has no vocab", ErrFormat)
	}
	return m, nil
}

// hfPieces lays the vocabulary's and the added tokens' pieces out by id,
// and says which ids the model's vocabulary has. Ids must be dense,
// 0..n-1; bounding them by the number of entries bounds the allocation by
// the input.
func hfPieces(vocab map[string]int64, addedTokens []hfAddedToken) (pieces []string, inModel []bool, err error) {
	bound := int64(len(vocab)) + int64(len(addedTokens))
	pieces = make([]string, bound)
	filled := make([]bool, bound)
	inModel = make([]bool, bound)
	for p, id := range vocab {
		if id < 0 || id >= bound {
			return nil, nil, fmt.Errorf("%w: tokenizer.json vocab piece %q has id %d, out of range [0, %d)", ErrFormat, p, id, bound)
		}
		if filled[id] {
			return nil, nil, fmt.Errorf("%w: tokenizer.json vocab id %d is used by %q and %q", ErrFormat, id, pieces[id], p)
		}
		pieces[id], filled[id], inModel[id] = p, true, true
	}
	for _, a := range addedTokens {
		if a.ID < 0 || a.ID >= bound {
			return nil, nil, fmt.Errorf("%w: tokenizer.json added token %q has id %d, out of range [0, %d)", ErrFormat, a.Content, a.ID, bound)
		}
		if filled[a.ID] && pieces[a.ID] != a.Content {
			return nil, nil, fmt.Errorf("%w: tokenizer.json added token %q has id %d, which is %q", ErrFormat, a.Content, a.ID, pieces[a.ID])
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
			return nil, nil, fmt.Errorf("%w: tokenizer.json has no token with id %d (ids must be 0..%d)", ErrFormat, id, n-1)
		}
	}
	return pieces[:n], inModel, nil
}

// hfTypes sets every token's type (normal, byte-fallback, added, control,
// unknown) and the byte-fallback tokens, and returns the added tokens as
// the added vocabulary takes them.
func (t *Tokenizer) hfTypes(m hfModel, addedTokens []hfAddedToken) ([]addedToken, error) {
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
	added := make([]addedToken, 0, len(addedTokens))
	for _, a := range addedTokens {
		t.types[a.ID] = TypeUserDefined
		if a.Special {
			t.types[a.ID] = TypeControl
		}
		normalized := !a.Special
		if a.Normalized != nil {
			normalized = *a.Normalized
		}
		added = append(added, addedToken{id: int32(a.ID), content: a.Content, control: a.Special,
			normalized: normalized, lstrip: a.LStrip, rstrip: a.RStrip, singleWord: a.SingleWord})
	}
	if m.UnkToken != nil {
		id, ok := m.Vocab[*m.UnkToken]
		if !ok {
			return nil, fmt.Errorf("%w: tokenizer.json unk_token %q is not in the vocab", ErrFormat, *m.UnkToken)
		}
		t.unk = int(id)
		t.types[id] = TypeUnknown
	}
	return added, nil
}

// hfByteLevel sets a byte-level tokenizer's byte tokens and returns the
// ids its merges are looked up in: the model's vocabulary alone.
func (t *Tokenizer) hfByteLevel(vocab map[string]int64) map[string]int32 {
	ids := make(map[string]int32, len(vocab))
	for p, id := range vocab {
		ids[p] = int32(id)
	}
	for b := range t.byteID {
		t.byteID[b] = -1
		if id, ok := t.lookup[string([]byte{byte(b)})]; ok {
			t.byteID[b] = id
		}
	}
	return ids
}

// hfSpecials sets the special tokens: the config's (tokenizer_config.json,
// when given), else for BOS and EOS the tokens named like them, and the
// end-of-generation set.
func (t *Tokenizer) hfSpecials(config []byte) error {
	explicit := map[string]bool{}
	if len(config) > 0 {
		var err error
		if explicit, err = t.applyConfig(config); err != nil {
			return err
		}
	}
	if t.bos < 0 && !explicit["bos_token"] {
		t.bos = t.specialByName(bosNames, bosWords)
	}
	if t.eos < 0 && !explicit["eos_token"] {
		t.eos = t.specialByName(eosNames, eosWords)
	}
	t.eog = t.findEOG(nil)
	return nil
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
	ID         int64  `json:"id"`
	Content    string `json:"content"`
	Special    bool   `json:"special"`
	Normalized *bool  `json:"normalized"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	SingleWord bool   `json:"single_word"`
}
