package hybrid

import (
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
		if rows, err = c.s.Eval(pl.eval); err != nil {
			return nil, err
		}
	}
	return c.absorb(pl, rows), nil
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
	k := commonPrefix(c.toks, target)
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

// absorb records an evaluation of pl.eval (rows: one per token) and returns
// the wanted logits.
func (c *cache) absorb(pl evalPlan, rows [][]float32) [][]float32 {
	var out [][]float32
	if pl.reuse != nil {
		out = append(out, pl.reuse)
	}
	if len(pl.eval) > 0 {
		c.toks = append(c.toks, pl.eval...)
		// A copy: the rows may be the caller's buffer, reused for the
		// next batch (cloud's server with model/llamacpp's EvalBatchInto).
		c.next = slices.Clone(rows[len(rows)-1])
		out = append(out, rows[pl.skip:]...)
	}
	return out
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
	c.next = nil
	return c.s.Truncate(n)
}
