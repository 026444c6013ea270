//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/hlmproject/hlm/model/llama"
)

const tinyStories656K = "../../../shared/models/tinystories-656k"

// convert656K runs `hlm convert` on TinyStories-656K (the Hugging Face
// directory) into dir and returns the GGUF's path.
func convert656K(t *testing.T, dir string) string {
	t.Helper()
	if _, err := os.Stat(tinyStories656K); err != nil {
		t.Skipf("shared model not present (%v)", err)
	}
	out := filepath.Join(dir, "656k.gguf")
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"convert", "--model", tinyStories656K, "--out", out}, &stderr, &stderr); code != 0 {
		t.Fatalf("hlm convert: %s", stderr.String())
	}
	return out
}

// TestConvertUmask: the GGUF gets the mode the umask gives new files (0644
// under umask 022), not os.CreateTemp's 0600.
func TestConvertUmask(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	out := convert656K(t, t.TempDir())
	st, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if m := st.Mode().Perm(); m != 0o644 {
		t.Errorf("mode %v, want -rw-r--r-- (0644)", m)
	}
	if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 1 {
		t.Errorf("files beside the output (temporary files left behind?): %v", entries)
	}
}

// llamaTokenize finds llama.cpp's llama-tokenize: $HLM_LLAMA_TOKENIZE, the
// PATH, or where ../shared/perf/llamacpp.sh builds it ($HLM_PEERS, default
// ~/.cache/hlm-peers).
func llamaTokenize() string {
	if p := os.Getenv("HLM_LLAMA_TOKENIZE"); p != "" {
		return p
	}
	if p, err := exec.LookPath("llama-tokenize"); err == nil {
		return p
	}
	peers := os.Getenv("HLM_PEERS")
	if peers == "" {
		home, _ := os.UserHomeDir()
		peers = filepath.Join(home, ".cache", "hlm-peers")
	}
	p := filepath.Join(peers, "llama.cpp", "build", "bin", "llama-tokenize")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// TestConvertTokenizesInLlamaCpp: llama.cpp's own tokenizer, reading the
// GGUF that hlm convert writes from TinyStories-656K's Hugging Face BPE
// tokenizer, gives the same ids as hlm (which matches the Hugging Face
// goldens) on TinyStories prompts and stories. llama.cpp merges a "llama"
// vocabulary by score; the GGUF carries scores derived from the merge
// ranks (without them llama.cpp splits most of these texts differently).
func TestConvertTokenizesInLlamaCpp(t *testing.T) {
	bin := llamaTokenize()
	if bin == "" {
		t.Skip("llama.cpp's llama-tokenize not found (build it with ../shared/perf/llamacpp.sh, or set HLM_LLAMA_TOKENIZE)")
	}
	dir := t.TempDir()
	out := convert656K(t, dir)
	m, err := llama.OpenSpec(tinyStories656K, "")
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"Once upon a time",
		"Once upon a time, there was a little girl named Lily.",
		"The cat sat on the mat. It was happy!",
		"One day, Tom and his mom went to the park to play with a big red ball.",
		"\"Can I have it?\" asked Sue. Her dad said, \"Yes, you can.\"",
	}
	if b, err := os.ReadFile("../../../shared/data/tinystories/cs336_tinystories_sample.txt"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" && len(texts) < 40 {
				texts = append(texts, l)
			}
		}
	}
	tok := m.Tokenizer()
	compared, unknown := 0, 0
	for i, text := range texts {
		want := tok.Encode(text, true)
		if slices.Contains(want, tok.UNK()) {
			// A character outside the vocabulary: Hugging Face and hlm
			// give <unk>; this vocabulary has no byte tokens and
			// llama.cpp's tokenizer aborts (std::out_of_range in
			// byte_to_token), whatever the converter wrote.
			unknown++
			continue
		}
		compared++
		f := filepath.Join(dir, "prompt.txt")
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "-m", out, "-f", f, "--ids", "--log-disable")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", bin, err, stderr.String())
		}
		var got []int
		if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &got); err != nil {
			t.Fatalf("llama-tokenize printed %q: %v", stdout.String(), err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("text %d %q:\n llama.cpp %v\n hlm       %v", i, text, got, want)
		}
	}
	t.Logf("%d texts tokenized identically by llama.cpp (%s) and hlm; %d left out (characters outside the vocabulary)", compared, bin, unknown)
	if compared < len(texts)/2 {
		t.Errorf("only %d of %d texts compared", compared, len(texts))
	}
}

