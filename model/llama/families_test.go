package llama

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/tensor"
)

// The tiny random-weight models of every family in testdata/families,
// each with logits from a reference that is not hlm: llama.cpp for the
// GGUF families, an independent numpy forward pass for OPT and GPT-Neo
// (testdata/families/README.md; make.sh there regenerates them). Each
// golden is one of three, one per prompt (familyPrompts).
var familyGoldens = []struct {
	model  string // file or directory under testdata/families
	golden string // of the first prompt; promptGolden names the others
	// tol bounds max |Δ| relative to the range of the reference logits.
	tol float64
}{
	{"llama2.gguf", "llama2_golden.bin", 1e-4},
	{"llama31.gguf", "llama31_golden.bin", 1e-4},
	{"llama32.gguf", "llama32_golden.bin", 1e-4},
	{"qwen2.gguf", "qwen2_golden.bin", 1e-4},
	{"qwen3.gguf", "qwen3_golden.bin", 1e-4},
	{"phi3.gguf", "phi3_golden.bin", 1e-4},
	// GELU: hlm computes it exactly; llama.cpp reads an fp16 table. The
	// exact-GELU build of llama.cpp gives the tight check, the stock one
	// the loose.
	{"gemma2.gguf", "gemma2_exactgelu_golden.bin", 1e-4},
	{"gemma2.gguf", "gemma2_golden.bin", 2e-3},
	{"gemma3.gguf", "gemma3_exactgelu_golden.bin", 1e-4},
	{"gemma3.gguf", "gemma3_golden.bin", 2e-3},
	{"gpt2.gguf", "gpt2_exactgelu_golden.bin", 1e-4},
	{"gpt2.gguf", "gpt2_golden.bin", 2e-3},
	{"opt_pre", "opt_pre_golden.bin", 1e-4},
	{"opt_post", "opt_post_golden.bin", 1e-4},
	{"gpt_neo", "gpt_neo_golden.bin", 1e-4},
	// The Hugging Face twins of the GGUF models (tools/hf_twins.py: the
	// checkpoints llama.cpp's converter turns into those files), checked
	// against the same goldens.
	{"llama2_hf", "llama2_golden.bin", 1e-4}, // sharded: model-0000N-of-00002 + index
	// rope_scaling as the released configs write it: {"rope_type":
	// "llama3", ...} (Llama 3.1, 3.2), {"rope_type": "linear", "factor": 8}
	// (Gemma 3).
	{"llama31_hf", "llama31_golden.bin", 1e-4},
	{"llama32_hf", "llama32_golden.bin", 1e-4},
	{"gemma3_hf", "gemma3_exactgelu_golden.bin", 1e-4},
	{"gemma3_hf", "gemma3_golden.bin", 2e-3},
	{"qwen2_hf", "qwen2_golden.bin", 1e-4},
	{"qwen3_hf", "qwen3_golden.bin", 1e-4},
	{"phi3_hf", "phi3_golden.bin", 1e-4},
	{"gemma2_hf", "gemma2_exactgelu_golden.bin", 1e-4},
	{"gemma2_hf", "gemma2_golden.bin", 2e-3},
	{"gpt2_hf", "gpt2_exactgelu_golden.bin", 1e-4},
	{"gpt2_hf", "gpt2_golden.bin", 2e-3},
	// BF16 weights, with a golden of its own (transformers' pass in float64
	// numpy over the BF16 weights; llama.cpp agrees, CROSSCHECK.txt).
	{"qwen3_hf_bf16", "qwen3_bf16_golden.bin", 1e-4},
}

// familyPrompts tell apart the three goldens of a model
// (testdata/families/tools/tinybpe.py, PROMPTS): NAME.bin holds BOS and
// the 16 tokens of "Once upon a time, there was a little model that was
// small."; NAME_p2.bin BOS and 63 tokens of digits, capitals, a newline and
// punctuation, which with the 64 greedy ids fill the smallest context
// (128); NAME_p3.bin BOS and "Do", two byte tokens.
var familyPrompts = []string{"", "_p2", "_p3"}

// promptGolden is the golden of the prompt with suffix p (familyPrompts)
// of the model whose first golden is golden: "gpt2_golden.bin", "_p2"
// gives "gpt2_golden_p2.bin".
func promptGolden(golden, p string) string {
	return strings.TrimSuffix(golden, ".bin") + p + ".bin"
}

