package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
		{"missing --prompts file, acceptance", []string{"acceptance", "--prompts", filepath.Join(dir, "absent.txt")}, []string{"--prompts: ", "absent.txt"}},
		{"missing --prompts file, sim", []string{"sim", "--prompts", filepath.Join(dir, "absent.txt")}, []string{"--prompts: ", "absent.txt"}},
		{"missing --dataset-path file, eval", []string{"eval", "--dataset", "alpaca", "--dataset-path", filepath.Join(dir, "absent.json"), "--out", filepath.Join(dir, "x")}, []string{"--dataset-path: ", "absent.json", "alpaca"}},
		{"missing --dataset-path file, acceptance", []string{"acceptance", "--dataset-path", filepath.Join(dir, "absent.txt")}, []string{"--dataset-path: ", "absent.txt"}},
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
	// The report and the results name the prompts that ran, not the set
	// they stood in for.
	rep, _ := os.ReadFile(filepath.Join(dir, "eval", "report.md"))
	res, _ := os.ReadFile(filepath.Join(dir, "eval", "results.csv"))
	if !strings.Contains(string(rep), "dataset stories (the built-in set standing in for tinystories") || !strings.Contains(string(res), ",stories,") || strings.Contains(string(res), ",tinystories,") {
		t.Errorf("eval on the fallback set: report %q…, results:\n%s", firstLines(string(rep), 8), res)
	}
	if n := strings.Count(said.String(), "using the prompts built into hlm (--dataset stories) instead of tinystories"); n != 4 {
		t.Errorf("%d notices of the fallback for 4 runs without --dataset:\n%s", n, said.String())
	}
}

func firstLines(s string, n int) string {
	ls := strings.SplitN(s, "\n", n+1)
	return strings.Join(ls[:min(n, len(ls))], "\n")
}

// TestShellJoin: a report's command line pastes back into a shell.
func TestShellJoin(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--out", "out/x", "--sweep", "l=1,2,3"}, "--out out/x --sweep l=1,2,3"},
		{[]string{"--sweep", "tree_shape=dynamic;3,2,1"}, "--sweep 'tree_shape=dynamic;3,2,1'"},
		{[]string{"--prompt", "Once upon a time"}, "--prompt 'Once upon a time'"},
		{[]string{"--prompt", "it's"}, `--prompt 'it'\''s'`},
		{[]string{"--llm", "m.gguf@exit=1", ""}, "--llm m.gguf@exit=1 ''"},
		{[]string{"*", "$HOME"}, "'*' '$HOME'"},
	} {
		if got := shellJoin(c.args); got != c.want {
			t.Errorf("shellJoin(%q) = %s, want %s", c.args, got, c.want)
		}
	}
}

// TestEvalRemovesStalePlots: hlm eval into a directory that holds an
// earlier run's plots (a sweep) leaves none of them beside a report that
// has no plots, where they would pass for this run's.
func TestEvalRemovesStalePlots(t *testing.T) {
	out := filepath.Join(t.TempDir(), "e")
	base := []string{"eval", "--out", out, "--dataset", "stories", "--n", "1", "--max-tokens", "4", "--methods", "q-s", "--no-nll"}
	for _, c := range []struct {
		args  []string
		plots []string // the plots there after the run; the others of files must not be
	}{
		{[]string{"--sweep", "l=1,2"}, []string{"throughput_tps.png", "rougeL.svg"}},
		{[]string{"--sweep", "l=1,2", "--plot", "energy_per_token, nll"}, []string{"energy_per_token.png", "nll.svg"}},
		{nil, nil},
	} {
		if _, stderr, err := runHLM(t, append(append([]string(nil), base...), c.args...)...); err != nil {
			t.Fatalf("%v: %v\n%s", c.args, err, stderr)
		}
		for _, f := range []string{"throughput_tps.png", "rougeL.svg", "energy_per_token.png", "nll.svg"} {
			_, err := os.Stat(filepath.Join(out, f))
			if got, want := err == nil, slices.Contains(c.plots, f); got != want {
				t.Errorf("after eval %v: %s exists %v, want %v", c.args, f, got, want)
			}
		}
	}
	if _, _, err := runHLM(t, append(append([]string(nil), base...), "--plot", "througput_tps")...); err == nil || !strings.Contains(err.Error(), "did you mean throughput_tps") {
		t.Errorf("--plot with a misspelt metric: %v", err)
	}
}

// TestPromptSampleAsEval: acceptance, calibrate and train-ddqn sample the
// same prompts as eval for the same --n and --seed (dataset.Sample, whose
// algorithm does not change with the Go release). They sampled with
// rand.Perm: other prompts than eval's, and others again after a Go
// release that changed Perm.
func TestPromptSampleAsEval(t *testing.T) {
	for _, seed := range []uint64{0, 3} {
		ex, err := evalExamples("stories", "", 5, seed)
		if err != nil {
			t.Fatal(err)
		}
		got, err := promptTexts("", "stories", 5, seed)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(ex) {
			t.Fatalf("%d prompts, eval %d", len(got), len(ex))
		}
		for i := range ex {
			if got[i] != ex[i].Prompt {
				t.Errorf("seed %d: prompt %d is %.30q, eval's %.30q", seed, i, got[i], ex[i].Prompt)
			}
		}
	}
}

// TestHeldOutPrompts: the prompts calibrate and train-ddqn fit on are none
// of hlm eval's with the same seed while the dataset has room for both
// (eval --n up to len − n), they are the same for the same seed, a
// smaller set is part of a larger one's, and a dataset too small for both
// gives all its prompts with a warning.
func TestHeldOutPrompts(t *testing.T) {
	ds, path, prompts := "stories", "", ""
	pf := &promptFlags{dataset: &ds, path: &path, prompts: &prompts}
	all, err := loadDataset("stories", "", "--dataset-path")
	if err != nil {
		t.Fatal(err)
	}
	N := len(all)
	for _, seed := range []uint64{0, 3} {
		var note strings.Builder
		got, err := pf.heldOut("calibrate", 4, seed, &note)
		if err != nil || len(got) != 4 {
			t.Fatalf("seed %d: %d prompts, %v", seed, len(got), err)
		}
		if !strings.Contains(note.String(), fmt.Sprintf("held out from hlm eval's: the end of the shuffle (--seed %d) whose start eval samples, so eval --n up to %d", seed, N-4)) {
			t.Errorf("seed %d: said %q", seed, note.String())
		}
		if N-4 >= defaultEvalPrompts == strings.Contains(note.String(), "warning") {
			t.Errorf("seed %d: %d prompts, said %q", seed, N, note.String())
		}
		ev, err := evalExamples("stories", "", N-4, seed)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ev {
			if slices.Contains(got, e.Prompt) {
				t.Errorf("seed %d: %.30q is in eval's %d prompts and in the held-out 4", seed, e.Prompt, N-4)
			}
		}
		again, _ := pf.heldOut("calibrate", 4, seed, nil)
		more, _ := pf.heldOut("calibrate", 6, seed, nil)
		if !slices.Equal(got, again) || !slices.Equal(got, more[2:]) {
			t.Errorf("seed %d: %q, then %q, 6 of them %q", seed, got, again, more)
		}
		var full strings.Builder
		if every, _ := pf.heldOut("train-ddqn", N+5, seed, &full); len(every) != N || !strings.Contains(full.String(), "hlm train-ddqn: all") {
			t.Errorf("seed %d: n past the dataset: %d prompts, said %q", seed, len(every), full.String())
		}
	}
}
