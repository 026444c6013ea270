package main

import (
	"context"
	"flag"
	"io"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/model/builtin"
)

// commandFlags runs every command with --help and returns the flag sets
// they declare (a command that declares none has no entry), keyed by the
// command's name; "eval paper" is eval's second set.
func commandFlags(t *testing.T) map[string]*flag.FlagSet {
	t.Helper()
	out := map[string]*flag.FlagSet{}
	defer func() { newFlagSet = nil }()
	for name, c := range commands {
		args := [][]string{{"--help"}}
		if name == "eval" {
			args = append(args, []string{"paper", "--help"})
		}
		for _, a := range args {
			var got *flag.FlagSet
			newFlagSet = func(fs *flag.FlagSet) { got = fs }
			if err := c.run(context.Background(), a, io.Discard, io.Discard); err != flag.ErrHelp {
				t.Errorf("hlm %s %s: %v, want the help and flag.ErrHelp (exit 0)", name, strings.Join(a, " "), err)
			}
			if got != nil {
				out[got.Name()] = got
			}
		}
	}
	return out
}

// TestSharedDefaults: a flag means the same wherever it appears (hlm help
// lists these): every model flag defaults to the built-in stories260K,
// every --max-tokens and --seed to the same values, and --help exits 0
// for every command, eval paper's included.
func TestSharedDefaults(t *testing.T) {
	want := map[string]string{
		"llm": builtin.DefaultLLM, "model": builtin.DefaultLLM, "m": builtin.DefaultLLM, "teacher": builtin.DefaultLLM,
		"max-tokens": strconv.Itoa(defaultMaxTokens), "seed": strconv.FormatUint(defaultSeed, 10),
		"dataset": "tinystories",
	}
	// Flags named here (command/flag) are exempt while a change is under
	// way; none are now.
	pending := map[string]bool{}
	sets := commandFlags(t)
	names := make([]string, 0, len(sets))
	for n := range sets {
		names = append(names, n)
	}
	sort.Strings(names)
	checked := 0
	for _, n := range names {
		sets[n].VisitAll(func(f *flag.Flag) {
			w, ok := want[f.Name]
			if !ok || pending[n+"/"+f.Name] {
				return
			}
			checked++
			if f.DefValue != w {
				t.Errorf("hlm %s --%s defaults to %q, want %q as in every command", n, f.Name, f.DefValue, w)
			}
		})
	}
	if checked < 20 {
		t.Errorf("only %d flags checked: the commands' flag sets were not seen", checked)
	}
}

// TestUsageLinesMarkOptionalFlags: a flag with a default is shown in
// brackets in its command's usage line, never as if it were required.
func TestUsageLinesMarkOptionalFlags(t *testing.T) {
	// Flags named here (command/flag) are exempt while a change is under
	// way; none are now.
	pending := map[string]bool{}
	for name, fs := range commandFlags(t) {
		var b strings.Builder
		fs.SetOutput(&b)
		fs.Usage()
		usage, _, _ := strings.Cut(b.String(), "\n")
		for _, f := range outsideBrackets(strings.TrimPrefix(usage, "Usage: hlm "+name)) {
			fl := fs.Lookup(strings.TrimLeft(f, "-"))
			if fl == nil || pending[name+"/"+fl.Name] {
				continue
			}
			if fl.DefValue != "" && fl.DefValue != "false" && fl.DefValue != "0" {
				t.Errorf("hlm %s: usage line %q shows %s as required, but it defaults to %q", name, usage, f, fl.DefValue)
			}
		}
	}
}

// outsideBrackets returns the words of a usage line that start with '-'
// and stand outside [...] and (...).
func outsideBrackets(s string) []string {
	var out []string
	depth := 0
	var word strings.Builder
	flush := func() {
		if w := word.String(); depth == 0 && strings.HasPrefix(w, "-") {
			out = append(out, w)
		}
		word.Reset()
	}
	for _, r := range s {
		switch r {
		case '[', '(':
			flush()
			depth++
		case ']', ')':
			flush()
			depth--
		case ' ', '|':
			flush()
		default:
			word.WriteRune(r)
		}
	}
	flush()
	return out
}