// TestFamilyGoldens: every family's logits over each prompt, block by
// block and token by token, within tolerance of its reference, and the
// 64-token greedy continuation identical.
func TestFamilyGoldens(t *testing.T) {
	dir := filepath.Join("testdata", "families")
	for _, c := range familyGoldens {
		for _, p := range familyPrompts {
			golden := promptGolden(c.golden, p)
			t.Run(c.model+"/"+golden, func(t *testing.T) {
				m, err := OpenSpec(filepath.Join(dir, c.model), "")
				if err != nil {
					t.Fatal(err)
				}
				g := readGoldenFile(t, filepath.Join(dir, golden))
				if g.vocab != m.Config().Vocab {
					t.Fatalf("golden vocabulary %d, model %d", g.vocab, m.Config().Vocab)
				}
				s := m.NewSession()
				rows, err := s.Eval(g.ids)
				if err != nil {
					t.Fatal(err)
				}
				compareRange(t, "block", rows, g.logits, c.tol)
				_, steps := evalOneByOne(t, m, g.ids)
				compareRange(t, "one token at a time", steps, g.logits, c.tol)
				got := greedy(t, s, rows[len(rows)-1], len(g.greedy))
				if fmt.Sprint(got) != fmt.Sprint(g.greedy) {
					t.Errorf("greedy continuation\n got %v\nwant %v", got, g.greedy)
				}
			})
		}
	}
}

// compareRange fails when max |got − want| exceeds tol times the range of
// the reference logits.
func compareRange(t *testing.T, what string, got, want [][]float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	lo, hi, maxAbs := math.Inf(1), math.Inf(-1), 0.0
	for i := range want {
		for j, w := range want[i] {
			lo, hi = math.Min(lo, float64(w)), math.Max(hi, float64(w))
			maxAbs = math.Max(maxAbs, math.Abs(float64(got[i][j]-w)))
		}
	}
	rel := maxAbs / (hi - lo)
	t.Logf("%s: max |Δ| %.3g, %.3g of the logits' range %.3g", what, maxAbs, rel, hi-lo)
	if !(rel <= tol) {
		t.Errorf("%s: max |Δ| is %.3g of the range (tolerance %g)", what, rel, tol)
	}
}

// familyModels is each family model of familyGoldens once, with its first
// golden (the exact-GELU variants left out: the same weights).
func familyModels() []struct{ model, golden string } {
	var out []struct{ model, golden string }
	seen := map[string]bool{}
	for _, c := range familyGoldens {
		if !seen[c.model] && !strings.Contains(c.golden, "exactgelu") {
			seen[c.model] = true
			out = append(out, struct{ model, golden string }{c.model, c.golden})
		}
	}
	return out
}

