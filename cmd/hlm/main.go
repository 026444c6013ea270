// Command hlm is hybrid language-model inference over bandwidth-limited
// links: a small model on a device drafts tokens, a large model on a server
// verifies them, and the device decides what crosses the uplink.
//
// Usage:
//
//	hlm <command> [flags]
//
// Run `hlm help` for the commands and `hlm <command> --help` for their flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/hlmproject/hlm/internal/words"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/model/llamacpp"
)

// command is one subcommand: its one-line summary and its entry point, which
// parses args and runs.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{}

func register(name, summary string, run func(ctx context.Context, args []string, stdout, stderr io.Writer) error) {
	commands[name] = command{summary, run}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal cancels ctx (a server drains, a device closes its
	// session); a second one ends the process at once, as by default.
	context.AfterFunc(ctx, stop)
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// notices is where a command's notices go (run's stderr): what the user
// should know but that is not an error.
var notices io.Writer = os.Stderr

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	notices = stderr
	llamacpp.Notify = func(msg string) { fmt.Fprintf(notices, "hlm: %s\n", msg) }
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		args = []string{"version"}
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				c.run(ctx, []string{"--help"}, stdout, stderr)
				return 0
			}
		}
		usage(stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		names := make([]string, 0, len(commands))
		for n := range commands {
			names = append(names, n)
		}
		if s := words.Closest(args[0], names); s != "" {
			fmt.Fprintf(stderr, "hlm: unknown command %q; did you mean %q?\n\n", args[0], s)
			return 2
		}
		fmt.Fprintf(stderr, "hlm: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	cmd := commandName(args)
	llamacpp.Notify = func(msg string) { fmt.Fprintf(notices, "hlm %s: %s\n", cmd, msg) }
	servingUntilSignal.Store(false)
	err := c.run(ctx, args[1:], stdout, stderr)
	// Work that a signal cut short exits with 128 + SIGINT's 2, as a shell
	// reports it, whatever it saved on its way out: "hlm distill … && next"
	// does not go on with half a draft. A command whose normal end is a
	// signal (a server, a live view kept after its run) exits 0.
	cut := ctx.Err() != nil && !servingUntilSignal.Load()
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "hlm %s: %v\nRun 'hlm %s --help' for its usage and flags.\n", cmd, err, cmd)
			return 2
		}
		fmt.Fprintf(stderr, "hlm %s: %v\n", cmd, err)
		if cut {
			return exitInterrupted
		}
		return 1
	}
	if cut {
		fmt.Fprintf(stderr, "hlm %s: interrupted (exit status %d)\n", cmd, exitInterrupted)
		return exitInterrupted
	}
	return 0
}

// exitInterrupted is the exit status of work cut short by a signal.
const exitInterrupted = 130

// servingUntilSignal is set by a command from the moment a signal is its
// normal end (hlm serve, hlm edge --openai, a live view kept after its
// run): a signal then ends it with status 0.
var servingUntilSignal atomic.Bool

// commandName is the command as its messages name it: "eval paper" for
// hlm eval's subcommand paper, whose flags and help are its own.
func commandName(args []string) string {
	if len(args) > 1 && args[0] == "eval" && args[1] == "paper" {
		return "eval paper"
	}
	return args[0]
}

