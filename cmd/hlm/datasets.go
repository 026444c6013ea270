package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/hlmproject/hlm/dataset"
)

// datasetsHelp says where each dataset comes from, for --help texts.
var datasetsHelp = "Datasets: " + strings.Join(dataset.Names(), ", ") + `. stories (24 short
stories written for hlm, CC0) is built into hlm; the others are read from
$HLM_SHARED/data (default ../shared/data) or from the file --dataset-path
names. Without its shared file, tinystories falls back to stories, and the
command says so (figures on the two are not comparable).`

// notice is where loadDataset says it fell back to a built-in set.
var notice io.Writer = os.Stderr

// loadDataset loads the named dataset: from path when given, the set built
// into hlm (stories), else its file under the shared directory
// ($HLM_SHARED or ../shared) — or, when that is absent, the built-in set
// it falls back to (tinystories: stories), with a notice. Its errors name
// the flag that gives a file (pathFlag) and HLM_SHARED.
func loadDataset(name, path, pathFlag string) ([]dataset.Example, error) {
	if !slices.Contains(dataset.Names(), name) {
		return nil, usageError{fmt.Errorf("unknown dataset %q: want one of %s", name, strings.Join(dataset.Names(), ", "))}
	}
	switch {
	case path != "":
		ex, err := dataset.Load(name, path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %s does not exist (give the file of the %s dataset)", pathFlag, path, name)
		}
		return ex, err
	case name == "prompts":
		return nil, usageError{fmt.Errorf("the prompts dataset is a file of prompts, one per line: give it with %s FILE", pathFlag)}
	case dataset.HasBuiltin(name):
		return dataset.LoadBuiltin(name)
	}
	path = dataset.Default(name, sharedDir())
	if fb := datasetUsed(name, ""); fb != name {
		fmt.Fprintf(notice, "hlm: %s is not there: using the prompts built into hlm (--dataset %s) instead of %s; give %s's file with %s FILE or %s\n", path, fb, name, name, pathFlag, sharedHint())
		return dataset.LoadBuiltin(fb)
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("dataset %s: %s is not there: give its file with %s FILE, or %s (stories is built in)", name, path, pathFlag, sharedHint())
	}
	return dataset.Load(name, path)
}

// datasetUsed is the name of the set loadDataset(name, path, …) loads:
// name, or the built-in set it falls back to when its file is absent
// (the one place that decides the fallback).
func datasetUsed(name, path string) string {
	if path != "" || name == "prompts" || dataset.HasBuiltin(name) {
		return name
	}
	if _, err := os.Stat(dataset.Default(name, sharedDir())); err != nil {
		if fb := dataset.Fallback(name); fb != "" {
			return fb
		}
	}
	return name
}

// promptFlags are the flags of the commands that take prompts from a
// dataset or from a file of prompts.
type promptFlags struct {
	dataset, path, prompts *string
}

// addPromptFlags declares --dataset (default tinystories, which falls back
// to the built-in stories),
// --dataset-path and --prompts.
func addPromptFlags(fs *flag.FlagSet) *promptFlags {
	return &promptFlags{
		dataset: fs.String("dataset", "tinystories", "dataset to take prompts from (stories is built into hlm, and tinystories falls back to it without ../shared; see hlm eval --help)"),
		path:    fs.String("dataset-path", "", "the dataset's file, instead of the built-in or the shared one (e.g. a larger TinyStories file)"),
		prompts: fs.String("prompts", "", "file with one prompt per line, instead of --dataset"),
	}
}

// texts are the prompts: the lines of --prompts, or a seeded sample of n
// (all when n is 0 or the dataset has fewer) from the dataset.
func (f *promptFlags) texts(n int, seed uint64) ([]string, error) {
	if *f.prompts != "" && (*f.path != "" || *f.dataset != "tinystories") {
		return nil, usageError{fmt.Errorf("give --prompts or --dataset/--dataset-path, not both")}
	}
	return datasetPrompts(*f.prompts, *f.dataset, *f.path, n, seed)
}

