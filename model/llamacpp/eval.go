package llamacpp

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/hlmproject/hlm/internal/libllama"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/tensor"
)

// ErrNoAttention refuses attention capture (U+I's importance, the
// attention-collapse measures): llama.cpp's library does not expose
// attention probabilities.
var ErrNoAttention = fmt.Errorf("%w: attention capture needs hlm's engine: llama.cpp's library does not expose attention probabilities (drop @llama.cpp from the spec)", model.ErrUnsupported)

// EvalBatch evaluates blocks of several sessions of this model and returns
// each one's logits, as each session's Eval would (the determinism
// contract of the package doc says when they are bit-identical). On error
// every session is as it was before the call.
func (m *Model) EvalBatch(sessions []model.Session, tokens [][]int) ([][][]float32, error) {
	ss, err := m.own("EvalBatch", sessions, tokens)
	if err != nil {
		return nil, err
	}
	return m.eval(ss, tokens, model.Wanted{}, nil, false)
}

// EvalBatchSkip is EvalBatch without the logits after the first skip[i]
// tokens of session i (model.SkipBatcher): llama.cpp computes the
// classifier for the other positions only.
func (m *Model) EvalBatchSkip(sessions []model.Session, tokens [][]int, skip []int) ([][][]float32, error) {
	ss, err := m.own("EvalBatchSkip", sessions, tokens)
	if err != nil {
		return nil, err
	}
	return m.eval(ss, tokens, model.Wanted{Skip: skip}, nil, false)
}

// EvalBatchInto is EvalBatchSkip writing the logits into buf, which the
// caller keeps and reuses: the rows returned are slices of buf, valid
// until buf is written again (a server's batches, whose rows are read
// before the next batch, then allocate nothing per row). buf is used when
// it holds every row (Σ (len(tokens[i]) − skip[i]) × vocabulary); else
// one buffer is allocated.
func (m *Model) EvalBatchInto(buf []float32, sessions []model.Session, tokens [][]int, skip []int) ([][][]float32, error) {
	ss, err := m.own("EvalBatchInto", sessions, tokens)
	if err != nil {
		return nil, err
	}
	return m.eval(ss, tokens, model.Wanted{Skip: skip}, buf, false)
}

// EvalBatchView is EvalBatchInto whose rows of the evaluation's last
// llama_decode are not copied: they are llama.cpp's own output buffer.
// Until the caller calls ReleaseView, every other evaluation of this model
// (any session, any goroutine) and Close wait, so that the buffer stays as
// it is; the caller must therefore evaluate nothing on this model before
// it releases (that would wait for ever), and must not read the rows
// after. Rows of earlier calls (a batch split by the plan, more sessions
// than sequences) are copied into buf as EvalBatchInto's. A server whose
// verifications read the rows and then release saves the copy: on a GPU,
// 97 MB per batch of 32 sessions × 5 positions at Qwen's vocabulary. On
// error nothing is held.
func (m *Model) EvalBatchView(buf []float32, sessions []model.Session, tokens [][]int, skip []int) ([][][]float32, error) {
	ss, err := m.own("EvalBatchView", sessions, tokens)
	if err != nil {
		return nil, err
	}
	return m.eval(ss, tokens, model.Wanted{Skip: skip}, buf, true)
}

// ReleaseView ends the hold of EvalBatchView's rows: the model evaluates
// again (and the rows are no longer to be read).
func (m *Model) ReleaseView() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.viewHeld = false
	if m.viewFree != nil {
		m.viewFree.Broadcast()
	}
}

// waitView waits, with m.mu held, until no rows of EvalBatchView are out.
func (m *Model) waitView() {
	for m.viewHeld {
		if m.viewFree == nil {
			m.viewFree = sync.NewCond(&m.mu)
		}
		m.viewFree.Wait()
	}
}

// own is sessions as this model's, checked against the token blocks (op
// names the caller in the error).
func (m *Model) own(op string, sessions []model.Session, tokens [][]int) ([]*Session, error) {
	if len(sessions) != len(tokens) {
		return nil, fmt.Errorf("llamacpp: %d sessions and %d token blocks", len(sessions), len(tokens))
	}
	ss := make([]*Session, len(sessions))
	for i, s := range sessions {
		ls, ok := s.(*Session)
		if !ok || ls.m != m {
			return nil, fmt.Errorf("llamacpp: %s of a session that is not this model's (%T)", op, s)
		}
		ss[i] = ls
	}
	return ss, nil
}

