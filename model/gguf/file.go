package gguf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"sync"
	"unsafe"
)

// Format constants.
const (
	// Magic is the first four bytes of every GGUF file.
	Magic = "GGUF"

	// Version is the version the Writer writes. Parse reads versions 2
	// and 3, which have the same layout.
	Version = 3

	// DefaultAlignment is the alignment of tensor data when the metadata
	// has no general.alignment.
	DefaultAlignment = 32

	// MaxDims is the largest number of dimensions a tensor may have
	// (GGML_MAX_DIMS).
	MaxDims = 4

	// MaxArrayDepth is how deeply arrays may nest: an array of scalars has
	// depth 1, an array of arrays of scalars depth 2.
	MaxArrayDepth = 8

	// MaxTensorNameLen is the longest tensor name the Writer accepts, the
	// limit llama.cpp enforces (GGML_MAX_NAME - 1). Parse accepts longer
	// names.
	MaxTensorNameLen = 63
)

// Well-known metadata keys.
const (
	KeyAlignment    = "general.alignment"
	KeyArchitecture = "general.architecture"
)

// TensorInfo describes one tensor: its name, shape, type, and where its
// data starts relative to the data section.
type TensorInfo struct {
	Name string
	// Dims are the dimensions, innermost (fastest-varying) first: a
	// PyTorch matrix of shape [out, in] has Dims [in, out].
	Dims   []uint64
	Type   Type
	Offset uint64
}

