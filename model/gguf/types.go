package gguf

import (
	"fmt"
	"math"
	"strings"
)

// Type is a ggml tensor type: how the elements of a tensor are stored.
// Most types group elements into blocks that share a scale; a block of
// BlockSize elements occupies TypeSize bytes.
type Type uint32

// The ggml tensor types, numbered as in ggml.h. The numbers are part of the
// file format; gaps are types that were removed from ggml.
const (
	F32     Type = 0
	F16     Type = 1
	Q4_0    Type = 2
	Q4_1    Type = 3
	Q5_0    Type = 6
	Q5_1    Type = 7
	Q8_0    Type = 8
	Q8_1    Type = 9
	Q2_K    Type = 10
	Q3_K    Type = 11
	Q4_K    Type = 12
	Q5_K    Type = 13
	Q6_K    Type = 14
	Q8_K    Type = 15
	IQ2_XXS Type = 16
	IQ2_XS  Type = 17
	IQ3_XXS Type = 18
	IQ1_S   Type = 19
	IQ4_NL  Type = 20
	IQ3_S   Type = 21
	IQ2_S   Type = 22
	IQ4_XS  Type = 23
	I8      Type = 24
	I16     Type = 25
	I32     Type = 26
	I64     Type = 27
	F64     Type = 28
	IQ1_M   Type = 29
	BF16    Type = 30
	TQ1_0   Type = 34
	TQ2_0   Type = 35
	MXFP4   Type = 39
	NVFP4   Type = 40
)

// hlmPackedBase plus Q4_0, Q5_0 or Q8_0 numbered hlm's prepacked types
// (HLM_Q8_0_R16 and its kin: the base type's blocks interleaved for hlm's
// AVX-512 tiles), which `hlm convert --packed` wrote on 2026-12-02 and
// hlm no longer reads (they started no faster than row-major files once
// those were packed behind the products). The numbers stay known, as
// ggml's removed types do, so that such a file is refused with a reason.
const hlmPackedBase = 0x1000

// qk is QK_K, the number of elements in a k-quant super-block.
const qk = 256

// typeTrait describes one ggml type. A zero block means the number is
// known to ggml's history but the type cannot appear in a valid file.
type typeTrait struct {
	name  string
	block int // elements per block
	size  int // bytes per block
}

// typeTraits is indexed by Type. The byte counts spell out the block
// structs of ggml-common.h field by field.
var typeTraits = [...]typeTrait{
	F32:     {"F32", 1, 4},
	F16:     {"F16", 1, 2},
	Q4_0:    {"Q4_0", 32, 2 + 16},                       // d, 32 nibbles
	Q4_1:    {"Q4_1", 32, 2 + 2 + 16},                   // d, m, 32 nibbles
	4:       {"Q4_2", 0, 0},                             // removed
	5:       {"Q4_3", 0, 0},                             // removed
	Q5_0:    {"Q5_0", 32, 2 + 4 + 16},                   // d, qh, qs
	Q5_1:    {"Q5_1", 32, 2 + 2 + 4 + 16},               // d, m, qh, qs
	Q8_0:    {"Q8_0", 32, 2 + 32},                       // d, 32 int8
	Q8_1:    {"Q8_1", 32, 2 + 2 + 32},                   // d, s, 32 int8
	Q2_K:    {"Q2_K", qk, qk/16 + qk/4 + 2 + 2},         // scales, qs, d, dmin
	Q3_K:    {"Q3_K", qk, qk/8 + qk/4 + 12 + 2},         // hmask, qs, scales, d
	Q4_K:    {"Q4_K", qk, 2 + 2 + 12 + qk/2},            // d, dmin, scales, qs
	Q5_K:    {"Q5_K", qk, 2 + 2 + 12 + qk/8 + qk/2},     // d, dmin, scales, qh, qs
	Q6_K:    {"Q6_K", qk, qk/2 + qk/4 + qk/16 + 2},      // ql, qh, scales, d
	Q8_K:    {"Q8_K", qk, 4 + qk + qk/16*2},             // float d, qs, int16 bsums
	IQ2_XXS: {"IQ2_XXS", qk, 2 + qk/8*2},                // d, uint16 qs
	IQ2_XS:  {"IQ2_XS", qk, 2 + qk/8*2 + qk/32},         // d, uint16 qs, scales
	IQ3_XXS: {"IQ3_XXS", qk, 2 + 3*qk/8},                // d, qs
	IQ1_S:   {"IQ1_S", qk, 2 + qk/8 + qk/32*2},          // d, qs, uint16 qh
	IQ4_NL:  {"IQ4_NL", 32, 2 + 16},                     // d, qs
	IQ3_S:   {"IQ3_S", qk, 2 + qk/4 + qk/32 + qk/8 + 4}, // d, qs, qh, signs, scales
	IQ2_S:   {"IQ2_S", qk, 2 + qk/4 + qk/32 + qk/32},    // d, qs, qh, scales
	IQ4_XS:  {"IQ4_XS", qk, 2 + 2 + qk/64 + qk/2},       // d, scales_h, scales_l, qs
	I8:      {"I8", 1, 1},
	I16:     {"I16", 1, 2},
	I32:     {"I32", 1, 4},
	I64:     {"I64", 1, 8},
	F64:     {"F64", 1, 8},
	IQ1_M:   {"IQ1_M", qk, qk/8 + qk/16 + qk/32}, // qs, qh, scales
	BF16:    {"BF16", 1, 2},
	31:      {"Q4_0_4_4", 0, 0},                        // removed
	32:      {"Q4_0_4_8", 0, 0},                        // removed
	33:      {"Q4_0_8_8", 0, 0},                        // removed
	TQ1_0:   {"TQ1_0", qk, (qk-4*qk/64)/5 + qk/64 + 2}, // qs, qh, d
	TQ2_0:   {"TQ2_0", qk, qk/4 + 2},                   // qs, d
	36:      {"IQ4_NL_4_4", 0, 0},                      // removed
	37:      {"IQ4_NL_4_8", 0, 0},                      // removed
	38:      {"IQ4_NL_8_8", 0, 0},                      // removed
	MXFP4:   {"MXFP4", 32, 1 + 16},                     // e8m0 scale, 32 e2m1
	NVFP4:   {"NVFP4", 64, 4 + 32},                     // 4 e4m3 scales, 64 e2m1
}

