package uregex

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hlmproject/hlm/internal/refs"
)

// TestReferenceSplits compares FindAll with the JavaScript reference: the
// Split pre-tokenizer of Hugging Face's tokenizers.js, whose translation
// of Oniguruma patterns to JavaScript RegExp is faithful for these
// constructs. Every listed pattern is run on the hand-written corpus and
// on random texts from a fixed seed, in one node process
// (testdata/onigref.mjs).
//
// The reference's matches are turned into find_iter's by dropping each
// empty match that directly follows a non-empty one (JavaScript's
// matchAll keeps it; the searches are otherwise the same). The texts
// avoid ſ and K (KELVIN SIGN): tokenizers.js folds (?i) in ASCII only,
// where Oniguruma, and uregex, also match them (TestCaseFolding).
func TestReferenceSplits(t *testing.T) {
	node := refs.Node(t)
	pkg := refs.Package(t, "@huggingface/tokenizers")
	script, err := filepath.Abs(filepath.Join("testdata", "onigref.mjs"))
	if err != nil {
		t.Fatal(err)
	}

	texts := slices.Clone(corpusTexts)
	rnd := rand.New(rand.NewPCG(20240611, 7))
	nRandom := 3000
	if testing.Short() {
		nRandom = 300
	}
	for range nRandom {
		texts = append(texts, randomText(rnd, 24))
	}

	type request struct {
		Pattern string `json:"pattern"`
		Text    string `json:"text"`
	}
	type response struct {
		Matches [][2]int `json:"matches"`
		Pieces  []string `json:"pieces"`
		Error   string   `json:"error"`
	}
	cmd := exec.Command(node, script, pkg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The requests stream in while the answers are compared.
	go func() {
		w := bufio.NewWriter(stdin)
		enc := json.NewEncoder(w)
		for _, p := range preTokenizerPatterns {
			for _, text := range texts {
				if enc.Encode(request{p.expr, text}) != nil {
					break
				}
			}
		}
		w.Flush()
		stdin.Close()
	}()
	defer func() {
		if t.Failed() {
			cmd.Process.Kill() // it may be blocked on answers no one reads
			cmd.Wait()
			return
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("node %s: %v\n%s", script, err, stderr.String())
		}
	}()

	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	failures, compared := 0, 0
	for _, p := range preTokenizerPatterns {
		re, err := Compile(p.expr)
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		for _, text := range texts {
			if !sc.Scan() {
				t.Fatalf("node gave too few answers: %v\n%s", sc.Err(), stderr.String())
			}
			var want response
			if err := json.Unmarshal(sc.Bytes(), &want); err != nil {
				t.Fatal(err)
			}
			if want.Error != "" {
				t.Fatalf("%s: tokenizers.js cannot translate the pattern: %s", p.name, want.Error)
			}
			got, err := re.FindAll(text, nil)
			if err != nil {
				t.Fatalf("%s on %q: %v", p.name, text, err)
			}
			compared++
			wantMatches := findIterOf(want.Matches)
			if !slices.Equal(got, wantMatches) {
				failures++
				if failures <= 10 {
					t.Errorf("%s on %q:\n got %v %q\nwant %v %q", p.name, text, got, pieces(text, got), wantMatches, pieces(text, wantMatches))
				}
				continue
			}
			if gotPieces := isolated(text, got); !slices.Equal(gotPieces, want.Pieces) && !(len(gotPieces) == 0 && len(want.Pieces) == 0) {
				failures++
				if failures <= 10 {
					t.Errorf("%s on %q: Isolated pieces\n got %q\nwant %q", p.name, text, gotPieces, want.Pieces)
				}
			}
		}
	}
	if failures > 0 {
		t.Errorf("%d of %d pattern-text pairs differ from tokenizers.js", failures, compared)
	}
	t.Logf("%d patterns x %d texts: %d pairs agree with tokenizers.js", len(preTokenizerPatterns), len(texts), compared-failures)
}

// findIterOf turns JavaScript's matchAll sequence into onig's find_iter
// sequence: an empty match right after a non-empty one is dropped.
func findIterOf(all [][2]int) [][2]int {
	out := [][2]int{}
	nonEmpty := false
	for _, m := range all {
		if m[0] == m[1] {
			if nonEmpty {
				nonEmpty = false
				continue
			}
		} else {
			nonEmpty = true
		}
		out = append(out, m)
	}
	return out
}

// isolated is what a Split pre-tokenizer with behavior Isolated makes of
// the matches: the matches and the gaps between them, without the empty
// pieces.
func isolated(text string, ms [][2]int) []string {
	var out []string
	prev := 0
	for _, m := range ms {
		if prev < m[0] {
			out = append(out, text[prev:m[0]])
		}
		if m[0] < m[1] {
			out = append(out, text[m[0]:m[1]])
		}
		prev = m[1]
	}
	if prev < len(text) {
		out = append(out, text[prev:])
	}
	return out
}

func pieces(text string, ms [][2]int) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = text[m[0]:m[1]]
	}
	return out
}
