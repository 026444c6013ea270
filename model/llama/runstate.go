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

// attention is one layer's attention over a batch or a tree as a
// tensor.Loop. Its items are groups (attnItem): queries of one session
// that read the same KV head, which they score and sum a page of the cache
// at a time each (one page's rows then serve every query of the group from
// the CPU's caches, where query by query each would read the whole cache
// from memory again). Each query's scores are a row of the buffers in
// free.
type attention struct {
	cfg        *model.Config
	local      bool    // the layer sees the last cfg.Window positions
	scale      float32 // of the scores
	q, out     []float32
	pos        []int
	keys, vals []*kvRows   // per row: the layer's cached keys and values of its session
	capRows    [][]float32 // per row·Heads+head: where to copy its probabilities (nil: none)
	width      int         // the longest row of scores
	work       int         // the layer's work, for the thread split
	items      []attnItem  // the groups of queries
	tree       *tree       // the rows are the nodes of this tree (nil: a batch)
	base       int         // a tree's first slot: the length of the cache before it
	mu         sync.Mutex  // guards free and paths
	free       [][]float32 // score buffers not in use
	paths      [][]int     // a tree's path buffers not in use
}

// attnItem is a group of queries that read the same cached keys and
// values: of rows r0…r1−1 (one session's), the query heads of KV head kv,
// numbered (r−r0)·kvMul + h−kv·kvMul, those from q0 to q1−1.
type attnItem struct{ r0, r1, kv, q0, q1 int32 }

// maxGroup is the most queries in one attnItem.
const maxGroup = 64

// group splits a batch's rows (seg: each row's session) into attnItems:
// each session's run of rows times each KV head, cut into pieces of at
// most maxGroup queries, and into more pieces while there are fewer than
// four per thread (the split of tensor.ParallelLoop).
func (a *attention) group(seg []int, n int) {
	cfg := a.cfg
	kvMul := cfg.Heads / cfg.KVHeads
	runs := 0
	for r := range n {
		if r == 0 || seg[r] != seg[r-1] {
			runs++
		}
	}
	groups := runs * cfg.KVHeads
	pieces := max(1, (4*tensor.Threads()+groups-1)/groups)
	a.items = a.items[:0]
	for r0 := 0; r0 < n; {
		r1 := r0 + 1
		for r1 < n && seg[r1] == seg[r0] {
			r1++
		}
		nq := (r1 - r0) * kvMul
		per := max(1, min(maxGroup, (nq+pieces-1)/pieces))
		for kv := range cfg.KVHeads {
			for q0 := 0; q0 < nq; q0 += per {
				a.items = append(a.items, attnItem{int32(r0), int32(r1), int32(kv), int32(q0), int32(min(nq, q0+per))})
			}
		}
		r0 = r1
	}
}

// forget drops the references to the sessions' caches and captures.
func (a *attention) forget() {
	clear(a.keys)
	clear(a.vals)
	a.q, a.out, a.pos, a.capRows, a.tree = nil, nil, nil, nil, nil
}

// Items is how many items the layer's loop has.
func (a *attention) Items() int { return len(a.items) }

// Run computes the attention of items [lo, hi).
func (a *attention) Run(lo, hi int) {
	var path []int // a tree node's path
	if a.tree != nil {
		path = a.pathBuffer()
		defer a.releasePath(path)
	}
	for _, it := range a.items[lo:hi] {
		a.runGroup(it, path)
	}
}

// groupQuery is one query of an attnItem: its row and head, the first
// position its window sees, the end of the cached positions it reads a
// page at a time (in a tree, those before the tree; the nodes of its path
// come after them), and its scores.
type groupQuery struct {
	r, h, first, end int
	at               []float32
}

// runGroup computes the attention of one group: every query's scores a
// page of cached keys at a time, then (in a tree) those of its path, its
// probabilities, and its weighted sum a page of cached values at a time,
// then (in a tree) over its path. Each query's scores and sum are those of
// the query alone (the scores are independent, and a weighted sum
// continued page by page has the bits of one sum). path is a buffer for a
// tree node's path (nil in a batch).
func (a *attention) runGroup(it attnItem, path []int) {
	cfg := a.cfg
	hs, qDim := cfg.HeadSize(), cfg.QDim()
	kvMul := cfg.Heads / cfg.KVHeads
	var qs [maxGroup]groupQuery
	group := qs[:it.q1-it.q0]
	lo, hi := int(^uint(0)>>1), 0 // the positions any query reads a page at a time
	for j := range group {
		i := int(it.q0) + j
		r, h := int(it.r0)+i/kvMul, int(it.kv)*kvMul+i%kvMul
		first := 0
		if a.local {
			first = max(0, a.pos[r]-cfg.Window+1)
		}
		end, n := a.pos[r]+1, a.pos[r]+1-first
		if a.tree != nil {
			end = max(first, a.base)
			n = end - first + len(a.path(path, r, first))
		}
		group[j] = groupQuery{r, h, first, end, a.buffer()[:n]}
		lo, hi = min(lo, first), max(hi, end)
	}
	keys, vals := a.keys[it.r0], a.vals[it.r0]
	off := int(it.kv) * hs
	output := func(g *groupQuery) []float32 { return a.out[g.r*qDim+g.h*hs : g.r*qDim+(g.h+1)*hs] }
	// run scores the keys of at's positions, the first in slot (summing:
	// adds their values to the output, weighted by at).
	run := func(g *groupQuery, at []float32, slot int, summing bool) {
		if summing {
			vals.weightedSumAdd(output(g), at, slot, off)
		} else {
			keys.dotRows(at, slot, off, a.q[g.r*qDim+g.h*hs:g.r*qDim+(g.h+1)*hs])
		}
	}
	// pageRuns runs each query's cached positions page by page.
	pageRuns := func(summing bool) {
		for p0 := lo - lo%kvPage; p0 < hi; p0 += kvPage {
			for j := range group {
				g := &group[j]
				if s, e := max(g.first, p0), min(g.end, p0+kvPage); s < e {
					run(g, g.at[s-g.first:e-g.first], s, summing)
				}
			}
		}
	}
	// pathRuns runs the runs of consecutive slots of a tree node's path
	// (nothing in a batch).
	pathRuns := func(g *groupQuery, summing bool) {
		if a.tree == nil {
			return
		}
		pre, nodes := g.end-g.first, a.path(path, g.r, g.first)
		for i, k := 0, 0; i < len(nodes); i = k {
			k = endOfRun(nodes, i)
			run(g, g.at[pre+i:pre+k], nodes[i], summing)
		}
	}
	pageRuns(false)
	for j := range group {
		g := &group[j]
		pathRuns(g, false)
		a.probs(g.at)
		if rh := g.r*cfg.Heads + g.h; a.capRows != nil && a.capRows[rh] != nil {
			copy(a.capRows[rh][g.first:], g.at)
		}
		clear(output(g))
	}
	pageRuns(true)
	for j := range group {
		pathRuns(&group[j], true)
		a.release(group[j].at)
	}
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
