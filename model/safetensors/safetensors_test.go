package safetensors

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"testing"
)

func sample(t testing.TB) []byte {
	var buf bytes.Buffer
	a := make([]byte, 4*6)
	for i := 0; i < 6; i++ {
		binary.LittleEndian.PutUint32(a[4*i:], math.Float32bits(float32(i)))
	}
	if err := Write(&buf, []string{"a", "b"}, []string{"F32", "F16"}, [][]int64{{2, 3}, {2}}, [][]byte{a, {0, 0x3c, 0, 0x40}}, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	f, err := Parse(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	if f.Metadata["format"] != "pt" || len(f.Tensors) != 2 {
		t.Fatalf("metadata %v, %d tensors", f.Metadata, len(f.Tensors))
	}
	a := f.Tensors["a"]
	if a.DType != "F32" || len(a.Shape) != 2 || a.Shape[1] != 3 {
		t.Fatalf("tensor a: %+v", a)
	}
	if got := math.Float32frombits(binary.LittleEndian.Uint32(f.Data(a)[20:])); got != 5 {
		t.Errorf("a[1][2] = %g", got)
	}
	if names := f.Names(); names[0] != "a" || names[1] != "b" {
		t.Errorf("names %v", names)
	}
}

func TestMalformed(t *testing.T) {
	good := sample(t)
	hdr := func(s string) []byte {
		b := binary.LittleEndian.AppendUint64(nil, uint64(len(s)))
		return append(append(b, s...), make([]byte, 16)...)
	}
	for name, b := range map[string][]byte{
		"empty":         nil,
		"truncated":     good[:len(good)-3],
		"huge header":   binary.LittleEndian.AppendUint64(nil, 1<<40),
		"bad json":      hdr("{"),
		"bad dtype":     hdr(`{"a":{"dtype":"Q9","shape":[1],"data_offsets":[0,1]}}`),
		"out of range":  hdr(`{"a":{"dtype":"F32","shape":[8],"data_offsets":[0,32]}}`),
		"size mismatch": hdr(`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`),
		"negative":      hdr(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`),
		"overlap":       hdr(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`),
		"overflow":      hdr(`{"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}}`),
	} {
		if _, err := Parse(b); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: err = %v, want ErrFormat", name, err)
		}
	}
}

func TestRealCheckpoint(t *testing.T) {
	path := "../../../shared/models/tinystories-656k/model.safetensors"
	if _, err := os.Stat(path); err != nil {
		t.Skipf("shared model not present (%v)", err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if lm, ok := f.Tensors["lm_head.weight"]; !ok || lm.Shape[0] != 2048 || lm.Shape[1] != 128 {
		t.Errorf("lm_head.weight: %+v", lm)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(sample(f))
	f.Add([]byte{})
	f.Add(binary.LittleEndian.AppendUint64(nil, 2))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Parse(b)
		if err != nil {
			return
		}
		for _, ts := range file.Tensors {
			_ = file.Data(ts)
		}
	})
}
