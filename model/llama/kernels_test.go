package llama

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/tensor"
)

// pinnedLogits are the SHA-256 of the logits logitsDigest computes, per
// storage type. They are a property of the numeric contract (tensor's fixed
// summation orders), not of this machine: every CPU and architecture must
// reproduce them. A kernel change that moves a bit fails here, on purpose;
// if the contract itself changes, update them and say why in the commit.
var pinnedLogits = map[tensor.DType]string{
	tensor.F32:  "756c201f716803700e6023387a001fc39c587399852c2ebf774ea53fff942e53",
	tensor.Q8_0: "27cd77c378c208ce45223f65c3ed9fc7cb65fa27da316997210834889ec0316f",
	tensor.Q4_0: "4831d1d03cd22bf867754c4e338849c8c22cc511dbd6da2d8f7cfe7968d918e3",
	tensor.Q4_K: "04780e4a8ad482287bb7cf38054f13abaf808cb1e7a7692b2e6098f741ca211d",
	tensor.Q6_K: "07726a8b7e708f04ba794e32a59c221bb13d67b1919fbfffc42a16666e791a51",
}

// logitsDigest evaluates a small random model (shapes with odd remainders
// for every tile size) as a block, as single steps and batched with a
// second session, checks the three agree bit for bit, and returns a digest
// of the logits.
func logitsDigest(t *testing.T, typ tensor.DType) string {
	t.Helper()
	m := randomModel(t, model.Config{Dim: 96, Hidden: 160, Layers: 2, Heads: 6, KVHeads: 2, Vocab: 203, SeqLen: 64}, 7)
	if typ == tensor.Q4_K || typ == tensor.Q6_K {
		m = kquantModel(t, typ)
	} else if typ != tensor.F32 {
		var err error
		if m, _, err = m.Quantized(typ); err != nil {
			t.Fatal(err)
		}
	}
	toks := []int{1, 200, 7, 33, 2, 150, 0, 17, 44, 8, 99, 5, 61}
	block, err := m.Session().Eval(toks)
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range block {
		lo, hi := row[0], row[0]
		for _, v := range row {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("%v: position %d has logit %g", typ, i, v)
			}
			lo, hi = min(lo, v), max(hi, v)
		}
		if hi-lo < 1e-3 {
			t.Fatalf("%v: position %d has flat logits (%g … %g)", typ, i, lo, hi)
		}
	}
	step := m.Session()
	other := m.Session()
	if _, err := other.Eval(toks[:5]); err != nil {
		t.Fatal(err)
	}
	for i, tk := range toks {
		var r [][]float32
		if i%3 == 0 { // every third step shares a pass with another session
			out, err := EvalBatch([]*Session{other, step}, [][]int{{tk, 3}, {tk}}, false)
			if err != nil {
				t.Fatal(err)
			}
			r = out[1]
		} else if r, err = step.Eval([]int{tk}); err != nil {
			t.Fatal(err)
		}
		assertSame(t, fmt.Sprintf("%v step %d", typ, i), r[0], block[i])
	}
	return logitsSHA(block)
}