func (t Type) trait() typeTrait {
	switch t {
	case hlmPackedBase + Q4_0, hlmPackedBase + Q5_0, hlmPackedBase + Q8_0:
		return typeTrait{name: "HLM_" + typeTraits[t-hlmPackedBase].name + "_R16"}
	}
	if int64(t) < int64(len(typeTraits)) {
		return typeTraits[t]
	}
	return typeTrait{}
}

// String returns the ggml name of t, such as "Q8_0", or "type(N)" for a
// number ggml never assigned.
func (t Type) String() string {
	if name := t.trait().name; name != "" {
		return name
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// Known reports whether t is a type this package can size, that is, a type
// that may appear in a valid GGUF file. Removed and unassigned numbers are
// not known.
func (t Type) Known() bool { return t.trait().block > 0 }

// removed reports whether t is a number ggml once used and has since
// removed from the file format.
func (t Type) removed() bool { tr := t.trait(); return tr.name != "" && tr.block == 0 }

// BlockSize returns the number of elements in one block of t, or 0 if t is
// not known.
func (t Type) BlockSize() int { return t.trait().block }

// TypeSize returns the number of bytes in one block of t, or 0 if t is not
// known.
func (t Type) TypeSize() int { return t.trait().size }

// RowSize returns the number of bytes that n consecutive elements of type t
// occupy. n must be a non-negative multiple of the block size.
func (t Type) RowSize(n int64) (int64, error) {
	tr := t.trait()
	switch {
	case tr.block == 0:
		return 0, t.unsupportedError("")
	case n < 0:
		return 0, shapeErrorf("negative element count %d", n)
	case n%int64(tr.block) != 0:
		return 0, shapeErrorf("row of %d elements is not a multiple of the %s block size %d", n, t, tr.block)
	}
	blocks := n / int64(tr.block)
	if blocks > math.MaxInt64/int64(tr.size) {
		return 0, shapeErrorf("%d %s elements overflow int64 bytes", n, t)
	}
	return blocks * int64(tr.size), nil
}

// unsupportedError explains why t cannot be sized, in the context of the
// item named by where, if not empty.
func (t Type) unsupportedError(where string) error {
	if where != "" {
		where += ": "
	}
	if t.removed() && t > hlmPackedBase {
		return fmt.Errorf("%w: %stensor type %s (%d) is hlm's former prepacked layout (hlm convert --packed), which hlm no longer reads; convert the original model again, without --packed", ErrUnsupported, where, t, uint32(t))
	}
	if t.removed() {
		return fmt.Errorf("%w: %stensor type %s (%d) was removed from GGUF; re-convert the model", ErrUnsupported, where, t, uint32(t))
	}
	return fmt.Errorf("%w: %sunknown tensor type %d", ErrUnsupported, where, uint32(t))
}

// TypeByName returns the known type whose name is name, ignoring case, so
// that command-line flags like "q8_0" can name a type.
func TypeByName(name string) (Type, bool) {
	for i, tr := range typeTraits {
		if tr.block > 0 && strings.EqualFold(tr.name, name) {
			return Type(i), true
		}
	}
	return 0, false
}
