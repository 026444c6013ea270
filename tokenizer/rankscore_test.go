package tokenizer

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestRankScores: the scores Vocab derives for a Hugging Face BPE tokenizer
// make score merging (llama2.c's loop, the algorithm llama.cpp runs for a
// GGUF "llama" vocabulary) give the same ids as rank merging, on every
// TinyStories story and sentence of the shared samples; with the
// placeholder score llama.cpp's converter writes (−1000 for every piece)
// most of them differ, so the test can tell.
func TestRankScores(t *testing.T) {
	tok, err := LoadHFJSON(sharedFile(t, tinyStoriesHF))
	if err != nil {
		t.Fatal(err)
	}
	v := tok.Vocab()
	if len(v.Scores) != len(v.Tokens) {
		t.Fatalf("%d scores for %d tokens", len(v.Scores), len(v.Tokens))
	}
	byScore := func(scores []float32) *Tokenizer {
		w := v
		w.Merges, w.Scores = nil, scores
		s, err := FromVocab(w)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	derived := byScore(v.Scores)
	flat := byScore(slices.Repeat([]float32{-1000}, len(v.Tokens)))

	var texts []string
	for _, f := range []string{"data/tinystories/TinyStories-valid-sample.txt", "data/tinystories/cs336_tinystories_sample.txt"} {
		b, err := os.ReadFile(sharedFile(t, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if line = strings.TrimSpace(line); line == "" {
				continue
			}
			texts = append(texts, line)
			for _, s := range strings.Split(line, ". ") {
				texts = append(texts, strings.TrimSpace(s))
			}
		}
	}
	flatDiffer := 0
	for _, text := range texts {
		want := encode(tok, text, true, false)
		if got := encode(derived, text, true, false); !slices.Equal(got, want) {
			t.Errorf("%q:\n by score %v\n by rank  %v", text, got, want)
		}
		if !slices.Equal(encode(flat, text, true, false), want) {
			flatDiffer++
		}
	}
	t.Logf("%d texts: derived scores reproduce the ranks on all; flat scores differ on %d", len(texts), flatDiffer)
	if flatDiffer < len(texts)/2 {
		t.Errorf("flat scores differ on only %d of %d texts: the comparison cannot tell", flatDiffer, len(texts))
	}
	// The scores survive a round trip and keep the fingerprint.
	back, err := FromVocab(v)
	if err != nil {
		t.Fatal(err)
	}
	if back.Fingerprint() != tok.Fingerprint() {
		t.Error("the fingerprint changed through Vocab and FromVocab")
	}
}
