package main

import (
	"path/filepath"
	"testing"

	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/model/llama"
)

// TestConvertRecordsOrigin: hlm convert records where the weights come
// from, so that a Q8_0 or F16 copy of stories260K finds the draft hlm ships
// for it; the copy's own fingerprint stays its own.
func TestConvertRecordsOrigin(t *testing.T) {
	base, err := llama.OpenSpec(builtin.DefaultLLM, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"q8_0", "f16", "q4_0"} {
		out := filepath.Join(t.TempDir(), typ+".gguf")
		if _, _, err := runHLM(t, "convert", "--type", typ, "--out", out); err != nil {
			t.Fatal(err)
		}
		m, err := llama.OpenSpec(out, "")
		if err != nil {
			t.Fatal(err)
		}
		if m.Origin() != base.Fingerprint() || m.Fingerprint() == base.Fingerprint() {
			t.Errorf("%s: origin %.16s…, fingerprint %.16s…; want origin %.16s… and another fingerprint", typ, m.Origin(), m.Fingerprint(), base.Fingerprint())
		}
		if d, ok := builtin.DraftFor(m.Origin()); !ok || d != "builtin:stories260K-draft" {
			t.Errorf("%s: no shipped draft found (%q)", typ, d)
		}
	}
}
