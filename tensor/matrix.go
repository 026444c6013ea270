package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"
)

// Matrix is a row-major weight matrix of Rows × Cols elements in one storage
// type. F32 matrices keep their values in F32; every other type keeps its raw
// little-endian bytes in Data (possibly a slice of a memory-mapped file).
type Matrix struct {
	Type       DType
	Rows, Cols int
	F32        []float32 // Type == F32: Rows*Cols values
	Data       []byte    // other types: Rows*RowBytes bytes
	rowBytes   int

	packed  atomic.Pointer[[]byte] // its rows in memory of its own (pack.go: packed for the AVX-512 tiles, or copied), once made
	release func([]byte)           // drops Data's pages while they are not read (SetDataRelease)
	whole   func() bool            // Data's pages are mapped in 2 MiB pages already (SetDataMappedWhole)

	layout  atomic.Uint32          // the layout of that copy (copyLayout), set when it is queued (moveToOwn); 0: none
	own     atomic.Pointer[[]byte] // that memory, while the copy is made (moveGroups)
	ownUpTo atomic.Int64           // how many bytes of own are made (whole groups)
}

// SetDataRelease gives m a function that may drop the memory pages of its
// Data while nothing reads them, as long as reading Data afterwards gives
// the same bytes (as a read-only file mapping's pages do: gguf's
// File.Release). The matrix calls it when a copy it keeps makes Data cold
// (ReleaseData). Set it before the first product.
func (m *Matrix) SetDataRelease(release func([]byte)) { m.release = release }

// SetDataMappedWhole gives m a function that reports whether the mapped
// file's pages under Data are held in 2 MiB pages (gguf's
// File.MappedWhole): the level that copies the K-quant rows of a mapped
// file into huge pages of its own for speed (avx512-zen5: pack.go,
// copyMin) then reads them in place, and starts without the copy. It is
// asked once, at m's first product there. Set it before the first
// product.
func (m *Matrix) SetDataMappedWhole(whole func() bool) { m.whole = whole }

// ReleaseData lets Data's pages go (SetDataRelease) if m computes its
// products from packed rows of its own, so they are not resident twice;
// code that has just read Data (a fingerprint) calls it again. Otherwise
// it does nothing.
func (m *Matrix) ReleaseData() {
	if m.release != nil && m.packed.Load() != nil {
		m.release(m.Data)
	}
}

// NewF32 wraps values (len rows*cols) as an F32 matrix without copying.
func NewF32(rows, cols int, values []float32) (*Matrix, error) {
	if rows < 0 || cols < 0 || len(values) != rows*cols {
		return nil, fmt.Errorf("tensor: %d values for a %d×%d matrix", len(values), rows, cols)
	}
	return &Matrix{Type: F32, Rows: rows, Cols: cols, F32: values, rowBytes: 4 * cols}, nil
}

// NewRaw wraps data, the little-endian storage of a rows × cols matrix of type
// t, without copying. An F32 matrix is viewed in place when data is suitably
// aligned on a little-endian machine and copied otherwise.
func NewRaw(t DType, rows, cols int, data []byte) (*Matrix, error) {
	rb, err := t.RowBytes(cols)
	if err != nil {
		return nil, err
	}
	if rows < 0 || int64(len(data)) != int64(rows)*int64(rb) {
		return nil, fmt.Errorf("tensor: %d bytes for a %d×%d %v matrix (want %d)", len(data), rows, cols, t, int64(rows)*int64(rb))
	}
	if t == F32 {
		return NewF32(rows, cols, BytesToF32(data))
	}
	return &Matrix{Type: t, Rows: rows, Cols: cols, Data: data, rowBytes: rb}, nil
}

// BytesToF32 returns the little-endian float32 values in b, sharing memory
// with b when the machine is little-endian and b is 4-byte aligned.
func BytesToF32(b []byte) []float32 {
	n := len(b) / 4
	if n == 0 {
		return []float32{}
	}
	if littleEndian && uintptr(unsafe.Pointer(&b[0]))%4 == 0 {
		return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n)
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// RowBytes is the storage size of one row.
func (m *Matrix) RowBytes() int { return m.rowBytes }

// row returns the raw storage of row i (not for F32).
func (m *Matrix) row(i int) []byte {
	return m.Data[i*m.rowBytes : (i+1)*m.rowBytes]
}

// Row writes row i as float32 values into dst (len Cols).
func (m *Matrix) Row(dst []float32, i int) {
	if m.Type == F32 {
		copy(dst, m.F32[i*m.Cols:(i+1)*m.Cols])
		return
	}
	DequantizeRow(dst[:m.Cols], m.Type, m.row(i))
}

// Bytes returns the little-endian storage of the whole matrix (a copy for
// F32).
func (m *Matrix) Bytes() []byte {
	if m.Type != F32 {
		return m.Data
	}
	return EncodeRow(make([]byte, 0, 4*len(m.F32)), F32, m.F32)
}

// CheckConvert returns the error Convert(t) would return, without
// converting: t is not a type rows can be encoded as (K-quants are read
// only), or Cols is not a multiple of its block size.
func (m *Matrix) CheckConvert(t DType) error {
	if t == Q4_K || t == Q6_K {
		return fmt.Errorf("tensor: converting to %v is not supported (K-quants are read only)", t)
	}
	_, err := t.RowBytes(m.Cols)
	return err
}

// Convert returns a copy of m stored as type t (F32, F16, BF16, Q8_0, Q4_0
// or Q5_0).
// Converting to a block type requires Cols to be a multiple of the block size.
func (m *Matrix) Convert(t DType) (*Matrix, error) {
	if err := m.CheckConvert(t); err != nil {
		return nil, err
	}
	row := make([]float32, m.Cols)
	if t == F32 {
		out := make([]float32, m.Rows*m.Cols)
		for i := 0; i < m.Rows; i++ {
			m.Row(out[i*m.Cols:(i+1)*m.Cols], i)
		}
		return NewF32(m.Rows, m.Cols, out)
	}
	rb, _ := t.RowBytes(m.Cols)
	data := make([]byte, 0, m.Rows*rb)
	for i := 0; i < m.Rows; i++ {
		m.Row(row, i)
		data = EncodeRow(data, t, row)
	}
	return NewRaw(t, m.Rows, m.Cols, data)
}

// EncodeRow appends the storage of x in type t to dst.
func EncodeRow(dst []byte, t DType, x []float32) []byte {
	switch t {
	case F32:
		for _, v := range x {
			dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(v))
		}
	case F16:
		for _, v := range x {
			dst = binary.LittleEndian.AppendUint16(dst, F32ToF16(v))
		}
	case BF16:
		for _, v := range x {
			dst = binary.LittleEndian.AppendUint16(dst, F32ToBF16(v))
		}
	case Q8_0:
		dst = QuantizeQ8_0(dst, x)
	case Q4_0:
		dst = QuantizeQ4_0(dst, x)
	case Q5_0:
		dst = QuantizeQ5_0(dst, x)
	default:
		panic("tensor: EncodeRow of unknown dtype " + t.String())
	}
	return dst
}
