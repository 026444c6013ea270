package gguf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// mustArray is ArrayOfValues for test tables.
func mustArray(t testing.TB, elem ValueType, vs ...Value) Value {
	t.Helper()
	v, err := ArrayOfValues(elem, vs)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// nested returns depth arrays nested in one another around an array of
// uint8.
func nested(t testing.TB, depth int) Value {
	v := ArrayOf([]uint8{1, 2, 3})
	for range depth - 1 {
		v = mustArray(t, ValueArray, v)
	}
	return v
}

// parseBytes parses an in-memory file.
func parseBytes(t testing.TB, b []byte) *File {
	t.Helper()
	f, err := Parse(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return f
}

// encode writes w to memory and checks the byte count it reports.
func encode(t testing.TB, w *Writer) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := w.WriteTo(&buf)
	if err != nil {
		t.Fatalf("WriteTo: %v", err)
	}
	if n != int64(buf.Len()) {
		t.Fatalf("WriteTo reported %d bytes, wrote %d", n, buf.Len())
	}
	return buf.Bytes()
}

func TestValueRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		value Value
		text  string // how Format prints it
	}{
		{"uint8", Uint8Value(255), "255"},
		{"int8", Int8Value(-128), "-128"},
		{"uint16", Uint16Value(65535), "65535"},
		{"int16", Int16Value(-32768), "-32768"},
		{"uint32", Uint32Value(math.MaxUint32), "4294967295"},
		{"int32", Int32Value(math.MinInt32), "-2147483648"},
		{"uint64", Uint64Value(math.MaxUint64), "18446744073709551615"},
		{"int64", Int64Value(math.MinInt64), "-9223372036854775808"},
		{"float32", Float32Value(1e-5), "1e-05"},
		{"float32 NaN", Float32Value(float32(math.NaN())), "NaN"},
		{"float32 -0", Float32Value(float32(math.Copysign(0, -1))), "-0"},
		{"float64", Float64Value(math.Pi), "3.141592653589793"},
		{"bool true", BoolValue(true), "true"},
		{"bool false", BoolValue(false), "false"},
		{"string", StringValue("llama"), `"llama"`},
		{"empty string", StringValue(""), `""`},
		{"utf-8 string", StringValue("▁héllo\x00"), `"▁héllo\x00"`},
		{"array of uint8", ArrayOf([]uint8{0, 1, 255}), "[0 1 255]"},
		{"array of int8", ArrayOf([]int8{-1, 0, 1}), "[-1 0 1]"},
		{"array of uint16", ArrayOf([]uint16{1, 65535}), "[1 65535]"},
		{"array of int16", ArrayOf([]int16{-32768}), "[-32768]"},
		{"array of uint32", ArrayOf([]uint32{7}), "[7]"},
		{"array of int32", ArrayOf([]int32{1, -2, 3}), "[1 -2 3]"},
		{"array of uint64", ArrayOf([]uint64{math.MaxUint64}), "[18446744073709551615]"},
		{"array of int64", ArrayOf([]int64{math.MinInt64, 5}), "[-9223372036854775808 5]"},
		{"array of float32", ArrayOf([]float32{-1000, 0.5}), "[-1000 0.5]"},
		{"array of float64", ArrayOf([]float64{1e300}), "[1e+300]"},
		{"array of bool", ArrayOf([]bool{true, false}), "[true false]"},
		{"array of string", ArrayOf([]string{"<s>", "", "▁the"}), `["<s>" "" "▁the"]`},
		{"long array", ArrayOf(make([]int32, 10)), "[0 0 0 0 0 0 0 0 ... (10 int32)]"},
		{"empty array of uint8", ArrayOf([]uint8{}), "[]"},
		{"empty array of string", ArrayOf([]string(nil)), "[]"},
		{"empty array of array", mustArray(t, ValueArray), "[]"},
		{"array of arrays", mustArray(t, ValueArray,
			ArrayOf([]uint32{1, 2}),
			ArrayOf([]string{"a"}),
			ArrayOf([]float32{}),
			mustArray(t, ValueArray, ArrayOf([]bool{true}))), `[[1 2] ["a"] [] [[true]]]`},
		{"arrays nested MaxArrayDepth deep", nested(t, MaxArrayDepth), "[[[[[[[[1 2 3]]]]]]]]"},
		{"array of values", mustArray(t, ValueInt16, Int16Value(-3), Int16Value(4)), "[-3 4]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewWriter()
			w.AddString("general.architecture", "test")
			if err := w.AddKV("test.value", tt.value); err != nil {
				t.Fatal(err)
			}
			f := parseBytes(t, encode(t, w))
			if len(f.Metadata) != 2 || f.Metadata[1].Key != "test.value" {
				t.Fatalf("metadata = %v", f.Metadata)
			}
			got, ok := f.Get("test.value")
			if !ok || !got.Equal(tt.value) || !f.Metadata[1].Value.Equal(tt.value) {
				t.Errorf("got %v (%s), want %v (%s)", got, got.typeName(), tt.value, tt.value.typeName())
			}
			if s := fmt.Sprint(got); s != tt.text {
				t.Errorf("Format = %s, want %s", s, tt.text)
			}
		})
	}
}

