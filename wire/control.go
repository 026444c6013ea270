package wire

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
)

// Limits of control messages.
const (
	MaxString = 1 << 16 // parameters, fingerprints, messages
	MaxPrefix = 1 << 20 // tokens in an Open prefix
	// MaxHello is the largest Hello body (magic, version, a token of
	// MaxString bytes): a server reads the first frame of a connection,
	// before it knows who is there, with at most this.
	MaxHello = 4 + 2 + binary.MaxVarintLen64 + MaxString
)

// MaxOpen is the largest Open body for a server whose sessions have
// context positions: four strings of at most MaxString and a prefix of at
// most context tokens (a longer one is refused anyway), and a keep count
// and hash. A server reads the
// Open with at most this, whatever its maximum frame.
func MaxOpen(context int) int {
	return 8 + 4 + 4*(binary.MaxVarintLen64+MaxString) + binary.MaxVarintLen32 + 8 + binary.MaxVarintLen64 + binary.MaxVarintLen32*(context+1)
}

// Hello opens a connection.
//
// Body: magic [4]byte "HLMP" | version uint16 LE | token string
// (strings are a varint length then bytes).
type Hello struct {
	Version uint16
	Token   string // authentication token ("" when the server needs none)
}

// Welcome accepts a Hello and describes the server's model, so that the
// device can fit its prompt to the context before it opens a session.
//
// Body: version uint16 LE | max frame uint32 LE | server string |
// vocab uint32 LE | context uint32 LE | llm string | origin string
// (origin since protocol version 3)
type Welcome struct {
	Version  uint16
	MaxFrame uint32
	Server   string
	Vocab    uint32
	Context  uint32 // positions a session may use
	LLM      string // the server model's fingerprint
	// Origin is the fingerprint of the full-precision model the server's
	// LLM was made from (itself, unless it is a quantized copy or a
	// converted file: model.OriginOf), by which a device finds the draft
	// hlm ships for it.
	Origin string
}

// Open starts a session, resumes one, or continues one with a new prompt.
//
// Body: resume uint64 LE | round uint32 LE | params string | slm string |
// tokenizer string | llm string | keep varint | [keep > 0: keep hash
// uint64 LE] | prefix (varint count, varint ids)
//
// Keep > 0 (protocol version 5) continues session Resume, which its device
// parked (FramePark) after a generation, with a new generation: the new
// prompt is the first Keep tokens the server holds of that session — whose
// HashTokens must be KeepHash — followed by Prefix, and Params replace the
// session's. A conversation's next turn so sends only its new tokens. A
// continuation may leave SLM, Tokenizer and LLM empty: they were checked
// when the session opened.
type Open struct {
	Resume    uint64 // session to resume (0: a new session)
	Round     uint32 // rounds the device has completed (its prefix includes their tokens)
	Params    string // the session's parameters (hybrid.Params.SessionParams)
	SLM       string // fingerprint of the device's draft model
	Tokenizer string // fingerprint of the device's tokenizer
	LLM       string // required fingerprint of the server's model ("" = any)
	// Keep, with Resume, continues a parked session: its first Keep tokens
	// (which hash to KeepHash) stay, and Prefix follows them.
	Keep     uint32
	KeepHash uint64
	Prefix   []int32
}

// HashTokens is the FNV-1a hash of token ids (each as 4 bytes, little-
// endian): what a device that continues a session (Open.Keep) says the
// server's first Keep tokens are, so that a session out of step with the
// device is refused rather than continued.
func HashTokens(ids []int) uint64 {
	h := fnv.New64a()
	var b [4]byte
	for _, t := range ids {
		binary.LittleEndian.PutUint32(b[:], uint32(t))
		h.Write(b[:])
	}
	return h.Sum64()
}

// Opened confirms a session.
//
// Body: session uint64 LE | round uint32 LE | vocab uint32 LE | context uint32 LE | llm string
type Opened struct {
	Session uint64
	Round   uint32 // last round the server verified in this session
	Vocab   uint32
	Context uint32
	LLM     string // the server model's fingerprint
}

// Error reports a failure; the sender closes the connection after it (the
// session may still be resumed on a new connection).
//
// Body: code uint16 LE | message string
type Error struct {
	Code    uint16
	Message string
}

// Error codes.
const (
	ErrCodeAuth      = 1 // wrong or missing token
	ErrCodeVersion   = 2 // protocol version not supported
	ErrCodeBad       = 3 // malformed or out-of-order message
	ErrCodeRefused   = 4 // models or tokenizers do not match, method not served
	ErrCodeLimit     = 5 // too many sessions, context or frame too large
	ErrCodeNoSession = 6 // the session to resume is unknown (e.g. after a restart)
	ErrCodeInternal  = 7 // the server's own failure (its LLM's evaluation): the device may retry
	ErrCodeShutdown  = 8 // the server is shutting down
)

