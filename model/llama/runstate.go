package llama

import (
	"sync"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/tensor"
)

// runState is the scratch of a forward pass, as llama2.c's RunState: the
// activations of a block of rows (the tokens of every session in the
// batch), the attention's loop and the bookkeeping of the rows. A session
// allocates it on its first Eval and keeps it (EvalBatch uses the first
// session's), growing it for longer blocks; after a block of more than
// keepRows rows (a prefill) it is let go, so that a session does not hold
// a prompt's worth of scratch. Decoding then allocates only what Eval
// returns.
type runState struct {
	x, xb, xb2 []float32 // residual stream; normed input and attention output (max(Dim, QDim)); a block's output (Dim)
	q, k, v    []float32 // QDim, KVDim, KVDim
	hb, hb2    []float32 // feed-forward hidden (Hidden)
	emb        []float32 // one token's embedding when it is not Dim wide (EmbedWidth)
	posRow     []float32 // one learned position embedding (Dim)
	xf, xe     []float32 // the final norm of the rows with logits (Dim), projected (EmbedWidth)

	seg, pos []int  // row r is a token of session seg[r], at position pos[r]
	slot     []int  // in cache slot slot[r] (pos[r] but in a tree)
	last     []bool // row r is its session's last
	rows     []int  // the rows whose logits are returned
	captures []*model.Attention
	attn     attention
}

// keepRows is the longest block (rows of all sessions together) whose
// scratch a session keeps: decoding, verification blocks and batches of
// decode steps; a prompt's prefill allocates its own.
const keepRows = 64

// grow returns b resized to n elements, reallocated when too small
// (contents undefined).
func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

// runFor returns the run state of a batch led by s, sized for n rows.
func (s *Session) runFor(n int) *runState {
	if s.run == nil {
		s.run = new(runState)
	}
	rs, cfg := s.run, s.m.cfg
	dim, qDim, kvDim := cfg.Dim, cfg.QDim(), cfg.KVDim()
	rs.x, rs.xb, rs.xb2 = grow(rs.x, n*dim), grow(rs.xb, n*max(dim, qDim)), grow(rs.xb2, n*dim)
	rs.q, rs.k, rs.v = grow(rs.q, n*qDim), grow(rs.k, n*kvDim), grow(rs.v, n*kvDim)
	rs.hb, rs.hb2 = grow(rs.hb, n*cfg.Hidden), grow(rs.hb2, n*cfg.Hidden)
	rs.seg, rs.pos, rs.slot, rs.last = grow(rs.seg, n), grow(rs.pos, n), grow(rs.slot, n), grow(rs.last, n)
	rs.rows = rs.rows[:0]
	return rs
}

// done forgets the batch's sessions and lets a prefill's scratch go.
func (s *Session) runDone(rs *runState, n int) {
	clear(rs.captures)
	rs.attn.forget()
	if n > keepRows {
		s.run = nil
	}
}

// attention is one layer's attention over a batch as a tensor.Loop: item
// rh is head rh%Heads of row rh/Heads. Each row's scores are a row of the
// buffers in free, one per Run running at once.
type attention struct {
	cfg        *model.Config
	local      bool    // the layer sees the last cfg.Window positions
	scale      float32 // of the scores
	q, out     []float32
	pos        []int
	keys, vals []*kvRows   // per row: the layer's cached keys and values of its session
	capRows    [][]float32 // per item: where to copy its probabilities (nil: none)
	width      int         // the longest row of scores
	work       int         // the layer's work, for the thread split
	tree       *tree       // the rows are the nodes of this tree (nil: a batch)
	base       int         // a tree's first slot: the length of the cache before it
	mu         sync.Mutex  // guards free and paths
	free       [][]float32 // score buffers not in use
	paths      [][]int     // a tree's path buffers not in use
}

// forget drops the references to the sessions' caches and captures.
func (a *attention) forget() {
	clear(a.keys)
	clear(a.vals)
	a.q, a.out, a.pos, a.capRows, a.tree = nil, nil, nil, nil, nil
}

// Run computes the attention of items [lo, hi).
func (a *attention) Run(lo, hi int) {
	att := a.buffer()
	if a.tree != nil {
		a.runTree(att, lo, hi)
		return
	}
	cfg := a.cfg
	hs, heads, qDim := cfg.HeadSize(), cfg.Heads, cfg.QDim()
	kvMul := cfg.Heads / cfg.KVHeads
	for rh := lo; rh < hi; rh++ {
		r, h := rh/heads, rh%heads
		qh := a.q[r*qDim+h*hs : r*qDim+(h+1)*hs]
		off := (h / kvMul) * hs
		// A local layer sees the keys of the last Window positions.
		first := 0
		if a.local {
			first = max(0, a.pos[r]-cfg.Window+1)
		}
		at := att[:a.pos[r]+1-first]
		a.keys[r].dotRows(at, first, off, qh)
		a.probs(at)
		if a.capRows != nil && a.capRows[rh] != nil {
			copy(a.capRows[rh][first:], at)
		}
		a.vals[r].weightedSum(a.out[r*qDim+h*hs:r*qDim+(h+1)*hs], at, first, off)
	}
	a.release(att)
}

// probs turns a row of scores into attention probabilities: scaled,
// soft-capped, softmax.
func (a *attention) probs(at []float32) {
	for t := range at {
		at[t] *= a.scale
	}
	if a.cfg.AttnSoftcap > 0 {
		tensor.Softcap(at, a.cfg.AttnSoftcap)
	}
	tensor.Softmax(at)
}

// release returns a score buffer to the free list.
func (a *attention) release(att []float32) {
	a.mu.Lock()
	a.free = append(a.free, att)
	a.mu.Unlock()
}

// buffer returns a score buffer of width values. A new one has room for
// twice the width (at most the context), so that a decode loop, whose rows
// grow by one a step, makes a new one only when the context doubles.
func (a *attention) buffer() []float32 {
	a.mu.Lock()
	defer a.mu.Unlock()
	for len(a.free) > 0 {
		b := a.free[len(a.free)-1]
		a.free = a.free[:len(a.free)-1]
		if cap(b) >= a.width {
			return b[:a.width]
		}
	}
	return make([]float32, a.width, max(a.width, min(a.cfg.SeqLen, 2*a.width)))
}
