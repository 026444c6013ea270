package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// The parts of a tokenizer.json around the BPE model: normalizer, decoder,
// merges, post-processor, and tokenizer_config.json.

// hfComponent holds the fields of the normalizers, pre-tokenizers,
// decoders and post-processors this package understands.
type hfComponent struct {
	Type          string            `json:"type"`
	Normalizers   []json.RawMessage `json:"normalizers"`   // Sequence normalizer
	PreTokenizers []json.RawMessage `json:"pretokenizers"` // Sequence pre-tokenizer
	Decoders      []json.RawMessage `json:"decoders"`      // Sequence decoder
	Processors    []json.RawMessage `json:"processors"`    // Sequence post-processor
	Prepend       *string           `json:"prepend"`       // Prepend
	Pattern       struct {
		String *string `json:"String"`
		Regex  *string `json:"Regex"`
	} `json:"pattern"` // Replace, Split
	Content          *string `json:"content"`           // Replace, Strip
	Start            int     `json:"start"`             // Strip
	Stop             int     `json:"stop"`              // Strip
	Behavior         string  `json:"behavior"`          // Split
	Invert           bool    `json:"invert"`            // Split
	AddPrefixSpace   *bool   `json:"add_prefix_space"`  // ByteLevel, Metaspace (legacy)
	UseRegex         *bool   `json:"use_regex"`         // ByteLevel
	IndividualDigits bool    `json:"individual_digits"` // Digits
	Replacement      *string `json:"replacement"`       // Metaspace
	PrependScheme    *string `json:"prepend_scheme"`    // Metaspace
	Split            *bool   `json:"split"`             // Metaspace
	Single           []struct {
		SpecialToken *struct {
			ID string `json:"id"`
		} `json:"SpecialToken"`
		Sequence *struct {
			ID string `json:"id"`
		} `json:"Sequence"`
	} `json:"single"` // TemplateProcessing
	SpecialTokens map[string]struct {
		IDs []int64 `json:"ids"`
	} `json:"special_tokens"` // TemplateProcessing
	CLS []json.RawMessage `json:"cls"` // RobertaProcessing, BertProcessing: [token, id]
	SEP []json.RawMessage `json:"sep"`
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// describe names a component for an error message.
func describe(raw json.RawMessage) string {
	var c struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(raw, &c) == nil && c.Type != "" {
		return fmt.Sprintf("%q", c.Type)
	}
	s := string(bytes.TrimSpace(raw))
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return s
}

// flatten parses raw as a component and expands Sequence components into
// their elements (sub picks the element list of a Sequence).
func flatten(raw json.RawMessage, what string, sub func(*hfComponent) []json.RawMessage) ([]hfComponent, error) {
	var c hfComponent
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("%w: tokenizer.json %s: %v", ErrFormat, what, err)
	}
	if c.Type != "Sequence" {
		return []hfComponent{c}, nil
	}
	var out []hfComponent
	for _, e := range sub(&c) {
		cs, err := flatten(e, what, sub)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}

// parseNormalizer reads a normalizer made of NFC, NFD, NFKC, NFKD,
// Replace of a literal string and Prepend (alone or in a Sequence).
func parseNormalizer(raw json.RawMessage) (normalizer, error) {
	if isNull(raw) {
		return nil, nil
	}
	steps, err := flatten(raw, "normalizer", func(c *hfComponent) []json.RawMessage { return c.Normalizers })
	if err != nil {
		return nil, err
	}
	var n normalizer
	for _, c := range steps {
		switch c.Type {
		case "NFC":
			n = append(n, normStep{kind: normForm, form: norm.NFC})
		case "NFD":
			n = append(n, normStep{kind: normForm, form: norm.NFD})
		case "NFKC":
			n = append(n, normStep{kind: normForm, form: norm.NFKC})
		case "NFKD":
			n = append(n, normStep{kind: normForm, form: norm.NFKD})
		case "Prepend":
			if c.Prepend == nil {
				return nil, fmt.Errorf("%w: tokenizer.json normalizer Prepend has no prepend", ErrFormat)
			}
			n = append(n, normStep{kind: normPrepend, to: *c.Prepend})
		case "Replace":
			if c.Pattern.String == nil || c.Content == nil {
				return nil, fmt.Errorf("%w: tokenizer.json normalizer Replace of a regex is not implemented (only of a string)", ErrUnsupported)
			}
			if *c.Pattern.String == "" {
				return nil, fmt.Errorf("%w: tokenizer.json normalizer Replace of an empty string", ErrFormat)
			}
			n = append(n, normStep{kind: normReplace, from: *c.Pattern.String, to: *c.Content})
		default:
			return nil, fmt.Errorf("%w: tokenizer.json normalizer %q is not implemented (hlm reads NFC, NFD, NFKC, NFKD, Replace of a string, Prepend)",
				ErrUnsupported, c.Type)
		}
	}
	return n, nil
}

// parsePreTokenizer reads a pre-tokenizer made of Split, ByteLevel, Digits
// and Metaspace steps (alone or in a Sequence), and reports whether it is
// byte-level.
func parsePreTokenizer(raw json.RawMessage) (steps []preStep, byteLevel bool, err error) {
	if isNull(raw) {
		return nil, false, nil
	}
	comps, err := flatten(raw, "pre_tokenizer", func(c *hfComponent) []json.RawMessage { return c.PreTokenizers })
	if err != nil {
		return nil, false, err
	}
	for _, c := range comps {
		switch c.Type {
		case "Split":
			b, ok := behaviorNames[c.Behavior]
			if !ok {
				return nil, false, fmt.Errorf("%w: tokenizer.json Split behavior %q", ErrUnsupported, c.Behavior)
			}
			st := splitStep{behavior: b, invert: c.Invert}
			switch {
			case c.Pattern.Regex != nil:
				st.pattern = *c.Pattern.Regex
				if st.re, err = compilePattern(st.pattern); err != nil {
					return nil, false, err
				}
			case c.Pattern.String != nil:
				st.literal = *c.Pattern.String
			default:
				return nil, false, fmt.Errorf("%w: tokenizer.json Split has no pattern", ErrFormat)
			}
			steps = append(steps, st)
		case "ByteLevel":
			byteLevel = true
			st := byteLevelStep{addPrefixSpace: c.AddPrefixSpace != nil && *c.AddPrefixSpace}
			if c.UseRegex == nil || *c.UseRegex {
				if st.re, err = compilePattern(patGPT2); err != nil {
					return nil, false, err
				}
			}
			steps = append(steps, st)
		case "Digits":
			steps = append(steps, digitsStep{individual: c.IndividualDigits})
		case "Metaspace":
			st := metaspaceStep{replacement: space, prepend: "always", split_: true}
			if c.Replacement != nil {
				st.replacement = *c.Replacement
			}
			if c.PrependScheme != nil {
				st.prepend = *c.PrependScheme
			} else if c.AddPrefixSpace != nil && !*c.AddPrefixSpace {
				st.prepend = "never"
			}
			if c.Split != nil {
				st.split_ = *c.Split
			}
			switch {
			case st.prepend != "always" && st.prepend != "first" && st.prepend != "never":
				return nil, false, fmt.Errorf("%w: tokenizer.json Metaspace prepend_scheme %q", ErrUnsupported, st.prepend)
			case st.replacement == "":
				return nil, false, fmt.Errorf("%w: tokenizer.json Metaspace with an empty replacement", ErrFormat)
			}
			steps = append(steps, st)
		default:
			return nil, false, fmt.Errorf("%w: tokenizer.json pre_tokenizer %q is not implemented (hlm reads Split, ByteLevel, Digits, Metaspace)",
				ErrUnsupported, c.Type)
		}
	}
	return steps, byteLevel, nil
}

// preNameOf names a byte-level pre-tokenizer as GGUF does, when it is a
// list of Isolated regex Splits (then a ByteLevel step without regex) that
// a preset has, or GPT-2's ByteLevel alone; "" otherwise.
func preNameOf(steps []preStep, ignoreMerges bool) string {
	var patterns []string
	for i, st := range steps {
		switch st := st.(type) {
		case splitStep:
			if st.re == nil || st.behavior != isolated || st.invert {
				return ""
			}
			patterns = append(patterns, st.pattern)
		case byteLevelStep:
			if st.addPrefixSpace || i != len(steps)-1 {
				return ""
			}
			if st.re != nil {
				patterns = append(patterns, patGPT2)
			}
		case digitsStep:
			if !st.individual {
				return ""
			}
			patterns = append(patterns, `\p{N}`)
		default:
			return ""
		}
	}
	return presetByPatterns(patterns, ignoreMerges)
}

// parseDecoder accepts, for a byte-level tokenizer, the ByteLevel decoder
// (alone or in a Sequence); otherwise Replace "▁" → " ", ByteFallback and
// Fuse in any order, then optionally Strip of leading spaces (after Fuse,
// so it strips the start of the whole text), or Metaspace. It returns how
// many leading spaces decoding removes.
func parseDecoder(raw json.RawMessage, byteLevel bool) (stripN int, err error) {
	want := `Replace "▁" → " ", ByteFallback, Fuse, Strip, or Metaspace`
	if byteLevel {
		want = "ByteLevel"
	}
	if isNull(raw) {
		return 0, fmt.Errorf("%w: tokenizer.json has no decoder, want %s", ErrUnsupported, want)
	}
	steps, err := flatten(raw, "decoder", func(c *hfComponent) []json.RawMessage { return c.Decoders })
	if err != nil {
		return 0, err
	}
	if byteLevel {
		if len(steps) != 1 || steps[0].Type != "ByteLevel" {
			return 0, fmt.Errorf("%w: tokenizer.json decoder of a byte-level tokenizer is not ByteLevel alone", ErrUnsupported)
		}
		return 0, nil
	}
	replace, fuse := false, false
	for i, c := range steps {
		switch {
		case c.Type == "Replace" && c.Pattern.String != nil && *c.Pattern.String == space &&
			c.Content != nil && *c.Content == " ":
			replace = true
		case c.Type == "ByteFallback":
		case c.Type == "Fuse":
			fuse = true
		case c.Type == "Strip" && c.Content != nil && *c.Content == " " && c.Stop == 0 &&
			c.Start >= 0 && fuse && i == len(steps)-1:
			stripN = c.Start
		case c.Type == "Metaspace" && i == len(steps)-1 && (c.Replacement == nil || *c.Replacement == space):
			replace = true
			if c.PrependScheme == nil || *c.PrependScheme != "never" {
				stripN = 1
			}
		default:
			return 0, fmt.Errorf("%w: tokenizer.json decoder step %q (at %d) is not implemented, want %s",
				ErrUnsupported, c.Type, i, want)
		}
	}
	if !replace {
		return 0, fmt.Errorf("%w: tokenizer.json decoder does not turn \"▁\" into spaces, want %s", ErrUnsupported, want)
	}
	return stripN, nil
}

// parseMerges reads merges as "a b" strings (lines starting with
// "#version" skipped, as tokenizers does) or ["a", "b"] pairs. A merge
// with an empty side can never apply (a word's symbols are never empty)
// and has no GGUF spelling: it is dropped, which changes no encoding.
func parseMerges(data json.RawMessage) ([][2]string, error) {
	if isNull(data) {
		return nil, nil
	}
	// Real files hold one form or the other: decode them in one pass.
	var strs []string
	if json.Unmarshal(data, &strs) == nil {
		out := make([][2]string, 0, len(strs))
		for i, s := range strs {
			if strings.HasPrefix(s, "#version") {
				continue
			}
			a, b, ok := strings.Cut(s, " ")
			if !ok || strings.Contains(b, " ") {
				return nil, fmt.Errorf("%w: tokenizer.json merge %d %q is not two pieces separated by one space", ErrFormat, i, s)
			}
			out = appendMerge(out, a, b)
		}
		return out, nil
	}
	var pairs [][]string
	if json.Unmarshal(data, &pairs) == nil {
		out := make([][2]string, 0, len(pairs))
		for i, p := range pairs {
			if len(p) != 2 {
				return nil, fmt.Errorf("%w: tokenizer.json merge %d has %d pieces, want 2", ErrFormat, i, len(p))
			}
			out = appendMerge(out, p[0], p[1])
		}
		return out, nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%w: tokenizer.json merges: %v", ErrFormat, err)
	}
	out := make([][2]string, 0, len(raw))
	for i, r := range raw {
		var s string
		var pair []string
		switch {
		case json.Unmarshal(r, &s) == nil:
			if strings.HasPrefix(s, "#version") {
				continue
			}
			parts := strings.Split(s, " ")
			if len(parts) != 2 {
				return nil, fmt.Errorf("%w: tokenizer.json merge %d %q is not two pieces separated by one space", ErrFormat, i, s)
			}
			out = appendMerge(out, parts[0], parts[1])
		case json.Unmarshal(r, &pair) == nil:
			if len(pair) != 2 {
				return nil, fmt.Errorf("%w: tokenizer.json merge %d has %d pieces, want 2", ErrFormat, i, len(pair))
			}
			out = appendMerge(out, pair[0], pair[1])
		default:
			return nil, fmt.Errorf("%w: tokenizer.json merge %d is %s, want a string or a pair of strings", ErrFormat, i, describe(r))
		}
	}
	return out, nil
}

// appendMerge appends the merge (a, b) unless a side is empty.
func appendMerge(out [][2]string, a, b string) [][2]string {
	if a == "" || b == "" {
		return out
	}
	return append(out, [2]string{a, b})
}

// parsePostProcessor takes BOS and EOS from a TemplateProcessing (possibly
// inside a Sequence); other post-processors are ignored.
func (t *Tokenizer) parsePostProcessor(raw json.RawMessage) error {
	if isNull(raw) {
		return nil
	}
	steps, err := flatten(raw, "post_processor", func(c *hfComponent) []json.RawMessage { return c.Processors })
	if err != nil {
		return err
	}
	for _, c := range steps {
		if c.Type == "RobertaProcessing" || c.Type == "BertProcessing" {
			if err := t.clsSep(c); err != nil {
				return err
			}
			continue
		}
		if c.Type != "TemplateProcessing" {
			continue
		}
		seen := false // the sequence $A
		for _, item := range c.Single {
			if item.Sequence != nil {
				seen = true
				continue
			}
			if item.SpecialToken == nil {
				continue
			}
			name := item.SpecialToken.ID
			st, ok := c.SpecialTokens[name]
			if !ok || len(st.IDs) != 1 {
				return fmt.Errorf("%w: tokenizer.json post_processor special token %q must have exactly one id", ErrFormat, name)
			}
			id := st.IDs[0]
			if id < 0 || id >= int64(len(t.pieces)) {
				return fmt.Errorf("%w: tokenizer.json post_processor special token %q has id %d, out of range [0, %d)",
					ErrFormat, name, id, len(t.pieces))
			}
			switch {
			case !seen && t.bos < 0:
				t.bos, t.addBOS = int(id), true
			case seen && t.eos < 0:
				t.eos, t.addEOS = int(id), true
			}
		}
	}
	return nil
}

// clsSep takes BOS and EOS from a RobertaProcessing or BertProcessing
// post-processor, which put cls before the sequence and sep after it.
func (t *Tokenizer) clsSep(c hfComponent) error {
	for _, s := range []struct {
		name string
		pair []json.RawMessage
		id   *int
		add  *bool
	}{{"cls", c.CLS, &t.bos, &t.addBOS}, {"sep", c.SEP, &t.eos, &t.addEOS}} {
		var id int64
		if len(s.pair) != 2 || json.Unmarshal(s.pair[1], &id) != nil || id < 0 || id >= int64(len(t.pieces)) {
			return fmt.Errorf("%w: tokenizer.json post_processor %s %q must be [token, id] with an id in range", ErrFormat, c.Type, s.name)
		}
		if *s.id < 0 {
			*s.id, *s.add = int(id), true
		}
	}
	return nil
}

// applyConfig takes bos_token, eos_token, add_bos_token, add_eos_token and
// chat_template from a tokenizer_config.json, and reports which of
// bos_token and eos_token it sets explicitly (null included).
func (t *Tokenizer) applyConfig(config []byte) (map[string]bool, error) {
	var c struct {
		BOS          json.RawMessage `json:"bos_token"`
		EOS          json.RawMessage `json:"eos_token"`
		AddBOS       *bool           `json:"add_bos_token"`
		AddEOS       *bool           `json:"add_eos_token"`
		ChatTemplate json.RawMessage `json:"chat_template"`
	}
	if err := json.Unmarshal(config, &c); err != nil {
		return nil, fmt.Errorf("%w: tokenizer_config.json: %v", ErrFormat, err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(config, &fields); err != nil {
		return nil, fmt.Errorf("%w: tokenizer_config.json: %v", ErrFormat, err)
	}
	explicit := map[string]bool{}
	for _, s := range []struct {
		name string
		raw  json.RawMessage
		id   *int
	}{{"bos_token", c.BOS, &t.bos}, {"eos_token", c.EOS, &t.eos}} {
		if _, ok := fields[s.name]; ok {
			explicit[s.name] = true
		}
		if isNull(s.raw) {
			continue // none named; a post-processor's token stays
		}
		var content string
		if json.Unmarshal(s.raw, &content) != nil {
			var obj struct {
				Content string `json:"content"`
			}
			if err := json.Unmarshal(s.raw, &obj); err != nil {
				return nil, fmt.Errorf("%w: tokenizer_config.json %s is %s, want a string or {\"content\": ...}",
					ErrFormat, s.name, describe(s.raw))
			}
			content = obj.Content
		}
		id := t.pieceID(content)
		if id < 0 {
			return nil, fmt.Errorf("%w: tokenizer_config.json %s %q is not a token", ErrFormat, s.name, content)
		}
		*s.id = id
	}
	if c.AddBOS != nil {
		t.addBOS = *c.AddBOS
	}
	if c.AddEOS != nil {
		t.addEOS = *c.AddEOS
	}
	tmpl, err := parseChatTemplate(c.ChatTemplate)
	if err != nil {
		return nil, err
	}
	t.chatTemplate = tmpl
	return explicit, nil
}

// ChatConfig is what a tokenizer_config.json says about chat: the default
// chat template ("" for none) and the text of its BOS and EOS tokens.
type ChatConfig struct {
	Template string
	BOS, EOS string
}

// ParseChatConfig reads the chat template and the special tokens' text of
// a tokenizer_config.json (bos_token and eos_token are strings or
// {"content": ...} objects; chat_template as parseChatTemplate reads it),
// without a vocabulary.
func ParseChatConfig(config []byte) (ChatConfig, error) {
	var c struct {
		BOS          json.RawMessage `json:"bos_token"`
		EOS          json.RawMessage `json:"eos_token"`
		ChatTemplate json.RawMessage `json:"chat_template"`
	}
	if err := json.Unmarshal(config, &c); err != nil {
		return ChatConfig{}, fmt.Errorf("%w: tokenizer_config.json: %v", ErrFormat, err)
	}
	var out ChatConfig
	out.BOS, _ = tokenContent(c.BOS)
	out.EOS, _ = tokenContent(c.EOS)
	var err error
	out.Template, err = parseChatTemplate(c.ChatTemplate)
	return out, err
}

// parseChatTemplate reads tokenizer_config.json's chat_template: a string,
// or a list of {name, template} of which the one named "default" is the
// chat template (transformers uses no other without being told).
func parseChatTemplate(raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var list []struct {
		Name     string `json:"name"`
		Template string `json:"template"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return "", fmt.Errorf("%w: tokenizer_config.json chat_template is %s, want a string or a list of {name, template}", ErrFormat, describe(raw))
	}
	for _, e := range list {
		if e.Name == "default" {
			return e.Template, nil
		}
	}
	return "", nil
}

// pieceID returns the id of piece p, or -1.
func (t *Tokenizer) pieceID(p string) int {
	for id, q := range t.pieces {
		if q == p {
			return id
		}
	}
	return -1
}

// specialByName returns the lowest-id control token named in exact, else
// the lowest-id one whose name contains one of the substrings (case
// insensitive), else -1. BOS, EOS and UNK are never chosen twice.
func (t *Tokenizer) specialByName(exact, substrings []string) int {
	candidate := func(id int) bool {
		return t.types[id] == TypeControl && id != t.bos && id != t.eos && id != t.unk
	}
	for _, name := range exact {
		if id := t.pieceID(name); id >= 0 && candidate(id) {
			return id
		}
	}
	for id, p := range t.pieces {
		if !candidate(id) {
			continue
		}
		lower := strings.ToLower(p)
		for _, s := range substrings {
			if strings.Contains(lower, s) {
				return id
			}
		}
	}
	return -1
}
