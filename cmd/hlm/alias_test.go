package main

import (
	"strings"
	"testing"
)

// TestLlamaShortNames: the short names llama.cpp's tools use (-m, -p, -n,
// -s, --temp, -f) mean what their long names mean: the same output for the
// same command line written either way, and the refusals that name a flag
// see it under either name.
func TestLlamaShortNames(t *testing.T) {
	text := "story.txt" // refused before it is read
	for _, c := range []struct {
		name        string
		long, short []string
	}{
		{"generate",
			[]string{"generate", "--model", "builtin:stories260K", "--prompt", "Tom had", "--max-tokens", "9", "--seed", "3", "--temperature", "0.7"},
			[]string{"generate", "-m", "builtin:stories260K", "-p", "Tom had", "-n", "9", "-s", "3", "--temp", "0.7"}},
		{"tokenize",
			[]string{"tokenize", "--model", "builtin:stories260K", "--ids", "Tom had a dog"},
			[]string{"tokenize", "-m", "builtin:stories260K", "--ids", "-p", "Tom had a dog"}},
		{"detokenize",
			[]string{"detokenize", "--model", "builtin:stories260K", "1 274 287 381"},
			[]string{"detokenize", "-m", "builtin:stories260K", "1 274 287 381"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			long, _, err := runHLM(t, c.long...)
			if err != nil {
				t.Fatal(err)
			}
			short, _, err := runHLM(t, c.short...)
			if err != nil {
				t.Fatal(err)
			}
			if long == "" || short != long {
				t.Errorf("%q gives %q, %q gives %q: want the same, not empty", c.long, long, c.short, short)
			}
		})
	}
	// A different -n, -s or -p changes the output: the short names are not
	// ignored.
	base, _, err := runHLM(t, "generate", "-n", "9", "-s", "3")
	if err != nil {
		t.Fatal(err)
	}
	for _, arg := range [][]string{{"-n", "5", "-s", "3"}, {"-n", "9", "-s", "4"}} {
		got, _, err := runHLM(t, append([]string{"generate"}, arg...)...)
		if err != nil {
			t.Fatal(err)
		}
		if got == base {
			t.Errorf("generate %q gives the output of -n 9 -s 3", arg)
		}
	}
	if _, _, err := runHLM(t, "tokenize", "-p", "Tom", "had"); err == nil || !strings.Contains(err.Error(), "give the text once") {
		t.Errorf("tokenize -p TEXT TEXT: %v, want a refusal of the text given twice", err)
	}
	// nll -f is --text: refused beside a logits file, by its long name.
	if _, _, err := runHLM(t, "nll", "-f", text, "--kl-base-logits", "x"); err == nil || !strings.Contains(err.Error(), "drop --text") {
		t.Errorf("nll -f with --kl-base-logits: %v, want a refusal naming --text", err)
	}
}