// NumElements returns the number of elements, the product of Dims. For a
// TensorInfo from a parsed File it does not overflow.
func (t TensorInfo) NumElements() uint64 {
	n := uint64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// NumBytes returns the size of the tensor's data, or 0 if its type is not
// known or its shape does not fit the type.
func (t TensorInfo) NumBytes() uint64 {
	n, _ := t.size()
	return n
}

// size returns the size of the tensor's data and checks that its shape
// fits its type: at most MaxDims dimensions, none 0, an innermost
// dimension that is a multiple of the block size, and element and byte
// counts that fit in int64.
func (t TensorInfo) size() (uint64, error) {
	if !t.Type.Known() {
		return 0, t.Type.unsupportedError("")
	}
	if len(t.Dims) > MaxDims {
		return 0, shapeErrorf("%d dimensions, at most %d allowed", len(t.Dims), MaxDims)
	}
	n := uint64(1)
	for i, d := range t.Dims {
		if d == 0 {
			return 0, shapeErrorf("dimension %d is 0", i)
		}
		hi, lo := bits.Mul64(n, d)
		if hi != 0 || lo > math.MaxInt64 {
			return 0, shapeErrorf("element count of dimensions %v overflows int64", t.Dims)
		}
		n = lo
	}
	ne0 := uint64(1)
	if len(t.Dims) > 0 {
		ne0 = t.Dims[0]
	}
	row, err := t.Type.RowSize(int64(ne0))
	if err != nil {
		return 0, err
	}
	hi, lo := bits.Mul64(uint64(row), n/ne0)
	if hi != 0 || lo > math.MaxInt64 {
		return 0, shapeErrorf("byte count of %s dimensions %v overflows int64", t.Type, t.Dims)
	}
	return lo, nil
}

// A File is a parsed GGUF file: its metadata and tensor index, and access
// to tensor data. Its exported fields describe the file; read them, but do
// not modify them, because Get and Tensor look entries up by their index
// in Metadata and Tensors.
//
// A File is safe for concurrent use, except that Close must not run
// concurrently with other methods.
type File struct {
	Version    uint32
	Metadata   []KV         // in file order
	Tensors    []TensorInfo // in file order
	Alignment  uint64       // of the data section and each tensor's offset
	DataOffset int64        // start of the data section in the file
	Size       int64        // of the file

	kv      map[string]int // key to index in Metadata
	tensors map[string]int // name to index in Tensors and entries
	entries []tensorEntry  // where each tensor's data is, checked by Parse
	r       io.ReaderAt    // tensor data when not mapped
	data    []byte         // the whole file, when mapped
	closer  func() error   // releases the mapping or file, if Open made it
	closed  bool

	wholeOnce sync.Once
	whole     bool // MappedWhole's answer, found once
}

// tensorEntry locates a tensor's data. It is private so that TensorData
// stays within the checked bounds whatever happens to Tensors.
type tensorEntry struct {
	start int64  // absolute offset of the data in the file
	size  uint64 // bytes of data
}

// Open opens and parses the GGUF file at path. Where the platform allows,
// the file is memory-mapped read-only and TensorData returns slices of the
// mapping without copying; otherwise TensorData reads each tensor from the
// file. Close releases the mapping or file. A mapped file must not be
// truncated while it is open: reading the lost pages would crash the
// program (SIGBUS), as it would in llama.cpp.
func Open(path string) (*File, error) {
	return open(path, true)
}

func open(path string, useMmap bool) (*File, error) {
	osf, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := osf.Stat()
	if err != nil {
		osf.Close()
		return nil, err
	}
	size := st.Size()
	if useMmap {
		if data, err := mmap(osf, size); err == nil {
			osf.Close() // the mapping outlives the descriptor
			f, err := Parse(bytes.NewReader(data), size)
			if err != nil {
				munmap(data)
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			f.data = data
			f.closer = func() error { return munmap(data) }
			return f, nil
		}
		// Fall back to reading, e.g. for an empty file or a platform
		// without mmap.
	}
	f, err := Parse(osf, size)
	if err != nil {
		osf.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.closer = osf.Close
	return f, nil
}

// Close releases the mapping or file that Open made. After Close, slices
// that TensorData returned from a mapping must not be used: the memory is
// gone. Metadata and tensor descriptions remain usable. Close of a File
// from Parse does not close its reader. Closing twice is not an error.
func (f *File) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	f.data = nil
	if f.closer != nil {
		return f.closer()
	}
	return nil
}

// Mapped reports whether TensorData returns slices of a memory mapping
// rather than copies.
func (f *File) Mapped() bool { return f.data != nil }

// Get returns the metadata value for key.
func (f *File) Get(key string) (Value, bool) {
	i, ok := f.kv[key]
	if !ok {
		return Value{}, false
	}
	return f.Metadata[i].Value, true
}

// Tensor returns the description of the named tensor.
func (f *File) Tensor(name string) (TensorInfo, bool) {
	i, ok := f.tensors[name]
	if !ok {
		return TensorInfo{}, false
	}
	t := f.Tensors[i]
	t.Dims = append([]uint64(nil), t.Dims...)
	return t, true
}

// TensorData returns the bytes of the named tensor's data, NumBytes long.
// For a mapped file the result is a read-only slice of the mapping: it
// must not be modified (writing to it faults), and it is valid only until
// Close. Otherwise the data is read into a new slice on every call.
func (f *File) TensorData(name string) ([]byte, error) {
	i, ok := f.tensors[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNoTensor, name)
	}
	e := f.entries[i]
	if f.closed {
		return nil, fmt.Errorf("%w: reading tensor %q", ErrClosed, name)
	}
	end := e.start + int64(e.size) // Parse checked that this lies within the file
	if f.data != nil {
		return f.data[e.start:end:end], nil
	}
	if e.size > math.MaxInt {
		return nil, fmt.Errorf("%w: tensor %q is %d bytes, too large for this platform", ErrUnsupported, name, e.size)
	}
	b := make([]byte, e.size)
	n, err := f.r.ReadAt(b, e.start)
	if n == len(b) {
		return b, nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: tensor %q: data at bytes [%d, %d) is cut short at %d", ErrFormat, name, e.start, end, e.start+int64(n))
	}
	return nil, fmt.Errorf("gguf: reading tensor %q: %w", name, err)
}

// Release tells the system that the process will not read b, a slice
// TensorData returned from the mapping, for a while: its pages leave the
// process's resident memory (they stay in the file cache) and are read
// again, with the same bytes, if b is used later. It does nothing for a
// file that is not mapped, a closed one, or a slice that is not of the
// mapping. Callers that keep a processed copy of a tensor (hlm's packed
// rows) use it so the tensor is not resident twice.
func (f *File) Release(b []byte) {
	if f.closed || f.data == nil || len(b) == 0 {
		return
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(f.data)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if p < base || p+uintptr(len(b)) > base+uintptr(len(f.data)) {
		return
	}
	// Whole pages only: those at the ends may hold other tensors' bytes,
	// which would be read back too, but only the pages b covers entirely
	// are sure not to be in use.
	page := uintptr(os.Getpagesize())
	lo := (p - base + page - 1) / page * page
	hi := (p - base + uintptr(len(b))) / page * page
	if lo < hi {
		dontNeed(f.data[lo:hi])
	}
}

// MappedWhole reports whether the file is mapped and the pages of it
// that the page cache holds are mapped in 2 MiB pages, as Open's advice
// asks (on Linux: mincore, then FilePmdMapped in /proc/self/smaps after
// touching each 2 MiB range that is cached; the pages not cached count as
// whole, since the advice brings them in whole). Pages cached earlier in
// 4 KiB pieces (read by another program, or before the advice) stay so,
// and decode reads them slower on some CPUs, where tensor copies the
// K-quant rows into huge pages of its own (Matrix.SetDataMappedWhole): a
// file mapped whole needs no copy. Found once, on the first call; false
// for a file that is read rather than mapped, after Close, or where it
// cannot be told.
func (f *File) MappedWhole() bool {
	f.wholeOnce.Do(func() {
		if !f.closed && f.data != nil {
			f.whole = mappedWhole(f.data)
		}
	})
	return f.whole
}

// Architecture returns general.architecture, such as "llama", or "" if it
// is missing or not a string.
func (f *File) Architecture() string {
	s, _ := f.String(KeyArchitecture)
	return s
}

// ArchKey returns the key for an architecture-specific parameter:
// ArchKey("context_length") is "llama.context_length" in a llama file.
func (f *File) ArchKey(suffix string) string {
	return f.Architecture() + "." + suffix
}

// Uint returns the value of key if it is an unsigned or non-negative
// signed integer.
func (f *File) Uint(key string) (uint64, error) {
	return lookup(f, key, "a non-negative integer", Value.Uint)
}

// Int returns the value of key if it is an integer that fits in int64.
func (f *File) Int(key string) (int64, error) {
	return lookup(f, key, "an integer", Value.Int)
}

// Float returns the value of key if it is a float or an integer.
func (f *File) Float(key string) (float64, error) {
	return lookup(f, key, "a number", Value.Float)
}

// String returns the value of key if it is a string.
func (f *File) String(key string) (string, error) {
	return lookup(f, key, "string", Value.String)
}

// Bool returns the value of key if it is a bool.
func (f *File) Bool(key string) (bool, error) {
	return lookup(f, key, "bool", Value.Bool)
}

// Strings returns the value of key if it is an array of strings.
func (f *File) Strings(key string) ([]string, error) {
	return lookup(f, key, "array of string", Value.Strings)
}

// Float32s returns the value of key if it is an array of float32.
func (f *File) Float32s(key string) ([]float32, error) {
	return lookup(f, key, "array of float32", Value.Float32s)
}

// Int32s returns the value of key if it is an array of int32.
func (f *File) Int32s(key string) ([]int32, error) {
	return lookup(f, key, "array of int32", Value.Int32s)
}

// lookup returns get of the value of key, with ErrMissingKey if there is
// none and ErrWrongType if get fails.
func lookup[T any](f *File, key, want string, get func(Value) (T, bool)) (T, error) {
	var zero T
	v, ok := f.Get(key)
	if !ok {
		return zero, fmt.Errorf("%w: %q", ErrMissingKey, key)
	}
	x, ok := get(v)
	if !ok {
		return zero, fmt.Errorf("%w: %q is %s %v, want %s", ErrWrongType, key, v.typeName(), v, want)
	}
	return x, nil
}

// IsFile reports whether the file at path begins with GGUF's magic (false
// when it cannot be read).
func IsFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [len(Magic)]byte
	_, err = io.ReadFull(f, magic[:])
	return err == nil && string(magic[:]) == Magic
}
