package hybrid

import (
	"fmt"
	"math"
	"slices"

	"github.com/hlmproject/hlm/codec"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/sampling"
	"github.com/hlmproject/hlm/speculative"
	"github.com/hlmproject/hlm/wire"
)

// Token trees under an uplink bit budget (tree-q-s, tree-k-sqs; beyond the
// papers). A chain of L drafts throws away everything after its first
// rejection; a tree gives a position several candidates. In hlm's setting
// the cost of a candidate is what matters: every node whose children are
// drafted costs one encoded distribution (hundreds of bits), but a second
// candidate drafted from the same distribution costs only its id (⌈log2 V⌉
// bits) — so for the bits of a chain a tree carries more chances of
// acceptance where the draft is unsure.
//
// The device grows the tree within budget_bits (the round's uplink bits,
// counted as UplinkBits counts them: ids, payloads and each node's parent
// index), tree_nodes and tree_depth (and the tokens left). With
// tree_shape=dynamic it repeatedly takes the action with the most expected
// accepted tokens per bit: another candidate at a node whose distribution
// is known, or the first candidate of a leaf, whose distribution it then
// computes (one SLM pass). A node's value is the estimated chance that the
// verification reaches it (EAGLE-2's path value, Li et al. 2024); a
// candidate's worth is the node's value times the chance that it is the
// one accepted there. That chance is measured in the run, as Sequoia's
// acceptance vector is (Chen et al. 2024), from the verdicts (treeStats):
// for a node's first candidate by the draft's own probability of it (the
// draft's confidence, bucketed), for the later ones by their rank.
// With a fixed shape ("3,2,1") every node at depth k draws shape[k]
// candidates, breadth first, as long as the budget lasts (Sequoia's fixed
// trees, Chen et al. 2024). Every candidate is drawn independently from its
// node's encoded distribution x̂, which the server decodes: the server
// verifies node by node with recursive rejection sampling
// (speculative.VerifyCandidates, lossless for candidates drawn that way
// whatever rule decided how many to draw — proof there).
//
// On the wire the drafts are the tree's nodes, parents before children
// (Upload.Parents); a node's first child carries the payload of the node's
// distribution, its other children none. The verdict names the deepest
// accepted node (Verdict.Node).
type treeBlock struct{}

// tnode is one node of the tree being drafted; node 0 is the root, the
// context itself.
type tnode struct {
	parent int
	token  int
	depth  int       // tokens on the path from the root (root 0)
	value  float64   // Π of x̂ along the path (root 1)
	dup    bool      // repeats an earlier candidate of its parent: never accepted, never expanded
	closed bool      // a leaf whose first candidate did not fit the budget
	x      []float64 // the SLM's distribution after the node (nil until computed)
	enc    codec.Encoded
	kids   []int
	drawn  map[int]bool
}

// tree is a round's tree under construction.
type tree struct {
	d      *Device
	nodes  []*tnode
	budget int // bits left
	limit  int // nodes at most (root excluded)
	depth  int // levels at most
	idb    int
	dists  int     // SLM distributions computed
	payBit float64 // Σ of their payload bits
}

func (treeBlock) step(d *Device, room int) (Step, error) {
	shape, err := parseTreeShape(d.p.TreeShape)
	if err != nil {
		return Step{}, fmt.Errorf("%w: tree_shape=%q", ErrParam, d.p.TreeShape)
	}
	if d.stats == nil {
		d.stats = &treeStats{}
	}
	tr := &tree{d: d, nodes: []*tnode{{parent: -1, value: 1}}, budget: d.p.Budget,
		limit: d.p.TreeNodes, depth: min(d.p.TreeDepth, room), idb: idBits(d.vocab)}
	if err := tr.open(0); err != nil {
		return Step{}, err
	}
	// A round always carries its first candidate: a budget smaller than
	// one node would otherwise stall the generation.
	tr.draw(0, true)
	if shape == nil {
		err = tr.growDynamic()
	} else {
		err = tr.growShape(shape)
	}
	if err != nil {
		return Step{}, err
	}
	return tr.send(), nil
}

// path is the tokens from the root to node n.
func (tr *tree) path(n int) []int {
	var out []int
	for ; n > 0; n = tr.nodes[n].parent {
		out = append(out, tr.nodes[n].token)
	}
	slices.Reverse(out)
	return out
}

