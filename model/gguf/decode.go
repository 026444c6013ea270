package gguf

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
)

// maxPrealloc caps the capacity allocated from a count in the file before
// the entries are read.
const maxPrealloc = 1 << 10

// Sizes of the smallest possible encodings, used to bound counts read from
// the file by the bytes that remain.
const (
	headerSize        = 4 + 4 + 8 + 8 // magic, version, tensor count, metadata count
	minKVSize         = 8 + 4 + 1     // empty key, value type, one-byte value
	minTensorInfoSize = 8 + 4 + 4 + 8 // empty name, n_dims = 0, type, offset
)

// Parse decodes the header, metadata and tensor index of the GGUF file of
// the given size that r holds, and checks that every tensor's data lies
// within the file. It reads only up to the data section. The returned File
// reads tensor data from r, which must stay valid until the File is no
// longer used; Close does not close r.
//
// Every count and length in the file is checked against the bytes that
// remain before anything is allocated, so the memory Parse uses is bounded
// by a small multiple of size, and a size larger than what r holds only
// leads to an "unexpected end of data" error.
func Parse(r io.ReaderAt, size int64) (*File, error) {
	if size < 0 {
		return nil, fmt.Errorf("%w: negative size %d", ErrFormat, size)
	}
	d := &decoder{
		r:    bufio.NewReaderSize(io.NewSectionReader(r, 0, size), int(min(size, 64<<10))),
		size: size,
	}
	f := &File{
		Alignment: DefaultAlignment,
		Size:      size,
		r:         r,
	}
	if err := d.decode(f); err != nil {
		return nil, err
	}
	return f, nil
}

// decoder reads the sequential part of a file, up to the data section.
type decoder struct {
	r    *bufio.Reader
	pos  int64 // offset of the next byte r returns
	size int64 // bytes in the file
	// The item being decoded, for error messages: a kind ("tensor"), its
	// index, and its name once known. Formatted only on error.
	item  string
	index uint64
	name  *string

	nKV, nTensors uint64 // counts from the header
	buf           [8]byte
}

func (d *decoder) decode(f *File) error {
	if d.size < headerSize {
		return fmt.Errorf("%w: file is %d bytes, shorter than the %d-byte header", ErrFormat, d.size, headerSize)
	}
	magic, err := d.fixed(4)
	if err != nil {
		return err
	}
	if string(magic) != Magic {
		return fmt.Errorf("%w: bad magic %q, want %q", ErrFormat, magic, Magic)
	}
	if f.Version, err = d.u32(); err != nil {
		return err
	}
	switch v := f.Version; {
	case v == 2 || v == 3:
	case v == 1:
		return fmt.Errorf("%w: GGUF version 1 (32-bit counts) is not supported; re-convert the model", ErrVersion)
	case bits.ReverseBytes32(v) == 2 || bits.ReverseBytes32(v) == 3:
		return fmt.Errorf("%w: big-endian GGUF file (version %d byte-swapped)", ErrUnsupported, bits.ReverseBytes32(v))
	default:
		return fmt.Errorf("%w: GGUF version %d, want 2 or 3", ErrVersion, v)
	}
	nTensors, err := d.u64()
	if err != nil {
		return err
	}
	nKV, err := d.u64()
	if err != nil {
		return err
	}
	left := uint64(d.left())
	if nKV > left/minKVSize || nTensors > left/minTensorInfoSize ||
		nKV*minKVSize+nTensors*minTensorInfoSize > left {
		return d.errorf(8, "%d metadata entries and %d tensors cannot fit in the %d bytes left", nKV, nTensors, left)
	}

	// Counts only bound, and do not size, allocations: the file must
	// actually hold the entries before memory is spent on them.
	d.nKV, d.nTensors = nKV, nTensors
	f.Metadata = make([]KV, 0, min(nKV, maxPrealloc))
	f.kv = make(map[string]int, min(nKV, maxPrealloc))
	for i := range nKV {
		if err := d.kv(f, i); err != nil {
			return err
		}
	}
	d.item = ""
	if err := f.readAlignment(); err != nil {
		return err
	}

	f.Tensors = make([]TensorInfo, 0, min(nTensors, maxPrealloc))
	f.entries = make([]tensorEntry, 0, min(nTensors, maxPrealloc))
	f.tensors = make(map[string]int, min(nTensors, maxPrealloc))
	for i := range nTensors {
		if err := d.tensorInfo(f, i); err != nil {
			return err
		}
	}
	d.item = ""
	return f.layout(uint64(d.pos))
}