// defaultEvalPrompts is hlm eval's --n: the prompts of its sample that
// heldOut keeps clear of when the dataset allows.
const defaultEvalPrompts = 20

// heldOut are the prompts to fit on (hlm calibrate's line, train-ddqn's
// policy): the lines of --prompts, or n prompts of the dataset that hlm
// eval's sample with the same --seed does not hold — the end of the seeded
// shuffle whose start eval samples (dataset.Sample's prefixes), so an eval
// of up to len − n prompts shares none of them. It says so on note (nil:
// nothing), and warns there when the dataset is too small to keep them
// apart from an eval of its default size. who names the command.
func (f *promptFlags) heldOut(who string, n int, seed uint64, note io.Writer) ([]string, error) {
	if *f.prompts != "" || *f.dataset == "prompts" {
		return f.texts(n, seed) // the user's own prompts: theirs to keep apart
	}
	ex, err := loadDataset(*f.dataset, *f.path, "--dataset-path")
	if err != nil {
		return nil, err
	}
	if note == nil {
		note = io.Discard
	}
	all := len(ex)
	if n <= 0 || n >= all {
		fmt.Fprintf(note, "hlm %s: all %d prompts of %s, which hlm eval on the same dataset also runs: give a larger dataset, a smaller --n, or --prompts to fit on other prompts than those evaluated\n", who, all, f.label())
		n = all
	} else {
		fmt.Fprintf(note, "hlm %s: %d prompts of %s held out from hlm eval's: the end of the shuffle (--seed %d) whose start eval samples, so eval --n up to %d with the same seed shares none\n", who, n, f.label(), seed, all-n)
		if all-n < defaultEvalPrompts {
			fmt.Fprintf(note, "hlm %s: warning: %s has %d prompts, so hlm eval's default %d shares %d of these\n", who, f.label(), all, defaultEvalPrompts, defaultEvalPrompts-(all-n))
		}
	}
	return dataset.Prompts(dataset.Sample(ex, all, seed)[all-n:]), nil
}

// label names the prompts texts reads: the --prompts file, or the
// dataset that ran (datasetLabel: the built-in set where it stood in).
func (f *promptFlags) label() string {
	if *f.prompts != "" {
		return "prompts file " + *f.prompts
	}
	if *f.path != "" {
		return *f.dataset + " (" + *f.path + ")"
	}
	return datasetLabel(*f.dataset, datasetUsed(*f.dataset, *f.path))
}

// promptTexts reads prompts from a file, or samples n from a dataset (its
// built-in or shared file).
func promptTexts(file, ds string, n int, seed uint64) ([]string, error) {
	return datasetPrompts(file, ds, "", n, seed)
}

// datasetPrompts reads prompts from a file, or samples n from a dataset
// (from path, or its built-in or shared file).
func datasetPrompts(file, ds, path string, n int, seed uint64) ([]string, error) {
	var ex []dataset.Example
	var err error
	if file != "" {
		if ex, err = dataset.LoadPromptFile(file); errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("--prompts: %s does not exist (give a file with one prompt per line)", file)
		} else if err != nil {
			err = fmt.Errorf("--prompts: %w", err)
		}
	} else {
		ex, err = loadDataset(ds, path, "--dataset-path")
		if err == nil && n > 0 && n < len(ex) {
			ex = dataset.Sample(ex, n, seed) // as eval samples: the same --n and --seed, the same prompts
		}
	}
	if err != nil {
		return nil, err
	}
	return dataset.Prompts(ex), nil
}

// sharedHint says how to point hlm at the shared material: set
// HLM_SHARED, or, when it is set, that it names the wrong directory.
func sharedHint() string {
	if d := os.Getenv("HLM_SHARED"); d != "" {
		return fmt.Sprintf("point HLM_SHARED (now %s) at the directory that holds data/", d)
	}
	return "set HLM_SHARED to the directory that holds data/"
}