func usage(w io.Writer) {
	// One write: a reader that stops at the first line it wants (grep -q
	// under pipefail, as ../shared/perf/side-by-side.sh does) must not make
	// the rest of the write fail with SIGPIPE.
	var b strings.Builder
	b.WriteString(`hlm — hybrid language-model inference over bandwidth-limited links

Usage: hlm <command> [flags]

Commands:
`)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  %-13s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(&b, `
A model is named by a spec: PATH (a llama2.c .bin, a .gguf file or a Hugging
Face directory), builtin:NAME (a model built into hlm), PATH@exit=N (its
first N layers: an early-exit draft), PATH@q8 or PATH@q4 (a Q8_0 or Q4_0
copy), PATH@ctk=f16@ctv=f16 (the KV cache's keys and values in half
precision: half the memory; float32 by default) or PATH@ctk=q8_0@ctv=q8_0
(in Q8_0 blocks: 34 bytes per 32 values); options combine, e.g.
PATH@exit=2@q8. PATH.gguf@llama.cpp runs the
model on llama.cpp's library instead (GPUs, several GPUs, RPC hosts): the
LLM of serve, loadtest, sim, eval, calibrate, acceptance, train-ddqn, and
the model of generate, bench and nll; also the draft where it runs in the
same process (sim, eval, calibrate, acceptance, train-ddqn), for methods
that need its logits only (not its attention, MC dropout, early exits or
a bit-identical replica). edge's draft, convert and distill need hlm's
engine; tokenize reads only the file's tokenizer. The library is
--llama-lib or $%s (internal/libllama/build.sh makes one). Its
options are llama.cpp's flags, e.g. PATH.gguf@llama.cpp@ngl=99@np=32:
%sWhere other processes share the CPU, set OMP_WAIT_POLICY=PASSIVE
(docs/deploy.md, "On the CPU").
Built-in models: %s.

Every command has the same defaults, so that it runs with nothing beside hlm:
  --llm, --model, --teacher  %s
  --slm                      the draft hlm ships for the LLM (found by the
                             LLM's fingerprint)
  --dataset                  tinystories from $HLM_SHARED; without it, the
                             24 stories built into hlm (stories), with a notice
  --max-tokens               %d new tokens per prompt
  --seed                     %d
Shared data (the other datasets) is read from $HLM_SHARED, default ../shared.
The short names of llama.cpp's tools work where they fit: -m (--model),
-t (--threads); in generate -p, -n, -s, --temp and -f; in nll -f (--text);
in tokenize -p; bench takes llama-bench's flags.

Run 'hlm <command> --help' for the flags of a command, 'hlm version' for
the version.
`, llamacpp.EnvLibrary, model.LlamaCppHelp(), strings.Join(builtin.Names(), ", "), builtin.DefaultLLM, defaultMaxTokens, defaultSeed)
	io.WriteString(w, b.String())
}

// usageError marks errors in the command line (exit status 2).
type usageError struct{ error }

// newFlagSet, when not nil, is told of every flag set newFlags makes (tests
// read the commands' flags and defaults through it).
var newFlagSet func(*flag.FlagSet)

// newFlags makes a flag set whose --help prints the summary, the usage line
// and the flag defaults to help (the command's standard output, so that
// `hlm sim --help | grep budget` finds it; errors go to standard error).
func newFlags(name, usageLine, about string, help io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	if newFlagSet != nil {
		newFlagSet(fs)
	}
	// The flag package writes a parse error, then calls Usage; --help calls
	// Usage alone. The error is hlm's to print (main, with a pointer to
	// --help), so the whole flag list is printed for --help only.
	out := &flagOutput{}
	fs.SetOutput(out)
	fs.Usage = func() {
		if out.failed {
			out.failed = false
			return
		}
		fs.SetOutput(help)
		defer fs.SetOutput(out)
		fmt.Fprintf(help, "Usage: hlm %s %s\n\n%s\n\nFlags:\n", name, usageLine, strings.TrimSpace(about))
		fs.PrintDefaults()
	}
	return fs
}

// flagOutput takes what the flag package writes while parsing — only its
// error messages, which main prints itself — and notes that one came.
type flagOutput struct{ failed bool }

func (o *flagOutput) Write(p []byte) (int, error) {
	o.failed = true
	return len(p), nil
}

// parse parses flags and refuses stray positional arguments.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{withSuggestion(fs, err)}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q (flags go before it?)", fs.Arg(0))}
	}
	lib, uses := false, false
	fs.Visit(func(f *flag.Flag) {
		lib = lib || f.Name == "llama-lib"
		uses = uses || strings.Contains(f.Value.String(), "@"+model.BackendLlamaCpp) ||
			f.Name == "llama" && f.Value.String() == "true" // hlm version --llama
	})
	switch {
	case !lib || uses:
	case fs.Lookup("llama") != nil: // hlm version
		fmt.Fprintf(notices, "hlm: --llama-lib is given without --llama, so the library is not opened (hlm version --llama prints it)\n")
	default:
		fmt.Fprintf(notices, "hlm: --llama-lib is given, but no model spec here ends in @%s, so the library is not used: hlm's own engine runs every model (add @%s to a .gguf spec)\n", model.BackendLlamaCpp, model.BackendLlamaCpp)
	}
	return nil
}
