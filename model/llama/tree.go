package llama

import (
	"fmt"
	"slices"

	"github.com/hlmproject/hlm/model"
)

// Tree attention: the nodes of a token tree evaluated in one forward pass,
// each node's logits bit-identical to those of its root-to-node path
// evaluated alone after the cache.
//
// Node i of a tree over a cache of L positions is row i of one pass (the
// weight products over all n nodes at once), at position L+depth(i) (RoPE,
// or the learned position row of GPT-2, OPT and GPT-Neo), its keys and
// values in cache slot L+i. Its attention reads the keys of positions
// first…L−1 (first = 0, or where a local layer's window begins), then the
// slots of its ancestors root first, then its own, skipping those of the
// path before first when the window cuts into it: the keys that evaluating
// the path alone reads at the same positions, in the same order. Each score
// is DotRows' value, the softmax runs over the same row, and the values
// are summed in the same order (tensor.WeightedSum over the cached prefix,
// tensor.WeightedSumAdd continuing over the path's slots), so every bit
// agrees; by induction over depth so do the keys and values the nodes
// write.

var _ model.TreeSession = (*Session)(nil)

// tree is the shape of the last EvalTree: its nodes are in slots pos… of
// the session's cache.
type tree struct {
	parents  []int // −1: a child of the context
	depth    []int // 0 for the context's children
	maxDepth int
}

// EvalTree evaluates a tree of tokens after the Len() cached positions in
// one forward pass and returns the logits after each node (model.TreeSession):
// node i holds tokens[i], its parent is parents[i] (−1 for a child of the
// context, else an earlier node), it sits at position Len()+depth(i) and
// attends to the cached positions (those inside its window on a
// sliding-window layer), its ancestors and itself. Node i's logits, and
// the keys and values it leaves in the cache, are bit-identical to those
// of evaluating its root-to-node path alone with Eval.
//
// Only the depth counts against the context: Len()+depth+1 ≤ SeqLen for
// every node (else model.ErrContextFull). The cache holds the n nodes in
// the n slots after Len(), growing past the context length if need be
// until KeepPath or Truncate, so a tree of at most SeqLen nodes fits
// whatever its width.
//
// The tree stays until KeepPath, Truncate, another EvalTree or an Eval
// (any evaluation after the cached positions drops it); Len() is the
// length before it meanwhile. Attention capture does not apply to trees:
// EvalTree records nothing and Attention() is nil after it. It refuses to
// run with MC dropout on. Bad input is an error (model.ErrTree,
// model.ErrToken or model.ErrContextFull) that leaves the session as it
// was, a previous tree included.
func (s *Session) EvalTree(tokens, parents []int) ([][]float32, error) {
	tr, err := s.checkTree(tokens, parents)
	if err != nil {
		return nil, err
	}
	s.tree = nil
	return forward([]*Session{s}, [][]int{tokens}, model.Wanted{}, tr, len(tokens))[0], nil
}

// checkTree checks EvalTree's arguments and returns the tree's shape.
func (s *Session) checkTree(tokens, parents []int) (*tree, error) {
	cfg := s.m.cfg
	n := len(tokens)
	switch {
	case n == 0:
		return nil, fmt.Errorf("%w: EvalTree of no nodes", model.ErrTree)
	case len(parents) != n:
		return nil, fmt.Errorf("%w: %d tokens but %d parents", model.ErrTree, n, len(parents))
	case n > cfg.SeqLen:
		return nil, fmt.Errorf("%w: a tree of %d nodes, more than the context length %d", model.ErrContextFull, n, cfg.SeqLen)
	case s.dropout > 0:
		return nil, fmt.Errorf("EvalTree with MC dropout on (p = %g): turn it off with SetDropout(0, nil) first", s.dropout)
	}
	tr := &tree{parents: slices.Clone(parents), depth: make([]int, n)}
	for i, p := range parents {
		if p < -1 || p >= i {
			return nil, fmt.Errorf("%w: node %d has parent %d; a parent is −1 (the context) or an earlier node", model.ErrTree, i, p)
		}
		if t := tokens[i]; t < 0 || t >= cfg.Vocab {
			return nil, fmt.Errorf("%w: node %d holds %d (vocabulary %d)", model.ErrToken, i, t, cfg.Vocab)
		}
		if p >= 0 {
			tr.depth[i] = tr.depth[p] + 1
			tr.maxDepth = max(tr.maxDepth, tr.depth[i])
		}
	}
	if s.pos+tr.maxDepth+1 > cfg.SeqLen {
		return nil, fmt.Errorf("%w: %d cached positions + a tree %d deep > %d", model.ErrContextFull, s.pos, tr.maxDepth+1, cfg.SeqLen)
	}
	return tr, nil
}