// open computes and encodes node n's distribution (one SLM pass).
func (tr *tree) open(n int) error {
	d, nd := tr.d, tr.nodes[n]
	logits, err := d.slm.last(append(slices.Clone(d.seq), tr.path(n)...))
	if err != nil {
		return err
	}
	nd.x = d.p.distOf(nil, logits)
	if nd.enc, err = d.enc.Encode(nd.x, -1); err != nil {
		return err
	}
	nd.drawn = map[int]bool{}
	tr.dists++
	tr.payBit += float64(nd.enc.Bits)
	return nil
}

// sample is the distribution node n's candidates are drafted from: what
// is sent (lossless), or the SLM's own with sample_from=slm.
func (tr *tree) sample(n int) []float64 {
	if tr.d.p.SamplesRecon() {
		return tr.nodes[n].enc.Recon
	}
	return tr.nodes[n].x
}

// treeDraftFrom is the distribution candidates are drawn from: sample (a
// variable so that a test can break it on purpose).
var treeDraftFrom = (*tree).sample

// cost is the bits of one more candidate at node n: its id, its parent
// index, and n's payload with its first candidate.
func (tr *tree) cost(n int) int {
	c := tr.idb + idBits(len(tr.nodes))
	if len(tr.nodes[n].kids) == 0 {
		c += tr.nodes[n].enc.Bits
	}
	return c
}

// draw drafts one more candidate at node n (force: even beyond the
// budget).
func (tr *tree) draw(n int, force bool) bool {
	nd := tr.nodes[n]
	c := tr.cost(n)
	if !force && c > tr.budget {
		return false
	}
	s := tr.sample(n)
	t := sampling.Sample(treeDraftFrom(tr, n), tr.d.rng)
	if t < 0 {
		return false
	}
	tr.budget -= c
	kid := &tnode{parent: n, token: t, depth: nd.depth + 1, dup: nd.drawn[t]}
	if !kid.dup {
		kid.value = nd.value * tr.d.stats.reach(len(nd.kids), s[t])
	}
	nd.drawn[t] = true
	nd.kids = append(nd.kids, len(tr.nodes))
	tr.nodes = append(tr.nodes, kid)
	return true
}

// full reports that no node may be added.
func (tr *tree) full() bool { return len(tr.nodes)-1 >= tr.limit }

// growDynamic adds the most valuable candidate per bit until none fits.
func (tr *tree) growDynamic() error {
	for !tr.full() {
		best, bestRate, open := -1, 0.0, false
		for i, nd := range tr.nodes {
			if nd.dup || nd.closed || nd.depth >= tr.depth {
				continue
			}
			var gain float64
			var c int
			if nd.x == nil { // a leaf: its distribution is not known yet
				gain = nd.value * tr.d.stats.firstMean()
				c = tr.cost0()
			} else {
				gain = nd.value * tr.d.stats.next(len(nd.kids), tr.sample(i), nd.drawn)
				c = tr.cost(i)
			}
			if c > tr.budget || !(gain > 0) {
				continue
			}
			if r := gain / float64(c); r > bestRate {
				best, bestRate, open = i, r, nd.x == nil
			}
		}
		if best < 0 {
			return nil
		}
		if open {
			if err := tr.open(best); err != nil {
				return err
			}
		}
		if !tr.draw(best, false) {
			tr.nodes[best].closed = true // its payload is larger than the estimate
		}
	}
	return nil
}

// growShape draws shape[k] candidates at every node of depth k, breadth
// first, while the budget and the node limit allow.
func (tr *tree) growShape(shape []int) error {
	for q := 0; q < len(tr.nodes) && !tr.full(); q++ {
		nd := tr.nodes[q]
		if nd.dup || nd.depth >= tr.depth || nd.depth >= len(shape) {
			continue
		}
		if nd.x == nil {
			if tr.cost0() > tr.budget {
				continue
			}
			if err := tr.open(q); err != nil {
				return err
			}
		}
		for len(nd.kids) < shape[nd.depth] && !tr.full() && tr.draw(q, false) {
		}
	}
	return nil
}

// cost0 is the estimated bits of a leaf's first candidate.
func (tr *tree) cost0() int {
	return tr.idb + idBits(len(tr.nodes)) + int(math.Ceil(tr.payBit/float64(tr.dists)))
}

