package hybrid

import (
	"errors"
	"fmt"
	"slices"

	"github.com/hlmproject/hlm/model"
)

// cache tracks which tokens a model session holds, so that a caller can ask
// for "the logits after this sequence" and only the missing suffix is
// evaluated (rolling back whatever no longer matches).
type cache struct {
	s    model.Session
	toks []int     // tokens in the session's KV cache
	next []float32 // logits after toks (nil when unknown)
	// lent marks a next that is still the evaluator's row (absorb):
	// keep copies it into own before the evaluator writes that row again.
	lent       bool
	own, spare []float32
}

func newCache(s model.Session) *cache { return &cache{s: s} }

// rows evaluates target so that the cache holds it, and returns the logits
// after each of target[from-1:], i.e. the distributions of the positions
// from…len(target) (from ≥ 1). All missing tokens go through one Eval pass.
func (c *cache) rows(target []int, from int) ([][]float32, error) {
	pl, err := c.plan(target, from)
	if err != nil {
		return nil, err
	}
	var rows [][]float32
	if len(pl.eval) > 0 {
		if rows, err = model.EvalSkip(c.s, pl.eval, pl.skip); err != nil {
			return nil, EngineError(err)
		}
	}
	out := c.absorb(pl, rows)
	if c.lent {
		c.next, c.lent = slices.Clone(c.next), false
	}
	return out, nil
}

// evalPlan is the work rows needs: keep a prefix of the cache, maybe reuse
// the cached logits, evaluate the rest in one pass.
type evalPlan struct {
	reuse []float32 // logits reused from the cache (nil: none)
	eval  []int     // tokens to evaluate
	skip  int       // leading evaluated rows not wanted
}

// plan truncates the cache to the reusable prefix of target and says what
// must be evaluated so that the logits after target[from-1:] are known.
// Splitting plan, evaluation and absorb lets a server evaluate many
// sessions' blocks in one batched pass.
func (c *cache) plan(target []int, from int) (evalPlan, error) {
	if from < 1 || from > len(target) {
		return evalPlan{}, fmt.Errorf("hybrid: logits wanted from position %d of %d", from, len(target))
	}
	k := CommonPrefix(c.toks, target)
	var pl evalPlan
	// Reuse the cache for target[:keep]; the logits after target[from-1]
	// come either from the evaluation or from c.next when the cache holds
	// exactly target[:from].
	keep := min(k, from-1)
	if k == from && len(c.toks) == from && c.next != nil {
		pl.reuse = c.next
		keep = from
	}
	if err := c.truncate(keep); err != nil {
		return evalPlan{}, err
	}
	pl.eval = target[keep:]
	pl.skip = max(0, from-1-keep) // rows[i] follows target[keep+i]
	return pl, nil
}

// absorb records an evaluation of pl.eval (rows: one per token, of which
// the first pl.skip are not read and may be nil) and returns the wanted
// logits. The last row becomes next without a copy (lent): the
// caller calls keep before the rows are written again.
func (c *cache) absorb(pl evalPlan, rows [][]float32) [][]float32 {
	var out [][]float32
	if pl.reuse != nil {
		out = append(out, pl.reuse)
	}
	if len(pl.eval) > 0 {
		c.toks = append(c.toks, pl.eval...)
		c.next, c.lent = rows[len(rows)-1], true
		out = append(out, rows[pl.skip:]...)
	}
	return out
}

// took records tokens evaluated on the session after those it held,
// without their logits (Job.Prefilled).
func (c *cache) took(tokens []int) {
	if len(tokens) == 0 {
		return
	}
	c.toks = append(c.toks, tokens...)
	c.next, c.lent = nil, false
}

// keep copies a lent next (absorb) into the cache's own storage: the rows
// may be the caller's buffer, reused for the next batch (cloud's server
// with model/llamacpp's EvalBatchInto). A server round calls it after
// committing, when next is usually gone (a rejected draft truncates the
// cache), so most rounds copy nothing — at a vocabulary of 151,936 the
// copy was 600 KB per round. The two buffers alternate: the row this
// round reused (pl.reuse, the previous copy) stays intact while it is read.
func (c *cache) keep() {
	if !c.lent {
		return
	}
	c.lent = false
	if c.next == nil {
		return
	}
	c.spare = append(c.spare[:0], c.next...)
	c.next = c.spare
	c.own, c.spare = c.spare, c.own
}

// last returns the logits after target.
func (c *cache) last(target []int) ([]float32, error) {
	r, err := c.rows(target, len(target))
	if err != nil {
		return nil, err
	}
	return r[len(r)-1], nil
}

// truncate keeps the first n cached tokens.
func (c *cache) truncate(n int) error {
	if n >= len(c.toks) {
		return nil
	}
	c.toks = c.toks[:n]
	c.next, c.lent = nil, false
	return EngineError(c.s.Truncate(n))
}

// ErrEngine marks a model's own failure to evaluate or roll back (an engine
// error, as llama.cpp's decode failing), not a fault of the request: a
// server reports it as its own (cloud: wire.ErrCodeInternal), and the
// device may retry the round. A full context keeps its own sentinel
// (model.ErrContextFull) beside it.
var ErrEngine = errors.New("the model's evaluation failed")

// EngineError marks err (nil stays nil) as the model's failure, ErrEngine.
func EngineError(err error) error {
	if err == nil || errors.Is(err, ErrEngine) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrEngine, err)
}