// kquantModel is a small random model whose layer matrices are random
// K-quant blocks of type typ (rows of 256 and 512 values; GGUF files are
// the only source of K-quants, hlm does not write them).
func kquantModel(t *testing.T, typ tensor.DType) *Model {
	t.Helper()
	w, err := RandomWeights(model.Config{Dim: 256, Hidden: 512, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 203, SeqLen: 64}, 9)
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(1)
	kq := func(m *tensor.Matrix) *tensor.Matrix {
		bb := typ.BlockBytes()
		data := make([]byte, m.Rows*m.Cols/tensor.QKK*bb)
		for i := range data {
			seed = seed*6364136223846793005 + 1442695040888963407
			data[i] = byte(seed >> 56)
		}
		for b := 0; b < len(data); b += bb {
			if typ == tensor.Q4_K {
				binary.LittleEndian.PutUint16(data[b:], tensor.F32ToF16(0.002))
				binary.LittleEndian.PutUint16(data[b+2:], tensor.F32ToF16(0.002))
			} else {
				binary.LittleEndian.PutUint16(data[b+208:], tensor.F32ToF16(0.0005))
			}
		}
		out, err := tensor.NewRaw(typ, m.Rows, m.Cols, data)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for i := range w.Layers {
		ly := &w.Layers[i]
		ly.Wq, ly.Wk, ly.Wv, ly.Wo = kq(ly.Wq), kq(ly.Wk), kq(ly.Wv), kq(ly.Wo)
		ly.W1, ly.W2, ly.W3 = kq(ly.W1), kq(ly.W2), kq(ly.W3)
	}
	m, err := New(w, nil, "kquant")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestKernelLevelsSameLogits: every kernel level this CPU runs (and the
// portable Go code, which is what a CPU without AVX2, or another
// architecture, runs) gives the same logits, equal to the pinned digest.
func TestKernelLevelsSameLogits(t *testing.T) {
	for _, typ := range []tensor.DType{tensor.F32, tensor.Q8_0, tensor.Q4_0, tensor.Q4_K, tensor.Q6_K} {
		want := sameAtEveryLevel(t, typ.String(), func() string { return logitsDigest(t, typ) })
		if pin := pinnedLogits[typ]; want != pin {
			t.Errorf("%v: logits digest %s, pinned %s", typ, want, pin)
		}
	}
}

// sameAtEveryLevel computes digest at every kernel level this CPU runs and
// with 1 and 2 threads, reports any that differs from the first, and
// returns the first.
func sameAtEveryLevel(t *testing.T, what string, digest func() string) string {
	t.Helper()
	levels := tensor.AvailableKernels()
	defer tensor.SetKernels(levels[len(levels)-1])
	defer tensor.SetThreads(0)
	want := ""
	for _, k := range levels {
		for _, th := range []int{1, 2} {
			if err := tensor.SetKernels(k); err != nil {
				t.Fatal(err)
			}
			tensor.SetThreads(th)
			got := digest()
			if want == "" {
				want = got
			}
			if got != want {
				t.Errorf("%s: %s kernels, %d threads: logits digest %s, %s gave %s", what, k, th, got, levels[0], want)
			}
		}
	}
	return want
}

// logitsSHA is the SHA-256 of rows' float32 bits, little-endian, in order.
func logitsSHA(rows [][]float32) string {
	h := sha256.New()
	for _, row := range rows {
		for _, v := range row {
			h.Write(binary.LittleEndian.AppendUint32(nil, math.Float32bits(v)))
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// pinnedFamilyLogits are the SHA-256 of the logits familyDigest computes
// for each committed tiny family model (testdata/families): the other
// architectures' operations (LayerNorm, biases, GELU and GeGLU, soft-caps,
// QK norms, sliding windows, learned positions) under the same contract as
// pinnedLogits — every CPU, architecture, kernel level and thread count
// must reproduce them bit for bit (the cross-architecture test runs this
// one on arm64 too).
var pinnedFamilyLogits = map[string]string{
	"llama2.gguf":   "938f37c3e73970d8fb7d71db4c87515411b0b35d88fbb23a56796de1238d2329",
	"llama31.gguf":  "b6051618b42a7aeef2aa7a3c81b1b3892cdc9c768ffd0959ab7f61c0e543b4a3",
	"llama32.gguf":  "7efe7c82f06b4f9a7c592ef40295dfafbb8b61bd1f34ce7919f0bd1cbc2ce2c0",
	"qwen2.gguf":    "958dc732d3d88ae9e259a3c6188ee9ca3a7470935d253a7a9032eb2ac3f77de6",
	"qwen3.gguf":    "f48728f93190cb41ba4f1c43f67dbc86df2334571dea89cf1fc931080282fc98",
	"phi3.gguf":     "0ab4e0f74dd779157aad2e0aeb4f2fcdcb5d23b4a9762ea8f697e69a1929a614",
	"gemma2.gguf":   "f14bd975c6ab4cde425201dc6543af7f89eb76ea27f78e4fd611ca9029fc5362",
	"gemma3.gguf":   "b3e80e7d4a3d79a1323bdec114f6f0d4972eb3ede3216200bcb5b846bf6811b3",
	"gpt2.gguf":     "544104e2c4c5c417328972194ba66e5e87f901371f98175c696f6406857741bf",
	"opt_pre":       "b2495f026bf812e0a16866190713d7ac782320c519e7c7134005ce283d03f7e0",
	"opt_post":      "8714b5efe248dbb0a289cd838022048f5cc2906604ea57948ca168da3db232f1",
	"gpt_neo":       "344529ea3abcc4a9a11b76d71fa05448e8ec5219c854af95268f9608c7f4e551",
	"llama2_hf":     "938f37c3e73970d8fb7d71db4c87515411b0b35d88fbb23a56796de1238d2329",
	"llama31_hf":    "b6051618b42a7aeef2aa7a3c81b1b3892cdc9c768ffd0959ab7f61c0e543b4a3",
	"llama32_hf":    "7efe7c82f06b4f9a7c592ef40295dfafbb8b61bd1f34ce7919f0bd1cbc2ce2c0",
	"gemma3_hf":     "b3e80e7d4a3d79a1323bdec114f6f0d4972eb3ede3216200bcb5b846bf6811b3",
	"qwen2_hf":      "958dc732d3d88ae9e259a3c6188ee9ca3a7470935d253a7a9032eb2ac3f77de6",
	"qwen3_hf":      "f48728f93190cb41ba4f1c43f67dbc86df2334571dea89cf1fc931080282fc98",
	"phi3_hf":       "0ab4e0f74dd779157aad2e0aeb4f2fcdcb5d23b4a9762ea8f697e69a1929a614",
	"gemma2_hf":     "f14bd975c6ab4cde425201dc6543af7f89eb76ea27f78e4fd611ca9029fc5362",
	"gpt2_hf":       "544104e2c4c5c417328972194ba66e5e87f901371f98175c696f6406857741bf",
	"qwen3_hf_bf16": "ed35121165d18aa2bf97ba8670181f2bc26df60dbee1243334f885c761d3de67",
}

// familyDigest evaluates model dir/name over the first golden's prompt and
// returns the SHA-256 of its logits.
func familyDigest(t *testing.T, dir, name, golden string) string {
	t.Helper()
	m, err := OpenSpec(filepath.Join(dir, name), "")
	if err != nil {
		t.Fatal(err)
	}
	g := readGoldenFile(t, filepath.Join(dir, golden))
	rows, err := m.Session().Eval(g.ids)
	if err != nil {
		t.Fatal(err)
	}
	return logitsSHA(rows)
}

// TestFamilyKernelLevelsSameLogits: every family's tiny model gives the
// same logits at every kernel level and thread count, equal to its pinned
// digest.
func TestFamilyKernelLevelsSameLogits(t *testing.T) {
	dir := filepath.Join("testdata", "families")
	seen := map[string]bool{}
	for _, c := range familyGoldens {
		if seen[c.model] {
			continue
		}
		seen[c.model] = true
		// Opened again at each level: a level may lay the weights out its own way.
		want := sameAtEveryLevel(t, c.model, func() string { return familyDigest(t, dir, c.model, c.golden) })
		if pin := pinnedFamilyLogits[c.model]; want != pin {
			t.Errorf("%s: logits digest %s, pinned %s", c.model, want, pin)
		}
	}
}
