package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/edge"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model/llama"
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
				_, summary, err := runHLM(t, "sim", "--llm", m, "--slm", m+"@exit=1", "--method", method,
					"--prompt", "Once upon a time", "--max-tokens", "12", "--seed", "1")
				if err != nil || !strings.Contains(summary, "tokens/s") {
					t.Fatalf("sim %s: %v\n%s", method, err, summary)
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

// TestFamiliesOverTheNetwork runs every family as hlm serve's verifier
// with its early exit as the device's draft, over a real TCP connection:
// greedy (temperature 0) lossless methods must give the reference's greedy
// continuation (llama.cpp's, or numpy's for OPT and GPT-Neo, from the
// golden files) of each of the goldens' three prompts, up to the first
// end-of-generation token.
func TestFamiliesOverTheNetwork(t *testing.T) {
	dir := filepath.Join("..", "..", "model", "llama", "testdata", "families")
	goldens := map[string]string{"llama31.gguf": "llama31_golden.bin", "llama32.gguf": "llama32_golden.bin",
		"qwen2.gguf": "qwen2_golden.bin", "qwen3.gguf": "qwen3_golden.bin", "gemma2.gguf": "gemma2_golden.bin",
		"gemma3.gguf": "gemma3_golden.bin", "phi3.gguf": "phi3_golden.bin", "gpt2.gguf": "gpt2_golden.bin",
		"opt_pre": "opt_pre_golden.bin", "opt_post": "opt_post_golden.bin", "gpt_neo": "gpt_neo_golden.bin"}
	for _, name := range familyModels {
		t.Run(name, func(t *testing.T) {
			llm, err := llama.OpenSpec(filepath.Join(dir, name), "")
			if err != nil {
				t.Fatal(err)
			}
			slm, err := llama.OpenSpec(filepath.Join(dir, name)+"@exit=1", "")
			if err != nil {
				t.Fatal(err)
			}
			addr := loopbackServer(t, llm, nil)
			// The goldens of the three prompts (model/llama's familyPrompts).
			for _, suffix := range []string{"", "_p2", "_p3"} {
				golden := strings.TrimSuffix(goldens[name], ".bin") + suffix + ".bin"
				prompt, greedy := readFamilyGolden(t, filepath.Join(dir, golden))
				for _, method := range []string{hybrid.QS, hybrid.Coupled} {
					p := hybrid.DefaultParams()
					p.Method, p.MaxTokens, p.Temperature = method, 24, 0
					g, err := edge.NewGenerator(edge.Config{Addr: addr}, slm, p)
					if err != nil {
						t.Fatal(err)
					}
					res, _, err := g.OneTokens(context.Background(), p, prompt, nil)
					if err != nil {
						t.Fatalf("%s, %s: %v", golden, method, err)
					}
					want := greedy[:min(len(greedy), p.MaxTokens)]
					if len(res.Tokens) < len(want) && res.Stop == hybrid.StopEnd {
						want = want[:len(res.Tokens)]
					}
					if fmt.Sprint(res.Tokens) != fmt.Sprint(want) {
						t.Errorf("%s, %s over the network:\n got %v (%s)\nwant %v", golden, method, res.Tokens, res.Stop, want)
					}
					if len(want) < 4 {
						t.Errorf("%s, %s: only %d tokens compared (%v, %s)", golden, method, len(want), res.Tokens, res.Stop)
					}
					if res.Uploads == 0 {
						t.Errorf("%s, %s: no round reached the server", golden, method)
					}
				}
			}
		})
	}
}

// readFamilyGolden reads the prompt ids and the greedy continuation of a
// golden file (layout in model/llama/testdata/families/README.md).
func readFamilyGolden(t *testing.T, path string) (prompt, greedy []int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i32 := func(off int) int { return int(int32(binary.LittleEndian.Uint32(b[off:]))) }
	n, v := i32(0), i32(4)
	for i := range n {
		prompt = append(prompt, i32(8+4*i))
	}
	off := 8 + 4*n + 4*n*v
	g := i32(off)
	for i := range g {
		greedy = append(greedy, i32(off+4+4*i))
	}
	return prompt, greedy
}
