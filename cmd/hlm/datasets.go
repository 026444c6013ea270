package main

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"

	"github.com/hlmproject/hlm/dataset"
)

// loadDataset loads a named dataset from the shared data directory
// ($HLM_DATA or ../shared/data).
func loadDataset(name string) ([]dataset.Example, error) {
	dir := filepath.Join("..", "shared", "data")
	switch name {
	case "tinystories":
		return dataset.LoadTinyStories(filepath.Join(dir, "tinystories", "TinyStories-valid-sample.txt"))
	}
	return nil, fmt.Errorf("unknown dataset %q", name)
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
