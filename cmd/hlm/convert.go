package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hlmproject/hlm/internal/atomicfile"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/tensor"
)

func init() {
	register("convert", "write a model (llama2.c, Hugging Face or GGUF) as a GGUF file", runConvert)
}

func runConvert(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("convert", "--out FILE.gguf [--model SPEC] [--type f32|f16|q8_0|q4_0]", `
Convert a model to GGUF v3 (its own architecture, llama.cpp's tensor names)
with its tokenizer in the metadata. Norms stay F32; a matrix whose rows are not a
multiple of 32 elements stays F32 when a block type is asked for. An early-exit
spec (PATH@exit=N) is refused: exit is a view of the first N layers, not a
cut; convert the full model and use FILE.gguf@exit=N. The file records the
fingerprint of the full-precision model its weights come from (hlm.origin),
so that a quantized copy is known as that model: the draft hlm ships for it
is its default draft too. The model defaults to the built-in stories260K.`, stdout)
	spec := fs.String("model", builtin.DefaultLLM, "model spec to read (@q8 and @q4 apply; @exit=N is refused)")
	tokPath := fs.String("tokenizer", "", "tokenizer file, when not found with the model")
	out := fs.String("out", "", "GGUF file to write")
	typ := fs.String("type", "f32", "storage type of the matrices: f32, f16, q8_0 or q4_0")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usageError{fmt.Errorf("--out FILE.gguf is required")}
	}
	if err := checkOutFile(*out); err != nil {
		return usageError{err}
	}
	t, ok := map[string]tensor.DType{"f32": tensor.F32, "f16": tensor.F16, "q8_0": tensor.Q8_0, "q8": tensor.Q8_0, "q4_0": tensor.Q4_0}[strings.ToLower(*typ)]
	if !ok {
		return usageError{fmt.Errorf("--type %q: want f32, f16, q8_0 or q4_0", *typ)}
	}
	if sp, err := model.ParseSpec(*spec); err == nil && sp.Exit > 0 {
		full := sp
		full.Exit = 0
		return usageError{fmt.Errorf("--model %s: convert writes whole models; @exit=%d is a view of the first %d layers, not a cut: convert the full model (--model %s), then use %s@exit=%d", *spec, sp.Exit, sp.Exit, full, *out, sp.Exit)}
	}
	m, err := llama.OpenSpec(*spec, *tokPath)
	if err != nil {
		return err
	}
	if m.Tokenizer() == nil {
		fmt.Fprintln(stderr, "hlm convert: warning: no tokenizer found; the GGUF will have none (pass --tokenizer)")
	}
	// Written beside the destination and renamed when complete, with the
	// mode the umask gives new files (0644 under umask 022).
	var st llama.ConvertStats
	err = atomicfile.Write(*out, func(w io.Writer) error {
		st, err = llama.WriteGGUF(w, m, t, filepath.Base(*spec), llama.Meta{Key: model.OriginKey, Value: m.WeightsOrigin()})
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "hlm convert: wrote %s: %d tensors, %.1f MB of weights as %v", *out, st.Tensors, float64(st.Bytes)/1e6, t)
	if st.Kept > 0 {
		fmt.Fprintf(stderr, " (%d matrices kept in F32: rows not a multiple of 32)", st.Kept)
	}
	fmt.Fprintln(stderr)
	return nil
}

// checkOutFile refuses, before any work, an output path that is a
// directory or whose directory does not exist.
func checkOutFile(path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("--out %s is a directory: give the file to write, e.g. %s", path, filepath.Join(path, "model.gguf"))
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return fmt.Errorf("--out %s: its directory %s does not exist", path, filepath.Dir(path))
	}
	return nil
}
