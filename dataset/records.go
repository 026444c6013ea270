package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrMalformed is wrapped by every error about a file's content (as opposed
// to an error opening or reading it).
var ErrMalformed = errors.New("malformed dataset")

// maxFileSize bounds what the loaders read into memory; the largest shared
// file is under 4 MB.
const maxFileSize = 256 << 20

// readFile reads a whole dataset file, refusing absurd sizes.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > maxFileSize {
		return nil, fmt.Errorf("%s: %w: larger than %d bytes", path, ErrMalformed, maxFileSize)
	}
	return b, nil
}

// decodeRecords decodes data, which is either a JSON array of objects or JSON
// lines (one object per line, blank lines allowed), and calls fn for each
// record with its 0-based index. Errors wrap ErrMalformed and say
// "name:line: record i: ...", with the line of the offending byte where
// encoding/json reports one and of the record's start otherwise.
func decodeRecords[T any](data []byte, name string, fn func(i int, rec *T) error) error {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // UTF-8 byte-order mark
	start := bytes.IndexFunc(data, func(r rune) bool { return !isJSONSpace(r) })
	if start < 0 {
		return fmt.Errorf("%s: %w: empty file", name, ErrMalformed)
	}
	fail := func(what string, off int64, err error) error {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			off = se.Offset
		case errors.As(err, &te):
			off += te.Offset // relative to the value Decode read
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			off = int64(len(data))
		}
		return fmt.Errorf("%s:%d: %s: %w: %w", name, lineAt(data, off), what, ErrMalformed, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	array := data[start] == '['
	if array {
		if _, err := dec.Token(); err != nil {
			return fail("start of array", int64(start), err)
		}
	}
	for i := 0; ; i++ {
		if array && !dec.More() {
			break
		}
		recStart := skipSeparators(data, dec.InputOffset())
		var rec T
		err := dec.Decode(&rec)
		if !array && err == io.EOF {
			break
		}
		if err != nil {
			return fail(fmt.Sprintf("record %d", i), recStart, err)
		}
		if err := fn(i, &rec); err != nil {
			return fmt.Errorf("%s:%d: record %d: %w: %w", name, lineAt(data, recStart), i, ErrMalformed, err)
		}
	}
	if array {
		end := dec.InputOffset()
		if t, err := dec.Token(); err != nil || t != json.Delim(']') {
			if err == nil {
				err = fmt.Errorf("unexpected %v after the last record", t)
			}
			return fail("end of array", end, err)
		}
		end = dec.InputOffset()
		if rest := bytes.TrimFunc(data[end:], isJSONSpace); len(rest) > 0 {
			return fmt.Errorf("%s:%d: %w: data after the closing ']'", name, lineAt(data, end), ErrMalformed)
		}
	}
	return nil
}

func isJSONSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

// skipSeparators returns the offset of the first byte at or after off that
// is neither JSON white space nor a comma: the start of the next value.
func skipSeparators(data []byte, off int64) int64 {
	for off < int64(len(data)) && (isJSONSpace(rune(data[off])) || data[off] == ',') {
		off++
	}
	return off
}

// lineAt is the 1-based line number of byte offset off.
func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return 1 + bytes.Count(data[:off], []byte("\n"))
}
