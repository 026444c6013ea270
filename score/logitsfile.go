package score

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// The file llama-perplexity --kl-divergence-base writes (perplexity.cpp,
// perplexity() with a logits file), little-endian:
//
//	offset  size               field
//	0       8                  magic "_logits_"
//	8       4  uint32          n_ctx: tokens per window
//	12      4  int32           n_vocab
//	16      4  int32           n_chunk: windows
//	20      4·n_ctx·n_chunk    int32 tokens, window after window (the text's own
//	                           first token, not the BOS that replaces it)
//	…       then per window, n_ctx−1−n_ctx/2 rows (its scored positions), each
//	        nv = 2·⌈n_vocab/2⌉+4 uint16:
//	          float32 scale, float32 min_log_prob, n_vocab uint16 steps, padding
//	        (log p(i) = scale·step(i) + min_log_prob; see Row16)
const logitsMagic = "_logits_"

// Limits on a base file's header, far above any real model, checked before
// anything is allocated.
const (
	maxFileWindow = 1 << 20
	maxFileVocab  = 1 << 22
	maxFileTokens = 1 << 28
)

// LogitsReader reads a llama-perplexity --kl-divergence-base file: the
// header and tokens at once, then one window's rows at a time (a file for
// a 32,000-token vocabulary holds 16 MB per window of 512).
type LogitsReader struct {
	Window int     // n_ctx
	Vocab  int     // n_vocab
	Chunks int     // n_chunk
	Tokens []int32 // Window·Chunks tokens
	r      *bufio.Reader
	read   int    // windows read so far
	row    []byte // one row's bytes
}

// NewLogitsReader reads the header and tokens of a base file.
func NewLogitsReader(r io.Reader) (*LogitsReader, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	var hdr [20]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return nil, fmt.Errorf("%w: base logits file: %v", ErrMismatch, err)
	}
	if string(hdr[:8]) != logitsMagic {
		return nil, fmt.Errorf("%w: not a llama-perplexity logits file (magic %q)", ErrMismatch, hdr[:8])
	}
	window := binary.LittleEndian.Uint32(hdr[8:])
	vocab := int32(binary.LittleEndian.Uint32(hdr[12:]))
	chunks := int32(binary.LittleEndian.Uint32(hdr[16:]))
	if window < 4 || window > maxFileWindow || vocab < 1 || vocab > maxFileVocab || chunks < 1 ||
		int64(window)*int64(chunks) > maxFileTokens {
		return nil, fmt.Errorf("%w: base logits file with windows of %d tokens, a vocabulary of %d, %d windows", ErrMismatch, window, vocab, chunks)
	}
	f := &LogitsReader{Window: int(window), Vocab: int(vocab), Chunks: int(chunks), r: br}
	// Read in pieces, so that a short file claiming many tokens fails
	// before it has allocated for them all.
	n := f.Window * f.Chunks
	raw := make([]byte, 4*min(n, 1<<16))
	for len(f.Tokens) < n {
		b := raw[:4*min(n-len(f.Tokens), 1<<16)]
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, fmt.Errorf("%w: base logits file: tokens: %v", ErrMismatch, io.ErrUnexpectedEOF)
		}
		for i := 0; i < len(b); i += 4 {
			f.Tokens = append(f.Tokens, int32(binary.LittleEndian.Uint32(b[i:])))
		}
	}
	return f, nil
}

// rowWords is llama.cpp's nv: uint16 words per stored row.
func rowWords(vocab int) int { return 2*((vocab+1)/2) + 4 }

// Next reads the next window's rows, one per scored position (see Scored).
func (f *LogitsReader) Next() ([]Row16, error) {
	if f.read >= f.Chunks {
		return nil, io.EOF
	}
	if f.row == nil {
		f.row = make([]byte, 2*rowWords(f.Vocab))
	}
	first, end := Scored(f.Window)
	rows := make([]Row16, 0, min(end-first, 1024))
	for range end - first {
		if _, err := io.ReadFull(f.r, f.row); err != nil {
			return nil, fmt.Errorf("%w: base logits file: window %d: %v", ErrMismatch, f.read, io.ErrUnexpectedEOF)
		}
		r := Row16{
			Scale: math.Float32frombits(binary.LittleEndian.Uint32(f.row[0:])),
			Min:   math.Float32frombits(binary.LittleEndian.Uint32(f.row[4:])),
			Q:     make([]uint16, f.Vocab),
		}
		for j := range r.Q {
			r.Q[j] = binary.LittleEndian.Uint16(f.row[8+2*j:])
		}
		rows = append(rows, r)
	}
	f.read++
	return rows, nil
}

// WriteLogitsHeader writes a base file's header and tokens (len(tokens)
// must be window·chunks); WriteRow16 then writes its rows, window after
// window. hlm uses them to make base files llama-perplexity reads.
func WriteLogitsHeader(w io.Writer, window, vocab, chunks int, tokens []int32) error {
	if len(tokens) != window*chunks {
		return fmt.Errorf("score: %d tokens for %d windows of %d", len(tokens), chunks, window)
	}
	b := make([]byte, 20+4*len(tokens))
	copy(b, logitsMagic)
	binary.LittleEndian.PutUint32(b[8:], uint32(window))
	binary.LittleEndian.PutUint32(b[12:], uint32(vocab))
	binary.LittleEndian.PutUint32(b[16:], uint32(chunks))
	for i, t := range tokens {
		binary.LittleEndian.PutUint32(b[20+4*i:], uint32(t))
	}
	_, err := w.Write(b)
	return err
}

// WriteRow16 writes one stored row of a base file.
func WriteRow16(w io.Writer, r Row16) error {
	b := make([]byte, 2*rowWords(len(r.Q)))
	binary.LittleEndian.PutUint32(b[0:], math.Float32bits(r.Scale))
	binary.LittleEndian.PutUint32(b[4:], math.Float32bits(r.Min))
	for j, q := range r.Q {
		binary.LittleEndian.PutUint16(b[8+2*j:], q)
	}
	_, err := w.Write(b)
	return err
}