func (e *Error) Error() string { return fmt.Sprintf("server error %d: %s", e.Code, e.Message) }

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func (r *reader) str() string {
	n := r.uvarint()
	if n > MaxString {
		r.fail("string of %d bytes (maximum %d)", n, MaxString)
		return ""
	}
	return string(r.take(int(n)))
}

// AppendHello appends the body of h.
func AppendHello(b []byte, h *Hello) []byte {
	b = append(b, Magic[:]...)
	b = binary.LittleEndian.AppendUint16(b, h.Version)
	return appendString(b, h.Token)
}

// ParseHello decodes a Hello body.
func ParseHello(b []byte) (*Hello, error) {
	r := reader{b: b}
	if m := r.take(4); r.err == nil && string(m) != string(Magic[:]) {
		r.fail("bad magic %q", m)
	}
	h := &Hello{Version: r.u16()}
	h.Token = r.str()
	if err := r.done(); err != nil {
		return nil, fmt.Errorf("hello: %w", err)
	}
	return h, nil
}

// AppendWelcome appends the body of w.
func AppendWelcome(b []byte, w *Welcome) []byte {
	b = binary.LittleEndian.AppendUint16(b, w.Version)
	b = binary.LittleEndian.AppendUint32(b, w.MaxFrame)
	b = appendString(b, w.Server)
	b = binary.LittleEndian.AppendUint32(b, w.Vocab)
	b = binary.LittleEndian.AppendUint32(b, w.Context)
	b = appendString(b, w.LLM)
	return appendString(b, w.Origin)
}

// ParseWelcome decodes a Welcome body.
func ParseWelcome(b []byte) (*Welcome, error) {
	r := reader{b: b}
	w := &Welcome{Version: r.u16(), MaxFrame: r.u32()}
	w.Server = r.str()
	w.Vocab, w.Context = r.u32(), r.u32()
	w.LLM = r.str()
	w.Origin = r.str()
	if err := r.done(); err != nil {
		return nil, fmt.Errorf("welcome: %w", err)
	}
	return w, nil
}

// AppendOpen appends the body of o.
func AppendOpen(b []byte, o *Open) []byte {
	b = binary.LittleEndian.AppendUint64(b, o.Resume)
	b = binary.LittleEndian.AppendUint32(b, o.Round)
	for _, s := range []string{o.Params, o.SLM, o.Tokenizer, o.LLM} {
		b = appendString(b, s)
	}
	b = binary.AppendUvarint(b, uint64(o.Keep))
	if o.Keep > 0 {
		b = binary.LittleEndian.AppendUint64(b, o.KeepHash)
	}
	b = binary.AppendUvarint(b, uint64(len(o.Prefix)))
	for _, t := range o.Prefix {
		b = binary.AppendUvarint(b, uint64(t))
	}
	return b
}

// ParseOpen decodes an Open body; prefix ids are checked against vocab.
func ParseOpen(b []byte, vocab int) (*Open, error) {
	r := reader{b: b}
	o := &Open{Resume: r.u64(), Round: r.u32()}
	o.Params, o.SLM, o.Tokenizer, o.LLM = r.str(), r.str(), r.str(), r.str()
	if keep := r.uvarint(); keep > 0 && r.err == nil {
		switch {
		case o.Resume == 0:
			r.fail("keep %d tokens of no session (resume 0)", keep)
		case keep > MaxPrefix:
			r.fail("keep %d tokens (at most %d)", keep, MaxPrefix)
		}
		o.Keep = uint32(min(keep, MaxPrefix))
		o.KeepHash = r.u64()
	}
	n := r.count(MaxPrefix, "prefix of %d tokens, %d bytes left")
	o.Prefix = make([]int32, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		o.Prefix = append(o.Prefix, r.token(vocab))
	}
	if err := r.done(); err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	return o, nil
}

// AppendOpened appends the body of o.
func AppendOpened(b []byte, o *Opened) []byte {
	b = binary.LittleEndian.AppendUint64(b, o.Session)
	b = binary.LittleEndian.AppendUint32(b, o.Round)
	b = binary.LittleEndian.AppendUint32(b, o.Vocab)
	b = binary.LittleEndian.AppendUint32(b, o.Context)
	return appendString(b, o.LLM)
}

// ParseOpened decodes an Opened body.
func ParseOpened(b []byte) (*Opened, error) {
	r := reader{b: b}
	o := &Opened{Session: r.u64(), Round: r.u32(), Vocab: r.u32(), Context: r.u32()}
	o.LLM = r.str()
	if err := r.done(); err != nil {
		return nil, fmt.Errorf("opened: %w", err)
	}
	return o, nil
}

// AppendError appends the body of e.
func AppendError(b []byte, e *Error) []byte {
	b = binary.LittleEndian.AppendUint16(b, e.Code)
	return appendString(b, e.Message)
}

// ParseError decodes an Error body.
func ParseError(b []byte) (*Error, error) {
	r := reader{b: b}
	e := &Error{Code: r.u16()}
	e.Message = r.str()
	if err := r.done(); err != nil {
		return nil, fmt.Errorf("error frame: %w", err)
	}
	return e, nil
}
