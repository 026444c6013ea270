package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/model/llamacpp"
)

// TestLlamaCppCommands: the commands that run a model take
// --llama-lib and a @llama.cpp spec; a library that is not llama.cpp's is
// a clear error; with the library (when built) generate runs; serve
// refuses a @llama.cpp --replica with its reason.
func TestLlamaCppCommands(t *testing.T) {
	defer llamacpp.SetLibrary("")
	file := filepath.Join("..", "..", "model", "llama", "testdata", "families", "qwen3.gguf")
	bogus := filepath.Join(t.TempDir(), "libllama.so")
	os.WriteFile(bogus, []byte("no library"), 0o644)
	for _, args := range [][]string{
		{"generate", "--llama-lib", bogus, "--model", file + "@llama.cpp", "--prompt", "Once", "--max-tokens", "2"},
		{"bench", "--llama-lib", bogus, "--model", file + "@llama.cpp", "-p", "4", "-n", "0", "-r", "1"},
		{"nll", "--llama-lib", bogus, "--model", file + "@llama.cpp", "--text", file},
		{"sim", "--llama-lib", bogus, "--llm", file + "@llama.cpp", "--slm", file + "@exit=1", "--prompt", "Once", "--max-tokens", "2"},
	} {
		_, _, err := runHLM(t, args...)
		if err == nil || !strings.Contains(err.Error(), "llama.cpp library") {
			t.Errorf("%s with a bogus --llama-lib: %v", args[0], err)
		}
	}
	llamacpp.SetLibrary("")
	_, _, err := runHLM(t, "serve", "--llm", file, "--replica", file+"@llama.cpp", "--listen", "127.0.0.1:0")
	if err == nil || !strings.Contains(err.Error(), "replica") || !strings.Contains(err.Error(), "hlm's engine") {
		t.Errorf("serve with a @llama.cpp replica: %v", err)
	}
	if _, ok := llamacpp.LibraryPath(); !ok {
		t.Skip("no libllama: run internal/libllama/build.sh (CI does)")
	}
	out, _, err := runHLM(t, "generate", "--model", file+"@llama.cpp@c=64", "--prompt", "Once", "--max-tokens", "4", "--temperature", "0")
	if err != nil || out == "" {
		t.Errorf("generate on llama.cpp: %q, %v", out, err)
	}
}
