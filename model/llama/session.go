package llama

import (
	"fmt"
	"math/rand/v2"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/tensor"
)

// Session is one sequence: a KV cache over positions [0, Len()), and
// after EvalTree the nodes of a token tree in the slots after them.
type Session struct {
	m       *Model
	pos     int
	k, v    []kvRows // per layer: the cached rows (slot i is position i below pos)
	tree    *tree    // the nodes in slots pos… (nil: none; see EvalTree)
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

// EvalSkip is Eval computing no logits after the first skip tokens
// (0 ≤ skip ≤ len(tokens)): it returns the len(tokens)−skip rows after
// tokens[skip:]. A server's first round evaluates the prompt with its
// block and reads the rows of the block only.
func (s *Session) EvalSkip(tokens []int, skip int) ([][]float32, error) {
	out, err := EvalBatchSkip([]*Session{s}, [][]int{tokens}, []int{skip})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// grow makes room in the cache for n slots, a page (kvPage) at a time:
// its rows stay where they are.
func (s *Session) grow(n int) {
	if len(s.k) == 0 || s.k[0].slots() >= n {
		return
	}
	kv := s.m.cfg.KVDim()
	for l := range s.k {
		s.k[l].ensure(s.m.cacheK, kv, n)
		s.v[l].ensure(s.m.cacheV, kv, n)
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
	return forward(sessions, tokens, model.Wanted{Last: lastOnly}, nil, n), nil
}

// EvalBatchSkip is EvalBatch computing no logits after the first skip[i]
// tokens of session i (0 ≤ skip[i] ≤ len(tokens[i]); nil skips none): it
// returns the len(tokens[i])−skip[i] rows after tokens[i][skip[i]:], and
// the classifier runs for those rows only — at a vocabulary of 151,936, a
// prompt's rows that nobody reads were 600 KB a token and a fifth of its
// evaluation.
func EvalBatchSkip(sessions []*Session, tokens [][]int, skip []int) ([][][]float32, error) {
	n, err := checkBatch(sessions, tokens)
	if err != nil {
		return nil, err
	}
	if err := model.CheckSkip(tokens, skip); err != nil {
		return nil, fmt.Errorf("EvalBatch: %w", err)
	}
	return forward(sessions, tokens, model.Wanted{Skip: skip}, nil, n), nil
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
