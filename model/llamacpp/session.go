package llamacpp

import (
	"fmt"
	"runtime"

	"github.com/hlmproject/hlm/model"
)

// seqState is a session's sequence: its tokens, and where its KV cache is —
// in a llama.cpp sequence (slot ≥ 0), saved out of the context (saved),
// or nowhere (evaluated again from toks when it returns). Guarded by
// Model.mu. The Session points to it, the Model's slots too, so a Session
// that is dropped without Close can be collected and its slot freed.
type seqState struct {
	toks     []int  // the tokens at positions 0…len−1
	slot     int    // llama.cpp sequence id, −1 when not in the context
	saved    []byte // llama_state_seq data of the first savedLen positions
	savedLen int
	used     uint64 // LRU clock of the last evaluation
	pinned   bool   // in the batch being evaluated: not to be evicted
	closed   bool
	broken   error // the context lost this sequence's consistency
}

// Session is one sequence on a Model. It implements model.Session; like
// every session it is not safe for concurrent use.
type Session struct {
	m       *Model
	st      *seqState
	capture model.Capture
}

var _ model.Session = (*Session)(nil)

// NewSession opens a session with an empty cache. It takes a llama.cpp
// sequence only when it first evaluates; a session dropped without Close
// frees its sequence when the garbage collector finds it.
func (m *Model) NewSession() model.Session {
	st := &seqState{slot: -1}
	s := &Session{m: m, st: st}
	runtime.AddCleanup(s, func(st *seqState) { m.release(st) }, st)
	return s
}

// Eval appends tokens and returns the logits after each of them.
func (s *Session) Eval(tokens []int) ([][]float32, error) {
	out, err := s.m.eval([]*Session{s}, [][]int{tokens}, model.Wanted{}, nil, false)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// Prefill is Eval returning only the logits after the last token (llama.cpp
// computes the classifier for that position only).
func (s *Session) Prefill(tokens []int) ([]float32, error) {
	out, err := s.m.eval([]*Session{s}, [][]int{tokens}, model.Wanted{Last: true}, nil, false)
	if err != nil {
		return nil, err
	}
	return out[0][0], nil
}

// EvalSkip is Eval without the logits after the first skip tokens
// (model.SkipSession).
func (s *Session) EvalSkip(tokens []int, skip int) ([][]float32, error) {
	out, err := s.m.eval([]*Session{s}, [][]int{tokens}, model.Wanted{Skip: []int{skip}}, nil, false)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// Truncate drops the positions ≥ n (llama_memory_seq_rm).
func (s *Session) Truncate(n int) error {
	m := s.m
	m.mu.Lock()
	defer m.mu.Unlock()
	st := s.st
	switch {
	case m.closed:
		return errClosed
	case st.broken != nil:
		return st.broken
	case n < 0 || n > len(st.toks):
		return fmt.Errorf("llamacpp: truncate to %d of %d positions", n, len(st.toks))
	}
	return m.truncate(st, n)
}

// Len is the number of positions in the session.
func (s *Session) Len() int {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	return len(s.st.toks)
}

// SetCapture records the capture asked for; llama.cpp's library exposes
// no attention probabilities, so the next Eval with a capture other than
// CaptureNone fails (ErrNoAttention).
func (s *Session) SetCapture(c model.Capture) { s.capture = c }

// Attention is always nil: see SetCapture.
func (s *Session) Attention() *model.Attention { return nil }

// Close frees the session's llama.cpp sequence and saved state at once.
func (s *Session) Close() error {
	s.m.release(s.st)
	return nil
}

// release frees st's sequence (llama_memory_seq_rm of all its positions)
// and its saved state.
func (m *Model) release(st *seqState) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if st.closed {
		return
	}
	st.closed = true
	st.saved = nil
	if st.slot >= 0 && !m.closed {
		m.ctx.SeqRemove(st.slot, -1, -1)
		m.slots[st.slot] = nil
	}
	st.slot = -1
	st.toks = nil
}

// truncate drops st's positions ≥ n wherever its cache is. Called with
// m.mu held.
func (m *Model) truncate(st *seqState, n int) error {
	if st.slot >= 0 && m.ctx.SeqPosMax(st.slot) >= n {
		if !m.ctx.SeqRemove(st.slot, n, -1) {
			st.broken = fmt.Errorf("llamacpp: llama.cpp could not drop positions ≥ %d of a session: its cache is unusable", n)
			return st.broken
		}
	}
	if n < len(st.toks) {
		st.toks = st.toks[:n]
	}
	return nil
}

// resident gives st a llama.cpp sequence holding its cache: a free one, or
// the least recently used one of a session not being evaluated, whose
// cache is saved out first (llama_state_seq_get_data). st's own cache comes
// back from its saved state, or is evaluated again from its tokens. Called
// with m.mu held.
func (m *Model) resident(st *seqState) error {
	if st.slot >= 0 {
		return nil
	}
	slot := -1
	for i, o := range m.slots {
		if o == nil {
			slot = i
			break
		}
	}
	if slot < 0 {
		var victim *seqState
		for _, o := range m.slots {
			if !o.pinned && (victim == nil || o.used < victim.used) {
				victim = o
			}
		}
		if victim == nil {
			return fmt.Errorf("llamacpp: every one of the %d sequences is in use by this batch", len(m.slots))
		}
		slot = victim.slot
		m.evict(victim)
	}
	st.slot = slot
	m.slots[slot] = st
	if st.saved != nil {
		saved, n := st.saved, st.savedLen
		st.saved, st.savedLen = nil, 0
		if err := m.ctx.RestoreSeq(slot, saved); err == nil {
			m.stats.Restores++
			return m.truncate(st, min(n, len(st.toks)))
		}
		m.ctx.SeqRemove(slot, -1, -1)
	}
	if len(st.toks) == 0 {
		return nil
	}
	m.stats.Recomputes++
	return m.recompute(st)
}

// evict moves st's cache out of the context: saved when llama.cpp can,
// else dropped (to be evaluated again). Called with m.mu held.
func (m *Model) evict(st *seqState) {
	if len(st.toks) > 0 && !m.recomputeEvicted {
		if data, err := m.ctx.SaveSeq(st.slot); err == nil {
			st.saved, st.savedLen = data, len(st.toks)
		}
	}
	m.ctx.SeqRemove(st.slot, -1, -1)
	m.slots[st.slot] = nil
	st.slot = -1
	m.stats.Evictions++
}
