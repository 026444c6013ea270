package gguf

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestTypeSizes pins every type's block geometry to the numbers in ggml's
// type_traits and gguf-py's GGML_QUANT_SIZES, written out literally rather
// than derived from the struct layouts as types.go does.
func TestTypeSizes(t *testing.T) {
	tests := []struct {
		typ         Type
		id          uint32
		name        string
		block, size int
	}{
		{F32, 0, "F32", 1, 4},
		{F16, 1, "F16", 1, 2},
		{Q4_0, 2, "Q4_0", 32, 18},
		{Q4_1, 3, "Q4_1", 32, 20},
		{Q5_0, 6, "Q5_0", 32, 22},
		{Q5_1, 7, "Q5_1", 32, 24},
		{Q8_0, 8, "Q8_0", 32, 34},
		{Q8_1, 9, "Q8_1", 32, 36},
		{Q2_K, 10, "Q2_K", 256, 84},
		{Q3_K, 11, "Q3_K", 256, 110},
		{Q4_K, 12, "Q4_K", 256, 144},
		{Q5_K, 13, "Q5_K", 256, 176},
		{Q6_K, 14, "Q6_K", 256, 210},
		{Q8_K, 15, "Q8_K", 256, 292},
		{IQ2_XXS, 16, "IQ2_XXS", 256, 66},
		{IQ2_XS, 17, "IQ2_XS", 256, 74},
		{IQ3_XXS, 18, "IQ3_XXS", 256, 98},
		{IQ1_S, 19, "IQ1_S", 256, 50},
		{IQ4_NL, 20, "IQ4_NL", 32, 18},
		{IQ3_S, 21, "IQ3_S", 256, 110},
		{IQ2_S, 22, "IQ2_S", 256, 82},
		{IQ4_XS, 23, "IQ4_XS", 256, 136},
		{I8, 24, "I8", 1, 1},
		{I16, 25, "I16", 1, 2},
		{I32, 26, "I32", 1, 4},
		{I64, 27, "I64", 1, 8},
		{F64, 28, "F64", 1, 8},
		{IQ1_M, 29, "IQ1_M", 256, 56},
		{BF16, 30, "BF16", 1, 2},
		{TQ1_0, 34, "TQ1_0", 256, 54},
		{TQ2_0, 35, "TQ2_0", 256, 66},
		{MXFP4, 39, "MXFP4", 32, 17},
		{NVFP4, 40, "NVFP4", 64, 36},
	}
	known := 0
	for id := range Type(64) {
		if id.Known() {
			known++
		}
	}
	if known != len(tests) {
		t.Errorf("%d known types, test lists %d", known, len(tests))
	}
	for _, tt := range tests {
		if uint32(tt.typ) != tt.id || tt.typ.String() != tt.name || tt.typ.BlockSize() != tt.block || tt.typ.TypeSize() != tt.size {
			t.Errorf("%s: got id %d name %s block %d size %d, want %d %s %d %d", tt.name,
				uint32(tt.typ), tt.typ, tt.typ.BlockSize(), tt.typ.TypeSize(), tt.id, tt.name, tt.block, tt.size)
		}
		if got, ok := TypeByName(tt.name); !ok || got != tt.typ {
			t.Errorf("TypeByName(%q) = %v, %v", tt.name, got, ok)
		}
	}
	if got, ok := TypeByName("q8_0"); !ok || got != Q8_0 {
		t.Errorf("TypeByName(q8_0) = %v, %v, want Q8_0", got, ok)
	}
	for _, name := range []string{"Q4_0_4_4", "Q4_2", "nope"} {
		if got, ok := TypeByName(name); ok {
			t.Errorf("TypeByName(%q) = %v, want not found", name, got)
		}
	}
}

func TestTypeNames(t *testing.T) {
	for typ, want := range map[Type]string{4: "Q4_2", 31: "Q4_0_4_4", 38: "IQ4_NL_8_8", 41: "type(41)", 1 << 31: "type(2147483648)"} {
		if typ.String() != want {
			t.Errorf("Type(%d).String() = %q, want %q", uint32(typ), typ.String(), want)
		}
		if typ.Known() {
			t.Errorf("Type(%d) is known", uint32(typ))
		}
	}
}

func TestRowSize(t *testing.T) {
	tests := []struct {
		typ  Type
		n    int64
		want int64
		err  error
	}{
		{F32, 0, 0, nil},
		{F32, 4096, 16384, nil},
		{F16, 7, 14, nil},
		{BF16, 3, 6, nil},
		{Q8_0, 4096, 4096 / 32 * 34, nil},
		{Q4_0, 64, 36, nil},
		{Q4_K, 4096, 16 * 144, nil},
		{Q6_K, 256, 210, nil},
		{Q8_0, 33, 0, ErrShape},
		{Q4_K, 128, 0, ErrShape},
		{F32, -1, 0, ErrShape},
		{F32, math.MaxInt64 / 2, 0, ErrShape},
		{31, 32, 0, ErrUnsupported},
		{99, 32, 0, ErrUnsupported},
	}
	for _, tt := range tests {
		got, err := tt.typ.RowSize(tt.n)
		if got != tt.want || !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
			t.Errorf("%s.RowSize(%d) = %d, %v; want %d, %v", tt.typ, tt.n, got, err, tt.want, tt.err)
		}
	}
}

// TestRetiredPackedTypes checks that the numbers of hlm's former
// prepacked types are named, not known (no size, no flag names them), and
// refused with a reason that says what to do; a number next to them that
// never was one is unknown.
func TestRetiredPackedTypes(t *testing.T) {
	for _, c := range []struct {
		typ  Type
		name string
	}{{hlmPackedBase + Q8_0, "HLM_Q8_0_R16"}, {hlmPackedBase + Q4_0, "HLM_Q4_0_R16"}, {hlmPackedBase + Q5_0, "HLM_Q5_0_R16"}} {
		if c.typ.String() != c.name || c.typ.Known() || c.typ.BlockSize() != 0 {
			t.Fatalf("%d: name %q, known %v, block %d", uint32(c.typ), c.typ.String(), c.typ.Known(), c.typ.BlockSize())
		}
		if _, ok := TypeByName(c.name); ok {
			t.Fatalf("TypeByName(%q) found a retired type", c.name)
		}
		_, err := c.typ.RowSize(32)
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "hlm convert --packed") || !strings.Contains(err.Error(), c.name) {
			t.Fatalf("%v.RowSize: %v", c.typ, err)
		}
	}
	if typ := Type(hlmPackedBase + Q4_K); typ.String() != fmt.Sprintf("type(%d)", uint32(typ)) {
		t.Errorf("%d is named %q", uint32(typ), typ.String())
	}
}
