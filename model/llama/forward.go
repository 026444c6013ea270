package llama

import (
	"math"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/tensor"
)

// pass is one forward pass over a batch of rows: the rows' embeddings, the
// layers (an attention block and a feed-forward block each), the
// classifier, and what the sessions keep of it. Each step is a method that
// reads and writes the run state; forward calls them in order. The
// sessions and their blocks of tokens are the steps' arguments, not
// fields: a pass's fields reach the heap (the attention loop runs on the
// thread pool), and with them, for the escape analysis, whatever else the
// pass holds, so a one-session Eval's slices would no longer stay on its
// stack (TestEvalAllocs counts them).
type pass struct {
	m   *Model
	cfg *model.Config
	rs  *runState
	tr  *tree
	n   int // rows: the tokens of all sessions, or a tree's nodes

	dropping  bool               // some session has MC dropout on
	captures  []*model.Attention // per session: what it captures (nil: nothing)
	capturing bool               // some session captures
}

// forward is the forward pass of n rows, checked: the blocks of tokens of
// sessions (EvalBatch), or with tr the nodes of one session's tree
// (EvalTree: tokens[0][i] is node i, at position Len()+depth(i) in slot
// Len()+i, attending to its ancestors instead of the slots before it).
func forward(sessions []*Session, tokens [][]int, want model.Wanted, tr *tree, n int) [][][]float32 {
	m := sessions[0].m
	rs := sessions[0].runFor(n)
	defer sessions[0].runDone(rs, n)
	p := pass{m: m, cfg: &m.cfg, rs: rs, tr: tr, n: n}
	for _, s := range sessions {
		p.dropping = p.dropping || s.dropout > 0
	}

	p.embed(sessions, tokens)
	rs.attn.start(&m.cfg, rs, n, tr, sessions[0].pos)
	p.startCaptures(sessions, tokens)
	for l := range p.cfg.Layers {
		p.attentionBlock(l, sessions)
		p.feedForwardBlock(l, sessions)
	}
	out := p.classify(want, tokens)
	p.finish(sessions, tokens)
	return out
}

// embed lays out the rows (row r is token j of session seg[r], at position
// pos[r], its keys and values in cache slot slot[r]: pos[r] but in a tree)
// and writes their embeddings into the residual stream.
func (p *pass) embed(sessions []*Session, tokens [][]int) {
	cfg, w, rs := p.cfg, p.m.w, p.rs
	dim := cfg.Dim
	seg, pos, slot, last, x := rs.seg, rs.pos, rs.slot, rs.last, rs.x
	if w.ProjIn != nil {
		rs.emb = grow(rs.emb, cfg.EmbedWidth())
	}
	r := 0
	for i, s := range sessions {
		s.grow(s.pos + len(tokens[i]))
		for j, t := range tokens[i] {
			seg[r], pos[r], slot[r] = i, s.pos+j, s.pos+j
			if p.tr != nil {
				pos[r] = s.pos + p.tr.depth[j]
			}
			last[r] = j == len(tokens[i])-1
			xr := x[r*dim : (r+1)*dim]
			if w.ProjIn != nil {
				w.Embedding.Row(rs.emb, t)
				tensor.MatMul(xr, w.ProjIn, rs.emb, 1)
			} else {
				w.Embedding.Row(xr, t)
			}
			r++
		}
	}
	if cfg.EmbedScale > 0 {
		for i := range x {
			x[i] *= cfg.EmbedScale
		}
	}
	if w.Positions != nil {
		row := grow(rs.posRow, dim)
		rs.posRow = row
		for r := range p.n {
			w.Positions.Row(row, pos[r]+cfg.PosOffset)
			tensor.Add(x[r*dim:(r+1)*dim], row)
		}
	}
}

// startCaptures sets up the attention each session captures (none in a
// tree).
func (p *pass) startCaptures(sessions []*Session, tokens [][]int) {
	cfg := p.cfg
	p.rs.captures = grow(p.rs.captures, len(sessions))
	p.captures = p.rs.captures
	for i, s := range sessions {
		p.captures[i] = nil
		if s.capture == model.CaptureNone || p.tr != nil {
			continue
		}
		p.capturing = true
		first, heads := 0, 1
		if s.capture == model.CaptureLastLayer {
			first = cfg.Layers - 1
		}
		if s.capture == model.CaptureHeads {
			heads = cfg.Heads
		}
		p.captures[i] = &model.Attention{FirstLayer: first, Layers: cfg.Layers - first, Heads: heads, Len: s.pos + len(tokens[i])}
	}
}

