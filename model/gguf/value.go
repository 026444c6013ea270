package gguf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// ValueType is the type of a metadata value, numbered as in the GGUF
// specification.
type ValueType uint32

// The metadata value types.
const (
	ValueUint8   ValueType = 0
	ValueInt8    ValueType = 1
	ValueUint16  ValueType = 2
	ValueInt16   ValueType = 3
	ValueUint32  ValueType = 4
	ValueInt32   ValueType = 5
	ValueFloat32 ValueType = 6
	ValueBool    ValueType = 7
	ValueString  ValueType = 8
	ValueArray   ValueType = 9
	ValueUint64  ValueType = 10
	ValueInt64   ValueType = 11
	ValueFloat64 ValueType = 12
)

var valueTypeNames = [...]string{
	"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
	"bool", "string", "array", "uint64", "int64", "float64",
}

// String returns the specification's name for t, such as "uint32".
func (t ValueType) String() string {
	if int64(t) < int64(len(valueTypeNames)) {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("valuetype(%d)", uint32(t))
}

func (t ValueType) valid() bool { return t <= ValueFloat64 }

// size returns the encoded size of a scalar of type t, or 0 for strings,
// arrays and unknown types.
func (t ValueType) size() int {
	switch t {
	case ValueUint8, ValueInt8, ValueBool:
		return 1
	case ValueUint16, ValueInt16:
		return 2
	case ValueUint32, ValueInt32, ValueFloat32:
		return 4
	case ValueUint64, ValueInt64, ValueFloat64:
		return 8
	}
	return 0
}

func (t ValueType) signed() bool {
	return t == ValueInt8 || t == ValueInt16 || t == ValueInt32 || t == ValueInt64
}

func (t ValueType) unsigned() bool {
	return t == ValueUint8 || t == ValueUint16 || t == ValueUint32 || t == ValueUint64
}

// minEncodedSize is the fewest bytes an array element of type t can occupy:
// a string is at least its length, an array at least its element type and
// count. Decoders use it to bound element counts by the bytes left.
func (t ValueType) minEncodedSize() int64 {
	switch t {
	case ValueString:
		return 8
	case ValueArray:
		return 4 + 8
	}
	return int64(t.size())
}

// A Value is one metadata value. The zero Value is uint8 0. Values are
// immutable; accessors return copies of slices.
type Value struct {
	Type ValueType

	bits uint64 // scalars: the encoded bits, zero-extended
	str  string // ValueString
	arr  *array // ValueArray
}

// KV is one metadata key-value pair.
type KV struct {
	Key   string
	Value Value
}

// Uint8Value returns a uint8 value.
func Uint8Value(x uint8) Value { return Value{Type: ValueUint8, bits: uint64(x)} }

// Int8Value returns an int8 value.
func Int8Value(x int8) Value { return Value{Type: ValueInt8, bits: uint64(uint8(x))} }

// Uint16Value returns a uint16 value.
func Uint16Value(x uint16) Value { return Value{Type: ValueUint16, bits: uint64(x)} }

// Int16Value returns an int16 value.
func Int16Value(x int16) Value { return Value{Type: ValueInt16, bits: uint64(uint16(x))} }

// Uint32Value returns a uint32 value.
func Uint32Value(x uint32) Value { return Value{Type: ValueUint32, bits: uint64(x)} }

// Int32Value returns an int32 value.
func Int32Value(x int32) Value { return Value{Type: ValueInt32, bits: uint64(uint32(x))} }

// Uint64Value returns a uint64 value.
func Uint64Value(x uint64) Value { return Value{Type: ValueUint64, bits: x} }

// Int64Value returns an int64 value.
func Int64Value(x int64) Value { return Value{Type: ValueInt64, bits: uint64(x)} }

// Float32Value returns a float32 value.
func Float32Value(x float32) Value {
	return Value{Type: ValueFloat32, bits: uint64(math.Float32bits(x))}
}

// Float64Value returns a float64 value.
func Float64Value(x float64) Value { return Value{Type: ValueFloat64, bits: math.Float64bits(x)} }

// StringValue returns a string value.
func StringValue(s string) Value { return Value{Type: ValueString, str: s} }

// BoolValue returns a bool value.
func BoolValue(b bool) Value {
	if b {
		return Value{Type: ValueBool, bits: 1}
	}
	return Value{Type: ValueBool}
}

// Elem is the set of Go types that ArrayOf accepts, one per scalar value
// type (byte is uint8).
type Elem interface {
	uint8 | int8 | uint16 | int16 | uint32 | int32 | uint64 | int64 |
		float32 | float64 | bool | string
}

// ArrayOf returns an array value holding a copy of xs, with the element
// type that corresponds to T: ArrayOf([]string{...}) is an array of
// string, ArrayOf([]float32{...}) an array of float32.
func ArrayOf[T Elem](xs []T) Value {
	var elem ValueType
	switch any(*new(T)).(type) {
	case uint8:
		elem = ValueUint8
	case int8:
		elem = ValueInt8
	case uint16:
		elem = ValueUint16
	case int16:
		elem = ValueInt16
	case uint32:
		elem = ValueUint32
	case int32:
		elem = ValueInt32
	case uint64:
		elem = ValueUint64
	case int64:
		elem = ValueInt64
	case float32:
		elem = ValueFloat32
	case float64:
		elem = ValueFloat64
	case bool:
		elem = ValueBool
	case string:
		a := &array{elem: ValueString, n: len(xs), strs: make([]string, len(xs))}
		for i, x := range xs {
			a.strs[i] = any(x).(string)
		}
		return Value{Type: ValueArray, arr: a}
	}
	raw, err := binary.Append(nil, binary.LittleEndian, xs)
	if err != nil {
		panic("gguf: encoding a fixed-size slice failed: " + err.Error()) // impossible for Elem types
	}
	return Value{Type: ValueArray, arr: &array{elem: elem, n: len(xs), raw: raw}}
}

// ArrayOfValues returns an array of elements of type elem. Every element
// must have type elem. It is the way to build arrays of arrays, whose
// elements may have different element types and lengths. Nesting deeper
// than MaxArrayDepth is an error.
func ArrayOfValues(elem ValueType, vs []Value) (Value, error) {
	if !elem.valid() {
		return Value{}, fmt.Errorf("%w: unknown array element type %d", ErrFormat, uint32(elem))
	}
	a := &array{elem: elem, n: len(vs)}
	for i, v := range vs {
		if err := v.check(); err != nil {
			return Value{}, fmt.Errorf("array element %d: %w", i, err)
		}
		if v.Type != elem {
			return Value{}, fmt.Errorf("%w: array of %s: element %d is %s", ErrWrongType, elem, i, v.Type)
		}
		switch elem {
		case ValueString:
			a.strs = append(a.strs, v.str)
		case ValueArray:
			if v.arr.depth() >= MaxArrayDepth {
				return Value{}, fmt.Errorf("%w: array element %d: arrays nested more than %d deep", ErrFormat, i, MaxArrayDepth)
			}
			a.raw = appendValue(a.raw, v)
		default:
			a.raw = appendScalar(a.raw, elem, v.bits)
		}
	}
	return Value{Type: ValueArray, arr: a}, nil
}

// check reports whether v can be encoded. Values from constructors and
// Parse always can; a Value literal may have an unknown type or be an
// array without elements.
func (v Value) check() error {
	switch {
	case !v.Type.valid():
		return fmt.Errorf("%w: unknown value type %d", ErrFormat, uint32(v.Type))
	case v.Type == ValueArray && v.arr == nil:
		return fmt.Errorf("%w: array value without an element type (build arrays with ArrayOf)", ErrFormat)
	case v.Type == ValueArray && v.arr.depth() > MaxArrayDepth:
		return fmt.Errorf("%w: arrays nested more than %d deep", ErrFormat, MaxArrayDepth)
	}
	return nil
}

func appendScalar(b []byte, t ValueType, bits uint64) []byte {
	switch t.size() {
	case 1:
		return append(b, byte(bits))
	case 2:
		return binary.LittleEndian.AppendUint16(b, uint16(bits))
	case 4:
		return binary.LittleEndian.AppendUint32(b, uint32(bits))
	default:
		return binary.LittleEndian.AppendUint64(b, bits)
	}
}

func scalarBits(t ValueType, b []byte) uint64 {
	switch t.size() {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	default:
		return binary.LittleEndian.Uint64(b)
	}
}

// signedBits returns the value of the signed integer scalar of type t
// stored in bits.
func signedBits(t ValueType, bits uint64) int64 {
	switch t {
	case ValueInt8:
		return int64(int8(bits))
	case ValueInt16:
		return int64(int16(bits))
	case ValueInt32:
		return int64(int32(bits))
	}
	return int64(bits)
}

// String returns v if it is a string.
func (v Value) String() (string, bool) {
	return v.str, v.Type == ValueString
}

// Bool returns v if it is a bool.
func (v Value) Bool() (bool, bool) {
	return v.bits != 0, v.Type == ValueBool
}

// Uint returns v if it is an unsigned integer or a non-negative signed
// integer.
func (v Value) Uint() (uint64, bool) {
	switch {
	case v.Type.unsigned():
		return v.bits, true
	case v.Type.signed():
		if x := signedBits(v.Type, v.bits); x >= 0 {
			return uint64(x), true
		}
	}
	return 0, false
}

// Int returns v if it is a signed integer or an unsigned integer no larger
// than math.MaxInt64.
func (v Value) Int() (int64, bool) {
	switch {
	case v.Type.signed():
		return signedBits(v.Type, v.bits), true
	case v.Type.unsigned() && v.bits <= math.MaxInt64:
		return int64(v.bits), true
	}
	return 0, false
}

// Float returns v if it is a float32 or float64, or an integer converted to
// float64.
func (v Value) Float() (float64, bool) {
	switch {
	case v.Type == ValueFloat32:
		return float64(math.Float32frombits(uint32(v.bits))), true
	case v.Type == ValueFloat64:
		return math.Float64frombits(v.bits), true
	case v.Type.signed():
		return float64(signedBits(v.Type, v.bits)), true
	case v.Type.unsigned():
		return float64(v.bits), true
	}
	return 0, false
}

// Len returns the number of elements of an array, and 0 for other values.
func (v Value) Len() int {
	if v.Type != ValueArray || v.arr == nil {
		return 0
	}
	return v.arr.n
}

// ElemType returns the element type of an array. It is meaningful only
// when v.Type is ValueArray.
func (v Value) ElemType() ValueType {
	if v.Type != ValueArray || v.arr == nil {
		return 0
	}
	return v.arr.elem
}

// Index returns element i of an array. It panics if v is not an array or
// i is out of range, like indexing a slice.
func (v Value) Index(i int) Value {
	if v.Type != ValueArray || v.arr == nil {
		panic(fmt.Sprintf("gguf: Index of %s value", v.Type))
	}
	a := v.arr
	if i < 0 || i >= a.n {
		panic(fmt.Sprintf("gguf: index %d out of range for array of length %d", i, a.n))
	}
	switch a.elem {
	case ValueString:
		return Value{Type: ValueString, str: a.strs[i]}
	case ValueArray:
		off := 0
		for range i {
			off, _ = skipArray(a.raw, off)
		}
		return Value{Type: ValueArray, arr: decodeArray(a.raw, off)}
	}
	sz := a.elem.size()
	return Value{Type: a.elem, bits: scalarBits(a.elem, a.raw[i*sz:])}
}

// Values returns the elements of an array.
func (v Value) Values() ([]Value, bool) {
	if v.Type != ValueArray || v.arr == nil {
		return nil, false
	}
	a := v.arr
	vs := make([]Value, a.n)
	if a.elem != ValueArray {
		for i := range vs {
			vs[i] = v.Index(i)
		}
		return vs, true
	}
	off := 0
	for i := range vs {
		vs[i] = Value{Type: ValueArray, arr: decodeArray(a.raw, off)}
		off, _ = skipArray(a.raw, off)
	}
	return vs, true
}

// Strings returns v if it is an array of strings.
func (v Value) Strings() ([]string, bool) {
	if !v.isArrayOf(ValueString) {
		return nil, false
	}
	return slices.Clone(v.arr.strs), true
}

// Float32s returns v if it is an array of float32.
func (v Value) Float32s() ([]float32, bool) {
	if !v.isArrayOf(ValueFloat32) {
		return nil, false
	}
	xs := make([]float32, v.arr.n)
	for i := range xs {
		xs[i] = math.Float32frombits(binary.LittleEndian.Uint32(v.arr.raw[4*i:]))
	}
	return xs, true
}

// Int32s returns v if it is an array of int32.
func (v Value) Int32s() ([]int32, bool) {
	if !v.isArrayOf(ValueInt32) {
		return nil, false
	}
	xs := make([]int32, v.arr.n)
	for i := range xs {
		xs[i] = int32(binary.LittleEndian.Uint32(v.arr.raw[4*i:]))
	}
	return xs, true
}

// Ints returns v if it is an array of integers of any width or signedness
// whose elements all fit in int64.
func (v Value) Ints() ([]int64, bool) {
	if v.Type != ValueArray || v.arr == nil || !(v.arr.elem.signed() || v.arr.elem.unsigned()) {
		return nil, false
	}
	xs := make([]int64, v.arr.n)
	for i := range xs {
		x, ok := v.Index(i).Int()
		if !ok {
			return nil, false
		}
		xs[i] = x
	}
	return xs, true
}

func (v Value) isArrayOf(elem ValueType) bool {
	return v.Type == ValueArray && v.arr != nil && v.arr.elem == elem
}

// Equal reports whether v and u have the same type and encoding. Floats
// compare bitwise, so a NaN equals itself.
func (v Value) Equal(u Value) bool {
	if v.Type != u.Type {
		return false
	}
	switch v.Type {
	case ValueString:
		return v.str == u.str
	case ValueArray:
		a, b := v.arr, u.arr
		if a == nil || b == nil {
			return a == b
		}
		if a.elem != b.elem || a.n != b.n {
			return false
		}
		if a.elem == ValueString {
			return slices.Equal(a.strs, b.strs)
		}
		return bytes.Equal(a.raw, b.raw) // the encoding is canonical
	}
	return v.bits == u.bits
}

// typeName describes v's type for error messages, such as "array of string".
func (v Value) typeName() string {
	if v.Type == ValueArray && v.arr != nil {
		return "array of " + v.arr.elem.String()
	}
	return v.Type.String()
}

// maxFormatElems is how many array elements Format prints.
const maxFormatElems = 8

// Format prints v for humans: numbers and bools as Go prints them, strings
// quoted, and arrays as their first few elements followed by the length.
func (v Value) Format(f fmt.State, verb rune) {
	switch v.Type {
	case ValueString:
		fmt.Fprintf(f, "%q", v.str)
	case ValueBool:
		fmt.Fprint(f, v.bits != 0)
	case ValueFloat32:
		fmt.Fprint(f, math.Float32frombits(uint32(v.bits)))
	case ValueFloat64:
		fmt.Fprint(f, math.Float64frombits(v.bits))
	case ValueArray:
		if v.arr == nil {
			fmt.Fprint(f, "[]")
			return
		}
		fmt.Fprint(f, "[")
		for i := range min(v.arr.n, maxFormatElems) {
			if i > 0 {
				fmt.Fprint(f, " ")
			}
			v.Index(i).Format(f, verb)
		}
		if v.arr.n > maxFormatElems {
			fmt.Fprintf(f, " ... (%d %s)", v.arr.n, v.arr.elem)
		}
		fmt.Fprint(f, "]")
	default:
		if x, ok := v.Int(); ok {
			fmt.Fprint(f, x)
		} else if x, ok := v.Uint(); ok {
			fmt.Fprint(f, x)
		} else {
			fmt.Fprintf(f, "%%!(%s)", v.Type)
		}
	}
}
