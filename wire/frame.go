package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// ProtocolVersion is the version this package speaks. A peer with another
// version is refused at the handshake.
const ProtocolVersion = 5

// DefaultMaxFrame is the largest frame a peer accepts unless configured
// otherwise: large enough for a full 32,000-token distribution at 32 bits
// with indices (~190 kB) many times over, small enough to bound memory per
// connection.
const DefaultMaxFrame = 4 << 20

// Magic opens every connection (in the Hello frame).
var Magic = [4]byte{'H', 'L', 'M', 'P'}

// FrameType identifies a frame's body.
type FrameType byte

// Frame types. Flow:
//
//	device                          server
//	Hello{version, token}      →
//	                           ←    Welcome{version, max frame, server, vocab, context, llm, origin}  (or Error)
//	Open{params, prefix, …}    →
//	                           ←    Opened{session, round, …}    (or Error)
//	Upload{round r}            →
//	                           ←    Verdict{round r}             (or Error)
//	…
//	Close                      →    (either side may send Close or Error and hang up)
//	  or Park                  →    (the device hangs up and may continue the session later)
//
// After a dropped connection the device reconnects, sends Open with the
// session id and its committed sequence, and re-sends the upload that was in
// flight: the server answers a repeated round from its cache, so no token is
// lost or duplicated.
//
// A device that ends a generation with Park instead of Close leaves its
// session on the server; a later Open{resume, keep, prefix} continues it
// with a new prompt that shares its first keep tokens (a conversation's
// next turn), sending only the tokens after them (protocol version 5).
const (
	FrameHello   FrameType = 1
	FrameWelcome FrameType = 2
	FrameOpen    FrameType = 3
	FrameOpened  FrameType = 4
	FrameUpload  FrameType = 5
	FrameVerdict FrameType = 6
	FrameClose   FrameType = 7
	FrameError   FrameType = 8
	FramePark    FrameType = 9
)

var frameNames = map[FrameType]string{FrameHello: "Hello", FrameWelcome: "Welcome", FrameOpen: "Open", FrameOpened: "Opened",
	FrameUpload: "Upload", FrameVerdict: "Verdict", FrameClose: "Close", FrameError: "Error", FramePark: "Park"}

func (t FrameType) String() string {
	if n, ok := frameNames[t]; ok {
		return n
	}
	return fmt.Sprintf("FrameType(%d)", t)
}

// ErrFrame reports a frame that violates the protocol (size, type).
var ErrFrame = errors.New("wire: bad frame")

// ErrHTTP reports a peer that answered in HTTP (a frame header that reads
// "HTTP"): an address of a web endpoint, not of hlm's protocol. It wraps
// ErrFrame.
var ErrHTTP = fmt.Errorf("%w: the peer answered in HTTP, not in hlm's protocol", ErrFrame)

// ErrHTTPRequest reports a peer that sent an HTTP request (a frame header
// that reads "GET ", "POST", …): a browser or an HTTP client pointed at
// hlm's protocol port. It wraps ErrFrame.
var ErrHTTPRequest = fmt.Errorf("%w: an HTTP request on hlm's protocol port (hlm serve's HTTP endpoints are --health and --metrics)", ErrFrame)

// ErrFrameType reports a frame of a type this protocol version does not
// have. It wraps ErrFrame.
var ErrFrameType = fmt.Errorf("%w: unknown frame type", ErrFrame)

// httpMethods are the first four bytes of HTTP requests.
var httpMethods = []string{"GET ", "POST", "HEAD", "PUT ", "DELE", "OPTI", "PATC", "CONN", "TRAC", "PRI "}

// readChunk is the most ReadFrame allocates before any of a body arrives.
const readChunk = 64 << 10

// AppendFrame appends a frame: uint32 little-endian length of type+body,
// the type byte, the body.
func AppendFrame(b []byte, t FrameType, body []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(1+len(body)))
	b = append(b, byte(t))
	return append(b, body...)
}

// WriteFrame writes one frame with a single Write (so that a traffic
// shaper sees one message).
func WriteFrame(w io.Writer, t FrameType, body []byte) error {
	_, err := w.Write(AppendFrame(make([]byte, 0, FrameHeader+len(body)), t, body))
	return err
}

// ReadFrame reads one frame, refusing (before allocating) a length above
// max, a zero length and unknown types. The body's memory grows with the
// bytes that arrive (at most twice them), not with the length declared, so
// that a peer that declares a large frame and sends little costs little.
func ReadFrame(r io.Reader, max int) (FrameType, []byte, error) {
	var h [FrameHeader]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := binary.LittleEndian.Uint32(h[:4])
	t := FrameType(h[4])
	if string(h[:4]) == "HTTP" {
		return 0, nil, ErrHTTP
	}
	if slices.Contains(httpMethods, string(h[:4])) {
		return 0, nil, ErrHTTPRequest
	}
	if n == 0 || uint64(n) > uint64(max)+1 {
		return 0, nil, fmt.Errorf("%w: length %d (maximum %d)", ErrFrame, n, max)
	}
	if _, ok := frameNames[t]; !ok {
		return 0, nil, fmt.Errorf("%w %d", ErrFrameType, h[4])
	}
	size := int(n - 1)
	body := make([]byte, min(size, readChunk))
	for got := 0; ; {
		k, err := io.ReadFull(r, body[got:])
		got += k
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, nil, err
		}
		if got == size {
			return t, body, nil
		}
		body = append(body, make([]byte, min(size-got, got))...) // double what arrived
	}
}
