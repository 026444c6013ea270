package main

import (
	"context"
	"fmt"
	"io"

	"github.com/hlmproject/hlm/generate"
	"github.com/hlmproject/hlm/tensor"
)

func init() {
	register("generate", "sample text from one model (the LLM-only / SLM-only baseline)", runGenerate)
}

func runGenerate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := generate.DefaultConfig()
	fs := newFlags("generate", "--model SPEC --prompt TEXT [flags]", `
Generate a continuation of a prompt with one model. The continuation (not the
prompt) streams to stdout; the summary goes to stderr. --temperature 0 is
greedy decoding.`, stderr)
	fs.StringVar(&cfg.Model, "model", "", "model spec: a llama2.c .bin, a .gguf, a Hugging Face directory, optionally with @exit=N, @q8 or @q4")
	fs.StringVar(&cfg.Tokenizer, "tokenizer", "", "tokenizer file (tokenizer.json or llama2.c tokenizer.bin); default: found with the model")
	fs.StringVar(&cfg.Prompt, "prompt", "", "text to continue")
	fs.Float64Var(&cfg.Sampler.Temperature, "temperature", cfg.Sampler.Temperature, "sampling temperature (0: greedy)")
	fs.IntVar(&cfg.Sampler.TopK, "top-k", 0, "keep only the K most probable tokens (0: off)")
	fs.Float64Var(&cfg.Sampler.TopP, "top-p", 0, "nucleus sampling mass (0 or 1: off)")
	fs.IntVar(&cfg.MaxTokens, "max-tokens", cfg.MaxTokens, "maximum number of new tokens")
	fs.Uint64Var(&cfg.Seed, "seed", 0, "random seed (the same seed gives the same text)")
	fs.BoolVar(&cfg.NoBOS, "no-bos", false, "do not prepend the BOS token")
	fs.BoolVar(&cfg.IgnoreEOS, "ignore-eos", false, "keep generating after the end-of-sequence token")
	threads := fs.Int("threads", 0, "worker threads for the matrix products (0: all cores)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if cfg.Model == "" {
		return usageError{fmt.Errorf("--model is required")}
	}
	tensor.SetThreads(*threads)
	st, err := generate.Run(ctx, cfg, stdout)
	fmt.Fprintln(stdout)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "hlm generate: %d prompt tokens, %d generated (%s) in %.2fs: %.1f tokens/s (prefill %.0f ms)\n",
		st.PromptTokens, len(st.Tokens), st.StopReason, st.Decode.Seconds(), st.TokensPerSecond(), st.Prefill.Seconds()*1000)
	return nil
}
