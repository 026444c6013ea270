package llama

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hlmproject/hlm/model/gguf"
	"github.com/hlmproject/hlm/tensor"
)

// TestPrepackedGGUF writes every family's tiny model as Q8_0, Q4_0 and
// Q5_0 GGUF twice, row-major (WriteGGUF) and prepacked
// (WriteGGUFPrepacked), and reads both back: the prepacked file stores its
// matrices in hlm's prepacked types, is the size of the row-major one,
// computes the same logits bit for bit at this machine's kernel level (the
// packed tiles read the mapped file where the level has them), has the
// same fingerprint, and converts back to the row-major file byte for
// byte (both as read back).
func TestPrepackedGGUF(t *testing.T) {
	dir := filepath.Join("testdata", "families")
	for _, c := range familyModels() {
		t.Run(c.model, func(t *testing.T) {
			m, err := OpenSpec(filepath.Join(dir, c.model), "")
			if err != nil {
				t.Fatal(err)
			}
			ids := readGoldenFile(t, filepath.Join(dir, c.golden)).ids
			for _, typ := range []tensor.DType{tensor.Q8_0, tensor.Q4_0, tensor.Q5_0} {
				t.Run(typ.String(), func(t *testing.T) {
					tmp := t.TempDir()
					write := func(name string, w func(*bytes.Buffer) error) (string, []byte) {
						var buf bytes.Buffer
						if err := w(&buf); err != nil {
							t.Fatal(err)
						}
						path := filepath.Join(tmp, name)
						if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
							t.Fatal(err)
						}
						return path, buf.Bytes()
					}
					plainPath, plain := write("plain.gguf", func(b *bytes.Buffer) error { _, err := WriteGGUF(b, m, typ, "t"); return err })
					packedPath, packed := write("packed.gguf", func(b *bytes.Buffer) error { _, err := WriteGGUFPrepacked(b, m, typ, "t"); return err })
					if len(packed) != len(plain) || bytes.Equal(packed, plain) {
						t.Fatalf("prepacked file: %d bytes (row-major %d), identical: %v", len(packed), len(plain), bytes.Equal(packed, plain))
					}
					f, err := gguf.Open(packedPath)
					if err != nil {
						t.Fatal(err)
					}
					want, _ := gguf.Prepacked(mustGGUFType(t, typ))
					n := 0
					for _, ti := range f.Tensors {
						if ti.Type == want {
							n++
						} else if base, ok := ti.Type.Base(); ok || base == mustGGUFType(t, typ) {
							t.Errorf("tensor %s: type %v in a prepacked %v file", ti.Name, ti.Type, typ)
						}
					}
					f.Close()
					if n == 0 {
						t.Fatalf("no tensor of type %v", want)
					}
					a, err := OpenSpec(plainPath, "")
					if err != nil {
						t.Fatal(err)
					}
					b, err := OpenSpec(packedPath, "")
					if err != nil {
						t.Fatal(err)
					}
					if !b.w.Layers[0].Wq.Prepacked() && b.w.Layers[0].Wq.Rows >= tensor.PrepackedGroup {
						t.Fatal("the loaded query projection is not prepacked")
					}
					la, lb := logitsOf(t, a, ids), logitsOf(t, b, ids)
					for i := range la {
						assertSame(t, fmt.Sprintf("position %d", i), lb[i], la[i])
					}
					if a.Fingerprint() != b.Fingerprint() {
						t.Fatalf("fingerprints differ: %s (row-major) and %s (prepacked)", a.Fingerprint(), b.Fingerprint())
					}
					// Both read back from their files (a model read from a
					// Hugging Face directory writes other metadata).
					var backA, backB bytes.Buffer
					if _, err := WriteGGUF(&backA, a, typ, "t"); err != nil {
						t.Fatal(err)
					}
					if _, err := WriteGGUF(&backB, b, typ, "t"); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(backB.Bytes(), backA.Bytes()) {
						t.Fatal("the prepacked model written row-major differs from the row-major one")
					}
				})
			}
		})
	}
}

// mustGGUFType is ggufTypeOf for the types every test here has.
func mustGGUFType(t *testing.T, dt tensor.DType) gguf.Type {
	t.Helper()
	gt, err := ggufTypeOf(dt)
	if err != nil {
		t.Fatal(err)
	}
	return gt
}

// TestPrepackedRefused checks that only the types with a prepacked layout
// can be written prepacked.
func TestPrepackedRefused(t *testing.T) {
	m, err := OpenSpec(filepath.Join("testdata", "families", "llama2.gguf"), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []tensor.DType{tensor.F32, tensor.F16} {
		if _, err := WriteGGUFPrepacked(&bytes.Buffer{}, m, typ, "t"); err == nil {
			t.Errorf("%v: written prepacked", typ)
		}
	}
}
