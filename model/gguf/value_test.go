package gguf

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func TestValueAccessors(t *testing.T) {
	type want struct {
		u   uint64
		uok bool
		i   int64
		iok bool
		f   float64
		fok bool
	}
	tests := []struct {
		v    Value
		want want
	}{
		{Uint8Value(7), want{7, true, 7, true, 7, true}},
		{Int8Value(-1), want{0, false, -1, true, -1, true}},
		{Int16Value(300), want{300, true, 300, true, 300, true}},
		{Uint32Value(math.MaxUint32), want{math.MaxUint32, true, math.MaxUint32, true, math.MaxUint32, true}},
		{Int32Value(-5), want{0, false, -5, true, -5, true}},
		{Uint64Value(math.MaxUint64), want{math.MaxUint64, true, 0, false, math.MaxUint64, true}},
		{Int64Value(math.MaxInt64), want{math.MaxInt64, true, math.MaxInt64, true, math.MaxInt64, true}},
		{Float32Value(0.25), want{0, false, 0, false, 0.25, true}},
		{Float64Value(-2.5), want{0, false, 0, false, -2.5, true}},
		{BoolValue(true), want{}},
		{StringValue("7"), want{}},
		{ArrayOf([]uint32{7}), want{}},
	}
	for _, tt := range tests {
		u, uok := tt.v.Uint()
		i, iok := tt.v.Int()
		f, fok := tt.v.Float()
		if got := (want{u, uok, i, iok, f, fok}); got != tt.want {
			t.Errorf("%s %v: got %+v, want %+v", tt.v.Type, tt.v, got, tt.want)
		}
	}

	if s, ok := StringValue("x").String(); !ok || s != "x" {
		t.Errorf("String() = %q, %v", s, ok)
	}
	if _, ok := Uint8Value(1).String(); ok {
		t.Error("uint8 String() ok")
	}
	if b, ok := BoolValue(true).Bool(); !ok || !b {
		t.Errorf("Bool() = %v, %v", b, ok)
	}
	if _, ok := Uint8Value(1).Bool(); ok {
		t.Error("uint8 Bool() ok")
	}
}

func TestArrayAccessors(t *testing.T) {
	strs := ArrayOf([]string{"a", "b"})
	if got, ok := strs.Strings(); !ok || !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Strings() = %v, %v", got, ok)
	}
	got, _ := strs.Strings()
	got[0] = "changed"
	if again, _ := strs.Strings(); again[0] != "a" {
		t.Error("Strings() returned the value's own slice")
	}
	if got, ok := ArrayOf([]float32{1.5, -2}).Float32s(); !ok || !slices.Equal(got, []float32{1.5, -2}) {
		t.Errorf("Float32s() = %v, %v", got, ok)
	}
	if got, ok := ArrayOf([]int32{1, -2}).Int32s(); !ok || !slices.Equal(got, []int32{1, -2}) {
		t.Errorf("Int32s() = %v, %v", got, ok)
	}
	if got, ok := ArrayOf([]uint16{1, 65535}).Ints(); !ok || !slices.Equal(got, []int64{1, 65535}) {
		t.Errorf("Ints() = %v, %v", got, ok)
	}
	if _, ok := ArrayOf([]uint64{math.MaxUint64}).Ints(); ok {
		t.Error("Ints() of MaxUint64 ok")
	}
	if got, ok := ArrayOf([]string{}).Strings(); !ok || len(got) != 0 {
		t.Errorf("empty Strings() = %v, %v", got, ok)
	}
	for _, v := range []Value{StringValue("a"), ArrayOf([]int32{1}), ArrayOf([]float64{1})} {
		if _, ok := v.Strings(); ok && v.ElemType() != ValueString {
			t.Errorf("%v Strings() ok", v)
		}
		if _, ok := v.Float32s(); ok {
			t.Errorf("%v Float32s() ok", v)
		}
	}
	if _, ok := ArrayOf([]uint32{1}).Int32s(); ok {
		t.Error("array of uint32 Int32s() ok")
	}

	nest := mustArray(t, ValueArray, ArrayOf([]int8{-1}), ArrayOf([]string{"x"}))
	if nest.Len() != 2 || nest.ElemType() != ValueArray || nest.Index(1).ElemType() != ValueString {
		t.Errorf("nested array: len %d elem %s", nest.Len(), nest.ElemType())
	}
	vs, ok := nest.Values()
	if !ok || len(vs) != 2 || !vs[0].Equal(ArrayOf([]int8{-1})) {
		t.Errorf("Values() = %v, %v", vs, ok)
	}
	if x, _ := nest.Index(0).Index(0).Int(); x != -1 {
		t.Errorf("nest[0][0] = %d", x)
	}
	if _, ok := Uint8Value(1).Values(); ok || Uint8Value(1).Len() != 0 {
		t.Error("scalar Values() ok")
	}
}

