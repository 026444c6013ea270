package main

import (
	"errors"
	"flag"
	"io"
	"os"
	"strings"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/sim"
)

// modelFlags are the --llm, --slm and --tokenizer flags of the commands that
// run a model pair.
type modelFlags struct {
	llm, slm, tok *string
}

// addModelFlags declares the model flags, defaulting to the built-in
// stories260K and the draft hlm ships for the LLM.
func addModelFlags(fs *flag.FlagSet) *modelFlags {
	return &modelFlags{
		llm: fs.String("llm", builtin.DefaultLLM, "LLM model spec (default: stories260K, built into hlm)"),
		slm: addDraftFlag(fs),
		tok: fs.String("tokenizer", "", "tokenizer file, when not found with the models"),
	}
}

// addDraftFlag declares --slm, empty by default: the draft hlm ships for
// the LLM.
func addDraftFlag(fs *flag.FlagSet) *string {
	return fs.String("slm", "", "SLM (draft) model spec (default: the draft hlm ships for the LLM, drafts/README.md)")
}

// open opens the model pair; it must have a draft.
func (m *modelFlags) open() (*sim.Models, error) {
	ms, err := sim.Open(*m.llm, *m.slm, *m.tok)
	if err != nil {
		return nil, err
	}
	return ms, ms.RequireDraft()
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
