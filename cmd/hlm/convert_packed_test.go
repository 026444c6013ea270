package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConvertPacked converts the built-in model to Q8_0 twice, row-major
// and with --packed, and generates from both files: the same text,
// greedy, from files of the same size that differ. --packed with a type
// that has no packed layout is refused before any work.
func TestConvertPacked(t *testing.T) {
	dir := t.TempDir()
	hlm := func(args ...string) (string, string, int) {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), args, &stdout, &stderr)
		return stdout.String(), stderr.String(), code
	}
	plain, packed := filepath.Join(dir, "plain.gguf"), filepath.Join(dir, "packed.gguf")
	if _, e, code := hlm("convert", "--type", "q8_0", "--out", plain); code != 0 {
		t.Fatalf("hlm convert: %s", e)
	}
	_, e, code := hlm("convert", "--type", "q8_0", "--packed", "--out", packed)
	if code != 0 {
		t.Fatalf("hlm convert --packed: %s", e)
	}
	if !strings.Contains(e, "prepacked (llama.cpp cannot read this file)") {
		t.Errorf("hlm convert --packed does not say what it wrote: %s", e)
	}
	a, _ := os.ReadFile(plain)
	b, _ := os.ReadFile(packed)
	if len(a) != len(b) || bytes.Equal(a, b) {
		t.Fatalf("prepacked file: %d bytes, row-major %d, identical %v", len(b), len(a), bytes.Equal(a, b))
	}
	if out, e, code := hlm("inspect", "-m", packed); code != 0 || !strings.Contains(out, "prepacked:") || !strings.Contains(out, "HLM_Q8_0_R16") {
		t.Errorf("hlm inspect of the prepacked file (exit %d) does not say it is prepacked:\n%s%s", code, out, e)
	}
	if out, _, _ := hlm("inspect", "-m", plain); strings.Contains(out, "prepacked") {
		t.Errorf("hlm inspect calls the row-major file prepacked:\n%s", out)
	}
	var outs []string
	for _, f := range []string{plain, packed} {
		out, e, code := hlm("generate", "-m", f, "-p", "Once upon a time", "-n", "24", "--temp", "0")
		if code != 0 {
			t.Fatalf("hlm generate -m %s: %s", f, e)
		}
		outs = append(outs, out)
	}
	if outs[0] != outs[1] || outs[0] == "" {
		t.Fatalf("generated from the prepacked file:\n%q\nfrom the row-major one:\n%q", outs[1], outs[0])
	}
	_, e, code = hlm("convert", "--type", "f16", "--packed", "--out", filepath.Join(dir, "f16.gguf"))
	if code == 0 || !strings.Contains(e, "only q8_0 and q4_0") {
		t.Fatalf("--packed --type f16: exit %d, %s", code, e)
	}
	if _, err := os.Stat(filepath.Join(dir, "f16.gguf")); err == nil {
		t.Fatal("a refused conversion wrote its file")
	}
}
