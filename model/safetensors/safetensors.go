// Package safetensors reads the safetensors container of Hugging Face
// checkpoints: an 8-byte little-endian header length N, N bytes of JSON
// mapping tensor names to {dtype, shape, data_offsets} (offsets relative to
// the end of the header) plus an optional "__metadata__" string map, then the
// tensor bytes.
//
// Parse validates everything before use: the header length against the file
// size (and a 100 MiB cap), each tensor's byte range against its dtype and
// shape and against the data section, and overlaps between tensors.
package safetensors

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
)

// ErrFormat reports a malformed safetensors file.
var ErrFormat = errors.New("malformed safetensors file")

// maxHeader bounds the JSON header (real headers are a few hundred kB).
const maxHeader = 100 << 20

// Tensor is one entry of the header.
type Tensor struct {
	Name  string
	DType string // "F32", "F16", "BF16", ...
	Shape []int64
	Begin int64 // byte range in the data section
	End   int64
}

// File is a parsed safetensors file held in memory.
type File struct {
	Metadata map[string]string
	Tensors  map[string]Tensor
	data     []byte
}

// DTypeSize is the element size of the dtypes hlm knows, 0 for others.
func DTypeSize(dt string) int {
	switch dt {
	case "F64", "I64", "U64":
		return 8
	case "F32", "I32", "U32":
		return 4
	case "F16", "BF16", "I16", "U16":
		return 2
	case "I8", "U8", "BOOL", "F8_E4M3", "F8_E5M2":
		return 1
	}
	return 0
}

// Open reads and parses a safetensors file.
func Open(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Parse parses a whole safetensors file held in b (which it keeps).
func Parse(b []byte) (*File, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("%w: %d bytes, shorter than the header length", ErrFormat, len(b))
	}
	n := binary.LittleEndian.Uint64(b)
	if n > maxHeader || n > uint64(len(b)-8) {
		return nil, fmt.Errorf("%w: header length %d does not fit the %d-byte file", ErrFormat, n, len(b))
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &raw); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrFormat, err)
	}
	data := b[8+n:]
	f := &File{Tensors: make(map[string]Tensor, len(raw)), data: data}
	type entry struct {
		DType   string  `json:"dtype"`
		Shape   []int64 `json:"shape"`
		Offsets []int64 `json:"data_offsets"`
	}
	for name, msg := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &f.Metadata); err != nil {
				return nil, fmt.Errorf("%w: __metadata__: %v", ErrFormat, err)
			}
			continue
		}
		var e entry
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, fmt.Errorf("%w: tensor %q: %v", ErrFormat, name, err)
		}
		size := int64(DTypeSize(e.DType))
		if size == 0 {
			return nil, fmt.Errorf("%w: tensor %q: unknown dtype %q", ErrFormat, name, e.DType)
		}
		if len(e.Offsets) != 2 || e.Offsets[0] < 0 || e.Offsets[1] < e.Offsets[0] || e.Offsets[1] > int64(len(data)) {
			return nil, fmt.Errorf("%w: tensor %q: data offsets %v outside the %d-byte data section", ErrFormat, name, e.Offsets, len(data))
		}
		if len(e.Shape) > 8 {
			return nil, fmt.Errorf("%w: tensor %q: %d dimensions", ErrFormat, name, len(e.Shape))
		}
		count := int64(1)
		for _, d := range e.Shape {
			if d < 0 || (d > 0 && count > (int64(len(data))+1)/d) {
				return nil, fmt.Errorf("%w: tensor %q: shape %v", ErrFormat, name, e.Shape)
			}
			count *= d
		}
		if count*size != e.Offsets[1]-e.Offsets[0] {
			return nil, fmt.Errorf("%w: tensor %q: shape %v of %s needs %d bytes, offsets give %d", ErrFormat, name, e.Shape, e.DType, count*size, e.Offsets[1]-e.Offsets[0])
		}
		f.Tensors[name] = Tensor{Name: name, DType: e.DType, Shape: e.Shape, Begin: e.Offsets[0], End: e.Offsets[1]}
	}
	// Tensors must not overlap.
	ts := make([]Tensor, 0, len(f.Tensors))
	for _, t := range f.Tensors {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool {
		return ts[i].Begin < ts[j].Begin || ts[i].Begin == ts[j].Begin && ts[i].End < ts[j].End
	})
	for i := 1; i < len(ts); i++ {
		if ts[i].Begin < ts[i-1].End {
			return nil, fmt.Errorf("%w: tensors %q and %q overlap", ErrFormat, ts[i-1].Name, ts[i].Name)
		}
	}
	return f, nil
}

// Data returns the bytes of a tensor (shared with the file).
func (f *File) Data(t Tensor) []byte { return f.data[t.Begin:t.End:t.End] }

// Names lists the tensors in byte order.
func (f *File) Names() []string {
	names := make([]string, 0, len(f.Tensors))
	for n := range f.Tensors {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return f.Tensors[names[i]].Begin < f.Tensors[names[j]].Begin })
	return names
}

// Write writes tensors (name → dtype, shape, bytes) as a safetensors file, in
// the order given. It exists for tests and tools that build small checkpoints.
func Write(w io.Writer, names []string, dtypes []string, shapes [][]int64, data [][]byte, metadata map[string]string) error {
	header := map[string]any{}
	if metadata != nil {
		header["__metadata__"] = metadata
	}
	var off int64
	for i, n := range names {
		header[n] = map[string]any{"dtype": dtypes[i], "shape": shapes[i], "data_offsets": []int64{off, off + int64(len(data[i]))}}
		off += int64(len(data[i]))
	}
	h, err := json.Marshal(header)
	if err != nil {
		return err
	}
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	if err := binary.Write(w, binary.LittleEndian, uint64(len(h))); err != nil {
		return err
	}
	if _, err := w.Write(h); err != nil {
		return err
	}
	for _, d := range data {
		if _, err := w.Write(d); err != nil {
			return err
		}
	}
	return nil
}
