package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrMessage reports a message body that does not decode.
var ErrMessage = errors.New("wire: malformed message")

// MaxTokens bounds the token lists of one message (committed tokens, drafts).
const MaxTokens = 1 << 16

// MaxDrafts bounds the number of drafts per position a verdict may name
// (list matching).
const MaxDrafts = 1 << 8

// MaxTreeNodes bounds the nodes of a draft tree (Upload.Parents).
const MaxTreeNodes = 1 << 8

// Upload is what the device sends for verification: the tokens it committed
// on its own since the last upload (so the server's context stays in sync),
// then a block of draft tokens, each with the codec payload describing the
// distribution it was drafted from.
//
// Body layout (all integers unsigned LEB128 varints unless noted):
//
//	round      uint32 (little-endian)
//	flags      byte: 1 = diagnostics present, 2 = check present
//	ncommitted varint, then ncommitted token ids
//	[diag]     ncommitted float32 (little-endian): x_d of each committed token
//	ndrafts    varint, then per draft: token id, payload bits, payload bytes ((bits+7)/8 of them)
//	[check]    uint64 (little-endian): hash of the draft computation (replica)
//	[tree]     flag 4: per draft, varint parent+1 (0: a child of the context;
//	           j+1: a child of draft j, j < its own index)
//
// Without the tree the drafts are a chain, each drafted after the one
// before. With it they are the nodes of a tree, parents before children and
// the children of a node in the order they were drafted; a node's first
// child carries the payload of the distribution its children were drafted
// from, the other children none (a token tree: docs/protocol.md).
type Upload struct {
	Round         uint32
	Committed     []int32
	CommittedProb []float32 // diagnostics only: the device's probability of each committed token
	Drafts        []Draft
	Check         uint64 // replica mode: hash of the device's draft logits; 0 = none
	HasCheck      bool
	// Parents, when not nil, makes Drafts a tree: Parents[i] is draft i's
	// parent (−1: the context), an earlier draft. ParseUpload checks the
	// indices; what a tree may hold beyond that is the verifier's to check.
	Parents []int32
}

// Draft is one drafted token and its distribution's codec payload.
type Draft struct {
	Token   int32
	Bits    uint32
	Payload []byte
}

// Verdict is the server's answer to an Upload: how many drafts it accepted
// and the token it adds after them (resampled after a rejection, or the
// bonus token when all were accepted).
//
// Body layout:
//
//	round     uint32 (little-endian)
//	flags     byte: 1 = resampled, 2 = diagnostics present, 4 = draft index present
//	accepted  varint
//	token     varint
//	[draft]   varint: which of several drafts per position was accepted (list matching)
//	[diag]    varint n, then n float32: the target probability y_d of each committed token
//	[node]    flag 8: varint, the deepest accepted node of a tree + 1 (0: none)
type Verdict struct {
	Round           uint32
	Accepted        int
	Token           int32
	Resampled       bool
	Draft           int       // list matching: the accepted draft's index (0 otherwise; sent only when > 0)
	CommittedTarget []float32 // diagnostics only
	// Node, for a tree upload, is the deepest accepted node + 1 (0: none);
	// the accepted path is its ancestors and itself, Accepted its depth + 1.
	Node    int
	HasNode bool
}

// AppendUpload appends the body of u to b.
func AppendUpload(b []byte, u *Upload) []byte {
	b = binary.LittleEndian.AppendUint32(b, u.Round)
	var flags byte
	if u.CommittedProb != nil {
		flags |= 1
	}
	if u.HasCheck {
		flags |= 2
	}
	if u.Parents != nil {
		flags |= 4
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, uint64(len(u.Committed)))
	for _, t := range u.Committed {
		b = binary.AppendUvarint(b, uint64(t))
	}
	if flags&1 != 0 {
		for i := range u.Committed {
			var p float32
			if i < len(u.CommittedProb) {
				p = u.CommittedProb[i]
			}
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(p))
		}
	}
	b = binary.AppendUvarint(b, uint64(len(u.Drafts)))
	for _, d := range u.Drafts {
		b = binary.AppendUvarint(b, uint64(d.Token))
		b = binary.AppendUvarint(b, uint64(d.Bits))
		b = append(b, d.Payload...)
	}
	if u.HasCheck {
		b = binary.LittleEndian.AppendUint64(b, u.Check)
	}
	if u.Parents != nil {
		for i := range u.Drafts {
			var p int32 = -1
			if i < len(u.Parents) {
				p = u.Parents[i]
			}
			b = binary.AppendUvarint(b, uint64(p+1))
		}
	}
	return b
}

