package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"

	"github.com/hlmproject/hlm/bench"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/tensor"
)

func init() {
	register("bench", "measure the engine's speed like llama-bench (pp and tg tests, Markdown, JSON or CSV)", runBench)
}

// intsFlag is a flag holding a comma-separated list of integers ≥ 0
// (intList); repeating the flag appends.
type intsFlag struct {
	v   *[]int
	set bool
}

func (l intsFlag) String() string {
	if l.v == nil {
		return ""
	}
	s := make([]string, len(*l.v))
	for i, v := range *l.v {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

func (l *intsFlag) Set(s string) error {
	if !l.set { // the first use replaces the default
		*l.v, l.set = nil, true
	}
	v, err := intList(s, 0)
	*l.v = append(*l.v, v...)
	return err
}

// specsFlag is a repeatable flag of model specs whose first use replaces
// the default.
type specsFlag struct {
	v   []string
	set bool
}

func (f *specsFlag) String() string {
	if f == nil {
		return ""
	}
	return strings.Join(f.v, ",")
}

func (f *specsFlag) Set(s string) error {
	if !f.set {
		f.v, f.set = nil, true
	}
	f.v = append(f.v, s)
	return nil
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := bench.DefaultConfig()
	fs := newFlags("bench", "[--model SPEC ...] [-p 8] [-n 128] [-d 0] [-r 5] [-t 2] [--batch-sessions 1,32] [-o md|json|csv]", `
Measure tokens per second the way llama.cpp's llama-bench does, on the same
files: ppP evaluates a block of P random tokens in one pass from an empty
context and computes the logits of its last position (as llama-bench does),
tgN evaluates N random tokens one at a time; -d D runs them after D random
positions prefilled (untimed) into the cache ("tg128 @ d1024", as
llama-bench's -d), where attention over a long cache weighs in, and the KV
cache's type (@ctk=f16@ctv=f16, @ctk=q8_0@ctv=q8_0) with it. With --all-logits the prompt
test computes the logits of every position, as the server's block
verification does, and is named vbP. Each test runs once untimed, then -r times; t/s is the mean ± sample
standard deviation. --batch-sessions S evaluates S sessions together in each
pass (the server's cross-session batching; t/s counts all sessions' tokens).
Lists are comma-separated (-p 1,8 -t 1,2). Progress goes to stderr. The
model defaults to the built-in stories260K.

--kernels (or HLM_KERNELS=portable|avx2|avx2-zen1|avx512|avx512-zen4|avx512-zen5 on amd64,
portable|neon on arm64) chooses the kernels (by default the best for this CPU: avx512-zen4 on a
Zen 4, avx512-zen5 on a Zen 5, avx2-zen1 on a Zen 1 or Zen+; --kernels refuses an unknown level
or one the CPU lacks, HLM_KERNELS warns and runs the default): the results are bit-identical,
only the speed differs.`, stdout)
	models := &specsFlag{v: []string{builtin.DefaultLLM}}
	fs.Var(models, "model", "model spec (repeatable): a .gguf, a llama2.c .bin, a Hugging Face directory or builtin:NAME, optionally @q8/@q4, @ctk=f16@ctv=f16 (a half-precision KV cache) or @ctk=q8_0@ctv=q8_0 (a Q8_0 one); PATH.gguf@llama.cpp runs it on llama.cpp's library")
	alias(fs, "m", "model")
	addLlamaLibFlag(fs)
	for _, f := range []struct {
		names []string
		v     *[]int
		help  string
	}{
		{[]string{"p", "n-prompt"}, &cfg.Prompt, "prompt (block) sizes; 0: no prompt test"},
		{[]string{"n", "n-gen"}, &cfg.Gen, "tokens to generate; 0: no generation test"},
		{[]string{"d", "n-depth"}, &cfg.Depth, "positions in each session's cache before a test (llama-bench's -d; prefilled untimed)"},
		{[]string{"t", "threads"}, &cfg.Threads, "thread counts, 0: all cores, as in the other commands (a @llama.cpp spec's t= sets its own)"},
		{[]string{"batch-sessions"}, &cfg.Sessions, "sessions evaluated together in each pass"},
	} {
		l := &intsFlag{v: f.v}
		for _, n := range f.names {
			fs.Var(l, n, f.help)
		}
	}
	fs.IntVar(&cfg.Reps, "r", cfg.Reps, "repetitions of each test")
	fs.IntVar(&cfg.Reps, "repetitions", cfg.Reps, "repetitions of each test")
	fs.Uint64Var(&cfg.Seed, "seed", 0, "seed of the random tokens")
	fs.BoolVar(&cfg.NoWarmup, "no-warmup", false, "skip the untimed warm-up run (and the wait after it for the packed rows its products start)")
	fs.BoolVar(&cfg.AllLogits, "all-logits", false, "prompt tests compute the logits of every position (test vbP)")
	kernels := fs.String("kernels", "", "kernel levels to compare, comma-separated (this machine: "+strings.Join(tensor.AvailableKernels(), ", ")+"); default: the best, or $HLM_KERNELS")
	asJSON := fs.Bool("json", false, "print the results as JSON instead of a Markdown table (same as -o json)")
	output := fs.String("o", "md", "output format: md, json or csv (as llama-bench)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof)")
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg.Models = models.v
	for i, t := range cfg.Threads {
		if t == 0 { // all cores, as --threads 0 everywhere else
			cfg.Threads[i] = runtime.NumCPU()
		}
	}
	if *kernels != "" {
		cfg.Kernels = strings.Split(*kernels, ",")
	}
	if *output != "md" && *output != "json" && *output != "csv" {
		return usageError{fmt.Errorf("-o %q: want md, json or csv", *output)}
	}
	if err := cfg.Validate(); err != nil {
		return usageError{err}
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	rs, err := bench.Run(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	switch {
	case *asJSON || *output == "json":
		return bench.WriteJSON(stdout, rs)
	case *output == "csv":
		return bench.WriteCSV(stdout, rs)
	}
	return bench.WriteMarkdown(stdout, rs)
}
