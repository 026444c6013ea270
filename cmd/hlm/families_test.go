package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// familyModels are the tiny random-weight models of every family hlm runs
// (model/llama/testdata/families, checked there against llama.cpp and
// numpy references).
var familyModels = []string{"llama31.gguf", "llama32.gguf", "qwen2.gguf", "qwen3.gguf", "gemma2.gguf", "gemma3.gguf",
	"phi3.gguf", "gpt2.gguf", "opt_pre", "opt_post", "gpt_neo"}

// TestFamiliesEndToEnd runs the commands a user runs on every family: the
// simulator with lossless and lossy methods (the model's early exit as the
// draft), generation, scoring, conversion to Q8_0, and distilling a
// Llama-architecture draft from it whose acceptance is then measured.
func TestFamiliesEndToEnd(t *testing.T) {
	dir := filepath.Join("..", "..", "model", "llama", "testdata", "families")
	text := filepath.Join(t.TempDir(), "text.txt")
	if err := os.WriteFile(text, []byte("Once upon a time, there was a little model.\n\nIt was small and it was happy.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	prompts := filepath.Join(t.TempDir(), "prompts.txt")
	if err := os.WriteFile(prompts, []byte("Once upon a time\nThe little model\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range familyModels {
		t.Run(name, func(t *testing.T) {
			m := filepath.Join(dir, name)
			for _, method := range []string{"q-s", "u-hlm", "coupled", "k-sqs"} {
				out, _, err := runHLM(t, "sim", "--llm", m, "--slm", m+"@exit=1", "--method", method,
					"--prompt", "Once upon a time", "--max-tokens", "12", "--seed", "1")
				if err != nil || !strings.Contains(out, "tokens/s") {
					t.Fatalf("sim %s: %v\n%s", method, err, out)
				}
			}
			if _, _, err := runHLM(t, "generate", "--model", m, "--prompt", "Once", "--max-tokens", "8", "--temperature", "0"); err != nil {
				t.Fatalf("generate: %v", err)
			}
			if out, _, err := runHLM(t, "nll", "--model", m, "--text", text); err != nil || !strings.Contains(out, "perplexity") {
				t.Fatalf("nll: %v\n%s", err, out)
			}
			q8 := filepath.Join(t.TempDir(), "q8.gguf")
			if _, _, err := runHLM(t, "convert", "--model", m, "--out", q8, "--type", "q8_0"); err != nil {
				t.Fatalf("convert: %v", err)
			}
			if _, _, err := runHLM(t, "generate", "--model", q8, "--prompt", "Once", "--max-tokens", "8", "--temperature", "0"); err != nil {
				t.Fatalf("generate on the Q8_0 file: %v", err)
			}
			draft := filepath.Join(t.TempDir(), "draft.gguf")
			if _, _, err := runHLM(t, "distill", "--teacher", m, "--out", draft, "--init", "svd", "--dim", "32", "--heads", "4",
				"--kv-heads", "2", "--hidden", "64", "--steps", "3", "--batch", "2", "--seq", "16", "--eval-every", "3", "--heldout", "2", "--seed", "1"); err != nil {
				t.Fatalf("distill: %v", err)
			}
			out, _, err := runHLM(t, "acceptance", "--llm", m, "--slm", draft, "--prompts", prompts, "--n", "2", "--max-tokens", "8", "--seed", "1")
			if err != nil {
				t.Fatalf("acceptance: %v\n%s", err, out)
			}
		})
	}
}
