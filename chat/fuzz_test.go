package chat

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hlmproject/hlm/internal/refs"
)

// FuzzTemplate parses and renders arbitrary templates: no panic, no hang
// (small limits bound every render), and every failure one of the
// package's errors. The seeds are the engine tests' templates, the golden
// templates and, when present, the reference templates; go test runs the
// seeds only, go test -fuzz FuzzTemplate ./chat explores.
func FuzzTemplate(f *testing.F) {
	for _, c := range engineCases {
		f.Add(c.tmpl)
	}
	golden, _ := filepath.Glob("testdata/golden/*.jinja")
	for _, g := range golden {
		if data, err := os.ReadFile(g); err == nil {
			f.Add(string(data))
		}
	}
	if _, err := os.Stat(filepath.Join(refs.Dir(), "llama.cpp", "models", "templates")); err == nil {
		files, _ := filepath.Glob(filepath.Join(refs.Dir(), "llama.cpp", "models", "templates", "*.jinja"))
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(string(data))
			}
		}
	}
	in := Input{
		Messages: []Message{
			{Role: "system", Content: "Be terse."},
			{Role: "user", Content: "Hi 👋\n"},
			{Role: "assistant", Content: "Hello.", Extra: map[string]any{"tool_calls": json.RawMessage(
				`[{"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"x": 1}}}]`)}},
			{Role: "tool", Content: "42", Extra: map[string]any{"tool_call_id": "c1"}},
		},
		AddGenerationPrompt: true,
		BOSToken:            "<s>",
		EOSToken:            "</s>",
		Vars: map[string]any{"tools": json.RawMessage(`[{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]`),
			"enable_thinking": false},
		Now:    func() time.Time { return time.Unix(0, 0).UTC() },
		Limits: Limits{Steps: 20_000, Bytes: 1 << 16, Depth: 20},
	}
	f.Fuzz(func(t *testing.T, src string) {
		tmpl, err := Parse(src)
		if err != nil {
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("Parse(%q): %v wraps none of the package's errors", src, err)
			}
			return
		}
		start := time.Now()
		out, err := tmpl.Render(in)
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("Render(%q) took %v", src, d)
		}
		if err != nil {
			for _, e := range []error{ErrSyntax, ErrRender, ErrRaised, ErrUnsupported, ErrLimit} {
				if errors.Is(err, e) {
					return
				}
			}
			t.Fatalf("Render(%q): %v wraps none of the package's errors", src, err)
		}
		if len(out) > in.Limits.Bytes {
			t.Fatalf("Render(%q) made %d bytes, over the limit", src, len(out))
		}
	})
}
