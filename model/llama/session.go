package llama

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/tensor"
)

// Session is one sequence: a KV cache over positions [0, Len()), and
// after EvalTree the nodes of a token tree in the slots after them.
type Session struct {
	m       *Model
	pos     int
	k, v    [][]float32 // per layer: capacity slots × KVDim (slot i is position i below pos)
	tree    *tree       // the nodes in slots pos… (nil: none; see EvalTree)
	capture model.Capture
	att     *model.Attention
	dropout float32    // MC dropout probability (0: off, the default)
	drng    *rand.Rand // dropout masks
	run     *runState  // scratch of the forward passes this session leads
}

var _ model.Session = (*Session)(nil)

// Model is the model the session evaluates.
func (s *Session) Model() *Model { return s.m }

// Len is the number of cached positions.
func (s *Session) Len() int { return s.pos }

// Truncate drops positions ≥ n, and the tree of an EvalTree.
func (s *Session) Truncate(n int) error {
	if n < 0 || n > s.pos {
		return fmt.Errorf("truncate to %d: session holds %d positions", n, s.pos)
	}
	s.pos, s.tree = n, nil
	return nil
}

// SetCapture chooses the attention probabilities that Eval records.
func (s *Session) SetCapture(c model.Capture) { s.capture = c }

// SetDropout turns on inverted dropout for the positions this session
// evaluates from now on: every output of an attention block and of a
// feed-forward block is zeroed with probability p, the survivors scaled by
// 1/(1 − p), before it joins the residual stream (the placement of
// Vaswani et al. 2017), with masks drawn from rng. It is for Monte-Carlo
// dropout uncertainty (Gal & Ghahramani 2016; U-HLM Sec. III-A); p = 0
// turns it off, and off it costs nothing. Positions evaluated with dropout
// keep their perturbed keys and values in the cache: truncate and
// re-evaluate them without dropout to continue deterministically.
func (s *Session) SetDropout(p float64, rng *rand.Rand) {
	if !(p > 0) || rng == nil {
		s.dropout, s.drng = 0, nil
		return
	}
	s.dropout, s.drng = float32(min(p, 0.999)), rng
}

// Attention is what the last Eval captured for its newest position (nil when
// capture is off).
func (s *Session) Attention() *model.Attention { return s.att }

