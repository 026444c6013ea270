package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain lets tests run this test binary as the hlm command: with
// HLM_TEST_MAIN=1 in its environment it runs main() on its arguments, so a
// test can start real `hlm serve` processes (and signal or kill them)
// without building hlm first.
func TestMain(m *testing.M) {
	if os.Getenv("HLM_TEST_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// countingWriter counts Write calls (it has no WriteString: every write
// goes through Write).
type countingWriter struct {
	b      strings.Builder
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.b.Write(p)
}

func (w *countingWriter) String() string { return w.b.String() }

// TestHelpIsOneWrite: `hlm help` lists bench (side-by-side.sh looks for
// "^  bench") in a single write, so a reader that stops early cannot kill
// it with SIGPIPE halfway.
func TestHelpIsOneWrite(t *testing.T) {
	var w countingWriter
	if code := run(context.Background(), []string{"help"}, &w, &w); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if w.writes != 1 {
		t.Errorf("help took %d writes", w.writes)
	}
	if !strings.Contains(w.String(), "\n  bench ") {
		t.Errorf("help does not list bench:\n%s", w.String())
	}
}

// TestFlagErrorIsShort: a mistyped flag or a bad value prints the error and
// a pointer to --help (the whole flag list drowned the error), with exit
// status 2, for every command; --help still prints the usage and flags.
func TestFlagErrorIsShort(t *testing.T) {
	for name := range commands {
		var out, errb strings.Builder
		if code := run(context.Background(), []string{name, "--no-such-flag"}, &out, &errb); code != 2 {
			t.Errorf("hlm %s --no-such-flag: exit %d, want 2", name, code)
		}
		lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
		if len(lines) != 2 || !strings.Contains(lines[0], "flag provided but not defined: -no-such-flag") || !strings.Contains(lines[1], "'hlm "+name+" --help'") {
			t.Errorf("hlm %s --no-such-flag printed:\n%s\nwant the error and a pointer to --help, two lines", name, errb.String())
		}
		errb.Reset()
		out.Reset()
		if code := run(context.Background(), []string{name, "--help"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "Usage: hlm "+name) || !strings.Contains(out.String(), "Flags:") || errb.Len() > 0 {
			t.Errorf("hlm %s --help: exit %d, standard output:\n%s\nstandard error:\n%s", name, code, out.String(), errb.String())
		}
	}
}

// TestServeRefusesMeaninglessLimits: a limit hlm serve would replace by its
// default (0 sessions, batches of 0) is refused, not silently changed.
func TestServeRefusesMeaninglessLimits(t *testing.T) {
	for _, args := range [][]string{
		{"--max-sessions", "0"}, {"--max-batch", "-1"}, {"--max-frame", "10"}, {"--max-context", "-1"}, {"--prefill-chunk", "-1"}, {"--prefill-chunk", "1"},
		{"--threads", "-2"}, {"--idle-timeout", "0s"}, {"--drain-delay", "-1s"},
	} {
		var out, errb strings.Builder
		if code := run(context.Background(), append([]string{"serve", "--listen", "127.0.0.1:0"}, args...), &out, &errb); code != 2 || !strings.Contains(errb.String(), strings.TrimLeft(args[0], "-")) {
			t.Errorf("hlm serve %s: exit %d, %q; want exit 2 naming the flag", strings.Join(args, " "), code, errb.String())
		}
	}
}

// TestThreadsFlags: every command with --threads also takes -t (llama.cpp's
// name for it) and refuses a negative count.
func TestThreadsFlags(t *testing.T) {
	n := 0
	for name, fs := range commandFlags(t) {
		th := fs.Lookup("threads")
		if th == nil || name == "bench" {
			continue
		}
		n++
		if fs.Lookup("t") == nil {
			t.Errorf("hlm %s has --threads but no -t", name)
		}
		if err := th.Value.Set("-1"); err == nil {
			t.Errorf("hlm %s --threads -1 accepted", name)
		}
	}
	if n < 10 {
		t.Errorf("%d commands with --threads, want the 10 or more there are", n)
	}
}

// TestEdgeOpenAIExclusive: --openai serves its clients' prompts, so the
// flags of a one-off run are refused with it, not ignored.
func TestEdgeOpenAIExclusive(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--openai", "127.0.0.1:0", "--prompt", "x"}, "drop --prompt/--prompts"},
		{[]string{"--openai", "127.0.0.1:0", "--prompts", "f.txt"}, "drop --prompt/--prompts"},
		{[]string{"--openai", "127.0.0.1:0", "--json"}, "--json prints the summary"},
		{[]string{"--openai", "127.0.0.1:0", "--openai-concurrency", "0"}, "want at least 1"},
		{[]string{"--prompt", "x", "--openai-concurrency", "8"}, "limits the generations of --openai"},
		{[]string{"--openai", "127.0.0.1:0", "--openai-conversations", "-1"}, "want 0 (close every session) or more"},
		{[]string{"--prompt", "x", "--openai-conversations", "4"}, "keep the sessions of --openai's requests"},
		{[]string{"--prompt", "x", "--openai-draft-sessions", "4"}, "keep the sessions of --openai's requests"},
		{[]string{"--openai", "127.0.0.1:0", "--openai-draft-sessions", "-2"}, "want 0 (keep none) or more"},
		{[]string{"--openai", "127.0.0.1:0", "--openai-conversation-age", "0s"}, "want a positive duration"},
		{[]string{"--prompt", "x", "--openai-conversation-age", "10m"}, "keep the sessions of --openai's requests"},
	} {
		var out, errb strings.Builder
		if code := run(context.Background(), append([]string{"edge"}, c.args...), &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("hlm edge %s: exit %d, %q; want %q", strings.Join(c.args, " "), code, errb.String(), c.want)
		}
	}
}

// TestServeJSONLogIsJSON: with --log-format json every line hlm serve
// writes to stderr is a JSON record, its announcements included.
func TestServeJSONLogIsJSON(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	var out, errb strings.Builder
	if code := run(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--log-format", "json", "--health", "127.0.0.1:0"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
	if len(lines) < 4 {
		t.Fatalf("%d lines: %q", len(lines), errb.String())
	}
	for _, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil || rec["msg"] == nil {
			t.Errorf("not a JSON record: %q", l)
		}
	}
}

// TestInterruptedExitStatus: work a signal cuts short exits 130 (128 +
// SIGINT), also when it saved what it had; a server, whose normal end is a
// signal, exits 0; work that finished before any signal exits 0.
func TestInterruptedExitStatus(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		args  []string
		after time.Duration // the "signal": ctx cancelled after this long
		want  int
	}{
		{"distill cut short, its checkpoint saved", []string{"distill", "--out", filepath.Join(dir, "d.gguf"), "--steps", "1000000", "--batch", "2", "--seq", "16"}, 1500 * time.Millisecond, 130},
		{"sim before the models load", []string{"sim", "--prompt", "Once", "--max-tokens", "4"}, 0, 130},
		{"sim done before the signal", []string{"sim", "--prompt", "Once", "--max-tokens", "4"}, time.Hour, 0},
		{"serve, stopped by its signal", []string{"serve", "--listen", freeAddr(t)}, 1500 * time.Millisecond, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), tc.after)
			defer cancel()
			var out, errb lockedBuffer
			if got := run(ctx, tc.args, &out, &errb); got != tc.want {
				t.Errorf("hlm %s: exit status %d, want %d\n%s", strings.Join(tc.args, " "), got, tc.want, errb.String())
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "d.ckpt")); err != nil {
		t.Errorf("the interrupted distill saved no checkpoint: %v", err)
	}
}

// TestBenchThreadsZero: hlm bench -t 0 means all cores, as --threads 0 does
// in every other command, not an error.
func TestBenchThreadsZero(t *testing.T) {
	var out, errb lockedBuffer
	if code := run(context.Background(), []string{"bench", "-t", "0", "-p", "8", "-n", "0", "-r", "1", "-o", "json"}, &out, &errb); code != 0 {
		t.Fatalf("exit status %d: %s", code, errb.String())
	}
	if want := fmt.Sprintf(`"n_threads": %d,`, runtime.NumCPU()); !strings.Contains(out.String(), want) {
		t.Errorf("no %s in\n%s", want, out.String())
	}
}