// TestFamilyConvert writes every family's tiny model as GGUF (F32) with
// WriteGGUF and reads it back: identical logits over every prompt, bit for
// bit. Where llama.cpp runs the architecture and its golden harness is
// built (testdata/families/make.sh builds it in $HLM_PEERS/families-build),
// llama.cpp itself runs the written file and must give each golden's
// logits and greedy ids.
func TestFamilyConvert(t *testing.T) {
	dir := filepath.Join("testdata", "families")
	harness := familyHarness()
	for _, c := range familyModels() {
		t.Run(c.model, func(t *testing.T) {
			m, err := OpenSpec(filepath.Join(dir, c.model), "")
			if err != nil {
				t.Fatal(err)
			}
			// F32, or the checkpoint's own 16-bit type: hlm's F16/BF16
			// kernels sum in another order than its F32 kernels (the
			// tensor package doc), so only the same type gives the same bits.
			typ := m.w.Layers[0].Wq.Type
			if typ != tensor.F16 && typ != tensor.BF16 {
				typ = tensor.F32
			}
			back, _ := convertAndLoad(t, m, typ)
			fam, _ := familyOf(m.Config().Arch)
			var path string // hlm's F32 GGUF of m, for llama.cpp
			if harness != "" && fam.llamaCpp {
				path = filepath.Join(t.TempDir(), "hlm.gguf")
				var buf bytes.Buffer
				// (Not named after the family: llama.cpp keys a Phi-3 rule on
				// the name that needs tokens this vocabulary lacks.)
				// F32 always: llama.cpp rounds the activations to BF16 for
				// BF16 weights, which moves the logits by 2e-3 of the range.
				if _, err := WriteGGUF(&buf, m, tensor.F32, "hlm tiny random model"); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range familyPrompts {
				golden := promptGolden(c.golden, p)
				t.Run(golden, func(t *testing.T) {
					g := readGoldenFile(t, filepath.Join(dir, golden))
					want, got := logitsOf(t, m, g.ids), logitsOf(t, back, g.ids)
					for i := range want {
						assertSame(t, fmt.Sprintf("position %d", i), got[i], want[i])
					}
					if path == "" {
						return
					}
					out := filepath.Join(t.TempDir(), "golden.bin")
					ids := make([]string, len(g.ids))
					for i, id := range g.ids {
						ids[i] = fmt.Sprint(id)
					}
					args := []string{path, out, fmt.Sprint(len(g.greedy)), strings.Join(ids, ",")}
					if b, err := exec.Command(harness, args...).CombinedOutput(); err != nil {
						t.Fatalf("llama.cpp on hlm's file: %v\n%s", err, b)
					}
					ref := readGoldenFile(t, out)
					compareRange(t, "llama.cpp on hlm's GGUF vs the golden", ref.logits, g.logits, 1e-6)
					if fmt.Sprint(ref.greedy) != fmt.Sprint(g.greedy) {
						t.Errorf("llama.cpp's greedy ids on hlm's file\n got %v\nwant %v", ref.greedy, g.greedy)
					}
				})
			}
		})
	}
}

// familyHarness is the path of the llama.cpp golden harness testdata/families/make.sh
// builds, or "" when it is not there.
func familyHarness() string {
	peers := os.Getenv("HLM_PEERS")
	if peers == "" {
		home, _ := os.UserHomeDir()
		peers = filepath.Join(home, ".cache", "hlm-peers")
	}
	p := filepath.Join(peers, "families-build", "golden")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// TestRandomFamilies: random weights of every family evaluate, give the
// same logits as a block and one token at a time and after a GGUF round
// trip, and their early exits and Q8_0 copies run.
func TestRandomFamilies(t *testing.T) {
	for _, c := range []model.Config{
		{Arch: "qwen2", RopeNeox: true},
		{Arch: "qwen3", RopeNeox: true, HeadDim: 24},
		{Arch: "gemma2", RopeNeox: true, Window: 3, LocalLayers: "LG", AttnSoftcap: 50, FinalSoftcap: 30, EmbedScale: 8},
		{Arch: "gemma3", RopeNeox: true, HeadDim: 24, Window: 3, LocalLayers: "LG", LocalTheta: 10000, RopeTheta: 1e6, RopeScale: 8, EmbedScale: 8},
		{Arch: "phi3", RopeNeox: true, RopeDims: 12},
		{Arch: "gpt2"},
		{Arch: "opt", PosOffset: 2, PostNorm: true, EmbedDim: 32},
		{Arch: "gpt_neo", Window: 3, LocalLayers: "GL", AttnScale: 1},
	} {
		t.Run(c.Arch, func(t *testing.T) {
			c.Dim, c.Hidden, c.Layers, c.Heads, c.KVHeads, c.Vocab, c.SeqLen = 64, 96, 2, 4, 2, 50, 32
			w, err := RandomWeights(c, 7)
			if err != nil {
				t.Fatal(err)
			}
			m, err := New(w, nil, c.Arch)
			if err != nil {
				t.Fatal(err)
			}
			ids := []int{1, 5, 9, 2, 44, 3, 7, 8, 11, 12}
			block := logitsOf(t, m, ids)
			s := m.NewSession()
			for i, id := range ids {
				r, err := s.Eval([]int{id})
				if err != nil {
					t.Fatal(err)
				}
				assertSame(t, fmt.Sprintf("step %d", i), r[0], block[i])
			}
			// F32, or the checkpoint's own 16-bit type: hlm's F16/BF16
			// kernels sum in another order than its F32 kernels (the
			// tensor package doc), so only the same type gives the same bits.
			typ := m.w.Layers[0].Wq.Type
			if typ != tensor.F16 && typ != tensor.BF16 {
				typ = tensor.F32
			}
			back, _ := convertAndLoad(t, m, typ)
			for i, r := range logitsOf(t, back, ids) {
				assertSame(t, fmt.Sprintf("GGUF position %d", i), r, block[i])
			}
			exit, err := m.EarlyExit(1)
			if err != nil {
				t.Fatal(err)
			}
			logitsOf(t, exit, ids)
			q8, _, err := m.Quantized(tensor.Q8_0)
			if err != nil {
				t.Fatal(err)
			}
			logitsOf(t, q8, ids)
		})
	}
}

// evalOneByOne evaluates ids one token at a time in a new session and
// returns the session and each position's logits.
func evalOneByOne(t *testing.T, m model.Model, ids []int) (model.Session, [][]float32) {
	t.Helper()
	one := m.NewSession()
	var steps [][]float32
	for _, id := range ids {
		r, err := one.Eval([]int{id})
		if err != nil {
			t.Fatal(err)
		}
		steps = append(steps, r[0])
	}
	return one, steps
}
