package gguf

import "encoding/binary"

// array holds an array's elements in the form closest to their encoding,
// so that what Parse allocates stays within a small multiple of the file
// size. Arrays of arrays keep their elements encoded and decode them on
// access: they are rare (llama.cpp does not read them at all), and a
// hostile file can pack an element into 12 bytes.
type array struct {
	elem ValueType
	n    int
	// raw holds scalar elements little-endian, n*elem.size() bytes, or,
	// for elem == ValueArray, the elements' encodings back to back: element
	// type, count, payload. Parse and ArrayOfValues produce only valid
	// encodings, so reading raw needs no bounds checks beyond Go's own.
	raw  []byte
	strs []string // elem == ValueString
}

// depth returns how deeply a nests: 1 for an array of scalars or strings.
func (a *array) depth() int {
	if a.elem != ValueArray {
		return 1
	}
	deepest, off := 0, 0
	for range a.n {
		var d int
		off, d = skipArray(a.raw, off)
		deepest = max(deepest, d)
	}
	return 1 + deepest
}

// skipArray returns the end of the array encoded at raw[off:] and its
// depth.
func skipArray(raw []byte, off int) (end, depth int) {
	elem := ValueType(binary.LittleEndian.Uint32(raw[off:]))
	n := int(binary.LittleEndian.Uint64(raw[off+4:]))
	off += 12
	switch elem {
	case ValueString:
		for range n {
			off += 8 + int(binary.LittleEndian.Uint64(raw[off:]))
		}
	case ValueArray:
		deepest := 0
		for range n {
			var d int
			off, d = skipArray(raw, off)
			deepest = max(deepest, d)
		}
		return off, 1 + deepest
	default:
		off += n * elem.size()
	}
	return off, 1
}

// decodeArray decodes the array encoded at raw[off:], sharing raw's memory
// for its elements except strings.
func decodeArray(raw []byte, off int) *array {
	end, _ := skipArray(raw, off)
	a := &array{
		elem: ValueType(binary.LittleEndian.Uint32(raw[off:])),
		n:    int(binary.LittleEndian.Uint64(raw[off+4:])),
	}
	body := raw[off+12 : end : end]
	if a.elem != ValueString {
		a.raw = body
		return a
	}
	a.strs = make([]string, a.n)
	p := 0
	for i := range a.strs {
		l := int(binary.LittleEndian.Uint64(body[p:]))
		a.strs[i] = string(body[p+8 : p+8+l])
		p += 8 + l
	}
	return a
}