// send makes the round's upload: the nodes in the order they were drafted
// (parents before children), each with its parent's distribution, the
// first child carrying its payload.
func (tr *tree) send() Step {
	d := tr.d
	n := len(tr.nodes) - 1
	drafts := make([]drafted, n)
	parents := make([]int32, n)
	internal := 0
	for i, nd := range tr.nodes[1:] {
		p := tr.nodes[nd.parent]
		dr := drafted{token: nd.token, sample: tr.sample(nd.parent), recon: p.enc.Recon, u: math.NaN()}
		if d.p.SamplesRecon() {
			dr.slm = p.x
		}
		if p.kids[0] == i+1 { // the first child carries the distribution
			dr.payload, dr.bits, dr.support, dr.dropped = p.enc.Payload, p.enc.Bits, p.enc.Support, p.enc.Dropped
			internal++
		}
		drafts[i] = dr
		parents[i] = int32(nd.parent - 1)
	}
	st := d.send(drafts)
	st.Upload.Parents = parents
	st.UplinkBits = UplinkBits(st.Upload, d.vocab)
	st.Drafted = tr.dists
	st.FullBits = 32 * d.vocab * internal
	d.tree = tr
	return st
}

// treeBits are the bits of the parent indices of a tree of n nodes: node
// i's parent is one of the i+1 earlier nodes or the root, ⌈log2(i+1)⌉ bits.
func treeBits(n int) int {
	b := 0
	for i := range n {
		b += idBits(i + 1)
	}
	return b
}

// applyTree commits the verdict on the tree in flight: the path to the
// deepest accepted node, then the verdict's token. It checks that the
// verdict is one the tree allows.
func (d *Device) applyTree(v *wire.Verdict) ([]int, []drafted, error) {
	tr := d.tree
	if tr == nil || !v.HasNode || v.Node < 0 || v.Node >= len(tr.nodes) {
		return nil, nil, fmt.Errorf("hybrid: inconsistent verdict (tree node %d of %d)", v.Node, len(d.pending))
	}
	n := v.Node // node index in tr.nodes: the verdict's node + 1 is ours, the root 0
	path := tr.path(n)
	last := tr.nodes[n]
	if last.dup || v.Accepted != len(path) || v.Token < 0 || int(v.Token) >= d.vocab || v.Resampled != (len(last.kids) > 0) {
		return nil, nil, fmt.Errorf("hybrid: inconsistent verdict (node %d at depth %d, accepted %d, token %d, resampled %v)", n, len(path), v.Accepted, v.Token, v.Resampled)
	}
	// The positions of the committed path as the meters see them: each
	// accepted node's draft, then the first candidate of the last node
	// (the rejected one) when it had candidates.
	var view []drafted
	var chain []int
	for m := n; m > 0; m = tr.nodes[m].parent {
		chain = append(chain, m)
	}
	slices.Reverse(chain)
	for _, m := range chain {
		view = append(view, d.pending[m-1])
	}
	if len(last.kids) > 0 {
		view = append(view, d.pending[last.kids[0]-1])
	}
	d.stats.observe(tr, chain, v.Resampled)
	d.tree = nil
	return append(path, int(v.Token)), view, nil
}

// treeStats are the acceptance rates a run has measured of its trees'
// candidates: of a node's first candidate by the draft's probability of
// it (bucketed in tenths: EAGLE-2's confidence), of the later candidates
// by rank, after the earlier ones were rejected (Sequoia's acceptance
// vector). Each rate starts from a prior worth treePrior observations (a
// first candidate's: the draft's probability itself; a later one's: 0.2),
// so the first rounds follow the draft's probabilities.
type treeStats struct {
	first [10][2]float64 // by bucket: accepted, tried
	later [][2]float64   // by rank − 2: accepted, tried
}

// treePrior is the weight, in observations, of the rates' priors.
const treePrior = 4

func bucket(q float64) int { return min(9, max(0, int(q*10))) }

// firstRate is the estimated acceptance of a first candidate that the
// draft gave probability q.
func (st *treeStats) firstRate(q float64) float64 {
	b := st.first[bucket(q)]
	return (b[0] + treePrior*q) / (b[1] + treePrior)
}

// firstMean is the measured acceptance of first candidates over all
// buckets (prior 0.5).
func (st *treeStats) firstMean() float64 {
	var a, n float64
	for _, b := range st.first {
		a, n = a+b[0], n+b[1]
	}
	return (a + treePrior*0.5) / (n + treePrior)
}

// laterRate is the estimated acceptance of the candidate of rank k+1,
// k ≥ 1 rejected before it.
func (st *treeStats) laterRate(k int) float64 {
	var b [2]float64
	if k-1 < len(st.later) {
		b = st.later[k-1]
	}
	return (b[0] + treePrior*0.2) / (b[1] + treePrior)
}

