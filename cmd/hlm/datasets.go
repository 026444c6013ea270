package main

import (
	"fmt"
	"math/rand/v2"

	"github.com/hlmproject/hlm/dataset"
)

// loadDataset loads a named dataset from its default file under the shared
// directory ($HLM_SHARED or ../shared; see sharedDir).
func loadDataset(name string) ([]dataset.Example, error) {
	path := dataset.Default(name, sharedDir())
	if path == "" {
		return nil, fmt.Errorf("unknown dataset %q", name)
	}
	return dataset.Load(name, path)
}

// sampleExamples is a seeded random subset of n examples.
func sampleExamples(ex []dataset.Example, n int, seed uint64) []dataset.Example {
	rng := rand.New(rand.NewPCG(seed, 0x73616d706c65))
	idx := rng.Perm(len(ex))[:n]
	out := make([]dataset.Example, n)
	for i, j := range idx {
		out[i] = ex[j]
	}
	return out
}
