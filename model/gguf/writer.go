package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// A Writer builds a GGUF version 3 file: add metadata and tensors, then
// call WriteTo. Metadata is written in the order added and tensors are laid
// out in the order added, each at an offset that is a multiple of the
// alignment (general.alignment if set, else DefaultAlignment).
//
// Every Add method checks its arguments and records the first error, which
// WriteTo then returns, so a sequence of Adds needs only one check. AddKV
// and AddTensor also return the error for callers who want to stop early.
// The zero Writer is ready to use.
type Writer struct {
	kvs     []KV
	keys    map[string]bool
	tensors []pending
	names   map[string]bool
	align   uint64 // 0 means DefaultAlignment
	err     error
}

var _ io.WriterTo = (*Writer)(nil)

// pending is a tensor waiting to be written.
type pending struct {
	info  TensorInfo
	size  uint64
	data  []byte                  // the data, or
	write func(w io.Writer) error // a function that writes it
}

// NewWriter returns an empty Writer.
func NewWriter() *Writer { return new(Writer) }

// Err returns the first error recorded by an Add method.
func (w *Writer) Err() error { return w.err }

func (w *Writer) fail(err error) error {
	if w.err == nil {
		w.err = err
	}
	return err
}

// AddKV adds a metadata entry. Keys must be non-empty, at most 65535 bytes
// and unique. A general.alignment entry must be a uint32 power of two; it
// sets the alignment of the data.
func (w *Writer) AddKV(key string, v Value) error {
	switch {
	case key == "":
		return w.fail(fmt.Errorf("%w: empty metadata key", ErrFormat))
	case len(key) > 1<<16-1:
		return w.fail(fmt.Errorf("%w: metadata key %q is %d bytes, more than 65535", ErrFormat, short(key), len(key)))
	case w.keys[key]:
		return w.fail(fmt.Errorf("%w: metadata key %q added twice", ErrDuplicate, key))
	}
	if err := v.check(); err != nil {
		return w.fail(fmt.Errorf("metadata key %q: %w", key, err))
	}
	if key == KeyAlignment {
		a, ok := v.bits, v.Type == ValueUint32
		if !ok || a == 0 || a&(a-1) != 0 {
			return w.fail(fmt.Errorf("%w: %s must be a uint32 power of two, not %s %v", ErrFormat, KeyAlignment, v.typeName(), v))
		}
		w.align = a
	}
	if w.keys == nil {
		w.keys = make(map[string]bool)
	}
	w.keys[key] = true
	w.kvs = append(w.kvs, KV{Key: key, Value: v})
	return nil
}

// AddString adds a string metadata entry.
func (w *Writer) AddString(key, s string) { w.AddKV(key, StringValue(s)) }

// AddBool adds a bool metadata entry.
func (w *Writer) AddBool(key string, b bool) { w.AddKV(key, BoolValue(b)) }

// AddUint32 adds a uint32 metadata entry.
func (w *Writer) AddUint32(key string, x uint32) { w.AddKV(key, Uint32Value(x)) }

// AddInt32 adds an int32 metadata entry.
func (w *Writer) AddInt32(key string, x int32) { w.AddKV(key, Int32Value(x)) }

// AddUint64 adds a uint64 metadata entry.
func (w *Writer) AddUint64(key string, x uint64) { w.AddKV(key, Uint64Value(x)) }

// AddFloat32 adds a float32 metadata entry.
func (w *Writer) AddFloat32(key string, x float32) { w.AddKV(key, Float32Value(x)) }

// AddStrings adds an array-of-string metadata entry.
func (w *Writer) AddStrings(key string, ss []string) { w.AddKV(key, ArrayOf(ss)) }

// AddFloat32s adds an array-of-float32 metadata entry.
func (w *Writer) AddFloat32s(key string, xs []float32) { w.AddKV(key, ArrayOf(xs)) }

// AddInt32s adds an array-of-int32 metadata entry.
func (w *Writer) AddInt32s(key string, xs []int32) { w.AddKV(key, ArrayOf(xs)) }

// AddTensor adds a tensor with the given dimensions (innermost first) and
// type. len(data) must be the size the shape and type imply. The Writer
// keeps data, not a copy, until WriteTo.
func (w *Writer) AddTensor(name string, dims []uint64, typ Type, data []byte) error {
	p, err := w.tensor(name, dims, typ)
	if err != nil {
		return w.fail(err)
	}
	if uint64(len(data)) != p.size {
		return w.fail(shapeErrorf("tensor %q: %d bytes of data, %s %v needs %d", name, len(data), typ, dims, p.size))
	}
	p.data = data
	w.tensors = append(w.tensors, p)
	return nil
}

// AddTensorFunc adds a tensor whose data write produces during WriteTo,
// so that a converter need not hold every tensor in memory. write must
// write exactly the size the shape and type imply.
func (w *Writer) AddTensorFunc(name string, dims []uint64, typ Type, write func(w io.Writer) error) error {
	p, err := w.tensor(name, dims, typ)
	if err != nil {
		return w.fail(err)
	}
	p.write = write
	w.tensors = append(w.tensors, p)
	return nil
}

