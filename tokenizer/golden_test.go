package tokenizer

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// sharedDir is the project's shared/ directory (beside the repository root)
// as seen from this package's directory.
const sharedDir = "../../shared"

// Files under sharedDir that the tests read.
const (
	llama2Bin      = "models/llama2-tokenizer/tokenizer.bin"
	tok512Bin      = "models/stories260K/tok512.bin"
	tinyStoriesDir = "models/tinystories-656k"
	tinyStoriesHF  = tinyStoriesDir + "/tokenizer.json"

	llama2Golden      = "golden/llama2_tokenizer_golden.json"
	tok512Golden      = "golden/tok512_golden.json"
	tinyStoriesGolden = "golden/tinystories656k_tokenizer_golden.json"
)

// sharedFile returns the path of a file under sharedDir, skipping the test
// when it is absent.
func sharedFile(tb testing.TB, rel string) string {
	tb.Helper()
	p := filepath.Join(sharedDir, rel)
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		tb.Skipf("shared file %s is absent (the shared/ directory sits beside the repository root); skipping", p)
	} else if err != nil {
		tb.Fatal(err)
	}
	return p
}

// goldenCase is one entry of the shared golden token files: ids include
// BOS when bos is set.
type goldenCase struct {
	Text string `json:"text"`
	BOS  bool   `json:"bos"`
	IDs  []int  `json:"ids"`
}

func loadGolden(tb testing.TB, rel string) []goldenCase {
	tb.Helper()
	data, err := os.ReadFile(sharedFile(tb, rel))
	if err != nil {
		tb.Fatal(err)
	}
	var cases []goldenCase
	if err := json.Unmarshal(escapeControls(data), &cases); err != nil {
		tb.Fatalf("%s: %v", rel, err)
	}
	if len(cases) == 0 {
		tb.Fatalf("%s: no cases", rel)
	}
	return cases
}

// escapeControls escapes raw control characters inside JSON strings. The
// shared llama2 and tok512 golden files hold a literal tab in a string,
// which strict JSON (and encoding/json) rejects.
func escapeControls(data []byte) []byte {
	const hex = "0123456789abcdef"
	out := make([]byte, 0, len(data))
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case inString && c < 0x20:
			out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			escaped = false
			continue
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		}
		out = append(out, c)
	}
	return out
}

