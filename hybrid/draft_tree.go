package hybrid

import (
	"fmt"
	"math"
	"slices"

	"github.com/hlmproject/hlm/channel"
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
// verification accepts it (EAGLE-2's path value, Li et al. 2024): its
// parent's value times the chance that it is the one accepted there, which
// the run measures from the verdicts (treeStats; Sequoia's acceptance
// vector, Chen et al. 2024, online) — for a node's first candidate as a
// line in the draft's own probability of it, for a later one by its rank,
// given that the earlier candidates of the node were rejected. A leaf is
// opened only if that raises the round's expected committed tokens per
// second in the device's model of the round's time (worthOpening: τ_SLM
// per distribution, the uplink at the link's nominal rate, τ_LLM and the
// per-message overheads): an SLM pass costs as much time as four uplink
// kilobits at 160 kbit/s, so the bits alone would grow trees that are
// slow to draft. The value model and the time test were measured against
// the bits-only rule of the first version in `hlm eval paper trees`
// (docs/REPRODUCTION.md, "Token trees").
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
	value  float64   // estimated chance that the verification accepts the node (root 1)
	rej    float64   // estimated chance that all its candidates so far are rejected, once it is reached
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
	budget int       // bits left
	spent  int       // bits spent
	expect float64   // Σ of the nodes' values: the expected accepted drafts
	clock  roundTime // the device's model of the round's time
	limit  int       // nodes at most (root excluded)
	depth  int       // levels at most
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
	// With room for one token the round commits exactly one, whatever it
	// sends: one candidate, as a chain's block drafts one (blockRoom).
	limit := d.p.TreeNodes
	if room <= 1 {
		limit = 1
	}
	tr := &tree{d: d, nodes: []*tnode{{parent: -1, value: 1}}, budget: d.p.Budget, clock: roundTimeOf(d.p),
		limit: limit, depth: min(d.p.TreeDepth, blockRoom(room)), idb: idBits(d.vocab)}
	if err := tr.open(0); err != nil {
		return Step{}, err
	}
	// A round always carries its first candidate: a budget smaller than
	// one node would otherwise stall the generation.
	over := tr.cost(0) > tr.budget
	tr.draw(0, true)
	if shape == nil {
		err = tr.growDynamic()
	} else {
		err = tr.growShape(shape)
	}
	if err != nil {
		return Step{}, err
	}
	st := tr.send()
	st.overBudget = over
	return st, nil
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
// is sent (lossless; Validate refuses sample_from=slm for the tree
// methods, whose server checks each candidate against what was sent).
func (tr *tree) sample(n int) []float64 {
	return tr.nodes[n].enc.Recon
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
	tr.spent += c
	kid := &tnode{parent: n, token: t, depth: nd.depth + 1, dup: nd.drawn[t]}
	st := tr.d.stats
	switch {
	case len(nd.kids) == 0:
		a := st.firstRate(s[t])
		kid.value, nd.rej = nd.value*a, 1-a
	case !kid.dup: // a repeat is rejected for sure: nd.rej stays
		a := st.laterRate(len(nd.kids))
		kid.value = nd.value * nd.rej * a
		nd.rej *= 1 - a
	}
	tr.expect += kid.value
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
				gain = tr.next(i)
				c = tr.cost(i)
			}
			if c > tr.budget || !(gain > 0) {
				continue
			}
			if nd.x == nil && !tr.worthOpening(nd.value, c) {
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

// roundTime is the device's model of a round's virtual time (Q-S eq. 9):
// a fixed part (τ_LLM and the per-message overheads of both directions),
// τ_SLM per distribution computed, and the uplink time of a bit at the
// link's nominal rate.
type roundTime struct{ fixed, pass, bit float64 }

func roundTimeOf(p Params) roundTime {
	c := p.Channel
	// A trace's rate is unknown in advance: its bits are taken as free.
	return roundTime{fixed: p.TauLLM + c.UpOverhead.Seconds() + c.DownOverhead.Seconds(), pass: p.TauSLM, bit: 1 / channel.NominalRate(c)}
}

// worthOpening reports whether computing the distribution of a leaf of
// value v and sending its first candidate (c bits) is expected to raise
// the round's committed tokens per second: the node's expected accepted
// drafts (v times the measured acceptance of a node with candidates) per
// second of SLM pass and uplink must beat the tree's so far.
func (tr *tree) worthOpening(v float64, c int) bool {
	return tr.worth(v*tr.d.stats.nodeRate(), 1, c)
}

// worth reports whether an action expected to add gain accepted drafts
// for passes SLM passes and c uplink bits raises the round's expected
// committed tokens per second, (1 + Σ values) over the modelled time: the
// action's own tokens per second must beat the tree's so far. An action
// that costs no modelled time (τ_SLM = 0 and a trace link, whose bits are
// free) is worth any gain: the comparison would be 0 > 0.
func (tr *tree) worth(gain float64, passes, c int) bool {
	k := tr.clock
	now := k.fixed + float64(tr.dists)*k.pass + float64(tr.spent)*k.bit
	cost := float64(passes)*k.pass + float64(c)*k.bit
	if cost == 0 {
		return gain > 0
	}
	return gain*now > (1+tr.expect)*cost
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
		dr := drafted{token: nd.token, sample: tr.sample(nd.parent), recon: p.enc.Recon, slm: p.x, u: math.NaN()}
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
	d.stats.sent(tr, internal)
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
	if tr == nil {
		return nil, nil, fmt.Errorf("hybrid: inconsistent verdict (tree node %d, no tree in flight)", v.Node)
	}
	if !v.HasNode || v.Node < 0 || v.Node >= len(tr.nodes) {
		return nil, nil, fmt.Errorf("hybrid: inconsistent verdict (tree node %d of %d)", v.Node, len(tr.nodes)-1)
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
// candidates, from the verdicts (Sequoia's acceptance vector, Chen et al.
// 2024, measured online):
//
//   - a node's first candidate: a line a + b·q in the draft's probability q
//     of it, fitted by least squares to the first candidates the walk
//     checked (EAGLE-2's confidence, Li et al. 2024; but a sampled token's
//     acceptance min(1, y/x̂) is far from q: on pair 1, candidates drawn
//     with q < 0.1 are accepted 54–56% of the time), starting from the prior
//     line 0.5 + 0.5q worth treePrior observations at each end;
//   - a later candidate, by its rank at its node (the residual has been
//     updated once per earlier candidate), among the candidates that do not
//     repeat an earlier one (a repeat is rejected for sure), prior 0.2;
//   - a node with candidates, once the walk reaches it: that one of them is
//     accepted (prior 0.8), for the time its distribution costs.
type treeStats struct {
	fit   [5]float64   // first candidates: Σ 1, Σ q, Σ q², Σ accepted, Σ q·accepted
	later [][2]float64 // by rank − 2: accepted, tried
	node  [2]float64   // nodes with candidates the walk reached: one accepted, reached
	rep   TreeReport   // what the run's trees were and did
}

// treePrior is the weight, in observations, of the rates' priors.
const treePrior = 4

func bucket(q float64) int { return min(9, max(0, int(q*10))) }

// line is the fitted acceptance a + b·q of first candidates.
func (st *treeStats) line() (a, b float64) {
	// The prior: treePrior observations at q = 0 accepted half the time,
	// treePrior at q = 1 always accepted.
	n, sq, sqq, sa, sqa := st.fit[0]+2*treePrior, st.fit[1]+treePrior, st.fit[2]+treePrior, st.fit[3]+1.5*treePrior, st.fit[4]+treePrior
	b = (n*sqa - sq*sa) / (n*sqq - sq*sq)
	return (sa - b*sq) / n, b
}

// firstRate is the estimated acceptance of a first candidate that the
// draft gave probability q.
func (st *treeStats) firstRate(q float64) float64 {
	a, b := st.line()
	return min(1, max(0.01, a+b*q))
}

// firstMean is the measured acceptance of first candidates (prior 0.75,
// the prior line's mean).
func (st *treeStats) firstMean() float64 {
	return (st.fit[3] + 1.5*treePrior) / (st.fit[0] + 2*treePrior)
}

// nodeRate is the measured chance that the walk accepts one of a node's
// candidates once it reaches the node (prior 0.8).
func (st *treeStats) nodeRate() float64 {
	return (st.node[0] + treePrior*0.8) / (st.node[1] + treePrior)
}

// laterRate is the estimated acceptance of a candidate of rank k+1 that
// repeats none of the k rejected before it.
func (st *treeStats) laterRate(k int) float64 {
	var b [2]float64
	if k-1 < len(st.later) {
		b = st.later[k-1]
	}
	return (b[0] + treePrior*0.2) / (b[1] + treePrior)
}

// next is the expected gain of one more candidate at the opened node n:
// the chance that the verification accepts it. A first candidate drawn
// from s is accepted with the expected Σ_t s_t·firstRate(s_t); a later one
// only if every earlier candidate was rejected (n.rej), it repeats none of
// them (the fresh mass of s) and it is accepted at its rank.
func (tr *tree) next(n int) float64 {
	nd, st, s := tr.nodes[n], tr.d.stats, tr.sample(n)
	if len(nd.kids) == 0 {
		a, b := st.line()
		ss := 0.0
		for _, q := range s {
			ss += q * q
		}
		return nd.value * min(1, max(0.01, a+b*ss)) // Σ q·(a + b·q), as firstRate clamps it
	}
	return nd.value * nd.rej * st.laterRate(len(nd.kids)) * fresh(s, nd.drawn)
}

// TreeReport is what a device measured of the token trees it sent during
// a run (tree methods; zero for the others): their size, how their uplink
// bits split, and what the verification did with them. It is a diagnostic
// (package eval's trees rerun reads it); the growth reads only treeStats'
// rates.
type TreeReport struct {
	Trees    int `json:"trees"`     // rounds that sent a tree
	Nodes    int `json:"nodes"`     // Σ nodes sent (the root, the context, excluded)
	Internal int `json:"internal"`  // Σ nodes whose distribution was sent (one SLM pass each; the root included)
	Depth    int `json:"depth_sum"` // Σ of each tree's depth
	// The uplink bits of the trees by what they carry: the encoded
	// distributions, the candidates' token ids and the parent indices.
	PayloadBits int64 `json:"payload_bits"`
	IDBits      int64 `json:"id_bits"`
	ParentBits  int64 `json:"parent_bits"`
	// Dups counts the candidates that repeat an earlier one of their node
	// (drawn independently from the same distribution, they must be sent,
	// and can never be accepted).
	Dups int `json:"repeats"`
	// Predicted is Σ over the trees of the growth's own estimate of the
	// accepted drafts (Σ of its nodes' values); Accepted what the
	// verification accepted.
	Predicted float64 `json:"predicted"`
	Accepted  int     `json:"accepted"`
	// Levels[k] counts the walk at depth k of the accepted paths (k = 0:
	// the root): nodes reached that had candidates [1] and those where one
	// was accepted [0].
	Levels [][2]int `json:"levels"`
	// First counts the first candidates the walk checked [1] and accepted
	// [0]; FirstBy the same by the draft's probability of them, in tenths;
	// Later[r−1] the candidates of rank r+1 (checked after r rejections at
	// their node), repeats included.
	First   [2]int     `json:"first"`
	FirstBy [10][2]int `json:"first_by_tenth"`
	Later   [][2]int   `json:"later"`
	// LaterPaths counts the trees whose accepted path took a later
	// candidate at some node.
	LaterPaths int `json:"later_paths"`
}

// Add adds r's counts to a (the report of several runs).
func (a *TreeReport) Add(r TreeReport) {
	a.Trees += r.Trees
	a.Nodes += r.Nodes
	a.Internal += r.Internal
	a.Depth += r.Depth
	a.PayloadBits += r.PayloadBits
	a.IDBits += r.IDBits
	a.ParentBits += r.ParentBits
	a.Dups += r.Dups
	a.Predicted += r.Predicted
	a.Accepted += r.Accepted
	a.LaterPaths += r.LaterPaths
	add2 := func(dst *[2]int, src [2]int) { dst[0] += src[0]; dst[1] += src[1] }
	add2(&a.First, r.First)
	for b := range r.FirstBy {
		add2(&a.FirstBy[b], r.FirstBy[b])
	}
	grow := func(dst *[][2]int, src [][2]int) {
		for k, c := range src {
			for len(*dst) <= k {
				*dst = append(*dst, [2]int{})
			}
			add2(&(*dst)[k], c)
		}
	}
	grow(&a.Levels, r.Levels)
	grow(&a.Later, r.Later)
}

// TreeReport is the run's report on its token trees so far.
func (d *Device) TreeReport() TreeReport {
	if d.stats == nil {
		return TreeReport{}
	}
	r := d.stats.rep
	r.Levels, r.Later = slices.Clone(r.Levels), slices.Clone(r.Later)
	r.First = [2]int{int(d.stats.fit[3]), int(d.stats.fit[0])} // the fit's counts
	return r
}

// sent records a tree as it is sent: its size, its bits and the growth's
// estimate of the drafts it will have accepted.
func (st *treeStats) sent(tr *tree, internal int) {
	r := &st.rep
	n := len(tr.nodes) - 1
	r.Trees++
	r.Nodes += n
	r.Internal += internal
	r.ParentBits += int64(treeBits(n))
	r.IDBits += int64(n * tr.idb)
	r.Predicted += tr.expect
	depth := 0
	for _, nd := range tr.nodes {
		depth = max(depth, nd.depth)
		if nd.dup {
			r.Dups++
		}
		if len(nd.kids) > 0 {
			r.PayloadBits += int64(nd.enc.Bits)
		}
	}
	r.Depth += depth
}

// fresh is the mass of s outside the tokens drawn.
func fresh(s []float64, drawn map[int]bool) float64 {
	f := 0.0
	for t, q := range s {
		if !drawn[t] {
			f += q
		}
	}
	return f
}

// observe records a verdict: at the root and at each accepted node of the
// committed chain, which of its candidates was accepted (the chain's next
// node) or, at the chain's last node, that all were rejected.
func (st *treeStats) observe(tr *tree, chain []int, resampled bool) {
	rep := &st.rep
	rep.Accepted += len(chain)
	at := append([]int{0}, chain...)
	later := false // the path took a later candidate
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
		for len(rep.Levels) <= i {
			rep.Levels = append(rep.Levels, [2]int{})
		}
		rep.Levels[i][1]++
		st.node[1]++
		if acc >= 0 {
			st.node[0]++
			rep.Levels[i][0]++
			later = later || acc > 0
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
				q := tr.sample(n)[tr.nodes[k].token]
				st.fit[0]++
				st.fit[1] += q
				st.fit[2] += q * q
				st.fit[3] += ok
				st.fit[4] += q * ok
				b := bucket(q)
				rep.FirstBy[b][0] += int(ok)
				rep.FirstBy[b][1]++
				continue
			}
			for len(st.later) < r {
				st.later = append(st.later, [2]float64{})
			}
			if !tr.nodes[k].dup { // a repeat is rejected for sure: not a measurement
				st.later[r-1][0] += ok
				st.later[r-1][1]++
			}
			for len(rep.Later) < r {
				rep.Later = append(rep.Later, [2]int{})
			}
			rep.Later[r-1][0] += int(ok)
			rep.Later[r-1][1]++
		}
	}
	if later {
		rep.LaterPaths++
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
	for i, d := range up.Drafts {
		if d.Token < 0 || int(d.Token) >= s.vocab {
			return nil, fmt.Errorf("%w: tree node %d: token %d outside the vocabulary of %d", ErrParam, i, d.Token, s.vocab)
		}
		tj.t.Parents[i], tj.t.Tokens[i] = int(up.Parents[i]), int(d.Token)
	}
	// The shape first (parents before their children, no child of a
	// repeat): the walk below reads a node's parent.
	if err := tj.t.Check(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrParam, err)
	}
	depth := make([]int, n)
	for i, d := range up.Drafts {
		p := tj.t.Parents[i]
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
			s.llm.next, s.llm.lent = rows[res.Path[len(res.Path)-1]], true
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
