package llama

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hlmproject/hlm"
	"github.com/hlmproject/hlm/model"
)

// TestOpenErrorsSayWhatIsWrong: the files no loader can read give errors
// a user can act on, from Open and OpenTokenizer alike: no Go struct, no
// "stat" or "open" of the file system, an empty .gguf not reported as a
// short llama2.c header, a truncated checkpoint said to be truncated.
func TestOpenErrorsSayWhatIsWrong(t *testing.T) {
	dir := t.TempDir()
	ckpt, err := hlm.Files.ReadFile("models/stories260K/stories260K.bin")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name, path string
		want       string
		is         error
	}{
		{"empty gguf", write("empty.gguf", nil), "the file is empty", model.ErrFormat},
		{"empty bin", write("empty.bin", nil), "the file is empty", model.ErrFormat},
		{"gguf without magic", write("text.gguf", []byte("hello, this is no model at all\n")), "not a GGUF file", model.ErrFormat},
		{"short bin", write("short.bin", []byte("hello\n")), "not a llama2.c checkpoint", nil},
		{"truncated bin", write("trunc.bin", ckpt[:1000]), "it is truncated", model.ErrFormat},
		{"bin too long", write("long.bin", append(append([]byte(nil), ckpt...), make([]byte, 8)...)), "not a llama2.c checkpoint of that shape", model.ErrFormat},
		{"missing", filepath.Join(dir, "missing.bin"), "no such file or directory (a model is", fs.ErrNotExist},
	} {
		for _, open := range []struct {
			name string
			f    func(string) error
		}{
			{"OpenSpec", func(p string) error { _, err := OpenSpec(p, ""); return err }},
			{"OpenTokenizer", func(p string) error { _, err := OpenTokenizer(p, ""); return err }},
		} {
			err := open.f(c.path)
			if err == nil {
				t.Errorf("%s %s: no error", open.name, c.name)
				continue
			}
			msg := err.Error()
			if !strings.Contains(msg, c.want) || c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("%s %s: %q, want %q (and errors.Is %v)", open.name, c.name, msg, c.want, c.is)
			}
			for _, leak := range []string{"{Arch:", "stat ", "open "} {
				if strings.Contains(msg, leak) {
					t.Errorf("%s %s: %q shows %q", open.name, c.name, msg, leak)
				}
			}
		}
	}
	// A file of a Hugging Face model's directory, given as the model (its
	// weights or its config.json), says to name the directory instead of
	// showing the nonsense header it has as a llama2.c checkpoint.
	hf := t.TempDir()
	for _, name := range []string{"config.json", "model.safetensors"} {
		if err := os.WriteFile(filepath.Join(hf, name), []byte("{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 64}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"config.json", "model.safetensors"} {
		p := filepath.Join(hf, name)
		for _, open := range []struct {
			name string
			f    func(string) error
		}{
			{"OpenSpec", func(p string) error { _, err := OpenSpec(p, ""); return err }},
			{"OpenTokenizer", func(p string) error { _, err := OpenTokenizer(p, ""); return err }},
		} {
			if err := open.f(p); err == nil || !strings.Contains(err.Error(), "a file of the Hugging Face model in "+hf+": name the directory") {
				t.Errorf("%s(%s): %v, want it to say to name the directory", open.name, name, err)
			}
		}
	}
	// A directory that is no Hugging Face model says so, not "open
	// DIR/config.json: no such file or directory".
	empty := t.TempDir()
	if _, err := OpenSpec(empty, ""); err == nil || !strings.Contains(err.Error(), "without config.json") || strings.Contains(err.Error(), "open ") {
		t.Errorf("OpenSpec(an empty directory): %v", err)
	}
}
