package generate

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"testing"

	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/sampling"
)

// TestGreedyMatchesGolden: greedy generation from "Tom had a red car" gives
// the reference engine's greedy continuation (../shared/golden).
func TestGreedyMatchesGolden(t *testing.T) {
	const path = "../../shared/models/stories260K/stories260K.bin"
	if _, err := os.Stat(path); err != nil {
		t.Skipf("shared model not present (%v)", err)
	}
	m, err := llama.OpenSpec(path, "")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	st, err := Generate(context.Background(), m, Config{Model: path, Prompt: "Tom had a red car", Sampler: sampling.Sampler{}, MaxTokens: 32, IgnoreEOS: true}, &out)
	if err != nil {
		t.Fatal(err)
	}
	want := goldenGreedy(t, "../../shared/golden/stories260K_golden_b.bin")
	for i, id := range want {
		if st.Tokens[i] != id {
			t.Fatalf("greedy ids %v, want %v", st.Tokens, want)
		}
	}
	if out.Len() == 0 || st.StopReason != "max tokens" || len(st.Tokens) != 32 {
		t.Errorf("output %q, stop %q, %d tokens", out.String(), st.StopReason, len(st.Tokens))
	}
}

// goldenGreedy reads the greedy continuation of a golden file (format in
// ../shared/README.md).
func goldenGreedy(t *testing.T, path string) []int {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("golden not present (%v)", err)
	}
	n := int(binary.LittleEndian.Uint32(b))
	v := int(binary.LittleEndian.Uint32(b[4:]))
	off := 8 + 4*n + 4*n*v
	g := int(binary.LittleEndian.Uint32(b[off:]))
	out := make([]int, g)
	for i := range out {
		out[i] = int(binary.LittleEndian.Uint32(b[off+4+4*i:]))
	}
	return out
}

// TestNoLimit: MaxTokens −1 (llama.cpp's -n -1) generates until the context
// is full (every position evaluated, and one token sampled from the last);
// −2 is refused.
func TestNoLimit(t *testing.T) {
	m, err := llama.OpenSpec("builtin:stories260K", "")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Model: "builtin:stories260K", Prompt: "Tom had a red car", Sampler: sampling.Sampler{}, MaxTokens: -1, IgnoreEOS: true}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	st, err := Generate(context.Background(), m, cfg, &out)
	if err != nil {
		t.Fatal(err)
	}
	if ctx := m.Config().SeqLen; st.StopReason != "context full" || st.PromptTokens+len(st.Tokens) != ctx+1 {
		t.Errorf("stop %q after %d prompt and %d new tokens, want \"context full\" one past the context, %d", st.StopReason, st.PromptTokens, len(st.Tokens), ctx)
	}
	cfg.MaxTokens = -2
	if err := cfg.Validate(); err == nil {
		t.Error("max tokens -2 accepted")
	}
}