func loadLlama2C(tb testing.TB, rel string, vocabSize int) *Tokenizer {
	tb.Helper()
	tok, err := LoadLlama2C(sharedFile(tb, rel), vocabSize)
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

func loadTinyStories(tb testing.TB) *Tokenizer {
	tb.Helper()
	tok, err := LoadHFJSON(sharedFile(tb, tinyStoriesHF))
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

// sharedTokenizers are the tokenizers of the shared models with their golden
// token files.
var sharedTokenizers = []struct {
	name   string
	load   func(testing.TB) *Tokenizer
	golden string
}{
	{"llama2", func(tb testing.TB) *Tokenizer { return loadLlama2C(tb, llama2Bin, 32000) }, llama2Golden},
	{"tok512", func(tb testing.TB) *Tokenizer { return loadLlama2C(tb, tok512Bin, 512) }, tok512Golden},
	{"tinystories", loadTinyStories, tinyStoriesGolden},
}

// checkGolden encodes every golden text and compares the ids exactly.
func checkGolden(t *testing.T, tok *Tokenizer, cases []goldenCase) {
	t.Helper()
	for _, c := range cases {
		got := encode(tok, c.Text, c.BOS, false)
		if !slices.Equal(got, c.IDs) {
			t.Errorf("Encode(%q)\n got %v\nwant %v", c.Text, got, c.IDs)
		}
	}
}

// checkRoundTrip checks Decode(Encode(s)) == s for the golden texts, except
// those listed in lossy (which the vocabulary cannot represent).
func checkRoundTrip(t *testing.T, tok *Tokenizer, cases []goldenCase, lossy map[string]bool) {
	t.Helper()
	for _, c := range cases {
		got := tok.Decode(encode(tok, c.Text, c.BOS, false))
		if lossy[c.Text] {
			if got == c.Text {
				t.Errorf("Decode(Encode(%q)) round-trips, but the test lists it as lossy", c.Text)
			}
			continue
		}
		if got != c.Text {
			t.Errorf("Decode(Encode(%q)) = %q", c.Text, got)
		}
	}
}

// checkVocabRoundTrip checks that the tokenizer rebuilt from its GGUF-form
// Vocab encodes and decodes the golden texts identically.
func checkVocabRoundTrip(t *testing.T, tok *Tokenizer, cases []goldenCase) {
	t.Helper()
	back, err := FromVocab(tok.Vocab())
	if err != nil {
		t.Fatalf("FromVocab(Vocab()): %v", err)
	}
	if back.VocabSize() != tok.VocabSize() || back.BOS() != tok.BOS() || back.EOS() != tok.EOS() || back.UNK() != tok.UNK() {
		t.Errorf("FromVocab(Vocab()): size/BOS/EOS/UNK %d/%d/%d/%d, want %d/%d/%d/%d",
			back.VocabSize(), back.BOS(), back.EOS(), back.UNK(), tok.VocabSize(), tok.BOS(), tok.EOS(), tok.UNK())
	}
	for _, c := range cases {
		want := encode(tok, c.Text, c.BOS, true)
		got := encode(back, c.Text, c.BOS, true)
		if !slices.Equal(got, want) {
			t.Errorf("after Vocab round trip, Encode(%q)\n got %v\nwant %v", c.Text, got, want)
		}
		if g, w := back.Decode(got), tok.Decode(want); g != w {
			t.Errorf("after Vocab round trip, Decode of %q = %q, want %q", c.Text, g, w)
		}
	}
}

func TestGoldenLlama2(t *testing.T) {
	tok := loadLlama2C(t, llama2Bin, 32000)
	cases := loadGolden(t, llama2Golden)
	checkGolden(t, tok, cases)
	checkRoundTrip(t, tok, cases, nil)
	checkVocabRoundTrip(t, tok, cases)
	v := tok.Vocab()
	for id, want := range map[int]string{0: "<unk>", 1: "<s>", 2: "</s>", 3: "<0x00>", 29871: "▁", 9038: "▁Once"} {
		if v.Tokens[id] != want {
			t.Errorf("Vocab().Tokens[%d] = %q, want %q", id, v.Tokens[id], want)
		}
	}
}

func TestGoldenTok512(t *testing.T) {
	tok := loadLlama2C(t, tok512Bin, 512)
	cases := loadGolden(t, tok512Golden)
	checkGolden(t, tok, cases)
	checkRoundTrip(t, tok, cases, nil)
	checkVocabRoundTrip(t, tok, cases)
}

func TestGoldenTinyStories(t *testing.T) {
	tok := loadTinyStories(t)
	if tok.VocabSize() != 2048 || tok.BOS() != 1 || tok.EOS() != 2 || tok.UNK() != 0 {
		t.Fatalf("vocab %d BOS %d EOS %d UNK %d, want 2048 1 2 0", tok.VocabSize(), tok.BOS(), tok.EOS(), tok.UNK())
	}
	cases := loadGolden(t, tinyStoriesGolden)
	checkGolden(t, tok, cases)
	// The 2,048-token vocabulary has no byte tokens, so characters outside
	// it ('@', '#', '%', '^', '&', '*', '(', ')', 'é', 'ï', '—', '“', '”',
	// CJK, emoji, tab) become <unk> and cannot be decoded back.
	checkRoundTrip(t, tok, cases, map[string]bool{
		"Numbers 12345 and symbols !@#$%^&*()":        true,
		"Unicode: café naïve résumé — “quotes” 日本語 🙂": true,
		"tab\tseparated\ttext":                        true,
	})
	checkVocabRoundTrip(t, tok, cases)
}

// TestTinyStoriesParseWithoutConfig checks that tokenizer.json alone (no
// tokenizer_config.json) gives the same special tokens.
func TestTinyStoriesParseWithoutConfig(t *testing.T) {
	data, err := os.ReadFile(sharedFile(t, tinyStoriesHF))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := ParseHFJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	v := tok.Vocab()
	if v.BOS != 1 || v.EOS != 2 || v.UNK != 0 || !v.AddBOS || v.AddEOS || !v.AddSpacePrefix {
		t.Errorf("BOS %d EOS %d UNK %d AddBOS %v AddEOS %v AddSpacePrefix %v, want 1 2 0 true false true",
			v.BOS, v.EOS, v.UNK, v.AddBOS, v.AddEOS, v.AddSpacePrefix)
	}
	if len(v.Merges) != 1967 || v.Merges[0] != "e ▁" {
		t.Errorf("%d merges starting %q, want 1967 starting \"e ▁\"", len(v.Merges), v.Merges[0])
	}
}