// tensor checks a tensor's name and shape and reserves the name.
func (w *Writer) tensor(name string, dims []uint64, typ Type) (pending, error) {
	switch {
	case name == "":
		return pending{}, fmt.Errorf("%w: empty tensor name", ErrFormat)
	case len(name) > MaxTensorNameLen:
		return pending{}, fmt.Errorf("%w: tensor name %q is %d bytes, more than %d", ErrFormat, short(name), len(name), MaxTensorNameLen)
	case w.names[name]:
		return pending{}, fmt.Errorf("%w: tensor %q added twice", ErrDuplicate, name)
	case len(dims) == 0:
		return pending{}, shapeErrorf("tensor %q has no dimensions", name)
	}
	info := TensorInfo{Name: name, Dims: slices.Clone(dims), Type: typ}
	size, err := info.size()
	if se := shapeError(""); errors.As(err, &se) {
		return pending{}, shapeErrorf("tensor %q: %s", name, string(se))
	} else if err != nil {
		return pending{}, err
	}
	if w.names == nil {
		w.names = make(map[string]bool)
	}
	w.names[name] = true
	return pending{info: info, size: size}, nil
}

// WriteTo writes the file to out and returns the number of bytes written.
// It may be called more than once.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	if w.err != nil {
		return 0, w.err
	}
	align := w.align
	if align == 0 {
		align = DefaultAlignment
	}
	pad := func(n uint64) uint64 { return (align - n%align) % align }

	// Header, metadata and tensor index.
	var h []byte
	h = append(h, Magic...)
	h = binary.LittleEndian.AppendUint32(h, Version)
	h = binary.LittleEndian.AppendUint64(h, uint64(len(w.tensors)))
	h = binary.LittleEndian.AppendUint64(h, uint64(len(w.kvs)))
	for _, kv := range w.kvs {
		h = appendString(h, kv.Key)
		h = binary.LittleEndian.AppendUint32(h, uint32(kv.Value.Type))
		h = appendValue(h, kv.Value)
	}
	var offset uint64
	for _, t := range w.tensors {
		h = appendString(h, t.info.Name)
		h = binary.LittleEndian.AppendUint32(h, uint32(len(t.info.Dims)))
		for _, d := range t.info.Dims {
			h = binary.LittleEndian.AppendUint64(h, d)
		}
		h = binary.LittleEndian.AppendUint32(h, uint32(t.info.Type))
		h = binary.LittleEndian.AppendUint64(h, offset)
		offset += t.size + pad(t.size)
	}

	// Data section: each tensor followed by padding to the alignment.
	cw := &countingWriter{w: out}
	bw := bufio.NewWriterSize(cw, 64<<10)
	bw.Write(h)
	writeZeros(bw, pad(uint64(len(h))))
	for _, t := range w.tensors {
		if t.write == nil {
			bw.Write(t.data)
		} else {
			lw := &limitedWriter{w: bw, n: t.size}
			if err := t.write(lw); err != nil {
				return cw.n, fmt.Errorf("gguf: writing tensor %q: %w", t.info.Name, err)
			}
			if lw.n != 0 {
				return cw.n, shapeErrorf("tensor %q: data function wrote %d bytes, want %d", t.info.Name, t.size-lw.n, t.size)
			}
		}
		writeZeros(bw, pad(t.size))
	}
	if err := bw.Flush(); err != nil {
		return cw.n, fmt.Errorf("gguf: %w", err)
	}
	return cw.n, nil
}

var zeros [4096]byte

// writeZeros writes n zero bytes to w, which records any error.
func writeZeros(w *bufio.Writer, n uint64) {
	for n > 0 {
		k := min(n, uint64(len(zeros)))
		w.Write(zeros[:k])
		n -= k
	}
}

// appendString appends a GGUF string: a uint64 length and the bytes.
func appendString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}

// appendValue appends the encoding of v, without its type.
func appendValue(b []byte, v Value) []byte {
	switch v.Type {
	case ValueString:
		return appendString(b, v.str)
	case ValueArray:
		a := v.arr
		b = binary.LittleEndian.AppendUint32(b, uint32(a.elem))
		b = binary.LittleEndian.AppendUint64(b, uint64(a.n))
		if a.elem == ValueString {
			for _, s := range a.strs {
				b = appendString(b, s)
			}
			return b
		}
		return append(b, a.raw...)
	}
	return appendScalar(b, v.Type, v.bits)
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// limitedWriter accepts at most n more bytes.
type limitedWriter struct {
	w io.Writer
	n uint64
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if uint64(len(p)) > l.n {
		return 0, shapeErrorf("more data than the tensor's shape and type imply")
	}
	n, err := l.w.Write(p)
	l.n -= uint64(n)
	return n, err
}