// rejectedBefore is the chance that the first k candidates of a node are
// all rejected (k ≥ 1).
func (st *treeStats) rejectedBefore(k int) float64 {
	p := 1 - st.firstMean()
	for j := 1; j < k; j++ {
		p *= 1 - st.laterRate(j)
	}
	return p
}

// reach is the chance that a candidate drawn with probability q as the
// (k+1)-th of its node is the one accepted there, once the verification
// reached the node.
func (st *treeStats) reach(k int, q float64) float64 {
	if k == 0 {
		return st.firstRate(q)
	}
	return st.rejectedBefore(k) * st.laterRate(k)
}

// next is the expected chance that one more candidate drawn from s at a
// node with k candidates is accepted there (a repeat of a drawn token
// never is).
func (st *treeStats) next(k int, s []float64, drawn map[int]bool) float64 {
	if k == 0 {
		e := 0.0
		for _, q := range s {
			if q > 0 {
				e += q * st.firstRate(q)
			}
		}
		return e
	}
	fresh := 0.0
	for t, q := range s {
		if !drawn[t] {
			fresh += q
		}
	}
	return st.rejectedBefore(k) * st.laterRate(k) * fresh
}

// observe records a verdict: at the root and at each accepted node of the
// committed chain, which of its candidates was accepted (the chain's next
// node) or, at the chain's last node, that all were rejected.
func (st *treeStats) observe(tr *tree, chain []int, resampled bool) {
	at := append([]int{0}, chain...)
	for i, n := range at {
		nd := tr.nodes[n]
		if len(nd.kids) == 0 {
			break
		}
		acc := -1 // rank of the accepted candidate; −1: all rejected
		if i+1 < len(at) {
			acc = slices.Index(nd.kids, at[i+1])
		} else if !resampled {
			break
		}
		for r, k := range nd.kids {
			if acc >= 0 && r > acc {
				break
			}
			ok := 0.0
			if r == acc {
				ok = 1
			}
			if r == 0 {
				b := bucket(tr.sample(n)[tr.nodes[k].token])
				st.first[b][0] += ok
				st.first[b][1]++
				continue
			}
			for len(st.later) < r {
				st.later = append(st.later, [2]float64{})
			}
			st.later[r-1][0] += ok
			st.later[r-1][1]++
		}
	}
}

// treeVerifier verifies a token tree: each internal node's distribution
// decoded from its first child's payload, one LLM pass over the tree (tree
// attention where the LLM session has it, model.TreeSession; else the
// nodes the walk reaches, path by path), then speculative.VerifyTree.
type treeVerifier struct{}

// treeJob is what a tree verification keeps between recon and verify.
type treeJob struct {
	t     speculative.Tree
	xhat  map[int][]float64 // by node (−1: the root): the distribution its candidates were drafted from
	depth int
}

func (treeVerifier) recon(s *Server, up *wire.Upload, _ []int, _ int) ([][]float64, error) {
	n := len(up.Drafts)
	if up.Parents == nil || len(up.Parents) != n || n == 0 {
		return nil, fmt.Errorf("%w: method %s sends a token tree; the upload has none", ErrParam, s.p.Method)
	}
	tj := &treeJob{xhat: map[int][]float64{}}
	tj.t.Parents, tj.t.Tokens = make([]int, n), make([]int, n)
	depth := make([]int, n)
	for i, d := range up.Drafts {
		p := int(up.Parents[i])
		switch {
		case p < -1 || p >= i:
			return nil, fmt.Errorf("%w: tree node %d: parent %d is not an earlier node", ErrParam, i, p)
		case d.Token < 0 || int(d.Token) >= s.vocab:
			return nil, fmt.Errorf("%w: tree node %d: token %d outside the vocabulary of %d", ErrParam, i, d.Token, s.vocab)
		}
		tj.t.Parents[i], tj.t.Tokens[i] = p, int(d.Token)
		depth[i] = 1
		if p >= 0 {
			depth[i] = depth[p] + 1
		}
		tj.depth = max(tj.depth, depth[i])
		if _, first := tj.xhat[p]; !first {
			if d.Bits == 0 {
				return nil, fmt.Errorf("%w: tree node %d is the first candidate of its parent but carries no distribution", ErrParam, i)
			}
			x, err := s.dec.Decode(d.Payload, s.vocab)
			if err != nil {
				return nil, fmt.Errorf("tree node %d: %w", i, err)
			}
			tj.xhat[p] = x
		} else if d.Bits != 0 {
			return nil, fmt.Errorf("%w: tree node %d carries a distribution, but its parent's came with its first candidate", ErrParam, i)
		}
		if x := tj.xhat[p]; !(x[d.Token] > 0) {
			return nil, fmt.Errorf("%w: tree node %d: %w", ErrParam, i, speculative.ErrOutsideSupport)
		}
	}
	if err := tj.t.Check(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrParam, err)
	}
	s.tree = tj
	return nil, nil
}

