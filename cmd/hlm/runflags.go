package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/sim"
)

// modelFlags are the --llm, --slm and --tokenizer flags of the commands that
// run a model pair.
type modelFlags struct {
	llm, slm, tok *string
}

// defaultDraft is the draft hlm ships for stories260K (drafts/README.md):
// a one-layer student distilled from it, the default SLM of every command
// that drafts. Early exits stay available by spec (PATH@exit=N).
var defaultDraft = filepath.Join("drafts", "stories260K-draft.gguf")

// addModelFlags declares the model flags, defaulting to stories260K under
// modelsDir() and its shipped draft.
func addModelFlags(fs *flag.FlagSet) *modelFlags {
	return &modelFlags{
		llm: fs.String("llm", filepath.Join(modelsDir(), "stories260K", "stories260K.bin"), "LLM model spec"),
		slm: addDraftFlag(fs),
		tok: fs.String("tokenizer", "", "tokenizer file, when not found with the models"),
	}
}

// addDraftFlag declares --slm with the shipped draft as its default.
func addDraftFlag(fs *flag.FlagSet) *string {
	return fs.String("slm", defaultDraft, "SLM (draft) model spec; the default is the distilled draft of stories260K (drafts/README.md)")
}

// open opens the model pair.
func (m *modelFlags) open() (*sim.Models, error) {
	ms, err := sim.Open(*m.llm, *m.slm, *m.tok)
	return ms, draftHint(*m.slm, err)
}

// draftHint explains a missing default draft: it lives in the repository.
func draftHint(spec string, err error) error {
	if err != nil && spec == defaultDraft {
		if _, serr := os.Stat(defaultDraft); serr != nil {
			return fmt.Errorf("%w\n(the default draft %s ships in the hlm repository: run from its root, or pass --slm)", err, defaultDraft)
		}
	}
	return err
}

// runFlags are the flags hlm sim and hlm edge share: the method, its
// parameters, the prompts and the outputs.
type runFlags struct {
	method, prompt, prompts, trace *string
	maxTokens                      *int
	seed                           *uint64
	asJSON                         *bool
	sets                           setFlags
}

func addRunFlags(fs *flag.FlagSet, p hybrid.Params, setHelp string) *runFlags {
	r := &runFlags{
		method:    fs.String("method", p.Method, "method: "+strings.Join(hybrid.Methods, ", ")),
		prompt:    fs.String("prompt", "", "prompt text"),
		prompts:   fs.String("prompts", "", "file with one prompt per line (prompt i runs with seed+i)"),
		maxTokens: fs.Int("max-tokens", p.MaxTokens, "new tokens at most per prompt"),
		seed:      fs.Uint64("seed", 0, "random seed"),
		asJSON:    fs.Bool("json", false, "print one JSON object (the run summary) on stdout"),
		trace:     fs.String("trace", "", "write a per-token trace (JSON lines) to this file"),
	}
	fs.Var(&r.sets, "set", setHelp)
	return r
}

// params applies the flags to p and validates the result.
func (r *runFlags) params(p hybrid.Params) (hybrid.Params, error) {
	p.Method, p.MaxTokens, p.Seed = *r.method, *r.maxTokens, *r.seed
	if err := p.SetAll(r.sets); err != nil {
		return p, usageError{err}
	}
	if err := p.Validate(); err != nil {
		return p, usageError{err}
	}
	return p, nil
}

// promptTexts is --prompt, or the lines of --prompts.
func (r *runFlags) promptTexts() ([]string, error) {
	switch {
	case *r.prompt != "" && *r.prompts != "":
		return nil, usageError{errors.New("give --prompt or --prompts, not both")}
	case *r.prompts != "":
		return promptTexts(*r.prompts, "", 0, 0)
	}
	return []string{*r.prompt}, nil
}

// openTrace opens the --trace file (nil writer when not asked for).
func (r *runFlags) openTrace() (io.Writer, func(), error) {
	if *r.trace == "" {
		return nil, func() {}, nil
	}
	f, err := os.Create(*r.trace)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
}
