package libllama

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Context is a llama_context: the KV cache of NSeqMax sequences and the
// buffers of one batch. It is not safe for concurrent use.
type Context struct {
	m      *Model
	h      uintptr // struct llama_context *
	mem    uintptr // llama_memory_t
	batch  Batch   // llama_batch_init(NBatch, 0, 1): C memory, reused
	cap    int
	nVocab int
	abort  *abortState
	tp     uintptr     // the ggml threadpool attached (UseThreadpool)
	thread *osThread   // where Decode calls llama_decode (OpenMP builds; nil: the caller's thread)
	inline atomic.Bool // Inline's f is running on thread: Decode calls directly
}

// Token is one entry of a batch: token ID at position Pos of sequence Seq,
// with its logits wanted when Logits is set.
type Token struct {
	ID, Pos, Seq int32
	Logits       bool
}

// NewContext makes a context with p (start from m.l.ContextDefaults()).
func (m *Model) NewContext(p ContextParams) (*Context, error) {
	mark := logMark()
	h := m.l.f.initFromModel(m.h, p)
	if h == 0 {
		return nil, fmt.Errorf("%w: making a context (n_ctx %d, %d sequences, n_ubatch %d): %s", ErrLoad, p.NCtx, p.NSeqMax, p.NUBatch, orUnknown(logErrorsSince(mark)))
	}
	c := &Context{m: m, h: h, mem: m.l.f.getMemory(h), nVocab: m.NVocab()}
	if m.l.OpenMP() {
		c.thread = newOSThread()
	}
	c.cap = int(m.l.f.nBatch(h))
	c.batch = m.l.f.batchInit(int32(c.cap), 0, 1)
	if c.batch.Token == nil {
		c.stopThread()
		m.l.f.free(h)
		return nil, fmt.Errorf("%w: llama_batch_init(%d) failed", ErrLoad, c.cap)
	}
	return c, nil
}

// Free releases the context.
func (c *Context) Free() {
	if c.h == 0 {
		return
	}
	c.m.l.f.batchFree(c.batch)
	c.m.l.f.free(c.h)
	c.h = 0
	c.freeThreadpool()
	c.stopThread()
}

// Inline runs f on the thread that makes the context's decodes (OpenMP
// builds; elsewhere it calls f), and f's decodes then skip the hand-over
// and its two wake-ups: for a loop of evaluations whose every call counts
// (hlm bench). Like every method of a Context, it is not for concurrent
// use: a decode from another goroutine while f runs would be made from
// that goroutine's thread (correct, with OpenMP's team of another thread).
func (c *Context) Inline(f func()) {
	if c.thread == nil {
		f()
		return
	}
	c.thread.do(func() {
		c.inline.Store(true)
		defer c.inline.Store(false)
		f()
	})
}

func (c *Context) stopThread() {
	if c.thread != nil {
		c.thread.stop()
		c.thread = nil
	}
}

// NCtx is the context's cells, all sequences together.
func (c *Context) NCtx() int { return int(c.m.l.f.nCtx(c.h)) }

// NCtxSeq is the positions one sequence may hold.
func (c *Context) NCtxSeq() int { return int(c.m.l.f.nCtxSeq(c.h)) }

// NBatch is the most tokens one Decode takes.
func (c *Context) NBatch() int { return c.cap }

// NUBatch is the micro-batch: the tokens of one graph evaluation.
func (c *Context) NUBatch() int { return int(c.m.l.f.nUBatch(c.h)) }

// NSeqMax is the number of sequences.
func (c *Context) NSeqMax() int { return int(c.m.l.f.nSeqMax(c.h)) }

// SetThreads sets the threads of single-token and batch evaluation.
func (c *Context) SetThreads(n, nBatch int) { c.m.l.f.setNThreads(c.h, int32(n), int32(nBatch)) }

// Decode evaluates toks in one llama_decode. The logits of the entries with
// Logits set are then Logits(0), Logits(1), … in their order.
func (c *Context) Decode(toks []Token) error {
	if len(toks) == 0 || len(toks) > c.cap {
		return fmt.Errorf("%w: a batch of %d tokens (1…%d)", ErrDecode, len(toks), c.cap)
	}
	b := c.batch
	n := len(toks)
	ids := unsafe.Slice(b.Token, n)
	pos := unsafe.Slice(b.Pos, n)
	nseq := unsafe.Slice(b.NSeqID, n)
	seqs := unsafe.Slice(b.SeqID, n)
	out := unsafe.Slice(b.Logits, n)
	for i, t := range toks {
		ids[i], pos[i], nseq[i] = t.ID, t.Pos, 1
		*seqs[i] = t.Seq
		out[i] = 0
		if t.Logits {
			out[i] = 1
		}
	}
	b.NTokens = int32(n)
	mark := logMark()
	var rc int32
	if c.thread != nil && !c.inline.Load() {
		c.thread.do(func() { rc = c.m.l.f.decode(c.h, b) })
	} else {
		rc = c.m.l.f.decode(c.h, b)
	}
	if rc != 0 {
		return &DecodeError{Code: rc, Log: logErrorsSince(mark)}
	}
	return nil
}

// Logits are the logits of the i-th output of the last Decode, in C memory
// that the next Decode overwrites: copy them.
func (c *Context) Logits(i int) ([]float32, error) {
	p := c.m.l.f.getLogitsIth(c.h, int32(i))
	if p == nil {
		return nil, fmt.Errorf("%w: no logits for output %d", ErrDecode, i)
	}
	return unsafe.Slice(p, c.nVocab), nil
}

// SeqRemove drops the positions [p0, p1) of sequence seq (p1 < 0: to the
// end); false when llama.cpp cannot (a partial removal it does not support).
func (c *Context) SeqRemove(seq, p0, p1 int) bool {
	return c.m.l.f.memorySeqRm(c.mem, int32(seq), int32(p0), int32(p1))
}

// SeqPosMax is the largest position sequence seq holds (-1: empty).
func (c *Context) SeqPosMax(seq int) int { return int(c.m.l.f.memorySeqPosMax(c.mem, int32(seq))) }

// SaveSeq copies the state of sequence seq (its KV cells) out of the context.
func (c *Context) SaveSeq(seq int) ([]byte, error) {
	n := c.m.l.f.stateSeqGetSize(c.h, int32(seq))
	if n == 0 {
		return nil, fmt.Errorf("%w: sequence %d has no state to save", ErrDecode, seq)
	}
	buf := make([]byte, n)
	if got := c.m.l.f.stateSeqGetData(c.h, &buf[0], n, int32(seq)); got != n {
		return nil, fmt.Errorf("%w: saved %d of %d bytes of sequence %d", ErrDecode, got, n, seq)
	}
	return buf, nil
}

// RestoreSeq loads a state SaveSeq made into sequence seq (which must be
// empty).
func (c *Context) RestoreSeq(seq int, state []byte) error {
	if len(state) == 0 {
		return fmt.Errorf("%w: empty state for sequence %d", ErrDecode, seq)
	}
	mark := logMark()
	if c.m.l.f.stateSeqSetData(c.h, &state[0], uintptr(len(state)), int32(seq)) == 0 {
		return fmt.Errorf("%w: restoring sequence %d: %s", ErrDecode, seq, orUnknown(logErrorsSince(mark)))
	}
	runtime.KeepAlive(state)
	return nil
}