// kv decodes metadata entry i.
func (d *decoder) kv(f *File, i uint64) error {
	d.item, d.index, d.name = "metadata entry", i, nil
	at := d.pos
	key, err := d.str()
	if err != nil {
		return err
	}
	d.name = &key
	if _, dup := f.kv[key]; dup {
		return withSentinel{d.errorf(at, "duplicate key"), ErrDuplicate}
	}
	t, err := d.u32()
	if err != nil {
		return err
	}
	v, err := d.value(ValueType(t))
	if err != nil {
		return err
	}
	f.Metadata = appendCapped(f.Metadata, KV{Key: key, Value: v}, d.nKV)
	f.kv[key] = len(f.Metadata) - 1
	return nil
}

// value decodes a metadata value of type t.
func (d *decoder) value(t ValueType) (Value, error) {
	at := d.pos
	switch {
	case t == ValueString:
		s, err := d.str()
		return Value{Type: t, str: s}, err
	case t == ValueArray:
		a, err := d.array()
		return Value{Type: t, arr: a}, err
	case t.valid():
		b, err := d.fixed(t.size())
		if err != nil {
			return Value{}, err
		}
		if t == ValueBool && b[0] > 1 {
			return Value{}, d.errorf(at, "bool value %d is neither 0 nor 1", b[0])
		}
		return Value{Type: t, bits: scalarBits(t, b)}, nil
	}
	return Value{}, d.errorf(at-4, "unknown value type %d", uint32(t))
}

