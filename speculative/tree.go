package speculative

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/hlmproject/hlm/sampling"
)

// VerifyCandidates is recursive rejection sampling over k candidates
// drafted independently from the same distribution x̂ (multi-candidate
// speculative sampling: SpecInfer, Miao et al. 2024, Sec. 4.2 "multi-step
// speculative sampling"; SpecTr, Sun et al. 2023). With r_1 = y it checks
// the candidates in order: candidate c_j is accepted with probability
// min(1, r_j(c_j)/x̂(c_j)); on rejection r_{j+1} = norm((r_j − x̂)⁺). If all
// are rejected the token is drawn from r_{k+1}. It returns the index of the
// accepted candidate (−1: none) and the token.
//
// Lossless. Claim: when c_1, c_2, … are independent draws from x̂ and the
// number k of them may depend on everything but their own future values
// (a stopping rule of the draws, so a device may decide whether to draw
// another candidate after seeing the earlier ones), the token is
// distributed as y. Proof by induction on the most candidates that can
// remain, m. m = 0: the token is drawn from r. Step: with target r,
//
//	P(token = v) = P(c = v, accepted) + P(rejected)·P(rest gives v | rejected)
//	             = x̂_v·min(1, r_v/x̂_v) + (Σ_u (r_u − x̂_u)⁺)·r'_v
//	             = min(x̂_v, r_v) + (r_v − x̂_v)⁺ = r_v,
//
// because 1 − Σ_u min(x̂_u, r_u) = Σ_u (r_u − x̂_u)⁺, and because the
// remaining candidates, independent of c, are (by the hypothesis, whatever
// the stopping rule made of c) turned into a token distributed as the
// next target r' = norm((r − x̂)⁺), which does not depend on c. (The
// residual update does not depend on which candidate was rejected.)
//
// Corner cases. A repeated candidate is checked again against the updated
// target and can never be accepted: a rejected token t had r(t) < x̂(t), so
// r'(t) = 0, and every later residual keeps it at 0 — it still updates the
// target, as the proof needs. A candidate outside x̂'s support (x̂(c) = 0)
// could not have been drawn: the caller refuses it (ErrOutsideSupport)
// before verifying. A zero residual falls back to the target itself
// (Residual's convention: it happens only when r = x̂ up to rounding).
func VerifyCandidates(xhat, y []float64, cands []int, rng *rand.Rand) (accepted, token int) {
	if len(xhat) != len(y) {
		panic("speculative: VerifyCandidates: len(xhat) != len(y)")
	}
	r := y
	var buf []float64
	for j, c := range cands {
		if accept(xhat[c], r[c], rng) {
			return j, c
		}
		buf = Residual(buf, r, xhat)
		r = buf
	}
	return -1, sampling.Sample(r, rng)
}

// ErrOutsideSupport: a candidate token has probability 0 under the
// distribution it was drawn from, so it could not have been drawn.
var ErrOutsideSupport = errors.New("candidate outside the support of the distribution it was drafted from")

// A Tree is a token tree as a verifier walks it: node i holds Tokens[i]
// and has parent Parents[i] (−1: the root, the context before the tree), an
// earlier node. The children of a node, in node order, are its
// candidates, drafted independently from the node's distribution; a
// repeated candidate is a leaf (it can never be accepted).
type Tree struct {
	Parents, Tokens []int
}

// Children are the candidates of node n (−1: the root), in order.
func (t Tree) Children(n int) []int {
	var out []int
	for i, p := range t.Parents {
		if p == n {
			out = append(out, i)
		}
	}
	return out
}

// Check reports a tree that is not one: lengths that differ, a parent
// that is not an earlier node, children of a repeated candidate.
func (t Tree) Check() error {
	if len(t.Parents) != len(t.Tokens) {
		return fmt.Errorf("speculative: tree of %d parents and %d tokens", len(t.Parents), len(t.Tokens))
	}
	seen := map[[2]int]bool{} // (parent, token) of the first occurrences
	dup := make([]bool, len(t.Tokens))
	for i, p := range t.Parents {
		if p < -1 || p >= i {
			return fmt.Errorf("speculative: tree node %d: parent %d is not an earlier node", i, p)
		}
		if p >= 0 && dup[p] {
			return fmt.Errorf("speculative: tree node %d: its parent %d repeats an earlier candidate and can never be accepted, so it has no children", i, p)
		}
		k := [2]int{p, t.Tokens[i]}
		dup[i] = seen[k]
		seen[k] = true
	}
	return nil
}

// TreeResult is the outcome of verifying a tree: the accepted path (a
// chain of nodes from the root), then Token — the bonus token after a
// leaf, or the token drawn from the residual after every candidate of the
// path's last node was rejected (Resampled).
type TreeResult struct {
	Path      []int
	Token     int
	Resampled bool
}

// VerifyTree verifies a token tree top down with VerifyCandidates at each
// node of the path: starting at the root, the node's candidates (its
// children) are checked against the target after the node; an accepted
// candidate becomes the next node. xhat(n) is the distribution the
// candidates of node n were drafted from (n = −1: the root); y(n) the
// target distribution after node n (the LLM's, from one tree pass). The
// committed tokens follow the target distributions exactly (VerifyCandidates
// at each step, each conditioned on the path so far).
func VerifyTree(t Tree, xhat func(n int) []float64, y func(n int) []float64, rng *rand.Rand) (TreeResult, error) {
	if err := t.Check(); err != nil {
		return TreeResult{}, err
	}
	var res TreeResult
	for n := -1; ; {
		kids := t.Children(n)
		target := y(n)
		if len(kids) == 0 {
			res.Token = sampling.Sample(target, rng)
			return res, nil
		}
		x := xhat(n)
		cands := make([]int, len(kids))
		for j, k := range kids {
			c := t.Tokens[k]
			if c < 0 || c >= len(x) || !(x[c] > 0) {
				return TreeResult{}, fmt.Errorf("tree node %d (token %d): %w", k, c, ErrOutsideSupport)
			}
			cands[j] = c
		}
		j, tok := VerifyCandidates(x, target, cands, rng)
		if j < 0 {
			res.Token, res.Resampled = tok, true
			return res, nil
		}
		n = kids[j]
		res.Path = append(res.Path, n)
	}
}