// Eval appends tokens and returns the logits after each of them.
func (s *Session) Eval(tokens []int) ([][]float32, error) {
	out, err := EvalBatch([]*Session{s}, [][]int{tokens}, false)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// Prefill appends tokens and returns only the logits after the last one.
func (s *Session) Prefill(tokens []int) ([]float32, error) {
	if len(tokens) == 0 {
		return nil, fmt.Errorf("prefill of no tokens")
	}
	out, err := EvalBatch([]*Session{s}, [][]int{tokens}, true)
	if err != nil {
		return nil, err
	}
	return out[0][0], nil
}

// grow makes room in the cache for n slots: at most the context, unless
// a tree's slots need more.
func (s *Session) grow(n int) {
	kv := s.m.cfg.KVDim()
	if len(s.k) > 0 && len(s.k[0]) >= n*kv {
		return
	}
	c := 16
	if len(s.k) > 0 {
		c = max(c, 2*len(s.k[0])/kv)
	}
	c = max(min(c, s.m.cfg.SeqLen), n)
	for l := range s.k {
		nk := make([]float32, c*kv)
		copy(nk, s.k[l][:s.pos*kv])
		s.k[l] = nk
		nv := make([]float32, c*kv)
		copy(nv, s.v[l][:s.pos*kv])
		s.v[l] = nv
	}
}

// EvalBatch evaluates a block of tokens for each session in one forward pass:
// every weight matrix is read once for all of them. It returns, per session,
// the logits after each of its tokens, or only after the last one when
// lastOnly is set. All sessions must belong to the same model (the same
// weights and layer count) and each must appear once. On error no session is
// changed; on success a session's tree (EvalTree) is dropped. The pass runs
// in the first session's run state: what it allocates is what it returns
// (the logits and the slices that hold them), once the run state and the
// sessions' caches have grown.
func EvalBatch(sessions []*Session, tokens [][]int, lastOnly bool) ([][][]float32, error) {
	n, err := checkBatch(sessions, tokens)
	if err != nil {
		return nil, err
	}
	return forward(sessions, tokens, lastOnly, nil, n), nil
}

// forward is the forward pass of n rows, checked: the blocks of tokens of
// sessions (EvalBatch), or with tr the nodes of one session's tree
// (EvalTree: tokens[0][i] is node i, at position Len()+depth(i) in slot
// Len()+i, attending to its ancestors instead of the slots before it).
func forward(sessions []*Session, tokens [][]int, lastOnly bool, tr *tree, n int) [][][]float32 {
	m := sessions[0].m
	cfg := m.cfg
	dim, qDim, kvDim, heads := cfg.Dim, cfg.QDim(), cfg.KVDim(), cfg.Heads
	w, fam := m.w, m.fam
	rs := sessions[0].runFor(n)
	defer sessions[0].runDone(rs, n)

	// Row r of the batch is token j of session seg[r], at position pos[r],
	// its keys and values in cache slot slot[r] (pos[r] but in a tree).
	seg, pos, slot, last, x := rs.seg, rs.pos, rs.slot, rs.last, rs.x
	r := 0
	if w.ProjIn != nil {
		rs.emb = grow(rs.emb, cfg.EmbedWidth())
	}
	for i, s := range sessions {
		s.grow(s.pos + len(tokens[i]))
		for j, t := range tokens[i] {
			seg[r], pos[r], slot[r] = i, s.pos+j, s.pos+j
			if tr != nil {
				pos[r] = s.pos + tr.depth[j]
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
		for r := 0; r < n; r++ {
			w.Positions.Row(row, pos[r]+cfg.PosOffset)
			tensor.Add(x[r*dim:(r+1)*dim], row)
		}
	}

	xb, xb2 := rs.xb, rs.xb2
	q, k, v := rs.q, rs.k, rs.v
	hb, hb2 := rs.hb, rs.hb2
	norm := func(out, in, weight, bias []float32) {
		if fam.layerNorm {
			tensor.LayerNormRows(out, in, weight, bias, cfg.NormEps)
		} else {
			tensor.RMSNormRows(out, in, weight, cfg.NormEps)
		}
	}

	dropping := false
	for _, s := range sessions {
		dropping = dropping || s.dropout > 0
	}

	rs.captures = grow(rs.captures, len(sessions))
	captures := rs.captures
	capturing := false
	for i, s := range sessions {
		captures[i] = nil
		if s.capture != model.CaptureNone && tr == nil {
			capturing = true
			first, heads := 0, 1
			if s.capture == model.CaptureLastLayer {
				first = cfg.Layers - 1
			}
			if s.capture == model.CaptureHeads {
				heads = cfg.Heads
			}
			captures[i] = &model.Attention{FirstLayer: first, Layers: cfg.Layers - first, Heads: heads, Len: s.pos + len(tokens[i])}
		}
	}

	// The attention work and the longest attention row are the same in every
	// layer.
	work, maxPos := 0, 0
	for r := 0; r < n; r++ {
		work += (pos[r] + 1) * 2 * qDim
		maxPos = max(maxPos, pos[r])
	}
	at := &rs.attn
	at.cfg, at.q, at.out, at.pos, at.width = &m.cfg, q, xb, pos, maxPos+1
	at.scale = float32(1 / math.Sqrt(float64(cfg.HeadSize())))
	if cfg.AttnScale > 0 {
		at.scale = cfg.AttnScale
	}
	at.keys, at.vals = grow(at.keys, n), grow(at.vals, n)
	at.tree, at.base = tr, sessions[0].pos

	for l := 0; l < cfg.Layers; l++ {
		ly := &w.Layers[l]
		at.local = cfg.Local(l)
		if cfg.PostNorm {
			copy(xb, x)
		} else {
			norm(xb[:n*dim], x, ly.AttnNorm, ly.AttnNormB)
		}
		tensor.MatMuls([][]float32{q, k, v}, []*tensor.Matrix{ly.Wq, ly.Wk, ly.Wv}, xb[:n*dim], n)
		addBias(q, ly.Bq)
		addBias(k, ly.Bk)
		addBias(v, ly.Bv)
		if ly.QNorm != nil {
			tensor.RMSNormRows(q, q, ly.QNorm, cfg.NormEps)
			tensor.RMSNormRows(k, k, ly.KNorm, cfg.NormEps)
		}
		rope := m.rope
		if at.local && m.ropeLocal != nil {
			rope = m.ropeLocal
		}
		for r := 0; r < n; r++ {
			if rope != nil {
				rope.Apply(q[r*qDim:(r+1)*qDim], pos[r])
				rope.Apply(k[r*kvDim:(r+1)*kvDim], pos[r])
			}
			s := sessions[seg[r]]
			copy(s.k[l][slot[r]*kvDim:], k[r*kvDim:(r+1)*kvDim])
			copy(s.v[l][slot[r]*kvDim:], v[r*kvDim:(r+1)*kvDim])
			at.keys[r], at.vals[r] = s.k[l], s.v[l]
		}

		// Per-head attention rows to capture for this layer (nil when no
		// session captures).
		at.capRows = nil
		if capturing {
			at.capRows = make([][]float32, n*heads)
			for r := 0; r < n; r++ {
				if c := captures[seg[r]]; c != nil && last[r] && l >= c.FirstLayer {
					for h := 0; h < heads; h++ {
						at.capRows[r*heads+h] = make([]float32, pos[r]+1)
					}
				}
			}
		}
		tensor.ParallelLoop(n*heads, work, at)
		if at.capRows != nil {
			for r := 0; r < n; r++ {
				if at.capRows[r*heads] != nil {
					captures[seg[r]].Rows = append(captures[seg[r]].Rows, at.capRows[r*heads:(r+1)*heads]...)
				}
			}
		}

		tensor.MatMul(xb2, ly.Wo, xb[:n*qDim], n)
		addBias(xb2, ly.Bo)
		if ly.PostAttnNorm != nil {
			tensor.RMSNormRows(xb2, xb2, ly.PostAttnNorm, cfg.NormEps)
		}
		if dropping {
			dropRows(xb2, dim, sessions, seg)
		}
		tensor.Add(x, xb2)
		if cfg.PostNorm {
			norm(x, x, ly.AttnNorm, ly.AttnNormB)
			copy(xb, x)
		} else {
			norm(xb[:n*dim], x, ly.FFNNorm, ly.FFNNormB)
		}

		if fam.gated {
			tensor.MatMuls([][]float32{hb, hb2}, []*tensor.Matrix{ly.W1, ly.W3}, xb[:n*dim], n)
			if fam.act == actGELU {
				tensor.GeGLU(hb, hb2)
			} else {
				tensor.SwiGLU(hb, hb2)
			}
		} else {
			tensor.MatMul(hb, ly.W3, xb[:n*dim], n)
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
		if dropping {
			dropRows(xb2, dim, sessions, seg)
		}
		tensor.Add(x, xb2)
		if cfg.PostNorm {
			norm(x, x, ly.FFNNorm, ly.FFNNormB)
		}
	}

	// Final norm and classifier, for the rows whose logits are wanted.
	for r := 0; r < n; r++ {
		if !lastOnly || last[r] {
			rs.rows = append(rs.rows, r)
		}
	}
	rows := rs.rows
	xf := grow(rs.xf, len(rows)*dim)
	rs.xf = xf
	for i, r := range rows {
		xr, fr := x[r*dim:(r+1)*dim], xf[i*dim:(i+1)*dim]
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

	// The rows are session-major: each session's logits are a run of them.
	views := make([][]float32, len(rows))
	for i := range rows {
		views[i] = logits[i*cfg.Vocab : (i+1)*cfg.Vocab : (i+1)*cfg.Vocab]
	}
	out := make([][][]float32, len(sessions))
	for i, j := 0, 0; i < len(rows); i = j {
		for j = i; j < len(rows) && seg[rows[j]] == seg[rows[i]]; j++ {
		}
		out[seg[rows[i]]] = views[i:j:j]
	}
	for i, s := range sessions {
		if tr == nil {
			s.pos += len(tokens[i])
		}
		s.tree = tr
		s.att = nil
		if c := captures[i]; c != nil {
			if c.Heads == 1 {
				c.Rows = averageHeads(c.Rows, heads)
			}
			s.att = c
		}
	}
	return out
}

// checkBatch checks EvalBatch's arguments and returns the batch's rows
// (tokens of all sessions).
func checkBatch(sessions []*Session, tokens [][]int) (int, error) {
	if len(sessions) == 0 || len(sessions) != len(tokens) {
		return 0, fmt.Errorf("EvalBatch: %d sessions, %d token blocks", len(sessions), len(tokens))
	}
	m := sessions[0].m
	cfg := m.cfg
	n := 0
	for i, s := range sessions {
		if s.m.w != m.w || s.m.cfg.Layers != cfg.Layers {
			return 0, fmt.Errorf("EvalBatch: session %d belongs to another model", i)
		}
		if len(tokens[i]) == 0 {
			return 0, fmt.Errorf("EvalBatch: session %d has no tokens", i)
		}
		if s.pos+len(tokens[i]) > cfg.SeqLen {
			return 0, fmt.Errorf("%w: %d cached + %d new positions > %d", model.ErrContextFull, s.pos, len(tokens[i]), cfg.SeqLen)
		}
		for _, t := range tokens[i] {
			if t < 0 || t >= cfg.Vocab {
				return 0, fmt.Errorf("%w: %d (vocabulary %d)", model.ErrToken, t, cfg.Vocab)
			}
		}
		n += len(tokens[i])
	}
	if i, ok := repeated(sessions); ok {
		return 0, fmt.Errorf("EvalBatch: session %d appears twice", i)
	}
	return n, nil
}

// repeated returns the index of the first session that appears again
// earlier in the list.
func repeated(sessions []*Session) (int, bool) {
	if len(sessions) <= 16 { // no map for a decode step or a small batch
		for i, s := range sessions {
			for _, e := range sessions[:i] {
				if e == s {
					return i, true
				}
			}
		}
		return 0, false
	}
	seen := make(map[*Session]bool, len(sessions))
	for i, s := range sessions {
		if seen[s] {
			return i, true
		}
		seen[s] = true
	}
	return 0, false
}

// addBias adds bias (when there is one) to every row of x.
func addBias(x, bias []float32) {
	if bias != nil {
		tensor.AddRows(x, bias)
	}
}

// dropRows applies each row's session dropout to a block's output rows
// (row r belongs to sessions[seg[r]]).
func dropRows(out []float32, dim int, sessions []*Session, seg []int) {
	for r := range seg {
		s := sessions[seg[r]]
		if s.dropout == 0 {
			continue
		}
		keep := 1 / (1 - s.dropout)
		row := out[r*dim : (r+1)*dim]
		for i := range row {
			if s.drng.Float32() < s.dropout {
				row[i] = 0
			} else {
				row[i] *= keep
			}
		}
	}
}

// averageHeads turns layer-major per-head rows into one head-averaged row per layer.
func averageHeads(rows [][]float32, heads int) [][]float32 {
	out := make([][]float32, 0, len(rows)/heads)
	for l := 0; l+heads <= len(rows); l += heads {
		avg := make([]float32, len(rows[l]))
		for _, r := range rows[l : l+heads] {
			for i, v := range r {
				avg[i] += v
			}
		}
		for i := range avg {
			avg[i] /= float32(heads)
		}
		out = append(out, avg)
	}
	return out
}
