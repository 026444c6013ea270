package llama

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/tensor"
)

// neoWithConfig copies the committed tiny GPT-Neo checkpoint (context 128,
// layers global, local, global with a window of 6) into a temporary
// directory with its config.json edited by the replacements old → new.
func neoWithConfig(t *testing.T, replace ...string) string {
	t.Helper()
	src := filepath.Join("testdata", "families", "gpt_neo")
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "config.json" {
			s := string(b)
			for i := 0; i < len(replace); i += 2 {
				if !strings.Contains(s, replace[i]) {
					t.Fatalf("config.json has no %q", replace[i])
				}
				s = strings.Replace(s, replace[i], replace[i+1], 1)
			}
			b = []byte(s)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestGPTNeoWindowBeyondPositions: a GPT-Neo window_size larger than
// max_position_embeddings is transformers' meaning of it — the local
// layers' mask, causal XOR tril(causal, −window_size) over a position table
// shorter than the window, keeps every earlier position, so they are
// global layers within the context. The model loads, keeps its local
// layers with the window cut to the context (as its GGUF file then holds
// it), and gives bit for bit the logits of the same checkpoint whose
// layers are all global, from Hugging Face and through GGUF — a GGUF file
// whose window is larger than its context included. The committed window
// of 6 gives other logits: the window matters while it is inside the
// context.
func TestGPTNeoWindowBeyondPositions(t *testing.T) {
	const global = `"attention_types": [
    [
      [
        "global"
      ],
      3
    ]
  ]`
	neoTypes := `"attention_types": [
    [
      [
        "global",
        "local"
      ],
      1
    ],
    [
      [
        "global"
      ],
      1
    ]
  ]`
	load := func(dir string) *Model {
		t.Helper()
		w, err := LoadHF(dir)
		if err != nil {
			t.Fatal(err)
		}
		m, err := New(w, nil, dir)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	ids := make([]int, 128) // the whole context
	for i := range ids {
		ids[i] = (i*37 + 11) % 313
	}
	ref := logitsOf(t, load(neoWithConfig(t, neoTypes, global)), ids)
	same := func(what string, m *Model) {
		t.Helper()
		for i, r := range logitsOf(t, m, ids) {
			assertSame(t, fmt.Sprintf("%s, position %d", what, i), r, ref[i])
		}
	}
	for _, ws := range []string{"128", "129", "1000", "4294967297"} {
		m := load(neoWithConfig(t, `"window_size": 6`, `"window_size": `+ws))
		if c := m.Config(); c.Window != 128 || c.LocalLayers != "GLG" {
			t.Fatalf("window_size %s: window %d, layers %q; want 128 (the context), GLG", ws, c.Window, c.LocalLayers)
		}
		same("window_size "+ws, m)
		if ws == "1000" {
			back, _ := convertAndLoad(t, m, tensor.F32)
			if c := back.Config(); c.Window != 128 || c.LocalLayers != "GLG" {
				t.Fatalf("GGUF: window %d, layers %q; want 128, GLG", c.Window, c.LocalLayers)
			}
			same("GGUF", back)
			// A GGUF file that says 1000, read back.
			m.w.Config.Window = 1000
			back, _ = convertAndLoad(t, m, tensor.F32)
			if c := back.Config(); c.Window != 128 {
				t.Fatalf("GGUF with sliding_window 1000: window %d; want 128", c.Window)
			}
			same("GGUF with sliding_window 1000", back)
		}
	}
	windowed := logitsOf(t, load(neoWithConfig(t)), ids)
	if d := maxAbsDiff(windowed[len(ids)-1], ref[len(ids)-1]); d < 1e-3 {
		t.Errorf("the committed window of 6 moves the last logits by %g from all-global: the window should matter", d)
	}
}
