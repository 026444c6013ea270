package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/model/gguf"
)

// TestInspect: hlm inspect lists a GGUF's metadata (every key, long arrays
// shortened) and its tensors by type, and with --tensors each one; the
// JSON says the same; a model that is not a GGUF file shows its shape;
// and a truncated GGUF is an error, not a crash.
func TestInspect(t *testing.T) {
	path := filepath.Join("..", "..", "drafts", "stories260K-draft.gguf")
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	keys, tensors := len(f.Metadata), len(f.Tensors)
	f.Close()
	run1 := func(args ...string) (string, string, int) {
		var out, errb strings.Builder
		code := run(context.Background(), append([]string{"inspect"}, args...), &out, &errb)
		return out.String(), errb.String(), code
	}
	out, errs, code := run1("--model", path)
	for _, want := range []string{"architecture: llama", "GGUF version 3", "tokenizer.ggml.tokens = [\"<unk>\"", "... (512 string)]", "llama.block_count = 2", "F32 "} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("inspect %s: exit %d, %q lacks %q (%s)", path, code, out, want, errs)
		}
	}
	if n := strings.Count(out, "\n  "); n != keys+1 { // the keys, and one tensor type
		t.Errorf("%d indented lines, want %d keys and 1 type", n, keys)
	}
	out, _, _ = run1("--model", path, "--tensors")
	if n := strings.Count(out, " bytes\n"); n != tensors+1 {
		t.Errorf("--tensors: %d lines with bytes, want %d tensors and 1 type", n, tensors)
	}
	out, _, _ = run1("--model", path, "--json")
	var info struct {
		Arch     string            `json:"architecture"`
		Metadata map[string]string `json:"metadata"`
		Types    []struct {
			Type    string `json:"type"`
			Tensors int    `json:"tensors"`
		} `json:"tensor_types"`
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil || info.Arch != "llama" || len(info.Metadata) != keys || len(info.Types) != 1 || info.Types[0].Tensors != tensors {
		t.Errorf("--json: %v, %+v", err, info)
	}
	out, _, code = run1()
	if code != 0 || !strings.Contains(out, "architecture llama: dim 64") || !strings.Contains(out, "origin ") {
		t.Errorf("inspect (the default model): exit %d, %q", code, out)
	}
	// stories260K: 5 layers of 4 KV heads of 8, 1,280 bytes a position in
	// float32, 512 positions.
	if want := "KV cache: 1.25 KiB a position in f32, 640 KiB a session at the full context; less with @ctk=f16@ctv=f16 (2 bytes a value)\n"; !strings.Contains(out, want) {
		t.Errorf("inspect (the default model): %q lacks %q", out, want)
	}
	out, _, code = run1("--model", "builtin:stories260K@ctk=f16@ctv=f16", "--json")
	var half modelInfo
	if err := json.Unmarshal([]byte(out), &half); code != 0 || err != nil || half.KVPerPosition != 640 || half.KVContext != 320<<10 || half.KVTypes != [2]string{"f16", "f16"} {
		t.Errorf("inspect of a half cache: exit %d, %v, %+v", code, err, half)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.gguf")
	os.WriteFile(cut, b[:len(b)/3], 0o644)
	if _, errs, code := run1("--model", cut); code == 0 || !strings.Contains(errs, "gguf") {
		t.Errorf("a truncated GGUF: exit %d, %q", code, errs)
	}
}
