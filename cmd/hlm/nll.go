package main

import (
	"context"
	"fmt"
	"io"

	"github.com/hlmproject/hlm/dataset"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/score"
	"github.com/hlmproject/hlm/tensor"
)

func init() {
	register("nll", "mean negative log-likelihood (and perplexity) of a model on a text file", runNLL)
}

func runNLL(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("nll", "--model SPEC --text FILE", `
Score a text file under a model: the mean negative log-likelihood per token in
nats and the perplexity. Stories are split on <|endoftext|>, else blank lines,
else lines; each is encoded with BOS and scored in windows of the context
length.`, stderr)
	spec := fs.String("model", "", "model spec")
	tokPath := fs.String("tokenizer", "", "tokenizer file, when not found with the model")
	text := fs.String("text", "", "text file (e.g. ../shared/data/tinystories/TinyStories-valid-sample.txt)")
	threads := fs.Int("threads", 0, "worker threads (0: all cores)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *spec == "" || *text == "" {
		return usageError{fmt.Errorf("--model and --text are required")}
	}
	tensor.SetThreads(*threads)
	m, err := llama.OpenSpec(*spec, *tokPath)
	if err != nil {
		return err
	}
	if m.Tokenizer() == nil {
		return fmt.Errorf("model %s has no tokenizer: pass --tokenizer", *spec)
	}
	stories, err := dataset.LoadTinyStories(*text)
	if err != nil {
		return err
	}
	var total score.Result
	status := statusLine(stderr)
	for i, s := range stories {
		if err := ctx.Err(); err != nil {
			return err
		}
		r, err := score.Text(m, m.Tokenizer().Encode(s.Text, true))
		if err != nil {
			return err
		}
		total.Add(r)
		status(i+1, len(stories), fmt.Sprintf("scored %d/%d stories", i+1, len(stories)))
	}
	fmt.Fprintf(stdout, "model %s: %d tokens in %d stories: mean NLL %.4f nats/token, perplexity %.3f\n",
		m.Name(), total.Tokens, len(stories), total.Mean(), total.Perplexity())
	return nil
}