func TestFileLookups(t *testing.T) {
	w := NewWriter()
	w.AddString(KeyArchitecture, "llama")
	w.AddUint32("llama.context_length", 2048)
	w.AddFloat32("llama.rope.freq_base", 10000)
	w.AddInt32("llama.signed", -1)
	w.AddBool("tokenizer.ggml.add_bos_token", true)
	w.AddStrings("tokenizer.ggml.tokens", []string{"<unk>", "<s>"})
	w.AddFloat32s("tokenizer.ggml.scores", []float32{0, -1})
	w.AddInt32s("tokenizer.ggml.token_type", []int32{2, 3})
	w.AddUint64("big", 1<<40)
	f := parseBytes(t, encode(t, w))

	if f.Architecture() != "llama" || f.ArchKey("context_length") != "llama.context_length" {
		t.Errorf("Architecture() = %q, ArchKey = %q", f.Architecture(), f.ArchKey("context_length"))
	}
	if n, err := f.Uint(f.ArchKey("context_length")); n != 2048 || err != nil {
		t.Errorf("Uint = %d, %v", n, err)
	}
	if n, err := f.Int("big"); n != 1<<40 || err != nil {
		t.Errorf("Int = %d, %v", n, err)
	}
	if x, err := f.Float("llama.rope.freq_base"); x != 10000 || err != nil {
		t.Errorf("Float = %v, %v", x, err)
	}
	if b, err := f.Bool("tokenizer.ggml.add_bos_token"); !b || err != nil {
		t.Errorf("Bool = %v, %v", b, err)
	}
	if s, err := f.Strings("tokenizer.ggml.tokens"); len(s) != 2 || s[1] != "<s>" || err != nil {
		t.Errorf("Strings = %v, %v", s, err)
	}
	if s, err := f.Float32s("tokenizer.ggml.scores"); len(s) != 2 || s[1] != -1 || err != nil {
		t.Errorf("Float32s = %v, %v", s, err)
	}
	if s, err := f.Int32s("tokenizer.ggml.token_type"); len(s) != 2 || s[1] != 3 || err != nil {
		t.Errorf("Int32s = %v, %v", s, err)
	}
	if _, err := f.Uint("llama.block_count"); !errors.Is(err, ErrMissingKey) {
		t.Errorf("missing key: %v", err)
	}
	if _, err := f.Uint("llama.signed"); !errors.Is(err, ErrWrongType) {
		t.Errorf("negative Uint: %v", err)
	}
	if _, err := f.String("llama.context_length"); !errors.Is(err, ErrWrongType) {
		t.Errorf("String of uint32: %v", err)
	}
	if _, err := f.Strings("tokenizer.ggml.scores"); !errors.Is(err, ErrWrongType) {
		t.Errorf("Strings of float32s: %v", err)
	}
	if _, err := f.TensorData("nope"); !errors.Is(err, ErrNoTensor) {
		t.Errorf("TensorData of a missing tensor: %v", err)
	}
}
