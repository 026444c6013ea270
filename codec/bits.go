package codec

import (
	"encoding/binary"
	"fmt"
	"math/big"
)

// BitWriter appends bits MSB-first: the first bit written is the most
// significant bit of the first byte. The last byte is padded with zero bits.
// The zero value is an empty writer.
type BitWriter struct {
	buf  []byte
	acc  uint64 // pending bits, right-aligned
	nacc uint   // number of pending bits, < 8 between calls
}

// WriteBits appends the low n bits of v, most significant first.
// n must be in [0, 64] (a programmer error otherwise).
func (w *BitWriter) WriteBits(v uint64, n int) {
	if uint(n) > 56 {
		w.writeWide(v, n)
		return
	}
	// Bits of acc above nacc are stale; only the byte conversions below
	// read acc, and they never look above nacc+8.
	w.acc = w.acc<<uint(n) | v&(1<<uint(n)-1)
	w.nacc += uint(n)
	for w.nacc >= 8 {
		w.nacc -= 8
		w.buf = append(w.buf, byte(w.acc>>w.nacc))
	}
}

func (w *BitWriter) writeWide(v uint64, n int) {
	if n < 0 || n > 64 {
		panic(fmt.Sprintf("codec: BitWriter.WriteBits: %d bits", n))
	}
	w.WriteBits(v>>32, n-32)
	w.WriteBits(v, 32)
}

// WriteBig appends x as an n-bit unsigned integer, most significant bit
// first. x must satisfy 0 <= x < 2^n (a programmer error otherwise).
func (w *BitWriter) WriteBig(x *big.Int, n int) {
	if x.Sign() < 0 || x.BitLen() > n {
		panic(fmt.Sprintf("codec: BitWriter.WriteBig: %d-bit value in %d bits", x.BitLen(), n))
	}
	if n == 0 {
		return
	}
	b := x.FillBytes(make([]byte, (n+7)/8))
	if head := n % 8; head != 0 {
		w.WriteBits(uint64(b[0]), head)
		b = b[1:]
	}
	if w.nacc == 0 {
		w.buf = append(w.buf, b...)
		return
	}
	for _, c := range b {
		w.WriteBits(uint64(c), 8)
	}
}

// Len returns the number of bits written.
func (w *BitWriter) Len() int { return len(w.buf)*8 + int(w.nacc) }

// Bytes returns the written bits as (Len()+7)/8 bytes, the last one padded
// with zero bits. The writer can still be appended to afterwards.
func (w *BitWriter) Bytes() []byte {
	out := make([]byte, len(w.buf), len(w.buf)+1)
	copy(out, w.buf)
	if w.nacc > 0 {
		out = append(out, byte(w.acc<<(8-w.nacc)))
	}
	return out
}

// BitReader reads bits MSB-first from a byte slice. Every read is bounds
// checked: reading past the end returns an error wrapping ErrFormat.
type BitReader struct {
	data []byte
	pos  int // next bit
}

// NewBitReader returns a reader over data.
func NewBitReader(data []byte) *BitReader { return &BitReader{data: data} }

// Remaining returns the number of unread bits.
func (r *BitReader) Remaining() int { return len(r.data)*8 - r.pos }

// Pos returns the number of bits read so far.
func (r *BitReader) Pos() int { return r.pos }

// ReadBits reads an n-bit unsigned integer, n in [0, 64].
func (r *BitReader) ReadBits(n int) (uint64, error) {
	if n < 0 || n > 64 {
		return 0, fmt.Errorf("%w: read of %d bits", ErrParam, n)
	}
	if n > r.Remaining() {
		return 0, fmt.Errorf("%w: truncated: need %d bits at bit %d, have %d", ErrFormat, n, r.pos, r.Remaining())
	}
	if i := r.pos >> 3; n <= 56 && i+8 <= len(r.data) {
		// Fast path: one 64-bit big-endian window holds all n bits.
		w := binary.BigEndian.Uint64(r.data[i:]) << uint(r.pos&7)
		r.pos += n
		if n == 0 {
			return 0, nil
		}
		return w >> uint(64-n), nil
	}
	var v uint64
	for n > 0 {
		off := r.pos & 7
		avail := 8 - off
		take := min(avail, n)
		b := uint64(r.data[r.pos>>3]) >> uint(avail-take)
		v = v<<uint(take) | b&(1<<uint(take)-1)
		n -= take
		r.pos += take
	}
	return v, nil
}

// ReadBig reads an n-bit unsigned integer of any size.
func (r *BitReader) ReadBig(n int) (*big.Int, error) {
	if n < 0 {
		return nil, fmt.Errorf("%w: read of %d bits", ErrParam, n)
	}
	if n > r.Remaining() {
		return nil, fmt.Errorf("%w: truncated: need %d bits at bit %d, have %d", ErrFormat, n, r.pos, r.Remaining())
	}
	b := make([]byte, (n+7)/8)
	i := 0
	if head := n % 8; head != 0 {
		v, _ := r.ReadBits(head)
		b[0] = byte(v)
		i = 1
	}
	if r.pos&7 == 0 {
		copy(b[i:], r.data[r.pos>>3:])
		r.pos += 8 * (len(b) - i)
	} else {
		for ; i < len(b); i++ {
			v, _ := r.ReadBits(8)
			b[i] = byte(v)
		}
	}
	return new(big.Int).SetBytes(b), nil
}