// array decodes an array value: element type, count and elements.
func (d *decoder) array() (*array, error) {
	at := d.pos
	elem, n, err := d.arrayHeader()
	if err != nil {
		return nil, err
	}
	a := &array{elem: elem, n: int(n)}
	switch elem {
	case ValueString:
		// Allocated in full: n ≤ d.left()/8, so this is at most twice the
		// bytes left, and only one top-level array is decoded at a time.
		a.strs = make([]string, n)
		for i := range a.strs {
			if a.strs[i], err = d.str(); err != nil {
				return nil, err
			}
		}
	case ValueArray:
		for range n {
			if a.raw, err = d.rawArray(a.raw, 1); err != nil {
				return nil, err
			}
		}
	default:
		if a.raw, err = d.appendBytes(nil, n*uint64(elem.size())); err != nil {
			return nil, err
		}
		if err := d.checkBools(elem, a.raw, at+12); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// rawArray checks the encoding of an array nested depth deep and appends
// it to buf.
func (d *decoder) rawArray(buf []byte, depth int) ([]byte, error) {
	at := d.pos
	if depth >= MaxArrayDepth {
		return nil, d.errorf(at, "arrays nested more than %d deep", MaxArrayDepth)
	}
	elem, n, err := d.arrayHeader()
	if err != nil {
		return nil, err
	}
	buf = d.grow(buf, 12)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(elem))
	buf = binary.LittleEndian.AppendUint64(buf, n)
	switch elem {
	case ValueString:
		for range n {
			at := d.pos
			l, err := d.u64()
			if err != nil {
				return nil, err
			}
			if l > uint64(d.left()) {
				return nil, d.errorf(at, "string length %d exceeds the %d bytes left", l, d.left())
			}
			buf = binary.LittleEndian.AppendUint64(d.grow(buf, 8), l)
			if buf, err = d.appendBytes(buf, l); err != nil {
				return nil, err
			}
		}
	case ValueArray:
		for range n {
			if buf, err = d.rawArray(buf, depth+1); err != nil {
				return nil, err
			}
		}
	default:
		start := len(buf)
		if buf, err = d.appendBytes(buf, n*uint64(elem.size())); err != nil {
			return nil, err
		}
		if err := d.checkBools(elem, buf[start:], at+12); err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// arrayHeader reads an array's element type and count, and checks that
// the bytes left can hold that many elements.
func (d *decoder) arrayHeader() (ValueType, uint64, error) {
	at := d.pos
	t, err := d.u32()
	if err != nil {
		return 0, 0, err
	}
	elem := ValueType(t)
	if !elem.valid() {
		return 0, 0, d.errorf(at, "unknown array element type %d", t)
	}
	n, err := d.u64()
	if err != nil {
		return 0, 0, err
	}
	if n > uint64(d.left())/uint64(elem.minEncodedSize()) {
		return 0, 0, d.errorf(at, "array of %d %s elements cannot fit in the %d bytes left", n, elem, d.left())
	}
	if n > math.MaxInt {
		return 0, 0, d.errorf(at, "array of %d elements is too large for this platform", n)
	}
	return elem, n, nil
}

// checkBools checks that the elements of an array of bool that starts at
// byte at are 0 or 1.
func (d *decoder) checkBools(elem ValueType, b []byte, at int64) error {
	if elem != ValueBool {
		return nil
	}
	for i, x := range b {
		if x > 1 {
			return d.errorf(at+int64(i), "bool element %d is %d, neither 0 nor 1", i, x)
		}
	}
	return nil
}

// tensorInfo decodes entry i of the tensor index and checks its shape and
// type.
func (d *decoder) tensorInfo(f *File, i uint64) error {
	d.item, d.index, d.name = "tensor", i, nil
	at := d.pos
	name, err := d.str()
	if err != nil {
		return err
	}
	d.name = &name
	if _, dup := f.tensors[name]; dup {
		return withSentinel{d.errorf(at, "duplicate tensor name"), ErrDuplicate}
	}
	nDims, err := d.u32()
	if err != nil {
		return err
	}
	if nDims > MaxDims {
		return d.errorf(d.pos-4, "%d dimensions, at most %d allowed", nDims, MaxDims)
	}
	t := TensorInfo{Name: name, Dims: make([]uint64, nDims)}
	for j := range t.Dims {
		if t.Dims[j], err = d.u64(); err != nil {
			return err
		}
		if t.Dims[j] == 0 {
			return d.errorf(d.pos-8, "dimension %d is 0", j)
		}
	}
	typ, err := d.u32()
	if err != nil {
		return err
	}
	t.Type = Type(typ)
	if t.Offset, err = d.u64(); err != nil {
		return err
	}
	if !t.Type.Known() {
		return t.Type.unsupportedError(d.context())
	}
	n, err := t.size()
	if err != nil {
		if se := shapeError(""); errors.As(err, &se) {
			return withSentinel{d.errorf(at, "%s", string(se)), ErrShape}
		}
		return err // not reached: the type is known
	}
	if t.Offset%f.Alignment != 0 {
		return d.errorf(d.pos-8, "data offset %d is not a multiple of the alignment %d", t.Offset, f.Alignment)
	}
	f.Tensors = appendCapped(f.Tensors, t, d.nTensors)
	f.tensors[name] = len(f.entries)
	f.entries = appendCapped(f.entries, tensorEntry{size: n}, d.nTensors)
	return nil
}

// readAlignment sets f.Alignment from general.alignment, if present.
func (f *File) readAlignment() error {
	v, ok := f.Get(KeyAlignment)
	if !ok {
		return nil
	}
	if v.Type != ValueUint32 {
		return fmt.Errorf("%w: %s is %s, want uint32", ErrFormat, KeyAlignment, v.typeName())
	}
	if a := v.bits; a == 0 || a&(a-1) != 0 {
		return fmt.Errorf("%w: %s %d is not a power of two", ErrFormat, KeyAlignment, a)
	}
	f.Alignment = v.bits
	return nil
}

// layout places the data section after the tensor index, which ends at
// byte end, and checks that every tensor lies within the file and that no
// two overlap.
func (f *File) layout(end uint64) error {
	data := (end + f.Alignment - 1) &^ (f.Alignment - 1) // cannot overflow: end < 2⁶³, alignment ≤ 2³¹
	if data > math.MaxInt64 {
		return fmt.Errorf("%w: data section offset %d overflows", ErrFormat, data)
	}
	f.DataOffset = int64(data)
	size := uint64(f.Size)
	for i, t := range f.Tensors {
		e := &f.entries[i]
		if data > size || t.Offset > size-data || e.size > size-data-t.Offset {
			return fmt.Errorf("%w: tensor %q: data at offset %d+%d (%d bytes) extends past the end of the %d-byte file",
				ErrFormat, short(t.Name), data, t.Offset, e.size, size)
		}
		e.start = int64(data + t.Offset)
	}
	order := make([]int, len(f.entries)) // tensor indices by data offset
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(f.entries[a].start, f.entries[b].start) })
	for i := 1; i < len(order); i++ {
		p, q := f.entries[order[i-1]], f.entries[order[i]]
		if p.start+int64(p.size) > q.start {
			return fmt.Errorf("%w: tensors %q and %q overlap: [%d, %d) and [%d, %d)", ErrFormat,
				short(f.Tensors[order[i-1]].Name), short(f.Tensors[order[i]].Name),
				p.start, p.start+int64(p.size), q.start, q.start+int64(q.size))
		}
	}
	return nil
}

func (d *decoder) left() int64 { return d.size - d.pos }

// errorf returns an ErrFormat error about the item being decoded, which
// failed at byte at.
func (d *decoder) errorf(at int64, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if d.item == "" {
		return fmt.Errorf("%w: at byte %d: %s", ErrFormat, at, msg)
	}
	return fmt.Errorf("%w: %s: at byte %d: %s", ErrFormat, d.context(), at, msg)
}

// context describes the item being decoded, such as `tensor 3 "output.weight"`.
func (d *decoder) context() string {
	if d.name == nil {
		return fmt.Sprintf("%s %d", d.item, d.index)
	}
	return fmt.Sprintf("%s %d %q", d.item, d.index, short(*d.name))
}

// readError converts an error from the underlying reader.
func (d *decoder) readError(at int64, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return d.errorf(at, "unexpected end of data")
	}
	return fmt.Errorf("gguf: reading byte %d: %w", at, err)
}

