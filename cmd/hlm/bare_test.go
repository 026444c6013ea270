package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// goisms are fragments of Go's own error and value formatting that a user
// cannot act on.
var goisms = regexp.MustCompile(`strconv\.|&\{|<nil>|open : |stat : |invalid memory address|goroutine \d+`)

// TestEveryCommandBare runs every command as a new user first would —
// with no arguments (or only what it cannot do without: an output file),
// from an empty directory, without the shared data — and checks that it
// either runs with its documented defaults or fails with an error that
// says what to do: no panic, no Go error text, and a usage error names a
// flag. (serve runs until stopped; it is stopped after it has started.)
func TestEveryCommandBare(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("HLM_SHARED", filepath.Join(dir, "absent"))
	t.Setenv("HOME", dir)
	notice = io.Discard // the tinystories fallback's notice: TestCommandsRunWithoutShared checks it
	defer func() { notice = os.Stderr }()
	// loadtest starts replicas of this binary (the test binary, which runs
	// hlm's main with HLM_TEST_MAIN=1) behind HAProxy; without HAProxy it
	// must say so.
	t.Setenv("HLM_TEST_MAIN", "1")
	loadtestWant := ""
	if _, err := exec.LookPath("haproxy"); err != nil {
		loadtestWant = "haproxy"
	}
	// Each command's arguments and, where it cannot succeed bare, what its
	// error must say.
	bare := map[string]struct {
		args []string
		want string // "": it runs
	}{
		"distill":       {[]string{"--out", "d.gguf", "--steps", "2", "--batch", "2", "--seq", "16"}, ""},
		"convert":       {[]string{"--out", "m.gguf"}, ""},
		"eval":          {[]string{"--out", "eval", "--n", "2", "--max-tokens", "4", "--methods", "q-s", "--no-nll"}, ""},
		"train-ddqn":    {[]string{"--out", "p.json", "--episodes", "2", "--max-tokens", "4", "--n", "2"}, ""},
		"tls-cert":      {[]string{"--cert", "c.pem", "--key", "k.pem"}, ""},
		"bench":         {[]string{"-p", "8", "-n", "4", "-r", "1"}, ""},
		"acceptance":    {[]string{"--n", "2", "--max-tokens", "4"}, ""},
		"calibrate":     {[]string{"--n", "2", "--max-tokens", "4"}, ""},
		"generate":      {[]string{"--prompt", "Once upon a time"}, ""},
		"sim":           {[]string{"--prompt", "Once upon a time"}, ""},
		"tokenize":      {[]string{"Once upon a time"}, ""},
		"detokenize":    {[]string{"1 403 407"}, ""},
		"version":       {nil, ""},
		"inspect":       {nil, ""},
		"serve":         {[]string{"--listen", freeAddr(t)}, ""}, // stopped after 2 s
		"edge":          {[]string{"--prompt", "Once upon a time", "--server", freeAddr(t)}, "hlm serve"},
		"nll":           {nil, "--text"},
		"chat-template": {nil, "--messages"},
		"loadtest":      {[]string{"--devices", "1", "--replicas", "1", "--duration", "1s"}, loadtestWant},
	}
	for name := range commands {
		c, ok := bare[name]
		if !ok {
			t.Errorf("command %s is not covered by this test: add it", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			timeout := 60 * time.Second
			if name == "serve" {
				timeout = 2 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			var out, errb lockedBuffer
			err := commands[name].run(ctx, c.args, &out, &errb)
			all := out.String() + errb.String()
			if err != nil {
				all += "\n" + err.Error()
			}
			cmd := strings.TrimSpace("hlm " + name + " " + strings.Join(c.args, " "))
			switch {
			case goisms.MatchString(all):
				t.Errorf("%s: output shows Go's own text:\n%s", cmd, all)
			case c.want == "" && err != nil:
				t.Errorf("%s: %v\n%s", cmd, err, all)
			case c.want != "" && (err == nil || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(c.want))):
				t.Errorf("%s: err = %v, want one that says %q", cmd, err, c.want)
			}
		})
	}
}