// start sets up the attention loop of a pass over n rows, laid out in rs
// (pass.embed), for every layer: the attention work and the longest
// attention row are the same in each.
func (at *attention) start(cfg *model.Config, rs *runState, n int, tr *tree, base int) {
	work, maxPos := 0, 0
	for r := range n {
		work += rs.pos[r] + 1
		maxPos = max(maxPos, rs.pos[r])
	}
	work *= 2 * cfg.QDim()
	at.cfg, at.q, at.out, at.pos, at.width, at.work = cfg, rs.q, rs.xb, rs.pos, maxPos+1, work
	at.scale = float32(1 / math.Sqrt(float64(cfg.HeadSize())))
	if cfg.AttnScale > 0 {
		at.scale = cfg.AttnScale
	}
	at.keys, at.vals = grow(at.keys, n), grow(at.vals, n)
	at.tree, at.base = tr, base
	at.group(rs.seg, n)
}

// norm normalises rows with the family's norm.
func (p *pass) norm(out, in, weight, bias []float32) {
	if p.m.fam.layerNorm {
		tensor.LayerNormRows(out, in, weight, bias, p.cfg.NormEps)
	} else {
		tensor.RMSNormRows(out, in, weight, p.cfg.NormEps)
	}
}

// attentionBlock is layer l's attention: the rows' queries, keys and
// values (the keys and values into their sessions' caches), the attention
// itself (and its captures), the output projection into the residual
// stream, and the norm after it.
func (p *pass) attentionBlock(l int, sessions []*Session) {
	cfg, rs, n := p.cfg, p.rs, p.n
	dim, qDim, kvDim := cfg.Dim, cfg.QDim(), cfg.KVDim()
	ly := &p.m.w.Layers[l]
	x, xb, xb2, q, k, v := rs.x, rs.xb, rs.xb2, rs.q, rs.k, rs.v
	at := &rs.attn
	at.local = cfg.Local(l)
	if cfg.PostNorm {
		copy(xb, x)
	} else {
		p.norm(xb[:n*dim], x, ly.AttnNorm, ly.AttnNormB)
	}
	tensor.MatMuls([][]float32{q, k, v}, []*tensor.Matrix{ly.Wq, ly.Wk, ly.Wv}, xb[:n*dim], n)
	addBias(q, ly.Bq)
	addBias(k, ly.Bk)
	addBias(v, ly.Bv)
	if ly.QNorm != nil {
		tensor.RMSNormRows(q, q, ly.QNorm, cfg.NormEps)
		tensor.RMSNormRows(k, k, ly.KNorm, cfg.NormEps)
	}
	rope := p.m.rope
	if at.local && p.m.ropeLocal != nil {
		rope = p.m.ropeLocal
	}
	for r := range n {
		if rope != nil {
			rope.Apply(q[r*qDim:(r+1)*qDim], rs.pos[r])
			rope.Apply(k[r*kvDim:(r+1)*kvDim], rs.pos[r])
		}
		s := sessions[rs.seg[r]]
		s.k[l].put(rs.slot[r], k[r*kvDim:(r+1)*kvDim])
		s.v[l].put(rs.slot[r], v[r*kvDim:(r+1)*kvDim])
		at.keys[r], at.vals[r] = &s.k[l], &s.v[l]
	}

	p.captureRows(l)
	tensor.ParallelLoop(at.Items(), at.work, at)
	p.keepCaptured()

	tensor.MatMul(xb2, ly.Wo, xb[:n*qDim], n)
	addBias(xb2, ly.Bo)
	if ly.PostAttnNorm != nil {
		tensor.RMSNormRows(xb2, xb2, ly.PostAttnNorm, cfg.NormEps)
	}
	if p.dropping {
		dropRows(xb2, dim, sessions, rs.seg)
	}
	tensor.Add(x, xb2)
	if cfg.PostNorm {
		p.norm(x, x, ly.AttnNorm, ly.AttnNormB)
		copy(xb, x)
	} else {
		p.norm(xb[:n*dim], x, ly.FFNNorm, ly.FFNNormB)
	}
}

// captureRows gives the attention loop the per-head rows to capture for
// layer l: the last row of each session that captures this layer (none
// when no session captures).
func (p *pass) captureRows(l int) {
	at, heads := &p.rs.attn, p.cfg.Heads
	at.capRows = nil
	if !p.capturing {
		return
	}
	at.capRows = make([][]float32, p.n*heads)
	for r := range p.n {
		if c := p.captures[p.rs.seg[r]]; c != nil && p.rs.last[r] && l >= c.FirstLayer {
			for h := range heads {
				at.capRows[r*heads+h] = make([]float32, p.rs.pos[r]+1)
			}
		}
	}
}

