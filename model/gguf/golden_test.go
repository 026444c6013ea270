package gguf

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"math"
	"strings"
	"testing"
)

// goldenHex is a complete GGUF file written by hand from the specification:
// two metadata entries and one F32 tensor of two elements. ASCII strings
// are spelled in hex with the text alongside.
const goldenHex = `
	47475546                                  | 0    magic "GGUF"
	03000000                                  | 4    version 3
	0100000000000000                          | 8    tensor_count 1
	0200000000000000                          | 16   metadata_kv_count 2

	1400000000000000                          | 24   key length 20
	67656e6572616c2e617263686974656374757265  | 32   "general.architecture"
	08000000                                  | 52   value type 8 (string)
	0500000000000000                          | 56   string length 5
	6c6c616d61                                | 64   "llama"

	1400000000000000                          | 69   key length 20
	6c6c616d612e636f6e746578745f6c656e677468  | 77   "llama.context_length"
	04000000                                  | 97   value type 4 (uint32)
	00080000                                  | 101  2048

	0100000000000000                          | 105  tensor name length 1
	78                                        | 113  "x"
	01000000                                  | 114  n_dims 1
	0200000000000000                          | 118  dims[0] 2
	00000000                                  | 126  type 0 (F32)
	0000000000000000                          | 130  offset 0 in the data section

	00000000000000000000000000000000 000000000000
	                                          | 138  22 bytes of padding to 160, a multiple of 32

	0000803f                                  | 160  x[0] = 1.0
	000000c0                                  | 164  x[1] = -2.0
	000000000000000000000000000000000000000000000000
	                                          | 168  24 bytes of padding to 192, after the last tensor too
`

// decodeGolden strips the comments (after '|') and spaces from s and
// decodes the hex digits.
func decodeGolden(t *testing.T, s string) []byte {
	t.Helper()
	var digits strings.Builder
	for _, line := range strings.Split(s, "\n") {
		line, _, _ = strings.Cut(line, "|")
		digits.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(digits.String())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGolden(t *testing.T) {
	want := decodeGolden(t, goldenHex)
	if len(want) != 192 {
		t.Fatalf("golden file is %d bytes, want 192", len(want))
	}

	w := NewWriter()
	w.AddString("general.architecture", "llama")
	w.AddUint32("llama.context_length", 2048)
	data := binary.LittleEndian.AppendUint32(nil, math.Float32bits(1))
	data = binary.LittleEndian.AppendUint32(data, math.Float32bits(-2))
	if err := w.AddTensor("x", []uint64{2}, F32, data); err != nil {
		t.Fatal(err)
	}
	got := encode(t, w)
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Errorf("writer output differs from the golden file at byte %d (lengths %d and %d)\ngot:\n%s\nwant:\n%s",
			i, len(got), len(want), hex.Dump(got), hex.Dump(want))
	}

	f := parseBytes(t, want)
	if f.Version != 3 || f.Alignment != 32 || f.DataOffset != 160 || f.Size != 192 {
		t.Errorf("version %d alignment %d data offset %d size %d, want 3 32 160 192", f.Version, f.Alignment, f.DataOffset, f.Size)
	}
	if len(f.Metadata) != 2 || f.Metadata[0].Key != "general.architecture" || f.Metadata[1].Key != "llama.context_length" {
		t.Errorf("metadata = %v", f.Metadata)
	}
	if f.Architecture() != "llama" {
		t.Errorf("architecture %q", f.Architecture())
	}
	if n, err := f.Uint("llama.context_length"); n != 2048 || err != nil {
		t.Errorf("context length %d, %v", n, err)
	}
	if len(f.Tensors) != 1 {
		t.Fatalf("%d tensors", len(f.Tensors))
	}
	x := f.Tensors[0]
	if x.Name != "x" || len(x.Dims) != 1 || x.Dims[0] != 2 || x.Type != F32 || x.Offset != 0 || x.NumElements() != 2 || x.NumBytes() != 8 {
		t.Errorf("tensor %+v", x)
	}
	b, err := f.TensorData("x")
	if err != nil || !bytes.Equal(b, data) {
		t.Errorf("TensorData = %x, %v; want %x", b, err, data)
	}
}