// PrefillBatch is EvalBatch returning only the logits after each
// session's last token (llama.cpp computes the classifier for those
// positions only).
func (m *Model) PrefillBatch(sessions []model.Session, tokens [][]int) ([][]float32, error) {
	return m.prefill("PrefillBatch", sessions, tokens, false)
}

// PrefillBatchView is PrefillBatch whose rows, from the evaluation's last
// llama_decode, are llama.cpp's own output buffer, held as EvalBatchView's
// are until ReleaseView: hlm bench's tests read no logits, as llama-bench's
// do not, and copy none (600 KB per session per token at Qwen's
// vocabulary). Rows of earlier calls of a split batch are copies.
func (m *Model) PrefillBatchView(sessions []model.Session, tokens [][]int) ([][]float32, error) {
	return m.prefill("PrefillBatchView", sessions, tokens, true)
}

// prefill is PrefillBatch (op), with view PrefillBatchView.
func (m *Model) prefill(op string, sessions []model.Session, tokens [][]int, view bool) ([][]float32, error) {
	ss, err := m.own(op, sessions, tokens)
	if err != nil {
		return nil, err
	}
	rows, err := m.eval(ss, tokens, model.Wanted{Last: true}, nil, view)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(rows))
	for i, r := range rows {
		out[i] = r[0]
	}
	return out, nil
}

// OnDecodingThread runs f where the model's decodes are made (an OpenMP
// build's decoding thread, libllama.Context.Inline), so that the
// evaluations f makes skip the hand-over to it: hlm bench's timed loops.
// f must make its evaluations itself, not from goroutines it starts, and
// no other goroutine should evaluate the model meanwhile (they would be
// correct, from their own threads). Close must not run while f does: it
// stops the decoding thread that f runs on.
func (m *Model) OnDecodingThread(f func()) {
	m.mu.Lock()
	ctx := m.ctx
	closed := m.closed
	m.mu.Unlock()
	if closed {
		f() // its evaluations report the closed model
		return
	}
	ctx.Inline(f)
}

// job is one session's block in an evaluation.
type job struct {
	st   *seqState
	toks []int
	from int         // the session's length before
	skip int         // no logits after toks[:skip]
	last bool        // skip is a prefill's (model.Wanted.Last)
	rows [][]float32 // the logits wanted, filled in order by decode
	n    int         // rows filled
}

// piece is tokens [lo, hi) of a job, in one llama_decode.
type piece struct {
	j      *job
	lo, hi int
}

