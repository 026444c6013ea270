//go:build amd64 && !purego

package cpuprobe

import (
	"maps"
	"os"
	"strings"
	"testing"
)

// TestTileProbesCurrent checks that each probe made from a tile's loop
// (gen_probes.go, tileProbes) has as many instructions as that loop has
// now in tensor's generated assembly: a tile changed without `go generate
// ./internal/cpuprobe` fails it.
func TestTileProbesCurrent(t *testing.T) {
	src, err := os.ReadFile("../../tensor/gemm_amd64.s")
	if err != nil {
		t.Skipf("tensor's assembly not found: %v", err)
	}
	tiles := maps.Clone(tileOf)
	for _, p := range probes {
		tile, ok := tiles[p.Name]
		if !ok {
			continue
		}
		delete(tiles, p.Name)
		_, loop, found := strings.Cut(string(src), "\n"+tile+"_loop:\n")
		loop, _, closed := strings.Cut(loop, "\tJNZ "+tile+"_loop\n")
		if !found || !closed {
			t.Errorf("%s: no loop of %s in gemm_amd64.s", p.Name, tile)
			continue
		}
		n := 0
		for _, line := range strings.Split(loop, "\n") {
			if l := strings.TrimSpace(line); strings.HasPrefix(l, "V") || strings.HasPrefix(l, "PREFETCH") {
				n++
			}
		}
		if n != p.Instructions {
			t.Errorf("%s: %d instructions, %s's loop has %d now: run go generate ./internal/cpuprobe", p.Name, p.Instructions, tile, n)
		}
	}
	for name := range tiles {
		t.Errorf("no probe %s", name)
	}
}
