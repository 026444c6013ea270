package llama

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/tensor"
)

var updateRope = flag.Bool("update-rope", false, "rewrite testdata/families/rope/*_golden.bin with llama.cpp's golden harness")

// ropeVariants are tiny family models with rotary scalings llama.cpp
// implements, derived in memory from the committed models (so only the
// goldens are committed): YaRN on normal and NEOX pairs, on a partial
// rotation and on Gemma 3's global layers only, and the rotation attention
// factor with and without YaRN.
var ropeVariants = []struct {
	name, base string
	factor     float64
	origCtx    int
	attn       float64
	tol        float64
}{
	{"llama2_yarn", "llama2.gguf", 4, 48, 0, 1e-4},
	{"llama2_linear_attnfactor", "llama2.gguf", 0, 0, 0.875, 1e-4},
	{"qwen3_yarn", "qwen3.gguf", 4, 64, 0, 1e-4},
	{"qwen3_yarn_attnfactor", "qwen3.gguf", 8, 32, 1.25, 1e-4},
	{"phi3_yarn", "phi3.gguf", 2, 128, 0, 1e-4},
	{"gemma3_yarn", "gemma3.gguf", 8, 32, 0, 1e-4},
}

// ropeVariant builds a variant from its base model.
func ropeVariant(t *testing.T, base string, factor float64, origCtx int, attn float64) *Model {
	t.Helper()
	w, tok, err := LoadGGUF(filepath.Join("testdata", "families", base))
	if err != nil {
		t.Fatal(err)
	}
	c := &w.Config
	if factor > 0 {
		c.RopeScale, c.YarnOrigCtx = factor, origCtx
	} else if c.RopeScale == 0 {
		c.RopeScale = 2 // linear
	}
	c.RopeAttnFactor = attn
	m, err := New(w, tok, base)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRopeScalingsAgainstLlamaCpp: the variants' logits over a 60-token
// prompt (past the original context, so YaRN's interpolation shows) within
// tolerance of llama.cpp's, block and one token at a time, and the 64
// greedy tokens identical. The goldens are llama.cpp's, from the harness
// testdata/families/make.sh builds, on the GGUF file hlm writes for each
// variant (go test -run TestRopeScalingsAgainstLlamaCpp -update-rope).
func TestRopeScalingsAgainstLlamaCpp(t *testing.T) {
	dir := filepath.Join("testdata", "families", "rope")
	for _, v := range ropeVariants {
		t.Run(v.name, func(t *testing.T) {
			m := ropeVariant(t, v.base, v.factor, v.origCtx, v.attn)
			path := filepath.Join(dir, v.name+"_golden.bin")
			if *updateRope {
				writeRopeGolden(t, m, path)
			}
			g := readGoldenFile(t, path)
			rows, err := m.NewSession().Eval(g.ids)
			if err != nil {
				t.Fatal(err)
			}
			compareRange(t, "block", rows, g.logits, v.tol)
			one, steps := evalOneByOne(t, m, g.ids)
			compareRange(t, "one token at a time", steps, g.logits, v.tol)
			if got := greedy(t, one, steps[len(steps)-1], len(g.greedy)); fmt.Sprint(got) != fmt.Sprint(g.greedy) {
				t.Errorf("greedy continuation\n got %v\nwant %v", got, g.greedy)
			}
			// The scaling changes the logits: the golden is not the base
			// model's.
			plain, err := OpenSpec(filepath.Join("testdata", "families", v.base), "")
			if err != nil {
				t.Fatal(err)
			}
			base := logitsOf(t, plain, g.ids)
			if d := maxAbsDiff(base[len(base)-1], g.logits[len(g.logits)-1]); d < 1e-3 {
				t.Errorf("the scaling moves the last logits by only %g", d)
			}
			// hlm's GGUF of the variant reads back as the same model.
			back, _ := convertAndLoad(t, m, tensor.F32)
			if back.Config() != m.Config() {
				t.Errorf("GGUF round trip: config %+v, want %+v", back.Config(), m.Config())
			}
		})
	}
}

// writeRopeGolden runs llama.cpp's golden harness on hlm's GGUF of m over
// a prompt of 60 tokens (the base golden's prompt repeated).
func writeRopeGolden(t *testing.T, m *Model, out string) {
	t.Helper()
	// The exact-GELU build (testdata/families/README.md), so that Gemma
	// is held to 1e-4 too.
	harness := familyHarness()
	if harness == "" {
		t.Skip("llama.cpp's golden harness is not built (testdata/families/make.sh)")
	}
	harness += "-exactgelu"
	var buf bytes.Buffer
	if _, err := WriteGGUF(&buf, m, tensor.F32, "hlm tiny random model"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "variant.gguf")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	base := readGoldenFile(t, filepath.Join("testdata", "families", "llama2_golden.bin"))
	ids := []string{fmt.Sprint(base.ids[0])}
	for len(ids) < 60 {
		for _, id := range base.ids[1:] {
			ids = append(ids, fmt.Sprint(id))
		}
	}
	ids = ids[:60]
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command(harness, path, out, "64", strings.Join(ids, ",")).CombinedOutput(); err != nil {
		t.Fatalf("llama.cpp harness: %v\n%s", err, b)
	}
}

func maxAbsDiff(a, b []float32) float64 {
	var d float64
	for i := range a {
		d = max(d, float64(abs32(a[i]-b[i])))
	}
	return d
}

func abs32(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}