// ParseUpload decodes an Upload body. Token ids are checked against vocab.
func ParseUpload(b []byte, vocab int) (*Upload, error) {
	r := reader{b: b}
	u := &Upload{Round: r.u32()}
	flags := r.byte()
	if flags&^7 != 0 {
		r.fail("unknown upload flags %#x", flags)
	}
	u.Committed = r.tokens(vocab)
	if flags&1 != 0 {
		u.CommittedProb = make([]float32, len(u.Committed))
		for i := range u.CommittedProb {
			u.CommittedProb[i] = math.Float32frombits(r.u32())
		}
	}
	n := r.count(MaxTokens, listTooLong)
	for i := 0; i < n && r.err == nil; i++ {
		var d Draft
		d.Token = r.token(vocab)
		bits := r.uvarint()
		if bits > uint64(8*len(r.b)) {
			r.fail("draft %d: payload of %d bits, %d bytes left", i, bits, len(r.b))
			break
		}
		d.Bits = uint32(bits)
		d.Payload = r.bytes(int((bits + 7) / 8))
		u.Drafts = append(u.Drafts, d)
	}
	if flags&2 != 0 {
		u.HasCheck = true
		u.Check = r.u64()
	}
	if flags&4 != 0 {
		if len(u.Drafts) == 0 || len(u.Drafts) > MaxTreeNodes {
			r.fail("a tree of %d nodes (want 1 to %d)", len(u.Drafts), MaxTreeNodes)
		}
		u.Parents = make([]int32, 0, len(u.Drafts))
		for i := range u.Drafts {
			p := r.uvarint()
			if r.err == nil && p > uint64(i) {
				r.fail("tree node %d: parent %d is not an earlier node", i, int64(p)-1)
			}
			u.Parents = append(u.Parents, int32(p)-1)
		}
	}
	if err := r.done(); err != nil {
		return nil, fmt.Errorf("upload: %w", err)
	}
	return u, nil
}

// AppendVerdict appends the body of v to b.
func AppendVerdict(b []byte, v *Verdict) []byte {
	b = binary.LittleEndian.AppendUint32(b, v.Round)
	var flags byte
	if v.Resampled {
		flags |= 1
	}
	if v.CommittedTarget != nil {
		flags |= 2
	}
	if v.Draft > 0 {
		flags |= 4
	}
	if v.HasNode {
		flags |= 8
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, uint64(v.Accepted))
	b = binary.AppendUvarint(b, uint64(v.Token))
	if v.Draft > 0 {
		b = binary.AppendUvarint(b, uint64(v.Draft))
	}
	if v.CommittedTarget != nil {
		b = binary.AppendUvarint(b, uint64(len(v.CommittedTarget)))
		for _, p := range v.CommittedTarget {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(p))
		}
	}
	if v.HasNode {
		b = binary.AppendUvarint(b, uint64(v.Node))
	}
	return b
}

// ParseVerdict decodes a Verdict body.
func ParseVerdict(b []byte, vocab int) (*Verdict, error) {
	r := reader{b: b}
	v := &Verdict{Round: r.u32()}
	flags := r.byte()
	if flags&^15 != 0 {
		r.fail("unknown verdict flags %#x", flags)
	}
	v.Resampled = flags&1 != 0
	acc := r.uvarint()
	if acc > MaxTokens {
		r.fail("accepted count %d", acc)
	}
	v.Accepted = int(acc)
	v.Token = r.token(vocab)
	if flags&4 != 0 {
		k := r.uvarint()
		if k == 0 || k >= MaxDrafts {
			r.fail("draft index %d (want 1 to %d)", k, MaxDrafts-1)
		}
		v.Draft = int(k)
	}
	if flags&2 != 0 {
		n := r.count(MaxTokens, listTooLong)
		if n > len(r.b)/4 {
			r.fail("%d diagnostics, %d bytes left", n, len(r.b))
		} else {
			v.CommittedTarget = make([]float32, n)
			for i := range v.CommittedTarget {
				v.CommittedTarget[i] = math.Float32frombits(r.u32())
			}
		}
	}
	if flags&8 != 0 {
		n := r.uvarint()
		if n > MaxTreeNodes {
			r.fail("tree node %d (at most %d)", n, MaxTreeNodes)
		}
		v.Node, v.HasNode = int(n), true
	}
	if err := r.done(); err != nil {
		return nil, fmt.Errorf("verdict: %w", err)
	}
	return v, nil
}

// reader decodes with sticky errors: after the first failure every read
// returns zero values and done reports the error.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: at byte %d: %s", ErrMessage, r.off, fmt.Sprintf(format, args...))
	}
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.fail("need %d bytes, %d left", n, len(r.b))
		return nil
	}
	p := r.b[:n:n]
	r.b = r.b[n:]
	r.off += n
	return p
}

func (r *reader) byte() byte {
	if p := r.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (r *reader) u16() uint16 {
	if p := r.take(2); p != nil {
		return binary.LittleEndian.Uint16(p)
	}
	return 0
}

func (r *reader) u32() uint32 {
	if p := r.take(4); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if p := r.take(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("bad varint")
		return 0
	}
	r.b = r.b[n:]
	r.off += n
	return v
}

func (r *reader) bytes(n int) []byte {
	p := r.take(n)
	if p == nil {
		return nil
	}
	return append([]byte(nil), p...)
}

// listTooLong is count's error for the lists bounded by MaxTokens.
const listTooLong = "list of %d elements, %d bytes left"

// count reads a list length, bounded by limit and by the bytes left (every
// element takes at least one byte). Beyond them it fails with format, given
// the length read and the bytes left.
func (r *reader) count(limit uint64, format string) int {
	n := r.uvarint()
	if n > limit || n > uint64(len(r.b)) {
		r.fail(format, n, len(r.b))
		return 0
	}
	return int(n)
}

func (r *reader) token(vocab int) int32 {
	t := r.uvarint()
	if r.err == nil && t >= uint64(vocab) {
		r.fail("token id %d outside the vocabulary of %d", t, vocab)
		return 0
	}
	return int32(t)
}

func (r *reader) tokens(vocab int) []int32 {
	n := r.count(MaxTokens, listTooLong)
	out := make([]int32, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		out = append(out, r.token(vocab))
	}
	return out
}

func (r *reader) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.fail("%d trailing bytes", len(r.b))
	}
	return r.err
}