// TestBuiltinTokenizesInLlamaCpp: special tokens written in a text ("<s>",
// "</s>", "<unk>") are parsed by stories260K's llama2.c tokenizer as
// llama.cpp parses them in the GGUF that hlm convert writes from it (the
// names llama.cpp's own llama2.c converter gives them), and spelled as
// text by both with --no-parse-special.
func TestBuiltinTokenizesInLlamaCpp(t *testing.T) {
	bin := llamaTokenize()
	if bin == "" {
		t.Skip("llama.cpp's llama-tokenize not found (build it with ../shared/perf/llamacpp.sh, or set HLM_LLAMA_TOKENIZE)")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "stories260K.gguf")
	if _, _, err := runHLM(t, "convert", "--out", out); err != nil {
		t.Fatal(err)
	}
	texts := []string{"<s>Once upon a time", "Once <s> upon</s>", "a<unk>b", "<s><s>", "</s>", "x <s>\n<s> y", "<s", "Once upon a time, there was a little girl."}
	for _, text := range texts {
		f := filepath.Join(dir, "prompt.txt")
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, plain := range []bool{false, true} {
			args := []string{"-m", out, "-f", f, "--ids", "--log-disable"}
			hlmArgs := []string{"tokenize", "--ids", "-f", f}
			if plain {
				args = append(args, "--no-parse-special")
				hlmArgs = append(hlmArgs, "--no-parse-special")
			}
			cmd := exec.Command(bin, args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%s: %v\n%s", bin, err, stderr.String())
			}
			got, _, err := runHLM(t, hlmArgs...)
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimSpace(got) != strings.TrimSpace(stdout.String()) {
				t.Errorf("%q (--no-parse-special %v):\n llama.cpp %s hlm       %s", text, plain, stdout.String(), got)
			}
		}
	}
}

// TestOutRefusedBeforeWork: an --out that cannot be written is refused
// before the conversion or the evaluation runs, with what is wrong.
func TestOutRefusedBeforeWork(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file.txt")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"convert", "--out", dir}, "is a directory"},
		{[]string{"convert", "--out", filepath.Join(dir, "no", "m.gguf")}, "does not exist"},
		{[]string{"eval", "--out", file, "--methods", "llm", "-n", "1", "--max-tokens", "2"}, "cannot be made"},
		{[]string{"distill", "--steps", "1", "--out", filepath.Join(dir, "no", "d.gguf")}, "does not exist"},
		{[]string{"calibrate", "-n", "1", "--max-tokens", "2", "--out", filepath.Join(dir, "no", "c.json")}, "does not exist"},
		{[]string{"calibrate", "-n", "1", "--max-tokens", "2", "--density", "foo"}, "want kde or histogram"},
		{[]string{"calibrate", "-n", "1", "--max-tokens", "2", "--fit-on", "foo"}, "want bins or points"},
		{[]string{"train-ddqn", "--episodes", "1", "--out", filepath.Join(dir, "no", "p.json")}, "does not exist"},
		{[]string{"train-ddqn", "--episodes", "1", "--out", filepath.Join(dir, "p.json"), "--method", "hlm"}, "trains the (L, ℓ) policy of a method that draft=ddqn controls (s-q, q-s)"},
		{[]string{"train-ddqn", "--episodes", "1", "--out", filepath.Join(dir, "p.json"), "--method", "q-s", "--set", "method=s-q"}, "disagree"},
		{[]string{"eval", "--out", filepath.Join(dir, "e"), "--methods", "hlm", "--set", "method=q-s"}, "--methods"},
		{[]string{"eval", "--out", filepath.Join(dir, "e"), "--methods", "hlm", "--max-tokens", "16", "--set", "max_tokens=8"}, "disagree"},
		{[]string{"loadtest", "--method", "llm", "--set", "method=q-s"}, "disagree"},
		{[]string{"loadtest", "--duration", "0s"}, "want a positive duration"},
	} {
		_, stderr, err := runHLM(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(stderr, "runs") {
			t.Errorf("hlm %s: %v (stderr %q); want %q before any work", strings.Join(c.args, " "), err, stderr, c.want)
		}
	}
}

// TestConvertRefusesExit: an early-exit spec is a view of the model, not a
// cut, so convert refuses it (it wrote the whole teacher under the draft's
// name) and says what to do instead, before writing anything; the other
// spec options still convert.
func TestConvertRefusesExit(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		spec string
		want []string // nil: converted
	}{
		{"builtin:stories260K@exit=1", []string{"convert writes whole models; @exit=1 is a view of the first 1 layers, not a cut", "--model builtin:stories260K)", "@exit=1"}},
		{"builtin:stories260K@exit=2@q8", []string{"@exit=2 is a view", "--model builtin:stories260K@q8)"}},
		{"builtin:stories260K@q8", nil},
		{"builtin:stories260K", nil},
	} {
		out := filepath.Join(dir, strings.NewReplacer(":", "-", "@", "-", "=", "-").Replace(c.spec)+".gguf")
		_, _, err := runHLM(t, "convert", "--model", c.spec, "--out", out)
		_, statErr := os.Stat(out)
		if c.want == nil {
			if err != nil || statErr != nil {
				t.Errorf("%s: %v (%v)", c.spec, err, statErr)
			}
			continue
		}
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%s: %v, want a usage error", c.spec, err)
			continue
		}
		for _, w := range append(c.want, "then use "+out+"@exit=") {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want it to say %q", c.spec, err, w)
			}
		}
		if statErr == nil {
			t.Errorf("%s: %s written", c.spec, out)
		}
	}
}
