package llama

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/gguf"
	"github.com/hlmproject/hlm/tensor"
)

// convertAndLoad writes m as GGUF of type t into a temporary file and opens it.
func convertAndLoad(t *testing.T, m *Model, typ tensor.DType) (*Model, ConvertStats) {
	t.Helper()
	var buf bytes.Buffer
	st, err := WriteGGUF(&buf, m, typ, "test")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	w, tok, err := LoadGGUF(path)
	if err != nil {
		t.Fatal(err)
	}
	back, err := New(w, tok, path)
	if err != nil {
		t.Fatal(err)
	}
	return back, st
}

func logitsOf(t *testing.T, m *Model, ids []int) [][]float32 {
	t.Helper()
	rows, err := m.NewSession().Eval(ids)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestConvertToGGUF converts the real models to GGUF: F32 must give
// bit-identical logits and the same tokenizer; Q8_0 must stay within a stated
// tolerance of the F32 logits.
func TestConvertToGGUF(t *testing.T) {
	cases := []struct {
		name, spec string
		text       string
		q8Tol      float64 // max total variation between Q8_0 and F32 next-token distributions
	}{
		{"tinystories-656k", "models/tinystories-656k", "Once upon a time, there was a little girl named Lily.", 0.03},
		{"stories260K", "models/stories260K/stories260K.bin", "Once upon a time, there was a little girl named Lily.", 0.03},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Open(model.Spec{Path: sharedPath(t, tc.spec)})
			if err != nil {
				t.Fatal(err)
			}
			if m.Tokenizer() == nil {
				t.Fatal("no tokenizer found beside the model")
			}
			ids := m.Tokenizer().Encode(tc.text, true)
			want := logitsOf(t, m, ids)

			f32, st := convertAndLoad(t, m, tensor.F32)
			t.Logf("F32 GGUF: %d tensors, %d bytes", st.Tensors, st.Bytes)
			got := logitsOf(t, f32, ids)
			for i := range want {
				assertSame(t, fmt.Sprintf("F32 GGUF position %d", i), got[i], want[i])
			}
			if f32.Tokenizer() == nil {
				t.Fatal("GGUF lost the tokenizer")
			}
			if a, b := fmt.Sprint(f32.Tokenizer().Encode(tc.text, true)), fmt.Sprint(ids); a != b {
				t.Errorf("GGUF tokenizer encodes %s, original %s", a, b)
			}

			q8, st := convertAndLoad(t, m, tensor.Q8_0)
			t.Logf("Q8_0 GGUF: %d tensors (%d kept in F32: rows not a multiple of 32), %d bytes", st.Tensors, st.Kept, st.Bytes)
			gotQ := logitsOf(t, q8, ids)
			var maxAbs, maxTV float64
			for i := range want {
				for j := range want[i] {
					maxAbs = math.Max(maxAbs, math.Abs(float64(gotQ[i][j]-want[i][j])))
				}
				maxTV = math.Max(maxTV, softmaxTV(gotQ[i], want[i]))
			}
			t.Logf("Q8_0 GGUF: max |Δlogit| %.4f, max TV distance of the next-token distributions %.4f (tolerance %g)", maxAbs, maxTV, tc.q8Tol)
			if maxTV > tc.q8Tol {
				t.Errorf("Q8_0 next-token distributions differ by TV %.4f, tolerance %g", maxTV, tc.q8Tol)
			}
			// The in-memory @q8 copy and the Q8_0 file hold the same numbers.
			mq, err := Open(model.Spec{Path: sharedPath(t, tc.spec), Quantize: "q8"})
			if err != nil {
				t.Fatal(err)
			}
			for i, row := range logitsOf(t, mq, ids) {
				assertSame(t, fmt.Sprintf("@q8 vs Q8_0 GGUF position %d", i), row, gotQ[i])
			}
		})
	}
}

func TestLlama2CRoundTripAndMalformed(t *testing.T) {
	c := model.Config{Dim: 32, Hidden: 40, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 30, SeqLen: 16}
	w, err := RandomWeights(c, 3)
	if err != nil {
		t.Fatal(err)
	}
	b, err := WriteLlama2C(w)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseLlama2C(b)
	if err != nil {
		t.Fatal(err)
	}
	m1, _ := New(w, nil, "a")
	m2, _ := New(back, nil, "b")
	assertSame(t, "llama2.c round trip", logitsOf(t, m2, []int{3, 4, 5})[2], logitsOf(t, m1, []int{3, 4, 5})[2])

	bad := map[string][]byte{
		"empty":     nil,
		"short":     b[:10],
		"truncated": b[:len(b)-4],
		"extra":     append(append([]byte{}, b...), 0, 0, 0, 0),
		"zero dim":  append([]byte{0, 0, 0, 0}, b[4:]...),
		"huge":      append([]byte{0xff, 0xff, 0, 0}, b[4:]...),
	}
	for name, data := range bad {
		if _, err := ParseLlama2C(data); !errors.Is(err, model.ErrFormat) {
			t.Errorf("%s: err = %v, want ErrFormat", name, err)
		}
	}
}

