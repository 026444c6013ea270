package llama

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/tensor"
)

// TestOriginOfCopies: quantized views and converted files of stories260K
// keep its Origin, and so find the draft hlm ships for it, while their
// Fingerprints differ from its (their logits differ); an early exit, a
// different computation, has its own; a GGUF that records something that
// is no fingerprint is its own origin.
func TestOriginOfCopies(t *testing.T) {
	base, err := OpenSpec(builtin.DefaultLLM, "")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	convert := func(name string, m *Model, dt tensor.DType, origin string) *Model {
		t.Helper()
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		var meta []Meta
		if origin != "" {
			meta = append(meta, Meta{Key: model.OriginKey, Value: origin})
		}
		if _, err := WriteGGUF(f, m, dt, name, meta...); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		c, err := OpenSpec(p, "")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	open := func(spec string) *Model {
		t.Helper()
		m, err := OpenSpec(spec, "")
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	exit := open(builtin.DefaultLLM + "@exit=2")
	q8 := open(builtin.DefaultLLM + "@q8")
	fp := base.Fingerprint()
	for _, c := range []struct {
		name   string
		m      *Model
		origin string // want; "": the model's own fingerprint
		draft  bool   // finds the shipped draft
	}{
		{"the model", base, fp, true},
		{"@q8", q8, fp, true},
		{"@q4", open(builtin.DefaultLLM + "@q4"), fp, true},
		{"@exit=2", exit, "", false},
		{"@exit=2@q8", open(builtin.DefaultLLM + "@exit=2@q8"), "", false},
		{"converted Q8_0", convert("q8.gguf", base, tensor.Q8_0, base.WeightsOrigin()), fp, true},
		{"converted F16", convert("f16.gguf", base, tensor.F16, base.WeightsOrigin()), fp, true},
		{"converted from @q8 to F32", convert("q8f32.gguf", q8, tensor.F32, q8.WeightsOrigin()), fp, true},
		{"converted from @exit=2 (all layers)", convert("exit.gguf", exit, tensor.Q8_0, exit.WeightsOrigin()), fp, true},
		{"converted without an origin", convert("none.gguf", base, tensor.F16, ""), "", false},
		{"converted with a bogus origin", convert("bogus.gguf", base, tensor.F16, "not a fingerprint"), "", false},
	} {
		want := c.origin
		if want == "" {
			want = c.m.Fingerprint()
		}
		if got := c.m.Origin(); got != want {
			t.Errorf("%s: Origin %.16s…, want %.16s…", c.name, got, want)
		}
		if c.m != base && c.m.Fingerprint() == fp {
			t.Errorf("%s: the Fingerprint of the model itself", c.name)
		}
		d, ok := builtin.DraftFor(c.m.Origin())
		if ok != c.draft || ok && d != "builtin:stories260K-draft" {
			t.Errorf("%s: DraftFor(Origin) = %q, %v; want the shipped draft: %v", c.name, d, ok, c.draft)
		}
	}
	// Equal fingerprints still mean equal logits: a converted Q8_0 file
	// and the @q8 view hold the same weights.
	conv := convert("q8b.gguf", base, tensor.Q8_0, base.WeightsOrigin())
	if conv.Fingerprint() == q8.Fingerprint() {
		a, b := q8.Session(), conv.Session()
		la, err := a.Eval([]int{1, 403, 407})
		if err != nil {
			t.Fatal(err)
		}
		lb, err := b.Eval([]int{1, 403, 407})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(la[len(la)-1], lb[len(lb)-1]) {
			t.Error("equal fingerprints, different logits")
		}
	}
}
