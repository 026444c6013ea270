package hybrid

import (
	"fmt"

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
	if from < 1 || from > len(target) {
		return nil, fmt.Errorf("hybrid: logits wanted from position %d of %d", from, len(target))
	}
	k := commonPrefix(c.toks, target)
	var out [][]float32
	// Reuse the cache for target[:keep]; the logits after target[from-1]
	// come either from this evaluation or from c.next when the cache holds
	// exactly target[:from].
	keep := min(k, from-1)
	if k == from && len(c.toks) == from && c.next != nil {
		out = append(out, c.next)
		keep = from
	}
	if err := c.truncate(keep); err != nil {
		return nil, err
	}
	if keep < len(target) {
		rows, err := c.s.Eval(target[keep:])
		if err != nil {
			return nil, err
		}
		c.toks = append(c.toks, target[keep:]...)
		c.next = rows[len(rows)-1]
		// rows[i] follows target[keep+i].
		out = append(out, rows[max(0, from-1-keep):]...)
	}
	return out, nil
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