func FuzzParseLlama2C(f *testing.F) {
	w, err := RandomWeights(model.Config{Dim: 8, Hidden: 8, Layers: 1, Heads: 2, KVHeads: 1, Vocab: 6, SeqLen: 4}, 1)
	if err != nil {
		f.Fatal(err)
	}
	b, _ := WriteLlama2C(w)
	f.Add(b)
	f.Add(b[:28])
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := ParseLlama2C(data)
		if err != nil {
			return
		}
		m, err := New(w, nil, "fuzz")
		if err != nil {
			return
		}
		if _, err := m.NewSession().Eval([]int{0}); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzFromGGUF feeds mutated GGUF model files to the loader: errors, never
// panics; a file that loads must evaluate.
func FuzzFromGGUF(f *testing.F) {
	w, err := RandomWeights(model.Config{Dim: 32, Hidden: 32, Layers: 1, Heads: 2, KVHeads: 1, Vocab: 6, SeqLen: 4}, 1)
	if err != nil {
		f.Fatal(err)
	}
	m, _ := New(w, nil, "seed")
	for _, typ := range []tensor.DType{tensor.F32, tensor.Q8_0, tensor.Q5_0} {
		var buf bytes.Buffer
		if _, err := WriteGGUF(&buf, m, typ, "seed"); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	// Every other family, small, with its own keys and tensors.
	for _, c := range []model.Config{
		{Arch: "qwen2", RopeNeox: true},
		{Arch: "qwen3", RopeNeox: true, HeadDim: 8},
		{Arch: "gemma2", RopeNeox: true, Window: 2, LocalLayers: "LG", AttnSoftcap: 50, FinalSoftcap: 30, EmbedScale: float32(math.Sqrt(32))},
		{Arch: "gemma3", RopeNeox: true, HeadDim: 8, Window: 2, LocalLayers: "LG", LocalTheta: 10000, RopeScale: 8, EmbedScale: float32(math.Sqrt(32))},
		{Arch: "phi3", RopeNeox: true, RopeDims: 12},
		{Arch: "gpt2"},
		{Arch: "opt", PosOffset: 2, PostNorm: true, EmbedDim: 16},
		{Arch: "gpt_neo", Window: 2, LocalLayers: "GL", AttnScale: 1},
	} {
		c.Dim, c.Hidden, c.Layers, c.Heads, c.KVHeads, c.Vocab, c.SeqLen = 32, 32, 2, 2, 1, 6, 4
		w, err := RandomWeights(c, 1)
		if err != nil {
			f.Fatal(c.Arch, err)
		}
		m, _ := New(w, nil, "seed")
		var buf bytes.Buffer
		if _, err := WriteGGUF(&buf, m, tensor.F32, "seed"); err != nil {
			f.Fatal(c.Arch, err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		gf, err := gguf.Parse(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		w, tok, err := FromGGUF(gf)
		if err != nil {
			return
		}
		m, err := New(w, tok, "fuzz")
		if err != nil {
			return
		}
		if _, err := m.NewSession().Eval([]int{0}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestHFMalformed(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("config.json", `{"model_type":"llama","hidden_size":32,"intermediate_size":40,"num_hidden_layers":1,"num_attention_heads":4,"vocab_size":10,"max_position_embeddings":8}`)
	if _, err := LoadHF(dir); err == nil {
		t.Error("missing safetensors: no error")
	}
	write("model.safetensors", "\x02\x00\x00\x00\x00\x00\x00\x00{}")
	if _, err := LoadHF(dir); !errors.Is(err, model.ErrFormat) {
		t.Errorf("empty safetensors: err = %v, want ErrFormat", err)
	}
	write("config.json", `{"model_type":"mamba"}`)
	if _, err := LoadHF(dir); !errors.Is(err, model.ErrUnsupported) || !strings.Contains(err.Error(), "mamba") {
		t.Errorf("mamba: err = %v, want ErrUnsupported naming it", err)
	}
	write("config.json", `{"model_type":"gpt2"}`)
	if _, err := LoadHF(dir); !errors.Is(err, model.ErrFormat) {
		t.Errorf("gpt2 without sizes: err = %v, want ErrFormat", err)
	}
	write("config.json", `{"model_type":"llama","hidden_size":-5}`)
	if _, err := LoadHF(dir); !errors.Is(err, model.ErrFormat) {
		t.Errorf("negative size: err = %v, want ErrFormat", err)
	}
}

// softmaxTV is the total variation distance between softmax(a) and softmax(b).
func softmaxTV(a, b []float32) float64 {
	pa, pb := append([]float32(nil), a...), append([]float32(nil), b...)
	tensor.Softmax(pa)
	tensor.Softmax(pb)
	var tv float64
	for i := range pa {
		tv += math.Abs(float64(pa[i] - pb[i]))
	}
	return tv / 2
}

func TestFingerprint(t *testing.T) {
	c := model.Config{Dim: 32, Hidden: 32, Layers: 3, Heads: 2, KVHeads: 2, Vocab: 20, SeqLen: 8}
	a, b := randomModel(t, c, 1), randomModel(t, c, 1)
	if a.Fingerprint() != b.Fingerprint() {
		t.Error("same weights, different fingerprints")
	}
	e, _ := a.EarlyExit(2)
	q, _, _ := a.Quantized(tensor.Q8_0)
	if e.Fingerprint() == a.Fingerprint() || q.Fingerprint() == a.Fingerprint() || randomModel(t, c, 2).Fingerprint() == a.Fingerprint() {
		t.Error("different computations share a fingerprint")
	}
}

// TestKQuantModel: a model holding Q4_K and Q6_K matrices evaluates, and
// its @q8 copy (K-quants requantized to Q8_0) stays close to it.
func TestKQuantModel(t *testing.T) {
	c := model.Config{Dim: 256, Hidden: 512, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 64, SeqLen: 16}
	w, err := RandomWeights(c, 5)
	if err != nil {
		t.Fatal(err)
	}
	// Quantize two matrices to K-quants by building blocks from their Q8_0
	// values: random codes with the scale that matches the row's range.
	kq := func(m *tensor.Matrix, typ tensor.DType) *tensor.Matrix {
		data := make([]byte, m.Rows*m.Cols/tensor.QKK*typ.BlockBytes())
		for i := range data {
			data[i] = byte((uint64(i)*2654435761 + 12345) >> 7)
		}
		for b := 0; b < len(data); b += typ.BlockBytes() {
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
	w.Layers[0].Wq = kq(w.Layers[0].Wq, tensor.Q4_K)
	w.Layers[1].W1 = kq(w.Layers[1].W1, tensor.Q6_K)
	m, err := New(w, nil, "kquant")
	if err != nil {
		t.Fatal(err)
	}
	q, _, err := m.Quantized(tensor.Q8_0)
	if err != nil {
		t.Fatal(err)
	}
	ids := []int{1, 2, 3, 4}
	a, b := logitsOf(t, m, ids), logitsOf(t, q, ids)
	for i := range a {
		if tv := softmaxTV(a[i], b[i]); tv > 0.05 {
			t.Errorf("position %d: TV between K-quant and its Q8_0 copy %.3f", i, tv)
		}
	}
	// Against the same weights in F32 (exact dequantization), what the
	// 8-bit inputs of the integer products cost, with the Q8_0 path's
	// tolerance (TestConvertToGGUF).
	f, _, err := m.Quantized(tensor.F32)
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for i, row := range logitsOf(t, f, ids) {
		worst = max(worst, softmaxTV(a[i], row))
	}
	if worst > 0.03 {
		t.Errorf("TV between the K-quant model and its F32 copy %.4f > 0.03", worst)
	}
	t.Logf("largest TV from F32: %.4f", worst)
}

// TestMappedPackedRelease: a Q8_0 or Q4_0 GGUF file, memory-mapped, whose
// matrices pack on first use and let the mapped pages go (and again after
// the fingerprint reads them), gives the logits of the same weights
// quantized in memory, before and after the fingerprint, and the same
// fingerprint.
func TestMappedPackedRelease(t *testing.T) {
	cfg := model.Config{Dim: 64, Hidden: 160, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 96, SeqLen: 32}
	m := randomModel(t, cfg, 7)
	ids := []int{1, 5, 9, 33, 2, 70}
	for _, typ := range []tensor.DType{tensor.Q8_0, tensor.Q4_0} {
		mem, _, err := m.Quantized(typ)
		if err != nil {
			t.Fatal(err)
		}
		want := logitsOf(t, mem, ids)
		mapped, _ := convertAndLoad(t, m, typ)
		before := logitsOf(t, mapped, ids)
		if got, w := mapped.Fingerprint(), mem.Fingerprint(); got != w {
			t.Errorf("%v: fingerprint %s of the mapped file, %s in memory", typ, got, w)
		}
		after := logitsOf(t, mapped, ids)
		for i := range want {
			assertSame(t, fmt.Sprintf("%v mapped, position %d", typ, i), before[i], want[i])
			assertSame(t, fmt.Sprintf("%v mapped after the fingerprint, position %d", typ, i), after[i], want[i])
		}
	}
}