// eval appends each tokens[i] to ss[i] and returns the logits want names,
// in buf when it holds them (carve); with view, the rows of the last
// llama_decode are llama.cpp's buffer (EvalBatchView).
func (m *Model) eval(ss []*Session, tokens [][]int, want model.Wanted, buf []float32, view bool) ([][][]float32, error) {
	vocab := m.cfg.Vocab
	for i, s := range ss {
		if s.capture != model.CaptureNone {
			return nil, ErrNoAttention
		}
		if len(tokens[i]) == 0 {
			return nil, fmt.Errorf("llamacpp: an empty block to evaluate")
		}
		for _, t := range tokens[i] {
			if t < 0 || t >= vocab {
				return nil, fmt.Errorf("%w: %d (vocabulary %d)", model.ErrToken, t, vocab)
			}
		}
	}
	if err := model.CheckSkip(tokens, want.Skip); err != nil {
		return nil, fmt.Errorf("llamacpp: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.waitView()
	if m.closed {
		return nil, errClosed
	}
	jobs := make([]*job, len(ss))
	seen := make(map[*seqState]bool, len(ss))
	for i, s := range ss {
		st := s.st
		switch {
		case st.closed:
			return nil, errors.New("llamacpp: the session was closed")
		case st.broken != nil:
			return nil, st.broken
		case seen[st]:
			return nil, errors.New("llamacpp: a session appears twice in one batch")
		case len(st.toks)+len(tokens[i]) > m.cfg.SeqLen:
			return nil, fmt.Errorf("%w: %d positions + %d, context %d (c=)", model.ErrContextFull, len(st.toks), len(tokens[i]), m.cfg.SeqLen)
		}
		seen[st] = true
		jobs[i] = &job{st: st, toks: tokens[i], from: len(st.toks), skip: want.From(i, len(tokens[i])), last: want.Last}
	}
	m.carve(jobs, buf)
	if err := m.run(jobs, view); err != nil {
		for _, j := range jobs {
			j.st.pinned = false
			if j.st.broken == nil {
				m.truncate(j.st, j.from)
			}
		}
		return nil, err
	}
	m.clock++
	m.viewHeld = view
	out := make([][][]float32, len(jobs))
	for i, j := range jobs {
		j.st.used = m.clock
		out[i] = j.rows
	}
	return out, nil
}

// carve gives each job its rows: slices of buf when it holds them all,
// else nil rows, which decode fills with copies of llama.cpp's (a copy
// allocated without zeroing it first: one pass over the memory instead of
// two — at a vocabulary of 151,936 a row is 600 KB, and on a GPU a token's
// row was a tenth of its time).
func (m *Model) carve(jobs []*job, buf []float32) {
	vocab := m.cfg.Vocab
	total := 0
	for _, j := range jobs {
		total += len(j.toks) - j.skip
	}
	if len(buf) < total*vocab {
		buf = nil
	}
	for _, j := range jobs {
		j.rows = make([][]float32, len(j.toks)-j.skip)
		if buf == nil {
			continue
		}
		for i := range j.rows {
			j.rows[i], buf = buf[:vocab:vocab], buf[vocab:]
		}
	}
}

// run evaluates the jobs, as many sessions at a time as there are
// sequences; with view, the last llama_decode's rows are left in
// llama.cpp's buffer (nothing decodes after it in this call).
func (m *Model) run(jobs []*job, view bool) error {
	n := len(m.slots)
	for start := 0; start < len(jobs); start += n {
		group := jobs[start:min(start+n, len(jobs))]
		for _, j := range group {
			j.st.pinned = true
		}
		for _, j := range group {
			if err := m.resident(j.st); err != nil {
				return err
			}
		}
		calls := m.plan(group)
		for c, call := range calls {
			last := view && start+n >= len(jobs) && c == len(calls)-1
			if err := m.decode(call, last); err != nil {
				return err
			}
		}
		for _, j := range group {
			j.st.pinned = false
		}
	}
	return nil
}

// plan splits the jobs into llama_decode calls so that a session's logits
// do not depend on the other sessions of the batch (the package doc's
// contract):
//   - llama.cpp splits a batch of several sequences (kv_unified false)
//     into micro-batches of consecutive sequence ids with as many tokens
//     from each, so blocks of unequal length could be cut into pieces of
//     one token; blocks of equal length go together instead (by sequence
//     id, at most a micro-batch of tokens per call);
//   - one token alone takes another path through llama.cpp's matrix
//     products than a block does (other bits with F16 and F32 weights), so
//     a block of one token is decoded alone, as it would be without the
//     others;
//   - a block longer than the micro-batch goes alone, in chunks of at
//     least two tokens (chunks).
func (m *Model) plan(jobs []*job) [][]piece {
	if planMixed {
		var one []piece
		for _, j := range jobs {
			one = append(one, piece{j, 0, len(j.toks)})
		}
		return [][]piece{one}
	}
	ub := m.ubatch
	var calls [][]piece
	var fit []*job
	for _, j := range jobs {
		switch {
		case len(j.toks) == 1 && !batchSingles:
			calls = append(calls, []piece{{j, 0, 1}})
		case len(j.toks) <= ub:
			fit = append(fit, j)
		default:
			for _, c := range chunks(len(j.toks), ub) {
				calls = append(calls, []piece{{j, c[0], c[1]}})
			}
		}
	}
	slices.SortStableFunc(fit, func(a, b *job) int {
		if d := len(a.toks) - len(b.toks); d != 0 {
			return d
		}
		return a.st.slot - b.st.slot
	})
	var cur []piece
	size := 0
	for _, j := range fit {
		n := len(j.toks)
		if len(cur) > 0 && (n != cur[0].hi || size+n > ub) {
			calls = append(calls, cur)
			cur, size = nil, 0
		}
		cur = append(cur, piece{j, 0, n})
		size += n
	}
	if len(cur) > 0 {
		calls = append(calls, cur)
	}
	return calls
}

// outputs is the first token of the piece whose logits llama.cpp computes:
// the first wanted, or one before it where that would leave a piece of
// several tokens with one output. llama.cpp computes the last layer after
// its attention for the output rows only, and for one row by another path
// than for several (other bits with F32 weights: TestEvalBatchView), so a
// lone wanted row of a block gets a neighbour, whose logits are dropped.
// A prefill's lone row (last) keeps its own path, as llama-bench's does.
func (p piece) outputs() int {
	out := max(p.lo, p.j.skip)
	if p.hi-out == 1 && p.hi-p.lo >= 2 && !p.j.last {
		out--
	}
	return out
}

// chunks cuts n tokens into [lo, hi) ranges of at most ub tokens, none of
// one token when n ≥ 2 and ub ≥ 2 (the last chunk borrows one from the one
// before it).
func chunks(n, ub int) [][2]int {
	var out [][2]int
	for lo := 0; lo < n; {
		hi := min(lo+ub, n)
		if n-hi == 1 && ub >= 3 {
			hi--
		}
		out = append(out, [2]int{lo, hi})
		lo = hi
	}
	return out
}

// planMixed and batchSingles (tests) undo plan's precautions: every block
// in one llama_decode, and blocks of one token batched with the others.
var planMixed, batchSingles bool

// decode runs one llama_decode and copies out the logits wanted, or with
// view hands out llama.cpp's rows themselves.
func (m *Model) decode(call []piece, view bool) error {
	var batch []libllama.Token
	for _, p := range call {
		st := p.j.st
		out := p.outputs()
		for i := p.lo; i < p.hi; i++ {
			batch = append(batch, libllama.Token{ID: int32(p.j.toks[i]), Pos: int32(p.j.from + i), Seq: int32(st.slot), Logits: i >= out})
		}
	}
	m.stats.Decodes++
	err := m.ctx.Decode(batch)
	if m.testRC != nil {
		err = m.testRC(err)
	}
	if err != nil {
		var de *libllama.DecodeError
		if errors.As(err, &de) && de.Code == 1 {
			return fmt.Errorf("%w: %w", model.ErrContextFull, err)
		}
		return err
	}
	// The rows are copied out of llama.cpp's buffer by hlm's threads: on a
	// GPU, one thread copying a round's rows took longer than the decode.
	var src [][]float32
	var dst []*[]float32
	k := 0
	for _, p := range call {
		for i := p.lo; i < p.hi; i++ {
			if batch[k].Logits && i >= p.j.skip {
				row, err := m.ctx.Logits(k)
				if err != nil {
					return err
				}
				if view {
					p.j.rows[p.j.n] = row
				} else {
					src, dst = append(src, row), append(dst, &p.j.rows[p.j.n])
				}
				p.j.n++
			}
			k++
		}
		p.j.st.toks = append(p.j.st.toks, p.j.toks[p.lo:p.hi]...)
	}
	tensor.ParallelFor(len(src), len(src)*m.cfg.Vocab, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if *dst[i] == nil {
				*dst[i] = slices.Clip(slices.Clone(src[i])) // not zeroed first (carve)
			} else {
				copy(*dst[i], src[i])
			}
		}
	})
	return nil
}

// recompute evaluates st's tokens again into its (empty) sequence, in
// micro-batch chunks, keeping no logits. Called with m.mu held.
func (m *Model) recompute(st *seqState) error {
	toks := st.toks
	for _, c := range chunks(len(toks), m.ubatch) {
		lo, hi := c[0], c[1]
		batch := make([]libllama.Token, 0, hi-lo)
		for i := lo; i < hi; i++ {
			batch = append(batch, libllama.Token{ID: int32(toks[i]), Pos: int32(i), Seq: int32(st.slot), Logits: i == hi-1})
		}
		m.stats.Decodes++
		if err := m.ctx.Decode(batch); err != nil {
			m.ctx.SeqRemove(st.slot, -1, -1)
			st.broken = fmt.Errorf("llamacpp: evaluating a session's %d positions again after its cache was evicted: %w", len(toks), err)
			return st.broken
		}
	}
	return nil
}
