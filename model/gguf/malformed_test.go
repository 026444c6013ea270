package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

// raw builds a GGUF file field by field, so that tests can write files the
// Writer refuses to.
type raw []byte

func (r raw) u8(x uint8) raw   { return append(r, x) }
func (r raw) u32(x uint32) raw { return binary.LittleEndian.AppendUint32(r, x) }
func (r raw) u64(x uint64) raw { return binary.LittleEndian.AppendUint64(r, x) }
func (r raw) str(s string) raw { return append(r.u64(uint64(len(s))), s...) }

// header starts a version-3 file.
func header(nTensors, nKV uint64) raw {
	return raw(Magic).u32(3).u64(nTensors).u64(nKV)
}

// tensor appends a tensor info.
func (r raw) tensor(name string, typ Type, offset uint64, dims ...uint64) raw {
	r = r.str(name).u32(uint32(len(dims)))
	for _, d := range dims {
		r = r.u64(d)
	}
	return r.u32(uint32(typ)).u64(offset)
}

// pad appends zeros up to a multiple of align.
func (r raw) pad(align int) raw {
	for len(r)%align != 0 {
		r = append(r, 0)
	}
	return r
}

// zeros appends n zero bytes.
func (r raw) zeros(n int) raw { return append(r, make([]byte, n)...) }

// nestedArrays appends the payload of depth nested arrays around an empty
// array of uint8.
func (r raw) nestedArrays(depth int) raw {
	for range depth - 1 {
		r = r.u32(uint32(ValueArray)).u64(1)
	}
	return r.u32(uint32(ValueUint8)).u64(0)
}