// keepCaptured appends the rows the attention loop captured to their
// sessions' captures.
func (p *pass) keepCaptured() {
	at, heads := &p.rs.attn, p.cfg.Heads
	if at.capRows == nil {
		return
	}
	for r := range p.n {
		if at.capRows[r*heads] != nil {
			c := p.captures[p.rs.seg[r]]
			c.Rows = append(c.Rows, at.capRows[r*heads:(r+1)*heads]...)
		}
	}
}

// feedForwardBlock is layer l's feed-forward network (gated or not) on the
// normed rows, added to the residual stream.
func (p *pass) feedForwardBlock(l int, sessions []*Session) {
	cfg, rs, n, fam := p.cfg, p.rs, p.n, p.m.fam
	ly := &p.m.w.Layers[l]
	x, xb, xb2, hb, hb2 := rs.x, rs.xb, rs.xb2, rs.hb, rs.hb2
	if fam.gated {
		tensor.MatMuls([][]float32{hb, hb2}, []*tensor.Matrix{ly.W1, ly.W3}, xb[:n*cfg.Dim], n)
		if fam.act == actGELU {
			tensor.GeGLU(hb, hb2)
		} else {
			tensor.SwiGLU(hb, hb2)
		}
	} else {
		tensor.MatMul(hb, ly.W3, xb[:n*cfg.Dim], n)
		addBias(hb, ly.B3)
		if fam.act == actReLU {
			tensor.ReLU(hb)
		} else {
			tensor.GELU(hb)
		}
	}
	tensor.MatMul(xb2, ly.W2, hb, n)
	addBias(xb2, ly.B2)
	if ly.PostFFNNorm != nil {
		tensor.RMSNormRows(xb2, xb2, ly.PostFFNNorm, cfg.NormEps)
	}
	if p.dropping {
		dropRows(xb2, cfg.Dim, sessions, rs.seg)
	}
	tensor.Add(x, xb2)
	if cfg.PostNorm {
		p.norm(x, x, ly.FFNNorm, ly.FFNNormB)
	}
}

// classify is the final norm and the classifier, for the rows whose logits
// are wanted (want; a tree's nodes are tokens[0]). It returns each
// session's logits: the rows are session-major, so a session's are a run
// of them (nil when none of its rows is wanted).
func (p *pass) classify(want model.Wanted, tokens [][]int) [][][]float32 {
	cfg, rs, w, fam := p.cfg, p.rs, p.m.w, p.m.fam
	dim := cfg.Dim
	r := 0
	for i, t := range tokens {
		from := want.From(i, len(t))
		for j := range t {
			if j >= from {
				rs.rows = append(rs.rows, r)
			}
			r++
		}
	}
	rows := rs.rows
	out := make([][][]float32, len(tokens))
	if len(rows) == 0 {
		return out
	}
	xf := grow(rs.xf, len(rows)*dim)
	rs.xf = xf
	for i, r := range rows {
		xr, fr := rs.x[r*dim:(r+1)*dim], xf[i*dim:(i+1)*dim]
		switch {
		case w.FinalNorm == nil:
			copy(fr, xr)
		case fam.layerNorm:
			tensor.LayerNorm(fr, xr, w.FinalNorm, w.FinalNormB, cfg.NormEps)
		default:
			tensor.RMSNorm(fr, xr, w.FinalNorm, cfg.NormEps)
		}
	}
	if w.ProjOut != nil {
		rs.xe = grow(rs.xe, len(rows)*cfg.EmbedWidth())
		tensor.MatMul(rs.xe, w.ProjOut, xf, len(rows))
		xf = rs.xe
	}
	logits := make([]float32, len(rows)*cfg.Vocab)
	tensor.MatMul(logits, w.Output, xf, len(rows))
	if cfg.FinalSoftcap > 0 {
		tensor.Softcap(logits, cfg.FinalSoftcap)
	}

	views := make([][]float32, len(rows))
	for i := range rows {
		views[i] = logits[i*cfg.Vocab : (i+1)*cfg.Vocab : (i+1)*cfg.Vocab]
	}
	seg := rs.seg
	for i, j := 0, 0; i < len(rows); i = j {
		for j = i; j < len(rows) && seg[rows[j]] == seg[rows[i]]; j++ {
		}
		out[seg[rows[i]]] = views[i:j:j]
	}
	return out
}

// finish advances the sessions past their tokens (not past a tree's nodes,
// which stay in the slots after the cache) and hands each its capture.
func (p *pass) finish(sessions []*Session, tokens [][]int) {
	for i, s := range sessions {
		if p.tr == nil {
			s.pos += len(tokens[i])
		}
		s.tree = p.tr
		s.att = nil
		if c := p.captures[i]; c != nil {
			if c.Heads == 1 {
				c.Rows = averageHeads(c.Rows, p.cfg.Heads)
			}
			s.att = c
		}
	}
}
