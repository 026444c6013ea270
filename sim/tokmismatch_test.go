package sim

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/tensor"
)

// TestOpenRefusesOtherTokenizer: an LLM whose vocabulary has the draft's
// size but other pieces (stories260K's GGUF with two of its tokens swapped)
// is refused, as hlm serve refuses such a device, instead of running the
// pair on meaningless token ids.
func TestOpenRefusesOtherTokenizer(t *testing.T) {
	m, err := llama.OpenSpec(stories, "")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := llama.WriteGGUF(&buf, m, tensor.F32, "swapped"); err != nil {
		t.Fatal(err)
	}
	piece := func(s string) []byte { // a GGUF string: its length (uint64 LE), then its bytes
		return append([]byte{byte(len(s)), 0, 0, 0, 0, 0, 0, 0}, s...)
	}
	b := buf.Bytes()
	for _, p := range []string{"ing", "ily"} {
		if n := bytes.Count(b, piece(p)); n != 1 {
			t.Fatalf("piece %q found %d times in the GGUF", p, n)
		}
	}
	b = bytes.Replace(b, piece("ing"), piece("@@@"), 1)
	b = bytes.Replace(b, piece("ily"), piece("ing"), 1)
	b = bytes.Replace(b, piece("@@@"), piece("ily"), 1)
	path := filepath.Join(t.TempDir(), "swapped.gguf")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	draft := builtin.DefaultLLM + "-draft"
	if _, err := Open(path, draft, ""); err == nil || !strings.Contains(err.Error(), "tokenizer mismatch") {
		t.Fatalf("Open(swapped GGUF, %s): err %v, want a tokenizer mismatch", draft, err)
	}
	if _, err := Open(stories, draft, ""); err != nil { // the genuine pair still opens
		t.Fatal(err)
	}
}

// TestPromptsCheckedFirst: a prompt that does not fit the context fails the
// run before any prompt has run, naming the prompt.
func TestPromptsCheckedFirst(t *testing.T) {
	ms := pair(t, stories+"@exit=2")
	long := strings.Repeat("Once upon a time there was a little girl. ", 80)
	p := hybrid.DefaultParams()
	p.Method, p.MaxTokens = hybrid.QS, 8
	ran := 0
	_, err := RunModels(context.Background(), ms, Config{Params: p, Prompts: []string{"Once", "Tom had", long}, Progress: func(int, int) { ran++ }})
	if err == nil || !strings.Contains(err.Error(), "prompt 2") || !errors.Is(err, model.ErrContextFull) {
		t.Fatalf("err = %v, want prompt 2's context error", err)
	}
	if ran != 0 {
		t.Errorf("%d prompts ran before the refusal", ran)
	}
}
