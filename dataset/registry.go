package dataset

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"

	"github.com/hlmproject/hlm"
)

// ErrUnknownDataset is wrapped by Load for a name not in Names().
var ErrUnknownDataset = errors.New("unknown dataset")

// sets lists the named datasets in Names() order: loader, default file
// relative to the shared directory ("" when there is none), the file built
// into hlm (package hlm; "" when there is none), and the built-in set a
// command may fall back to when the shared file is absent.
var sets = []struct {
	name, file string
	load       func(path string) ([]Example, error)
	builtin    string
	fallback   string
}{
	{"alpaca", "data/alpaca/alpaca_5000.json", LoadAlpaca, "", ""},
	{"alpaca-seed", "data/alpaca/seed_tasks.jsonl", LoadAlpacaSeed, "", ""},
	{"alpaca-eval", "data/alpaca_eval/text_davinci_003_model_outputs.json", LoadAlpacaEval, "", ""},
	{"creak", "data/creak/dev.json", LoadCREAK, "", ""},
	{"strategyqa", "data/strategyqa/dev.json", LoadStrategyQA, "", ""},
	{"qed", "data/qed/qed-dev.jsonlines", LoadQED, "", ""},
	{"tinystories", "data/tinystories/TinyStories-valid-sample.txt", LoadTinyStories, "", "stories"},
	{"stories", "", LoadTinyStories, "data/stories/stories.txt", ""},
	{"prompts", "", LoadPromptFile, "", ""},
}

// BuiltinPrefix starts the example ids of a set built into hlm.
const BuiltinPrefix = "builtin:"

// HasBuiltin reports whether the named dataset is built into hlm
// (stories: 24 short stories written for hlm, CC0, data/stories), which
// LoadBuiltin reads.
func HasBuiltin(name string) bool {
	for _, s := range sets {
		if s.name == name {
			return s.builtin != ""
		}
	}
	return false
}

// Fallback is the built-in set a command may use in place of the named
// one when its shared file is absent (tinystories: stories), or "".
// Figures on the two are not comparable: the caller says which it used.
func Fallback(name string) string {
	for _, s := range sets {
		if s.name == name {
			return s.fallback
		}
	}
	return ""
}

// LoadBuiltin reads the named dataset built into hlm (see HasBuiltin); its
// example ids start with BuiltinPrefix.
func LoadBuiltin(name string) ([]Example, error) {
	for _, s := range sets {
		if s.name != name || s.builtin == "" {
			continue
		}
		b, err := hlm.Files.ReadFile(s.builtin)
		if err != nil {
			return nil, err
		}
		return SplitStories(string(b), BuiltinPrefix+name)
	}
	return nil, fmt.Errorf("dataset %q: %w built into hlm (built in: %v)", name, ErrUnknownDataset, builtinNames())
}

// builtinNames lists the datasets hlm has built in.
func builtinNames() []string {
	var out []string
	for _, s := range sets {
		if s.builtin != "" {
			out = append(out, s.name)
		}
	}
	return out
}

// Names lists the dataset names Load accepts.
func Names() []string {
	out := make([]string, len(sets))
	for i, s := range sets {
		out[i] = s.name
	}
	return out
}

// Load reads the named dataset from path with its loader (LoadAlpaca,
// LoadAlpacaSeed, LoadAlpacaEval, LoadCREAK, LoadStrategyQA, LoadQED,
// LoadTinyStories or LoadPromptFile).
func Load(name, path string) ([]Example, error) {
	for _, s := range sets {
		if s.name == name {
			return s.load(path)
		}
	}
	return nil, fmt.Errorf("dataset %q: %w (have %v)", name, ErrUnknownDataset, Names())
}

// Default is the default file of the named dataset under sharedDir, the
// shared material directory that holds data/ (for tests in a package
// directory, "../../shared"): the dev split of the QA sets, the 5,000-record
// Alpaca subset, the AlpacaEval reference outputs and the TinyStories
// validation sample. It is "" for "prompts" and for unknown names.
func Default(name, sharedDir string) string {
	for _, s := range sets {
		if s.name == name && s.file != "" {
			return filepath.Join(sharedDir, filepath.FromSlash(s.file))
		}
	}
	return ""
}

// Prompts are the examples' prompts, in order.
func Prompts(ex []Example) []string {
	out := make([]string, len(ex))
	for i, e := range ex {
		out[i] = e.Prompt
	}
	return out
}

// Sample is a deterministic random subset of n examples (all of them, in
// shuffled order, when n >= len(ex)). It runs the first n steps of a
// Fisher–Yates shuffle driven by PCG(seed, "sample") with unbiased bounded
// draws (rejection below 2⁶⁴ mod m), an algorithm written out here so that
// it does not change with the Go release: the same seed gives the same
// examples in the same order, and a smaller n gives a prefix of a larger
// one. The papers evaluate on 100 random Alpaca samples.
func Sample(ex []Example, n int, seed uint64) []Example {
	n = min(max(n, 0), len(ex))
	src := rand.NewPCG(seed, 0x73616d706c65) // "sample"
	idx := make([]int, len(ex))
	for i := range idx {
		idx[i] = i
	}
	out := make([]Example, n)
	for i := range out {
		j := i + int(uniform(src, uint64(len(ex)-i)))
		idx[i], idx[j] = idx[j], idx[i]
		out[i] = ex[idx[i]]
	}
	return out
}

// uniform is an unbiased draw in [0, m), m > 0.
func uniform(src *rand.PCG, m uint64) uint64 {
	reject := -m % m // 2⁶⁴ mod m
	for {
		if x := src.Uint64(); x >= reject {
			return x % m
		}
	}
}
