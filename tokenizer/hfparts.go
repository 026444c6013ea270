package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// The parts of a tokenizer.json around the BPE model: normalizer, decoder,
// merges, post-processor, and tokenizer_config.json.

// hfComponent holds the fields of the normalizers, decoders and
// post-processors this package understands.
type hfComponent struct {
	Type        string            `json:"type"`
	Normalizers []json.RawMessage `json:"normalizers"` // Sequence normalizer
	Decoders    []json.RawMessage `json:"decoders"`    // Sequence decoder
	Processors  []json.RawMessage `json:"processors"`  // Sequence post-processor
	Prepend     *string           `json:"prepend"`     // Prepend
	Pattern     struct {
		String *string `json:"String"`
		Regex  *string `json:"Regex"`
	} `json:"pattern"` // Replace
	Content *string `json:"content"` // Replace, Strip
	Start   int     `json:"start"`   // Strip
	Stop    int     `json:"stop"`    // Strip
	Single  []struct {
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

// parseNormalizer accepts Replace " " → "▁" with an optional Prepend "▁"
// (in either order: they commute) and reports whether Prepend is there.
func parseNormalizer(raw json.RawMessage) (addPrefix bool, err error) {
	const want = `Replace " " → "▁", optionally with Prepend "▁"`
	if isNull(raw) {
		return false, fmt.Errorf("%w: tokenizer.json has no normalizer, want %s", ErrUnsupported, want)
	}
	steps, err := flatten(raw, "normalizer", func(c *hfComponent) []json.RawMessage { return c.Normalizers })
	if err != nil {
		return false, err
	}
	replace := false
	for _, c := range steps {
		switch {
		case c.Type == "Prepend" && c.Prepend != nil && *c.Prepend == space && !addPrefix:
			addPrefix = true
		case c.Type == "Replace" && c.Pattern.String != nil && *c.Pattern.String == " " &&
			c.Content != nil && *c.Content == space && !replace:
			replace = true
		default:
			return false, fmt.Errorf("%w: tokenizer.json normalizer step %q is not implemented, want %s",
				ErrUnsupported, c.Type, want)
		}
	}
	if !replace {
		return false, fmt.Errorf("%w: tokenizer.json normalizer does not replace spaces, want %s", ErrUnsupported, want)
	}
	return addPrefix, nil
}

// parseDecoder accepts Replace "▁" → " ", ByteFallback and Fuse in any
// order, then optionally Strip of leading spaces (after Fuse, so it strips
// the start of the whole text), and returns how many spaces Strip removes.
func parseDecoder(raw json.RawMessage) (stripN int, err error) {
	const want = `Replace "▁" → " ", ByteFallback, Fuse, Strip`
	if isNull(raw) {
		return 0, fmt.Errorf("%w: tokenizer.json has no decoder, want %s", ErrUnsupported, want)
	}
	steps, err := flatten(raw, "decoder", func(c *hfComponent) []json.RawMessage { return c.Decoders })
	if err != nil {
		return 0, err
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
// "#version" skipped, as tokenizers does) or ["a", "b"] pairs.
func parseMerges(raw []json.RawMessage) ([][2]string, error) {
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
			out = append(out, [2]string{parts[0], parts[1]})
		case json.Unmarshal(r, &pair) == nil:
			if len(pair) != 2 {
				return nil, fmt.Errorf("%w: tokenizer.json merge %d has %d pieces, want 2", ErrFormat, i, len(pair))
			}
			out = append(out, [2]string{pair[0], pair[1]})
		default:
			return nil, fmt.Errorf("%w: tokenizer.json merge %d is %s, want a string or a pair of strings", ErrFormat, i, describe(r))
		}
	}
	return out, nil
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

// applyConfig takes bos_token, eos_token, add_bos_token and add_eos_token
// from a tokenizer_config.json.
func (t *Tokenizer) applyConfig(config []byte) error {
	var c struct {
		BOS    json.RawMessage `json:"bos_token"`
		EOS    json.RawMessage `json:"eos_token"`
		AddBOS *bool           `json:"add_bos_token"`
		AddEOS *bool           `json:"add_eos_token"`
	}
	if err := json.Unmarshal(config, &c); err != nil {
		return fmt.Errorf("%w: tokenizer_config.json: %v", ErrFormat, err)
	}
	for _, s := range []struct {
		name string
		raw  json.RawMessage
		id   *int
	}{{"bos_token", c.BOS, &t.bos}, {"eos_token", c.EOS, &t.eos}} {
		if isNull(s.raw) {
			continue
		}
		var content string
		if json.Unmarshal(s.raw, &content) != nil {
			var obj struct {
				Content string `json:"content"`
			}
			if err := json.Unmarshal(s.raw, &obj); err != nil {
				return fmt.Errorf("%w: tokenizer_config.json %s is %s, want a string or {\"content\": ...}",
					ErrFormat, s.name, describe(s.raw))
			}
			content = obj.Content
		}
		id := t.pieceID(content)
		if id < 0 {
			return fmt.Errorf("%w: tokenizer_config.json %s %q is not a token", ErrFormat, s.name, content)
		}
		*s.id = id
	}
	if c.AddBOS != nil {
		t.addBOS = *c.AddBOS
	}
	if c.AddEOS != nil {
		t.addEOS = *c.AddEOS
	}
	return nil
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