// fixed reads n ≤ 8 bytes into a scratch buffer.
func (d *decoder) fixed(n int) ([]byte, error) {
	if int64(n) > d.left() {
		return nil, d.errorf(d.pos, "unexpected end of file: need %d bytes, %d left", n, d.left())
	}
	b := d.buf[:n]
	if _, err := io.ReadFull(d.r, b); err != nil {
		return nil, d.readError(d.pos, err)
	}
	d.pos += int64(n)
	return b, nil
}

func (d *decoder) u32() (uint32, error) {
	b, err := d.fixed(4)
	if err != nil {
		return 0, err
	}
	return uint32(scalarBits(ValueUint32, b)), nil
}

func (d *decoder) u64() (uint64, error) {
	b, err := d.fixed(8)
	if err != nil {
		return 0, err
	}
	return scalarBits(ValueUint64, b), nil
}

// appendBytes reads n bytes and appends them to buf, after checking that
// the file holds them.
func (d *decoder) appendBytes(buf []byte, n uint64) ([]byte, error) {
	if n > uint64(d.left()) {
		return nil, d.errorf(d.pos, "%d bytes needed, %d left", n, d.left())
	}
	if n > uint64(math.MaxInt-len(buf)) {
		return nil, d.errorf(d.pos, "%d bytes are too many for this platform", n)
	}
	buf = d.grow(buf, int(n))
	k := len(buf)
	buf = buf[:k+int(n)]
	if _, err := io.ReadFull(d.r, buf[k:]); err != nil {
		return nil, d.readError(d.pos, err)
	}
	d.pos += int64(n)
	return buf, nil
}

// appendCapped appends x to s, doubling the capacity when s is full, but
// never beyond limit, the number of elements s can grow to. (append grows
// large slices by only a quarter, which allocates several times the final
// size in total.)
func appendCapped[T any](s []T, x T, limit uint64) []T {
	if len(s) == cap(s) {
		c := max(min(uint64(2*cap(s)), limit), uint64(len(s))+1)
		ns := make([]T, len(s), c)
		copy(ns, s)
		s = ns
	}
	return append(s, x)
}

// grow returns buf with room for n more bytes. Capacity doubles, as
// appending one element after another needs, but never exceeds what the
// rest of the file could fill.
func (d *decoder) grow(buf []byte, n int) []byte {
	if cap(buf)-len(buf) >= n {
		return buf
	}
	c := max(2*cap(buf), 256)
	c = int(min(int64(c), int64(len(buf))+d.left())) // d.left() ≥ n, checked by callers
	c = max(c, len(buf)+n)
	nb := make([]byte, len(buf), c)
	copy(nb, buf)
	return nb
}

// str reads a string: a uint64 length and that many bytes.
func (d *decoder) str() (string, error) {
	at := d.pos
	n, err := d.u64()
	if err != nil {
		return "", err
	}
	if n > uint64(d.left()) {
		return "", d.errorf(at, "string length %d exceeds the %d bytes left", n, d.left())
	}
	if n <= uint64(d.r.Size()) { // short strings: copy once, from the buffer
		b, err := d.r.Peek(int(n))
		if err != nil {
			return "", d.readError(d.pos, err)
		}
		s := string(b)
		d.r.Discard(len(b))
		d.pos += int64(n)
		return s, nil
	}
	b, err := d.appendBytes(nil, n)
	return string(b), err
}

// maxNameInError is how much of a key or tensor name error messages quote.
const maxNameInError = 64

// short truncates s for an error message.
func short(s string) string {
	if len(s) <= maxNameInError {
		return s
	}
	return s[:maxNameInError] + "..."
}
