package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hlmproject/hlm/channel"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/model/engine"
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
	addLlamaLibFlag(fs)
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
func (m *modelFlags) open(ctx context.Context) (*sim.Models, error) {
	done := loadingNotice("the models (LLM " + *m.llm + ")")
	ms, err := interruptible(ctx, "the models", func() (*sim.Models, error) { return sim.Open(*m.llm, *m.slm, *m.tok) })
	done()
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
	prompt, prompts, trace *string
	asJSON                 *bool
	sets                   setFlags
	// flagged holds the values given to the registry's flags (--method,
	// --max-tokens, …), by key.
	flagged map[string]string
}

// addRunFlags declares the run flags: the registry's keys marked Flag
// (hybrid.Key.Flag: --max-tokens for max_tokens, defaults from p) and
// the prompts, outputs and --set.
func addRunFlags(fs *flag.FlagSet, p hybrid.Params, setHelp string) *runFlags {
	r := &runFlags{
		prompt:  fs.String("prompt", "", "prompt text"),
		prompts: fs.String("prompts", "", "file with one prompt per line (prompt i runs with seed+i)"),
		asJSON:  fs.Bool("json", false, "print one JSON object (the run summary) on stdout"),
		trace:   fs.String("trace", "", "write a per-token trace (JSON lines) to this file"),
		flagged: map[string]string{},
	}
	for _, k := range hybrid.Keys() {
		if k.Flag {
			def, _ := p.Get(k.Name)
			fs.Var(keyFlag{r: r, key: k, def: def}, k.FlagName(), fmt.Sprintf("%s (`%s`: %s; --set %s)", k.Help, placeholder(k), k.Accepts, k.Name))
		}
	}
	fs.Var(&r.sets, "set", setHelp)
	return r
}

// placeholder names a flag's value in the usage: N, X or NAME.
func placeholder(k hybrid.Key) string {
	switch {
	case strings.HasPrefix(k.Accepts, "an integer"):
		return "N"
	case strings.Contains(k.Accepts, "number"):
		return "X"
	}
	return "NAME"
}

// keyFlag is a registry key given as a flag: the value is checked when
// parsed and applied by runFlags.params.
type keyFlag struct {
	r   *runFlags
	key hybrid.Key
	def string
}

func (f keyFlag) String() string {
	if f.r == nil {
		return ""
	}
	if v, ok := f.r.flagged[f.key.Name]; ok {
		return v
	}
	return f.def
}

func (f keyFlag) Set(v string) error {
	probe := hybrid.DefaultParams()
	if err := probe.Set(f.key.Name, v); err != nil {
		return err
	}
	f.r.flagged[f.key.Name] = v
	return nil
}

// params applies the flags, then --set, to p and validates the result.
// A key given both as a flag and with --set is an error unless both say
// the same.
func (r *runFlags) params(p hybrid.Params) (hybrid.Params, error) {
	for _, k := range hybrid.Keys() {
		if v, ok := r.flagged[k.Name]; ok {
			if err := p.Set(k.Name, v); err != nil {
				return p, usageError{err}
			}
		}
	}
	if err := p.SetAll(r.sets); err != nil {
		return p, usageError{err}
	}
	if err := disagreement(r.sets, func(key string) (string, string, bool) {
		fv, ok := r.flagged[key]
		k, _ := hybrid.LookupKey(key)
		return k.FlagName(), fv, ok
	}); err != nil {
		return p, err
	}
	if err := p.Validate(); err != nil {
		return p, usageError{err}
	}
	return p, nil
}

// canonical is a key's value v as the registry writes it back (0.50 and
// .5 are the same temperature); v has parsed already.
func canonical(key, v string) string {
	p := hybrid.DefaultParams()
	p.Set(key, v)
	out, _ := p.Get(key)
	return out
}