func (treeVerifier) verify(j *Job, ys [][]float64) (speculative.BlockResult, int, [][]float64, error) {
	s, tj := j.s, j.s.tree
	s.tree = nil
	if tj == nil {
		return speculative.BlockResult{}, 0, nil, fmt.Errorf("hybrid: tree verification without a decoded tree")
	}
	base := j.target // the committed sequence and the upload's committed tokens
	rows, ts, err := s.evalTree(base, tj.t)
	if err != nil {
		return speculative.BlockResult{}, 0, nil, err
	}
	yOf := map[int][]float64{-1: ys[0]}
	var evalErr error
	y := func(n int) []float64 {
		if p, ok := yOf[n]; ok {
			return p
		}
		var row []float32
		if rows != nil {
			row = rows[n]
		} else if evalErr == nil { // the walk reached n: evaluate its path
			row, evalErr = s.llm.last(append(slices.Clone(base), pathTokens(tj.t, n)...))
		}
		if row == nil {
			p := make([]float64, s.vocab) // after an error: any distribution, the error wins below
			p[0] = 1
			yOf[n] = p
			return p
		}
		p := s.p.distOf(nil, row)
		yOf[n] = p
		return p
	}
	res, err := verifyTree(tj.t, func(n int) []float64 { return tj.xhat[n] }, y, roundRNG(s.p.Seed, j.up.Round))
	if err == nil {
		err = evalErr
	}
	if err != nil {
		return speculative.BlockResult{}, 0, nil, fmt.Errorf("%w: %v", ErrParam, err)
	}
	toks := make([]int, len(res.Path))
	for i, n := range res.Path {
		toks[i] = tj.t.Tokens[n]
	}
	// Keep the accepted path's keys and values (one tree pass), or leave
	// the cache to the next round's plan (path by path).
	if ts != nil {
		if err := ts.KeepPath(res.Path); err != nil {
			return speculative.BlockResult{}, 0, nil, err
		}
		s.llm.toks = append(s.llm.toks, toks...)
		if len(res.Path) > 0 {
			s.llm.next = rows[res.Path[len(res.Path)-1]]
		}
	}
	// The committed path's positions, for the simulator's meters: the
	// target and the x̂ at each (the last one x̂ only if it had candidates).
	nodes := append([]int{-1}, res.Path...)
	path := make([][]float64, len(nodes))
	xhats := make([][]float64, 0, len(nodes))
	for i, n := range nodes {
		path[i] = y(n)
		if x, ok := tj.xhat[n]; ok {
			xhats = append(xhats, x)
		}
	}
	j.xhats = xhats
	j.lists = [][]int{toks}
	j.node = 0
	if len(res.Path) > 0 {
		j.node = res.Path[len(res.Path)-1] + 1
	}
	return speculative.BlockResult{Accepted: len(res.Path), Token: res.Token, Resampled: res.Resampled}, 0, path, nil
}

// verifyTree is the tree verification (a variable so that a test can
// break it on purpose and see its chi-square tests fail).
var verifyTree = speculative.VerifyTree

// pathTokens are the tokens from the root to node n (inclusive).
func pathTokens(t speculative.Tree, n int) []int {
	var out []int
	for ; n >= 0; n = t.Parents[n] {
		out = append(out, t.Tokens[n])
	}
	slices.Reverse(out)
	return out
}

// evalTree evaluates the tree after base in one pass when the LLM session
// has tree attention (rows[i]: the logits after node i); without it, nil
// rows: the walk evaluates the nodes it reaches, path by path.
func (s *Server) evalTree(base []int, t speculative.Tree) ([][]float32, model.TreeSession, error) {
	ts, ok := s.llm.s.(model.TreeSession)
	if !ok {
		return nil, nil, nil
	}
	if len(s.llm.toks) != len(base) || !slices.Equal(s.llm.toks, base) {
		return nil, nil, fmt.Errorf("hybrid: the LLM cache holds %d tokens, the tree follows %d", len(s.llm.toks), len(base))
	}
	rows, err := ts.EvalTree(t.Tokens, t.Parents)
	if err != nil {
		return nil, nil, err
	}
	return rows, ts, nil
}
