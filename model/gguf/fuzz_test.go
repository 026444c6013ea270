package gguf

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"
)

// fuzzSeeds returns valid files and damaged copies of them. The files are
// kept to a few hundred bytes: the fuzzer's minimizer takes time quadratic
// in an input's length.
func fuzzSeeds(t testing.TB) [][]byte {
	var valid [][]byte
	w := NewWriter()
	w.AddString(KeyArchitecture, "llama")
	w.AddUint32("llama.context_length", 256)
	w.AddFloat32("llama.attention.layer_norm_rms_epsilon", 1e-5)
	w.AddStrings("tokenizer.ggml.tokens", []string{"<unk>", "<s>", "▁a"})
	w.AddFloat32s("tokenizer.ggml.scores", []float32{0, 0, -1.5})
	w.AddInt32s("tokenizer.ggml.token_type", []int32{2, 3, 1})
	w.AddTensor("token_embd.weight", []uint64{4, 3}, F32, randomBytes(1, 4*3*4))
	w.AddTensor("blk.0.attn_q.weight", []uint64{32, 1}, Q8_0, randomBytes(2, 34))
	w.AddTensor("output_norm.weight", []uint64{4}, F16, randomBytes(3, 4*2))
	valid = append(valid, encode(t, w))

	w = NewWriter()
	w.AddUint32(KeyAlignment, 8)
	w.AddKV("nested", mustArray(t, ValueArray, ArrayOf([]int16{-1}), ArrayOf([]string{"x", ""}), ArrayOf([]bool{})))
	w.AddKV("flags", ArrayOf([]bool{true, false}))
	w.AddKV("f64", Float64Value(2.5))
	w.AddKV("i64", Int64Value(-3))
	w.AddTensor("q4", []uint64{32, 2}, Q4_0, randomBytes(5, 2*18))
	w.AddTensor("q5", []uint64{64, 1}, Q5_0, randomBytes(9, 2*22))
	w.AddTensor("bf", []uint64{3, 1, 1, 2}, BF16, randomBytes(7, 12))
	valid = append(valid, encode(t, w))

	w = NewWriter()
	w.AddString(KeyArchitecture, "empty")
	valid = append(valid, encode(t, w))

	seeds := slices.Clone(valid)
	for _, b := range valid {
		for _, n := range []int{0, 3, 4, 8, 23, 24, 30, len(b) / 3, len(b) / 2, len(b) - 1} {
			if n < len(b) {
				seeds = append(seeds, b[:n])
			}
		}
		for _, at := range []int{4, 8, 16, 24, 32, 40, len(b) / 2} {
			for _, x := range []byte{0x00, 0x01, 0x80, 0xff} {
				if at < len(b) {
					m := slices.Clone(b)
					m[at] = x
					seeds = append(seeds, m)
				}
			}
		}
	}
	return seeds
}

func FuzzParse(f *testing.F) {
	for _, b := range fuzzSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkParse(t, data)
	})
}

// TestParseSeeds runs the fuzz checks on the seeds, so that go test
// covers them without -fuzz.
func TestParseSeeds(t *testing.T) {
	for _, b := range fuzzSeeds(t) {
		checkParse(t, b)
	}
}

// checkParse parses data and, if that succeeds, checks the File's
// invariants, exercises every accessor, and re-encodes the file to check
// that writing and parsing again preserve it.
func checkParse(t *testing.T, data []byte) {
	f, err := Parse(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrVersion) && !errors.Is(err, ErrUnsupported) {
			t.Fatalf("error wraps no sentinel: %v", err)
		}
		return
	}
	if f.Alignment == 0 || f.Alignment&(f.Alignment-1) != 0 || f.DataOffset%int64(f.Alignment) != 0 {
		t.Fatalf("alignment %d, data offset %d", f.Alignment, f.DataOffset)
	}
	for _, kv := range f.Metadata {
		v := kv.Value
		_ = fmt.Sprint(v)
		v.Uint()
		v.Int()
		v.Float()
		v.Strings()
		v.Float32s()
		v.Int32s()
		v.Ints()
		v.Values()
		if got, ok := f.Get(kv.Key); !ok || !got.Equal(v) {
			t.Fatalf("Get(%q) = %v, %v; want %v", kv.Key, got, ok, v)
		}
	}
	f.Architecture()
	datas := make([][]byte, len(f.Tensors))
	for i, ti := range f.Tensors {
		b, err := f.TensorData(ti.Name)
		if err != nil {
			t.Fatalf("TensorData(%q) of a parsed file: %v", ti.Name, err)
		}
		if uint64(len(b)) != ti.NumBytes() || ti.Offset%f.Alignment != 0 {
			t.Fatalf("tensor %+v: %d bytes, want %d", ti, len(b), ti.NumBytes())
		}
		datas[i] = b
	}

	// Re-encode. The Writer is stricter than Parse (it wants non-empty
	// keys, short non-empty names and at least one dimension), so it may
	// refuse; if it accepts, the result must parse to the same content.
	// Skip alignments so large that the padding alone is megabytes.
	if f.Alignment > 1<<16 {
		return
	}
	w := NewWriter()
	for _, kv := range f.Metadata {
		w.AddKV(kv.Key, kv.Value)
	}
	for i, ti := range f.Tensors {
		w.AddTensor(ti.Name, ti.Dims, ti.Type, datas[i])
	}
	if w.Err() != nil {
		return
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatalf("WriteTo: %v", err)
	}
	g, err := Parse(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatalf("re-encoded file does not parse: %v", err)
	}
	if !slices.EqualFunc(f.Metadata, g.Metadata, func(a, b KV) bool { return a.Key == b.Key && a.Value.Equal(b.Value) }) {
		t.Fatalf("metadata changed in re-encoding:\n%v\n%v", f.Metadata, g.Metadata)
	}
	if len(g.Tensors) != len(f.Tensors) {
		t.Fatalf("%d tensors after re-encoding, want %d", len(g.Tensors), len(f.Tensors))
	}
	for i, ti := range f.Tensors {
		gi := g.Tensors[i]
		b, err := g.TensorData(gi.Name)
		if gi.Name != ti.Name || !slices.Equal(gi.Dims, ti.Dims) || gi.Type != ti.Type || err != nil || !bytes.Equal(b, datas[i]) {
			t.Fatalf("tensor %d changed in re-encoding: %+v, want %+v (data error %v)", i, gi, ti, err)
		}
	}
}
