package gguf

import (
	"errors"
	"fmt"
)

// Errors returned by this package are wrapped around these sentinels; test
// for them with errors.Is. Messages name the key or tensor involved and,
// for malformed files, the byte offset where decoding failed.
var (
	// ErrFormat reports a malformed file, or a value or shape that cannot
	// be encoded.
	ErrFormat = errors.New("gguf: malformed file")

	// ErrVersion reports a GGUF version this package does not read.
	ErrVersion = errors.New("gguf: unsupported version")

	// ErrUnsupported reports a well-formed feature this package cannot
	// handle, such as an unknown or removed tensor type or a big-endian file.
	ErrUnsupported = errors.New("gguf: unsupported")

	// ErrShape reports tensor dimensions that do not fit the tensor type,
	// such as a row length that is not a multiple of the block size.
	ErrShape = errors.New("gguf: invalid tensor shape")

	// ErrMissingKey reports a metadata key that is not in the file.
	ErrMissingKey = errors.New("gguf: missing metadata key")

	// ErrWrongType reports a metadata value of a different type than asked.
	ErrWrongType = errors.New("gguf: wrong metadata value type")

	// ErrNoTensor reports a tensor name that is not in the file.
	ErrNoTensor = errors.New("gguf: no such tensor")

	// ErrDuplicate reports a metadata key or tensor name given twice.
	ErrDuplicate = errors.New("gguf: duplicate name")

	// ErrClosed reports use of a File after Close.
	ErrClosed = errors.New("gguf: file closed")
)

// shapeError is an ErrShape error whose text after the sentinel's is held
// separately, so that callers can put it in context without repeating the
// "gguf:" prefix.
type shapeError string

func shapeErrorf(format string, args ...any) error { return shapeError(fmt.Sprintf(format, args...)) }

func (e shapeError) Error() string        { return ErrShape.Error() + ": " + string(e) }
func (e shapeError) Is(target error) bool { return target == ErrShape }

// withSentinel makes an error also match a second sentinel under
// errors.Is, without changing its message.
type withSentinel struct {
	error
	sentinel error
}

func (e withSentinel) Unwrap() []error { return []error{e.error, e.sentinel} }