// promptTexts is --prompt, or the lines of --prompts.
func (r *runFlags) promptTexts() ([]string, error) {
	switch {
	case *r.prompt != "" && *r.prompts != "":
		return nil, usageError{errors.New("give --prompt or --prompts, not both")}
	case *r.prompts != "":
		return promptTexts(*r.prompts, "", 0, 0)
	case *r.prompt == "":
		fmt.Fprintln(notices, "hlm: no --prompt: generating from the start of a text (BOS) alone")
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

// setsAgree refuses a --set key that one of the command's own flags also
// gave (flagKeys maps those flags to the keys they set), unless both say
// the same: the commands that apply their flags and then --set would
// otherwise let --set win without a word, where sim and edge refuse.
func setsAgree(fs *flag.FlagSet, sets setFlags, flagKeys map[string]string) error {
	given := map[string]*flag.Flag{}
	fs.Visit(func(f *flag.Flag) {
		if k, ok := flagKeys[f.Name]; ok {
			given[k] = f
		}
	})
	return disagreement(sets, func(key string) (string, string, bool) {
		f, ok := given[key]
		if !ok {
			return "", "", false
		}
		return f.Name, f.Value.String(), true
	})
}

// disagreement is the error for the first --set entry that contradicts
// the flag given for the same key (given: that flag's name and value, ok
// when one was given); nil when none does.
func disagreement(sets setFlags, given func(key string) (flag, value string, ok bool)) error {
	for _, kv := range sets {
		key, v, _ := strings.Cut(kv, "=")
		key, v = strings.TrimSpace(key), strings.TrimSpace(v)
		if name, fv, ok := given(key); ok && canonical(key, fv) != canonical(key, v) {
			return usageError{fmt.Errorf("--%s %s and --set %s disagree: give one", name, fv, kv)}
		}
	}
	return nil
}

// unusedKey is a --set or --sweep key that has no effect on a run, and
// why (hybrid.Params.Unused).
type unusedKey struct {
	flag, key, given, why string
}

func (u unusedKey) String() string {
	return fmt.Sprintf("%s %s has no effect: %s", u.flag, u.given, u.why)
}

// unusedSets are the keys of sets (key=value) that have no effect on a
// run with p, each once, named as given with flag ("--set"; "--sweep"
// names the key alone, for every value of it).
func unusedSets(flag string, sets []string, p hybrid.Params) []unusedKey {
	var out []unusedKey
	seen := map[string]bool{}
	// A channel key before a channel_preset is reset by it (--set applies
	// in order).
	preset, presetAt := "", -1
	for i, kv := range sets {
		if k, v, _ := strings.Cut(kv, "="); strings.TrimSpace(k) == "channel_preset" {
			preset, presetAt = strings.TrimSpace(v), i
		}
	}
	channelKeys := map[string]bool{}
	for _, ck := range channel.Keys() {
		channelKeys[ck.Name] = true
	}
	for i, kv := range sets {
		k, _, _ := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if flag == "--set" && i < presetAt && channelKeys[k] {
			out = append(out, unusedKey{flag, k, strings.TrimSpace(kv), "the later --set channel_preset=" + preset + " resets the channel (give channel keys after the preset)"})
			continue
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		if why := p.Unused(k); why != "" {
			given := strings.TrimSpace(kv)
			if flag == "--sweep" {
				given = k
			}
			out = append(out, unusedKey{flag, k, given, why})
		}
	}
	return out
}

// loadingAfter is how long loading goes on before loadingNotice speaks.
var loadingAfter = time.Second

// loadingNotice says on the notices, if loading has not ended within a
// second (a model of several GB), that the models are being loaded, and
// then how long it took, so that a long start is not silence. done ends
// it; it may be called more than once.
func loadingNotice(what string) (done func()) {
	var mu sync.Mutex
	var said bool
	var ended bool
	start := time.Now()
	t := time.AfterFunc(loadingAfter, func() {
		mu.Lock()
		defer mu.Unlock()
		if !ended {
			said = true
			fmt.Fprintf(notices, "hlm: loading %s …\n", what)
		}
	})
	return func() {
		t.Stop()
		mu.Lock()
		defer mu.Unlock()
		if !ended && said {
			fmt.Fprintf(notices, "hlm: loaded in %.1f s\n", time.Since(start).Seconds())
		}
		ended = true
	}
}

// openModel opens a model spec (engine.OpenSpec) as interruptible does.
func openModel(ctx context.Context, what, spec, tokPath string) (model.Model, error) {
	return interruptible(ctx, what, func() (model.Model, error) { return engine.OpenSpec(spec, tokPath) })
}

// interruptible runs open (a model's load) until it returns or ctx ends:
// the first signal ends a command that is still loading instead of
// waiting for the load, which llama.cpp's library cannot stop and which
// may not return (a remote host that takes the connection and never
// answers). The load is abandoned; the process exits.
func interruptible[T any](ctx context.Context, what string, open func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := open()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("interrupted while loading %s", what)
	}
}
