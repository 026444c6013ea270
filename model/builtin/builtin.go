// Package builtin serves the models embedded in the hlm binary (package
// hlm at the repository's root) as ordinary files: a spec "builtin:NAME"
// names one, and Path writes it once into the user's cache directory,
// where the loaders open (and memory-map) it like any other model.
//
//	name                    what
//	stories260K             the default LLM (llama2.c format, tokenizer beside it)
//	stories260K-draft       the draft distilled from stories260K (GGUF)
//	tinystories656k-draft   the draft distilled from TinyStories-656K (GGUF)
//
// DraftFor finds the shipped draft of an LLM by the LLM's fingerprint,
// which hlm distill records in the draft (model.DraftTeacherKey). Given a
// model's Origin (model/llama), rather than its Fingerprint, it finds the
// draft for the model's quantized views and converted copies too.
package builtin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/hlmproject/hlm"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/gguf"
)

// Prefix starts a model spec that names a built-in model.
const Prefix = "builtin:"

// DefaultLLM is the spec of the default LLM.
const DefaultLLM = Prefix + "stories260K"

// models are the built-in models: the files of each, the first the one to
// open.
var models = map[string][]string{
	"stories260K":           {"models/stories260K/stories260K.bin", "models/stories260K/tok512.bin", "models/stories260K/LICENSE"},
	"stories260K-draft":     {"drafts/stories260K-draft.gguf"},
	"tinystories656k-draft": {"drafts/tinystories656k-draft.gguf"},
}

// Names lists the built-in models.
func Names() []string {
	out := make([]string, 0, len(models))
	for n := range models {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// IsBuiltin reports whether a model path names a built-in model.
func IsBuiltin(p string) bool { return strings.HasPrefix(p, Prefix) }

var (
	mu    sync.Mutex
	paths = map[string]string{}
)

// Path is the file of a built-in model ("builtin:NAME" or NAME), written
// into the cache directory on first use (its other files beside it).
func Path(spec string) (string, error) {
	name := strings.TrimPrefix(spec, Prefix)
	files, ok := models[name]
	if !ok {
		return "", fmt.Errorf("no built-in model %q (built-in: %s)", name, strings.Join(Names(), ", "))
	}
	mu.Lock()
	defer mu.Unlock()
	if p, ok := paths[name]; ok && present(filepath.Dir(p), files) {
		return p, nil
	}
	h := sha256.New()
	for _, f := range files {
		b, err := hlm.Files.ReadFile(f)
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "hlm", "builtin", name+"-"+hex.EncodeToString(h.Sum(nil))[:12])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("built-in model %s: %w", name, err)
	}
	for _, f := range files {
		if err := materialize(f, filepath.Join(dir, path.Base(f))); err != nil {
			return "", fmt.Errorf("built-in model %s: %w", name, err)
		}
	}
	p := filepath.Join(dir, path.Base(files[0]))
	paths[name] = p
	return p, nil
}

// present reports whether every file of a built-in model is still in dir:
// a cache cleaned while the process runs (or a HOME that changed) is
// written again instead of handing out a path that is gone.
func present(dir string, files []string) bool {
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, path.Base(f))); err != nil {
			return false
		}
	}
	return true
}

// materialize writes an embedded file to dst unless a file of the same
// bytes is there (written to a temporary name, then renamed, so that
// concurrent processes never see a partial file).
func materialize(src, dst string) error {
	b, err := hlm.Files.ReadFile(src)
	if err != nil {
		return err
	}
	if have, err := os.ReadFile(dst); err == nil && bytes.Equal(have, b) {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

// DraftFor returns the spec of the shipped draft distilled from the model
// with this fingerprint, if there is one. Pass a model's Origin
// (model/llama.Model.Origin) to find it for a quantized or converted copy
// of that model as well.
func DraftFor(fingerprint string) (string, bool) {
	for _, name := range Names() {
		f := models[name][0]
		if !strings.HasSuffix(f, ".gguf") {
			continue
		}
		b, err := fs.ReadFile(hlm.Files, f)
		if err != nil {
			continue
		}
		g, err := gguf.Parse(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			continue
		}
		if t, err := g.String(model.DraftTeacherKey); err == nil && t == fingerprint {
			return Prefix + name, true
		}
	}
	return "", false
}