// KeepPath keeps the nodes of path, a chain of the last EvalTree's nodes
// from the context (path[0]'s parent is −1, each next node's parent the
// one before it), as positions Len()…Len()+len(path)−1 with the keys and
// values the tree pass computed, and drops the rest of the tree
// (model.TreeSession); an empty path drops the whole tree. The kept rows
// move down to consecutive slots (their positions are already right). A
// path that is not such a chain, or KeepPath with no tree, is a
// model.ErrTree error that changes nothing.
func (s *Session) KeepPath(path []int) error {
	tr := s.tree
	if tr == nil {
		return fmt.Errorf("%w: KeepPath with no tree: EvalTree first, and nothing but KeepPath after it", model.ErrTree)
	}
	for j, node := range path {
		want := -1
		if j > 0 {
			want = path[j-1]
		}
		if node < 0 || node >= len(tr.parents) {
			return fmt.Errorf("%w: path[%d] is node %d; the tree has %d nodes", model.ErrTree, j, node, len(tr.parents))
		}
		if p := tr.parents[node]; p != want {
			return fmt.Errorf("%w: path[%d] is node %d, whose parent is %d, not %d: the path is not a chain from the context", model.ErrTree, j, node, p, want)
		}
	}
	// A chain's nodes increase, so path[j] ≥ j: each row moves down (or
	// stays) and never onto a row still to be moved.
	for l := range s.k {
		for j, node := range path {
			if node != j {
				s.k[l].move(s.pos+j, s.pos+node)
				s.v[l].move(s.pos+j, s.pos+node)
			}
		}
	}
	s.pos += len(path)
	s.tree = nil
	return nil
}

// path writes into buf the slots of node r's path (its ancestors root
// first, itself last) from first on (where its window begins) and returns
// them.
func (a *attention) path(buf []int, r, first int) []int {
	d := a.tree.depth[r]
	path := buf[:d+1]
	for node, i := r, d; i >= 0; node, i = a.tree.parents[node], i-1 {
		path[i] = a.base + node
	}
	return path[max(0, first-a.base):]
}

// endOfRun is the end of the run of consecutive slots that starts at
// path[i] (one DotRows, one WeightedSumAdd).
func endOfRun(path []int, i int) int {
	j := i + 1
	for j < len(path) && path[j] == path[j-1]+1 {
		j++
	}
	return j
}

// releasePath returns a path buffer to the free list.
func (a *attention) releasePath(b []int) {
	a.mu.Lock()
	a.paths = append(a.paths, b)
	a.mu.Unlock()
}

// pathBuffer returns a buffer for the slots of a node's path (the tree's
// depth + 1).
func (a *attention) pathBuffer() []int {
	n := a.tree.maxDepth + 1
	a.mu.Lock()
	defer a.mu.Unlock()
	for len(a.paths) > 0 {
		b := a.paths[len(a.paths)-1]
		a.paths = a.paths[:len(a.paths)-1]
		if cap(b) >= n {
			return b[:n]
		}
	}
	return make([]int, n)
}
