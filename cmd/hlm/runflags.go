package main

import (
	"errors"
	"flag"
	"fmt"
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
		llm: fs.String("llm", builtin.DefaultLLM, "LLM model spec (PATH, PATH@q8, builtin:NAME, …; hlm help lists the built-in models)"),
		slm: addDraftFlag(fs),
		tok: fs.String("tokenizer", "", "tokenizer file, when not found with the models"),
	}
}

// addDraftFlag declares --slm, empty by default: the draft hlm ships for
// the LLM.
func addDraftFlag(fs *flag.FlagSet) *string {
	return fs.String("slm", "", "SLM (draft) model spec (default: the draft hlm ships for the LLM, found by its fingerprint; hlm help lists them)")
}

// open opens the model pair; it must have a draft.
func (m *modelFlags) open() (*sim.Models, error) {
	ms, err := sim.Open(*m.llm, *m.slm, *m.tok)
	if err != nil {
		return nil, err
	}
	return ms, ms.RequireDraft()
}

// draftName names the draft a run used for reports: the spec it was opened
// from (the shipped draft's name when --slm was left empty), or "none".
func draftName(ms *sim.Models) string {
	if ms.SLM == nil {
		return "none"
	}
	return ms.SLM.Name()
}

// runFlags are the flags hlm sim and hlm edge share: the method, its
// parameters, the prompts and the outputs.
type runFlags struct {
	fs                             *flag.FlagSet
	method, prompt, prompts, trace *string
	maxTokens, topK                *int
	temperature, topP              *float64
	seed                           *uint64
	asJSON                         *bool
	sets                           setFlags
}

func addRunFlags(fs *flag.FlagSet, p hybrid.Params, setHelp string) *runFlags {
	r := &runFlags{
		fs:        fs,
		method:    fs.String("method", p.Method, "method: "+strings.Join(hybrid.Methods, ", ")),
		prompt:    fs.String("prompt", "", "prompt text"),
		prompts:   fs.String("prompts", "", "file with one prompt per line (prompt i runs with seed+i)"),
		maxTokens: fs.Int("max-tokens", p.MaxTokens, "new tokens at most per prompt"),
		seed:      fs.Uint64("seed", 0, "random seed"),
		asJSON:    fs.Bool("json", false, "print one JSON object (the run summary) on stdout"),
		trace:     fs.String("trace", "", "write a per-token trace (JSON lines) to this file"),
		// The sampling flags of hlm generate, for both models.
		temperature: fs.Float64("temperature", p.Temperature, "sampling temperature of both models (0: greedy)"),
		topK:        fs.Int("top-k", p.TopK, "keep only the K most probable tokens, both models (0: off)"),
		topP:        fs.Float64("top-p", p.TopP, "nucleus sampling mass, both models (0 or 1: off)"),
	}
	fs.Var(&r.sets, "set", setHelp)
	return r
}

// flagKeys are the flags that set a --set key too.
var flagKeys = map[string]string{"method": "method", "max-tokens": "max_tokens", "seed": "seed",
	"temperature": "temperature", "top-k": "top_k", "top-p": "top_p"}

// params applies the flags to p and validates the result. A key given
// both as a flag and with --set is an error unless both say the same.
func (r *runFlags) params(p hybrid.Params) (hybrid.Params, error) {
	p.Method, p.MaxTokens, p.Seed = *r.method, *r.maxTokens, *r.seed
	p.Temperature, p.TopK, p.TopP = *r.temperature, *r.topK, *r.topP
	flagged := hybrid.DefaultParams()
	flagged.Method, flagged.MaxTokens, flagged.Seed = p.Method, p.MaxTokens, p.Seed
	flagged.Temperature, flagged.TopK, flagged.TopP = p.Temperature, p.TopK, p.TopP
	if err := p.SetAll(r.sets); err != nil {
		return p, usageError{err}
	}
	var conflict error
	r.fs.Visit(func(f *flag.Flag) {
		key, ok := flagKeys[f.Name]
		if !ok || conflict != nil {
			return
		}
		for _, kv := range r.sets {
			k, v, _ := strings.Cut(kv, "=")
			if strings.TrimSpace(k) != key {
				continue
			}
			want := flagged
			if err := want.Set(key, strings.TrimSpace(v)); err == nil && !sameKey(want, flagged, key) {
				conflict = usageError{fmt.Errorf("--%s %s and --set %s disagree: give one", f.Name, f.Value, kv)}
			}
		}
	})
	if conflict != nil {
		return p, conflict
	}
	if err := p.Validate(); err != nil {
		return p, usageError{err}
	}
	return p, nil
}

// sameKey reports whether a and b agree on a flag key.
func sameKey(a, b hybrid.Params, key string) bool {
	switch key {
	case "method":
		return a.Method == b.Method
	case "max_tokens":
		return a.MaxTokens == b.MaxTokens
	case "seed":
		return a.Seed == b.Seed
	case "temperature":
		return a.Temperature == b.Temperature
	case "top_k":
		return a.TopK == b.TopK
	case "top_p":
		return a.TopP == b.TopP
	}
	return true
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
