// Package wire is hlm's device–server protocol: the messages a device and a
// server exchange (Upload, Verdict) and, for the networked system, the
// versioned frames that carry them over a byte stream. An upload is a chain
// of drafts or, for the tree methods, a token tree of at most MaxTreeNodes
// nodes (each draft's parent; a node's first child carries the
// distribution its children were drawn from), and its verdict then names
// the deepest accepted node (docs/protocol.md, "Token trees").
//
// The message bodies are what the simulator also encodes, so that the
// simulator and the networked system count the same bytes. Every parser
// bounds every length by the bytes it was given, checks token ids against the
// session's vocabulary and rejects trailing bytes; hostile input gives an
// error wrapping ErrMessage, never a panic.
package wire

// FrameHeader is the size of a frame header (length and type) that carries
// one message on a stream.
const FrameHeader = 5
