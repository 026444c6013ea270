package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/hlmproject/hlm/distill"
	"github.com/hlmproject/hlm/tensor"
)

func init() {
	register("acceptance", "measure how often a draft's tokens would be accepted: mean(1 − TV) along the LLM's text", runAcceptance)
}

func runAcceptance(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("acceptance", "[--llm SPEC] [--slm SPEC] [--dataset NAME [--dataset-path FILE] | --prompts FILE] [--n N] [--max-tokens N]", `
Measure a draft against its target: the LLM writes a continuation of each
prompt at the given temperature, and at every generated position both
models' next-token distributions are compared. 1 − TV(x, y) is the
probability that speculative sampling accepts a token drafted from x when
the target is y; the mean over positions is the draft's quality for every
lossless method (hlm, q-s, k-sqs, c-sqs, replica). Prints the mean with its
95% confidence interval over prompts and both models' multiply-adds per
token at the mean position (and the largest ratio of the two at any
position of the LLM's context). With no flags it measures the built-in
stories260K and its shipped draft on TinyStories' prompts from $HLM_SHARED
(else the stories built into hlm, with a notice).`, stdout)
	mf := addModelFlags(fs)
	pf := addPromptFlags(fs)
	n := fs.Int("n", 32, "prompts (a seeded sample of the dataset; 0 or more than it has: all)")
	maxTokens := fs.Int("max-tokens", defaultMaxTokens, "tokens the LLM writes per prompt")
	temp := fs.Float64("temperature", 1, "sampling temperature of both models (> 0)")
	seed := fs.Uint64("seed", defaultSeed, "random seed (prompt sample and the LLM's sampling)")
	threads := threadsFlag(fs, "worker threads (0: all cores)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	tensor.SetThreads(*threads)
	texts, err := pf.texts(*n, *seed)
	if err != nil {
		return err
	}
	ms, err := mf.open(ctx)
	if err != nil {
		return err
	}
	tok := ms.LLM.Tokenizer()
	if tok == nil {
		return fmt.Errorf("the LLM has no tokenizer (pass --tokenizer)")
	}
	ids := make([][]int, len(texts))
	for i, t := range texts {
		ids[i] = tok.Encode(t, true)
	}
	a, err := distill.Agree(ctx, ms.LLM, ms.SLM, ids, *maxTokens, *temp, *seed, tok.EOG())
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(a)
	}
	fmt.Fprintf(stdout, "draft %s against %s, %d prompts, %d positions at temperature %g\n", draftName(ms), *mf.llm, a.Prompts, a.Tokens, *temp)
	if a.Prompts < 2 {
		fmt.Fprintf(stdout, "  mean acceptance probability 1 − TV per draft token: %.4f (one prompt: no confidence interval, which takes --n 2 or more)\n", a.Accept)
	} else {
		fmt.Fprintf(stdout, "  mean acceptance probability 1 − TV per draft token: %.4f ± %.4f (95%% CI, prompts as clusters); mean of the prompts' means %s\n", a.Accept, a.Accept95, a.PerPrompt)
	}
	fmt.Fprintf(stdout, "  by generated token:")
	for i, v := range a.ByStep {
		fmt.Fprintf(stdout, " %d–%d: %.3f", i*distill.StepBucket, (i+1)*distill.StepBucket-1, v)
	}
	fmt.Fprintln(stdout)
	fmt.Fprintf(stdout, "  multiply-adds per token at the mean position %.0f: draft %d, LLM %d (ratio %.3f); at most %.3f of the LLM's at any position of its context (position %d)\n",
		a.MeanPos, a.SLMMACs, a.LLMMACs, float64(a.SLMMACs)/float64(a.LLMMACs), a.MaxRatio, a.MaxRatioPos)
	return nil
}