// randomBytes returns n bytes from a generator seeded with seed.
func randomBytes(seed uint64, n uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestTensorRoundTrip(t *testing.T) {
	tensors := []struct {
		name string
		dims []uint64
		typ  Type
	}{
		{"token_embd.weight", []uint64{8, 5}, F32},
		{"blk.0.attn_norm.weight", []uint64{8}, F32},
		{"blk.0.attn_q.weight", []uint64{64, 3}, F16},
		{"blk.0.attn_k.weight", []uint64{3, 3}, BF16},
		{"blk.0.ffn_up.weight", []uint64{64, 2}, Q8_0},
		{"blk.0.ffn_down.weight", []uint64{32, 1, 3}, Q4_0},
		{"blk.0.ffn_gate.weight", []uint64{256, 2}, Q4_K},
		{"output.weight", []uint64{512}, Q6_K},
		{"four.dims", []uint64{2, 3, 4, 5}, I32},
		{"unsupported.here", []uint64{256}, Q5_K},
	}
	for _, align := range []uint32{0, 1, 8, 64, 4096} {
		t.Run(fmt.Sprintf("alignment %d", align), func(t *testing.T) {
			w := NewWriter()
			if align != 0 {
				w.AddUint32(KeyAlignment, align)
			}
			w.AddString(KeyArchitecture, "llama")
			want := map[string][]byte{}
			for i, tt := range tensors {
				info := TensorInfo{Dims: tt.dims, Type: tt.typ}
				data := randomBytes(uint64(i), info.NumBytes())
				want[tt.name] = data
				if err := w.AddTensor(tt.name, tt.dims, tt.typ, data); err != nil {
					t.Fatal(err)
				}
			}
			b := encode(t, w)
			f := parseBytes(t, b)

			wantAlign := uint64(align)
			if align == 0 {
				wantAlign = DefaultAlignment
			}
			if f.Version != 3 || f.Alignment != wantAlign || f.DataOffset%int64(wantAlign) != 0 || f.Size != int64(len(b)) {
				t.Errorf("version %d alignment %d data offset %d size %d (file %d bytes)", f.Version, f.Alignment, f.DataOffset, f.Size, len(b))
			}
			if len(b)%int(wantAlign) != 0 {
				t.Errorf("file is %d bytes, not padded to the alignment %d", len(b), wantAlign)
			}
			if len(f.Tensors) != len(tensors) {
				t.Fatalf("%d tensors, want %d", len(f.Tensors), len(tensors))
			}
			for i, tt := range tensors {
				got := f.Tensors[i]
				if got.Name != tt.name || !slices.Equal(got.Dims, tt.dims) || got.Type != tt.typ || got.Offset%wantAlign != 0 {
					t.Errorf("tensor %d = %+v, want %s %v %s at an aligned offset", i, got, tt.name, tt.dims, tt.typ)
				}
				if byName, ok := f.Tensor(tt.name); !ok || byName.Offset != got.Offset {
					t.Errorf("Tensor(%q) = %+v, %v", tt.name, byName, ok)
				}
				data, err := f.TensorData(tt.name)
				if err != nil || !bytes.Equal(data, want[tt.name]) {
					t.Errorf("TensorData(%q): %d bytes, %v; want the %d bytes written", tt.name, len(data), err, len(want[tt.name]))
				}
			}
		})
	}
}

func TestWriterTensorFunc(t *testing.T) {
	data := randomBytes(7, 4*6)
	w := NewWriter()
	w.AddTensorFunc("a", []uint64{6}, F32, func(out io.Writer) error {
		_, err := out.Write(data)
		return err
	})
	f := parseBytes(t, encode(t, w))
	if got, err := f.TensorData("a"); err != nil || !bytes.Equal(got, data) {
		t.Errorf("TensorData = %v, %v", got, err)
	}

	for _, n := range []int{23, 25} {
		w := NewWriter()
		w.AddTensorFunc("a", []uint64{6}, F32, func(out io.Writer) error {
			_, err := out.Write(make([]byte, n))
			return err
		})
		if _, err := w.WriteTo(io.Discard); !errors.Is(err, ErrShape) {
			t.Errorf("function writing %d of 24 bytes: WriteTo error %v, want ErrShape", n, err)
		}
	}
}

func TestWriterErrors(t *testing.T) {
	tests := []struct {
		name string
		add  func(w *Writer) error
		want error
	}{
		{"empty key", func(w *Writer) error { return w.AddKV("", Uint8Value(1)) }, ErrFormat},
		{"duplicate key", func(w *Writer) error {
			w.AddString("a", "x")
			return w.AddKV("a", StringValue("y"))
		}, ErrDuplicate},
		{"alignment not uint32", func(w *Writer) error { return w.AddKV(KeyAlignment, Uint64Value(32)) }, ErrFormat},
		{"alignment not a power of two", func(w *Writer) error { return w.AddKV(KeyAlignment, Uint32Value(48)) }, ErrFormat},
		{"alignment 0", func(w *Writer) error { return w.AddKV(KeyAlignment, Uint32Value(0)) }, ErrFormat},
		{"unknown value type", func(w *Writer) error { return w.AddKV("a", Value{Type: 13}) }, ErrFormat},
		{"array without element type", func(w *Writer) error { return w.AddKV("a", Value{Type: ValueArray}) }, ErrFormat},
		{"arrays nested too deep", func(w *Writer) error {
			deep := Value{Type: ValueArray, arr: &array{elem: ValueArray, n: 1, raw: appendValue(nil, nested(t, MaxArrayDepth))}}
			return w.AddKV("a", deep)
		}, ErrFormat},
		{"wrong data size", func(w *Writer) error { return w.AddTensor("a", []uint64{4}, F32, make([]byte, 15)) }, ErrShape},
		{"row not a block multiple", func(w *Writer) error { return w.AddTensor("a", []uint64{16, 2}, Q8_0, make([]byte, 34)) }, ErrShape},
		{"no dims", func(w *Writer) error { return w.AddTensor("a", nil, F32, make([]byte, 4)) }, ErrShape},
		{"zero dim", func(w *Writer) error { return w.AddTensor("a", []uint64{4, 0}, F32, nil) }, ErrShape},
		{"five dims", func(w *Writer) error { return w.AddTensor("a", []uint64{1, 1, 1, 1, 1}, F32, make([]byte, 4)) }, ErrShape},
		{"element overflow", func(w *Writer) error { return w.AddTensor("a", []uint64{1 << 32, 1 << 32}, F32, nil) }, ErrShape},
		{"unknown type", func(w *Writer) error { return w.AddTensor("a", []uint64{4}, 99, nil) }, ErrUnsupported},
		{"removed type", func(w *Writer) error { return w.AddTensor("a", []uint64{32}, 31, nil) }, ErrUnsupported},
		{"empty name", func(w *Writer) error { return w.AddTensor("", []uint64{1}, F32, make([]byte, 4)) }, ErrFormat},
		{"long name", func(w *Writer) error {
			return w.AddTensor(string(make([]byte, MaxTensorNameLen+1)), []uint64{1}, F32, make([]byte, 4))
		}, ErrFormat},
		{"duplicate tensor", func(w *Writer) error {
			w.AddTensor("a", []uint64{1}, F32, make([]byte, 4))
			return w.AddTensor("a", []uint64{1}, F32, make([]byte, 4))
		}, ErrDuplicate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewWriter()
			err := tt.add(w)
			if !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
			if _, werr := w.WriteTo(io.Discard); werr != err {
				t.Errorf("WriteTo returned %v, want the recorded %v", werr, err)
			}
		})
	}
	if _, err := ArrayOfValues(ValueString, []Value{StringValue("a"), Uint8Value(1)}); !errors.Is(err, ErrWrongType) {
		t.Errorf("mixed array: %v, want ErrWrongType", err)
	}
	if _, err := ArrayOfValues(ValueArray, []Value{nested(t, MaxArrayDepth)}); !errors.Is(err, ErrFormat) {
		t.Errorf("array nested too deep: %v, want ErrFormat", err)
	}
	if _, err := ArrayOfValues(13, nil); !errors.Is(err, ErrFormat) {
		t.Errorf("array of unknown type: %v, want ErrFormat", err)
	}
}
