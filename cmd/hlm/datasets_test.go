package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandsRunWithoutShared: with no shared directory (a new user after
// go install), the commands that take prompts run on the stories built
// into hlm and say so, and a dataset that is not built in, or the
// prompts dataset without its file, is an error that names the flag to
// give and HLM_SHARED.
func TestCommandsRunWithoutShared(t *testing.T) {
	t.Setenv("HLM_SHARED", filepath.Join(t.TempDir(), "absent"))
	dir := t.TempDir()
	var said strings.Builder
	notice = &said
	defer func() { notice = os.Stderr }()
	for _, c := range []struct {
		name string
		args []string
		want []string // in the error; nil: success
	}{
		{"acceptance", []string{"acceptance", "--n", "2", "--max-tokens", "4"}, nil},
		{"calibrate", []string{"calibrate", "--n", "2", "--max-tokens", "4"}, nil},
		{"eval", []string{"eval", "--n", "2", "--max-tokens", "4", "--methods", "llm,q-s", "--no-nll", "--out", filepath.Join(dir, "eval")}, nil},
		{"train-ddqn", []string{"train-ddqn", "--n", "2", "--episodes", "2", "--max-tokens", "4", "--out", filepath.Join(dir, "p.json")}, nil},
		{"eval, shared set", []string{"eval", "--dataset", "alpaca", "--out", filepath.Join(dir, "a")}, []string{"--dataset-path FILE", "HLM_SHARED", "stories is built in"}},
		{"acceptance, shared set", []string{"acceptance", "--dataset", "qed"}, []string{"--dataset-path FILE", "HLM_SHARED"}},
		{"eval, prompts without a file", []string{"eval", "--dataset", "prompts", "--out", filepath.Join(dir, "p")}, []string{"--dataset-path FILE", "one per line"}},
		{"unknown dataset", []string{"calibrate", "--dataset", "nonesuch"}, []string{"unknown dataset", "tinystories"}},
		{"both prompt sources", []string{"acceptance", "--prompts", "p.txt", "--dataset", "qed"}, []string{"not both"}},
	} {
		_, _, err := runHLM(t, c.args...)
		switch {
		case c.want == nil && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != nil && err == nil:
			t.Errorf("%s: no error", c.name)
		case c.want != nil:
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: error %q does not say %q", c.name, err, w)
				}
			}
			if strings.Contains(err.Error(), "open ") || errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: error %q is the file system's, not one that says what to do", c.name, err)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "eval", "report.md")); err != nil {
		t.Errorf("hlm eval wrote no report: %v", err)
	}
	if n := strings.Count(said.String(), "using the prompts built into hlm (--dataset stories) instead of tinystories"); n != 4 {
		t.Errorf("%d notices of the fallback for 4 runs without --dataset:\n%s", n, said.String())
	}
}