func TestParseMalformed(t *testing.T) {
	valid := header(1, 1).str("a").u32(uint32(ValueUint8)).u8(1).tensor("t", F32, 0, 2).pad(32).zeros(8)
	tests := []struct {
		name string
		file raw
		want []error
		msg  string // a substring of the error message
	}{
		{"empty", nil, []error{ErrFormat}, "shorter than the 24-byte header"},
		{"bad magic", raw("GGML").u32(3).u64(0).u64(0), []error{ErrFormat}, `bad magic "GGML"`},
		{"version 1", raw(Magic).u32(1).u64(0).u64(0), []error{ErrVersion}, "version 1"},
		{"version 4", raw(Magic).u32(4).u64(0).u64(0), []error{ErrVersion}, "version 4"},
		{"big-endian", raw(Magic).u32(3 << 24).u64(0).u64(0), []error{ErrUnsupported}, "big-endian"},
		{"huge metadata count", header(0, 1<<62), []error{ErrFormat}, "cannot fit"},
		{"huge tensor count", header(1<<62, 0), []error{ErrFormat}, "cannot fit"},
		{"counts overflow together", header(1<<59, 1<<59), []error{ErrFormat}, "cannot fit"},
		{"truncated metadata", header(0, 1).str("a").u32(uint32(ValueUint32)).u8(1), []error{ErrFormat}, "need 4 bytes, 1 left"},
		{"huge key length", header(0, 1).u64(1 << 62).zeros(13), []error{ErrFormat}, "string length 4611686018427387904 exceeds the 13 bytes left"},
		{"huge string value", header(0, 1).str("a").u32(uint32(ValueString)).u64(1 << 40), []error{ErrFormat}, `metadata entry 0 "a": at byte 37: string length`},
		{"unknown value type", header(0, 1).str("a").u32(13).u8(0), []error{ErrFormat}, "unknown value type 13"},
		{"bool 2", header(0, 1).str("a").u32(uint32(ValueBool)).u8(2), []error{ErrFormat}, "bool value 2"},
		{"bool element 2", header(0, 1).str("a").u32(uint32(ValueArray)).u32(uint32(ValueBool)).u64(2).u8(1).u8(7), []error{ErrFormat}, "bool element 1 is 7"},
		{"huge array", header(0, 1).str("a").u32(uint32(ValueArray)).u32(uint32(ValueUint32)).u64(1 << 61).zeros(8), []error{ErrFormat}, "array of 2305843009213693952 uint32 elements cannot fit"},
		{"huge array of strings", header(0, 1).str("a").u32(uint32(ValueArray)).u32(uint32(ValueString)).u64(3).zeros(23), []error{ErrFormat}, "array of 3 string elements"},
		{"huge array of arrays", header(0, 1).str("a").u32(uint32(ValueArray)).u32(uint32(ValueArray)).u64(2).zeros(23), []error{ErrFormat}, "array of 2 array elements"},
		{"unknown element type", header(0, 1).str("a").u32(uint32(ValueArray)).u32(99).u64(0), []error{ErrFormat}, "unknown array element type 99"},
		{"arrays nested too deep", header(0, 1).str("a").u32(uint32(ValueArray)).nestedArrays(MaxArrayDepth + 1), []error{ErrFormat}, "nested more than 8 deep"},
		{"duplicate key", header(0, 2).str("a").u32(uint32(ValueUint8)).u8(1).str("a").u32(uint32(ValueUint8)).u8(2), []error{ErrFormat, ErrDuplicate}, `metadata entry 1 "a": at byte 38: duplicate key`},
		{"alignment uint64", header(0, 1).str(KeyAlignment).u32(uint32(ValueUint64)).u64(32), []error{ErrFormat}, "general.alignment is uint64, want uint32"},
		{"alignment 0", header(0, 1).str(KeyAlignment).u32(uint32(ValueUint32)).u32(0), []error{ErrFormat}, "not a power of two"},
		{"alignment 48", header(0, 1).str(KeyAlignment).u32(uint32(ValueUint32)).u32(48), []error{ErrFormat}, "48 is not a power of two"},
		{"five dims", header(1, 0).tensor("t", F32, 0, 1, 1, 1, 1, 1).pad(32).zeros(4), []error{ErrFormat}, "5 dimensions, at most 4"},
		{"zero dim", header(1, 0).tensor("t", F32, 0, 4, 0).pad(32).zeros(4), []error{ErrFormat}, `tensor 0 "t": at byte 45: dimension 1 is 0`},
		{"element count overflow", header(1, 0).tensor("t", F32, 0, 1<<32, 1<<32).pad(32).zeros(4), []error{ErrFormat, ErrShape}, "element count"},
		{"byte count overflow", header(1, 0).tensor("t", F32, 0, 1<<62).pad(32).zeros(4), []error{ErrFormat, ErrShape}, "overflow"},
		{"row not a block multiple", header(1, 0).tensor("t", Q8_0, 0, 33).pad(32).zeros(34), []error{ErrFormat, ErrShape}, "not a multiple of the Q8_0 block size 32"},
		{"Q5_0 row not a block multiple", header(1, 0).tensor("t", Q5_0, 0, 48).pad(32).zeros(44), []error{ErrFormat, ErrShape}, "not a multiple of the Q5_0 block size 32"},
		{"Q5_0 data past the end", header(1, 0).tensor("t", Q5_0, 0, 64).pad(32).zeros(43), []error{ErrFormat}, "extends past the end"},
		{"unknown type", header(1, 0).tensor("t", 99, 0, 32).pad(32).zeros(32), []error{ErrUnsupported}, `tensor 0 "t": unknown tensor type 99`},
		{"removed type", header(1, 0).tensor("t", 31, 0, 32).pad(32).zeros(32), []error{ErrUnsupported}, "Q4_0_4_4 (31) was removed"},
		{"hlm's former prepacked type", header(1, 0).tensor("t", hlmPackedBase+Q8_0, 0, 32).pad(32).zeros(34), []error{ErrUnsupported}, "HLM_Q8_0_R16 (4104) is hlm's former prepacked layout (hlm convert --packed)"},
		{"misaligned offset", header(1, 0).tensor("t", F32, 4, 1).pad(32).zeros(8), []error{ErrFormat}, "data offset 4 is not a multiple of the alignment 32"},
		{"data past the end", header(1, 0).tensor("t", F32, 0, 3).pad(32).zeros(8), []error{ErrFormat}, "extends past the end"},
		{"offset past the end", header(1, 0).tensor("t", F32, 1<<63, 1).pad(32).zeros(8), []error{ErrFormat}, "extends past the end"},
		{"data section past the end", header(1, 0).tensor("t", F32, 0, 1), []error{ErrFormat}, "extends past the end"},
		{"duplicate tensor", header(2, 0).tensor("t", F32, 0, 1).tensor("t", F32, 32, 1).pad(32).zeros(64), []error{ErrFormat, ErrDuplicate}, `tensor 1 "t": at byte 57: duplicate tensor name`},
		{"overlapping tensors", header(2, 0).tensor("a", F32, 32, 16).tensor("b", F32, 0, 9).pad(32).zeros(96), []error{ErrFormat}, `tensors "b" and "a" overlap`},
		{"truncated tensor info", valid[:len(valid)-40], []error{ErrFormat}, `tensor 0 "t"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse(bytes.NewReader(tt.file), int64(len(tt.file)))
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", f)
			}
			t.Log(err)
			for _, want := range tt.want {
				if !errors.Is(err, want) {
					t.Errorf("error %q does not wrap %q", err, want)
				}
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not mention %q", err, tt.msg)
			}
		})
	}

	if _, err := Parse(bytes.NewReader(valid), int64(len(valid))); err != nil {
		t.Errorf("the valid base file does not parse: %v", err)
	}
}

// TestParseLenient checks files that are unusual but valid.
func TestParseLenient(t *testing.T) {
	tests := []struct {
		name string
		file raw
	}{
		{"version 2", raw(Magic).u32(2).u64(0).u64(0)},
		{"no tensors, no padding", header(0, 1).str("a").u32(uint32(ValueUint8)).u8(1)},
		{"no padding after the last tensor", header(1, 0).tensor("t", F32, 0, 1).pad(32).zeros(4)},
		{"gap between tensors", header(2, 0).tensor("a", F32, 0, 1).tensor("b", F32, 64, 1).pad(32).zeros(68)},
		{"tensors out of order", header(2, 0).tensor("a", F32, 32, 1).tensor("b", F32, 0, 8).pad(32).zeros(36)},
		{"zero dims is a scalar", header(1, 0).tensor("t", F32, 0).pad(32).zeros(4)},
		{"empty key and name", header(1, 1).str("").u32(uint32(ValueUint8)).u8(1).tensor("", F32, 0, 1).pad(32).zeros(4)},
		{"alignment 1", header(1, 1).str(KeyAlignment).u32(uint32(ValueUint32)).u32(1).tensor("t", I8, 3, 1).zeros(4)},
		{"arrays nested 8 deep", header(0, 1).str("a").u32(uint32(ValueArray)).nestedArrays(MaxArrayDepth)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := parseBytes(t, tt.file)
			for _, ti := range f.Tensors {
				if b, err := f.TensorData(ti.Name); err != nil || uint64(len(b)) != ti.NumBytes() {
					t.Errorf("TensorData(%q) = %d bytes, %v", ti.Name, len(b), err)
				}
			}
		})
	}
}

// errReaderAt holds data but fails to read any byte from n on.
type errReaderAt struct {
	data []byte
	n    int64
}

var errDisk = errors.New("disk on fire")

func (r errReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > r.n {
		return copy(p, r.data[off:max(off, r.n)]), errDisk
	}
	return copy(p, r.data[off:]), nil
}

func TestParseReadErrors(t *testing.T) {
	w := NewWriter()
	w.AddString(KeyArchitecture, "llama")
	w.AddTensor("t", []uint64{4}, F32, make([]byte, 16))
	b := encode(t, w)

	// A size larger than the data is a malformed file, found without
	// allocating the claimed size.
	if _, err := Parse(bytes.NewReader(b[:40]), 1<<40); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "unexpected end of data") {
		t.Errorf("short reader: %v", err)
	}

	// I/O errors are reported as such, not as malformed files.
	if _, err := Parse(errReaderAt{b, 20}, int64(len(b))); !errors.Is(err, errDisk) || errors.Is(err, ErrFormat) {
		t.Errorf("failing reader: %v", err)
	}

	// TensorData reads through the reader, and reports its errors too.
	dataOffset := parseBytes(t, b).DataOffset
	f, err := Parse(errReaderAt{b, dataOffset + 8}, int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.TensorData("t"); !errors.Is(err, errDisk) {
		t.Errorf("TensorData through a failing reader: %v", err)
	}
	f, err = Parse(bytes.NewReader(b), int64(len(b))+64)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.TensorData("t"); err != nil {
		t.Errorf("TensorData: %v", err)
	}
	if _, err := Parse(io.NewSectionReader(bytes.NewReader(b), 0, 10), -1); !errors.Is(err, ErrFormat) {
		t.Errorf("negative size: %v", err)
	}
}

// allocated returns the bytes allocated while running f.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestParseMemory checks that what Parse allocates is bounded by what the
// file holds, not by the counts it claims.
func TestParseMemory(t *testing.T) {
	const size = 2 << 20
	claim := func(elemSize uint64) uint64 { return (size - 64) / elemSize } // about the most the checks let through

	tests := []struct {
		name  string
		file  raw
		limit uint64 // bytes Parse may allocate in total
	}{
		// Counts as large as the bytes left allow, but the first element is
		// bad: Parse allocates its read buffer and a little more.
		{"metadata count", header(0, claim(13)).str("a").u32(99), 1 << 20},
		{"tensor count", header(claim(24), 0).str("t").u32(9), 1 << 20},
		{"nested arrays", header(0, 1).str("a").u32(uint32(ValueArray)).
			u32(uint32(ValueArray)).u64(claim(12)).u32(uint32(ValueArray)).u64(claim(12)).
			u32(uint32(ValueArray)).u64(claim(12)).u32(99), 1 << 20},
		// An array of strings is allocated in full before its elements are
		// read: 16 bytes per 8-byte minimum string.
		{"strings", header(0, 1).str("a").u32(uint32(ValueArray)).u32(uint32(ValueString)).u64(claim(8)).u64(1 << 40), 2*size + 1<<20},
		// Valid but dense. Arrays of arrays stay encoded: their size plus
		// the garbage of doubling the buffer that holds them.
		{"many empty arrays", header(0, 1).str("a").u32(uint32(ValueArray)).u32(uint32(ValueArray)).u64(claim(12)), 2*size + 1<<20},
		{"many empty strings", header(0, 1).str("a").u32(uint32(ValueArray)).u32(uint32(ValueString)).u64(claim(8)), 2*size + 1<<20},
	}
	// Valid but dense: as many metadata entries or tensors as fit, each
	// with a distinct 4-byte name and the smallest payload. These are the
	// worst cases: 17 bytes of file become a KV in Metadata and an entry
	// in the key index, about 14 times as many bytes with their growth.
	const n = size / 32 // 17-byte entries, 28-byte tensor infos with 32 bytes of data
	kvs, tensors := header(0, n), header(n/2, 0)
	for i := range uint32(n) {
		name := string(binary.LittleEndian.AppendUint32(nil, i))
		kvs = kvs.str(name).u32(uint32(ValueUint8)).u8(0)
		if i < n/2 {
			tensors = tensors.tensor(name, I8, uint64(i)*32)
		}
	}
	tests = append(tests,
		struct {
			name  string
			file  raw
			limit uint64
		}{"many metadata entries", kvs, 16 * uint64(len(kvs))},
		struct {
			name  string
			file  raw
			limit uint64
		}{"many tensors", tensors, 12 * uint64(len(tensors))},
	)

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := append(tt.file, make([]byte, size-len(tt.file))...)
			var err error
			n := allocated(func() { _, err = Parse(bytes.NewReader(b), int64(len(b))) })
			t.Logf("%d bytes allocated for a %d-byte file; error %v", n, len(b), err)
			if n > tt.limit {
				t.Errorf("Parse allocated %d bytes, more than %d", n, tt.limit)
			}
		})
	}
}
