package dataset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Example is one prompt, with a reference answer when the set has one.
type Example struct {
	ID        string `json:"id"`
	Prompt    string `json:"prompt"`
	Reference string `json:"reference,omitempty"` // ground-truth response; "" when the set has none for this item
	Answer    string `json:"answer,omitempty"`    // short gold answer of QA sets ("yes"/"no", a span), for exact match
	Text      string `json:"text,omitempty"`      // whole story for language-model text sets
}

// LoadTinyStories reads a TinyStories file: text, or the JSON of its
// published data files (an array of objects with a "story"). In text,
// stories are separated by "<|endoftext|>" when the file has that marker,
// otherwise by blank lines, otherwise one story per line. Each Example has
// the whole story in Text and its first sentence as Prompt. Other JSON (a
// file of another dataset) is an error, not one long story.
func LoadTinyStories(path string) ([]Example, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseTinyStories(b, path)
}

// parseTinyStories reads the bytes of a TinyStories file, as
// LoadTinyStories; name labels the examples and the errors.
func parseTinyStories(b []byte, name string) ([]Example, error) {
	if t := bytes.TrimSpace(b); len(t) > 0 && (t[0] == '[' || t[0] == '{') {
		return jsonStories(t, name)
	}
	return SplitStories(string(b), name)
}

// jsonStories reads TinyStories' JSON: an array of objects whose "story"
// is the text.
func jsonStories(b []byte, path string) ([]Example, error) {
	var recs []struct {
		Story *string `json:"story"`
	}
	if err := json.Unmarshal(b, &recs); err != nil || len(recs) == 0 || recs[0].Story == nil {
		return nil, fmt.Errorf("%s: %w: JSON, but not TinyStories' (an array of objects with a \"story\"): is it another dataset's file? (hlm eval --help lists the datasets and their formats)", path, ErrMalformed)
	}
	var out []Example
	for _, r := range recs {
		if r.Story == nil {
			continue
		}
		if p := strings.TrimSpace(*r.Story); p != "" {
			out = append(out, Example{ID: fmt.Sprintf("%s#%d", path, len(out)), Prompt: firstSentence(p), Text: p})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: %w: no stories", path, ErrMalformed)
	}
	return out, nil
}

// SplitStories splits TinyStories text as LoadTinyStories does; name labels
// the example ids.
func SplitStories(s, name string) ([]Example, error) {
	var parts []string
	switch {
	case strings.Contains(s, "<|endoftext|>"):
		parts = strings.Split(s, "<|endoftext|>")
	case strings.Contains(s, "\n\n"):
		parts = strings.Split(s, "\n\n")
	default:
		parts = strings.Split(s, "\n")
	}
	var out []Example
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		out = append(out, Example{ID: fmt.Sprintf("%s#%d", name, len(out)), Prompt: firstSentence(p), Text: p})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no stories", name)
	}
	return out, nil
}

// firstSentence is the text up to and including the first '.', '!' or '?'
// (the whole text when there is none).
func firstSentence(s string) string {
	if i := strings.IndexAny(s, ".!?"); i >= 0 {
		return s[:i+1]
	}
	return s
}
