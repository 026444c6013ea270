package train

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hlmproject/hlm/model/gguf"
)

func testState(t testing.TB) State {
	p, err := NewParams[float32](tinyShape(false))
	if err != nil {
		t.Fatal(err)
	}
	p.InitRandom(3, 0.1)
	p.Freeze(true, "token_embd.weight")
	o := NewOptimizer(DefaultAdamW(), p)
	o.Step = 7
	for i := range o.M {
		o.M[i] = float32(i) * 1e-3
		o.V[i] = float32(i) * 1e-6
	}
	return State{Params: p, Opt: o, Meta: map[string]string{"run": `{"seed":1}`}}
}

func TestCheckpointRoundTrip(t *testing.T) {
	s := testState(t)
	path := filepath.Join(t.TempDir(), "c.ckpt")
	if err := SaveCheckpoint(path, s); err != nil {
		t.Fatal(err)
	}
	got, err := LoadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Opt.Step != 7 || got.Meta["run"] != `{"seed":1}` || got.Opt.Config != s.Opt.Config {
		t.Fatalf("step %d, meta %v, config %+v", got.Opt.Step, got.Meta, got.Opt.Config)
	}
	if got.Params.Shape != s.Params.Shape {
		t.Fatalf("shape %+v, want %+v", got.Params.Shape, s.Params.Shape)
	}
	for i := range s.Params.Data {
		if got.Params.Data[i] != s.Params.Data[i] || got.Opt.M[i] != s.Opt.M[i] || got.Opt.V[i] != s.Opt.V[i] {
			t.Fatalf("element %d differs after the round trip", i)
		}
	}
	for i, tn := range got.Params.Tensors {
		if tn.Frozen != s.Params.Tensors[i].Frozen {
			t.Fatalf("%s: frozen %v, want %v", tn.Name, tn.Frozen, s.Params.Tensors[i].Frozen)
		}
	}
}

func TestCheckpointRejects(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("GGUF but not really"), 0o644)
	if _, err := LoadCheckpoint(bad); !errors.Is(err, ErrCheckpoint) {
		t.Errorf("garbage: %v", err)
	}
	if _, err := LoadCheckpoint(filepath.Join(dir, "missing")); !errors.Is(err, ErrCheckpoint) {
		t.Errorf("missing file: %v", err)
	}
	// A model GGUF is not a checkpoint.
	gw := gguf.NewWriter()
	gw.AddString("general.architecture", "llama")
	var buf bytes.Buffer
	gw.WriteTo(&buf)
	os.WriteFile(bad, buf.Bytes(), 0o644)
	if _, err := LoadCheckpoint(bad); !errors.Is(err, ErrCheckpoint) {
		t.Errorf("llama GGUF: %v", err)
	}
}

func FuzzCheckpoint(f *testing.F) {
	s := testState(f)
	path := filepath.Join(f.TempDir(), "c.ckpt")
	if err := SaveCheckpoint(path, s); err != nil {
		f.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Fuzz(func(t *testing.T, b []byte) {
		gf, err := gguf.Parse(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		readCheckpoint(gf) // must not panic or allocate beyond the file's size
	})
}
