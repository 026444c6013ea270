package speculative

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/hlmproject/hlm/sampling"
)

// candidatesOutput drafts candidates from s (k of them, or with stop, a
// stopping rule: draw another while stop(drawn) is false, at most kmax),
// verifies them with verify against (xhat, y) n times and counts the
// tokens.
func candidatesOutput(s, xhat, y []float64, kmax, n int, seed uint64, stop func([]int) bool,
	verify func(xhat, y []float64, cands []int, rng *rand.Rand) (int, int)) []int {
	rng := rand.New(rand.NewPCG(seed, 1))
	counts := make([]int, len(y))
	for range n {
		var cands []int
		for len(cands) < kmax && (len(cands) == 0 || !stop(cands)) {
			cands = append(cands, sampling.Sample(s, rng))
		}
		_, tok := verify(xhat, y, cands, rng)
		counts[tok]++
	}
	return counts
}

// noResidual is a broken verifier: every candidate is checked against y
// itself, without the residual update after a rejection.
func noResidual(xhat, y []float64, cands []int, rng *rand.Rand) (int, int) {
	for j, c := range cands {
		if accept(xhat[c], y[c], rng) {
			return j, c
		}
	}
	return -1, residualInverseCDF(y, xhat, rng.Float64())
}

// TestVerifyCandidatesChiSquare: recursive rejection sampling over k
// candidates drafted i.i.d. from x̂ gives y (χ², n = 400,000 per case,
// α = 0.001, seeds 500 + case), for fixed k = 1…4, for a stopping rule
// that looks at the candidates drawn (draw another while the last one is
// token 0 or was drawn before: duplicates are common), and for a
// quantized x̂. Two seeded breaks are caught at the same α: no residual
// update after a rejection, and candidates drawn from the SLM's x instead
// of the x̂ the server checks them against.
func TestVerifyCandidatesChiSquare(t *testing.T) {
	const n = 400_000
	fixed := func(int) func([]int) bool { return func([]int) bool { return false } }
	adaptive := func(c []int) bool {
		last := c[len(c)-1]
		if last == 0 {
			return false
		}
		for _, d := range c[:len(c)-1] {
			if d == last {
				return false
			}
		}
		return true
	}
	seed := uint64(500)
	for _, p := range empiricalPairs() {
		q := lattice(p.x, 4)
		for _, c := range []struct {
			name    string
			s, xhat []float64
			kmax    int
			stop    func([]int) bool
		}{
			{"k=1", p.x, p.x, 1, fixed(1)},
			{"k=2", p.x, p.x, 2, fixed(2)},
			{"k=4", p.x, p.x, 4, fixed(4)},
			{"adaptive", p.x, p.x, 5, adaptive},
			{"quantized k=3", q, q, 3, fixed(3)},
		} {
			seed++
			counts := candidatesOutput(c.s, c.xhat, p.y, c.kmax, n, seed, c.stop, VerifyCandidates)
			stat, crit, df, zeroHit := chiSquareAgainst(counts, p.y)
			if zeroHit || stat > crit {
				t.Errorf("%s, %s: output does not follow y: χ²=%.2f > %.3f (df %d, zero cell hit %v)", p.family, c.name, stat, crit, df, zeroHit)
			}
		}
	}
	// The breaks, on a pair where they matter.
	p := empiricalPairs()[1] // peaked
	counts := candidatesOutput(p.x, p.x, p.y, 3, n, 600, fixed(3), noResidual)
	if stat, crit, _, _ := chiSquareAgainst(counts, p.y); stat <= crit {
		t.Errorf("no residual update: χ²=%.2f ≤ %.3f, the test does not see it", stat, crit)
	}
	q := lattice(p.x, 4)
	counts = candidatesOutput(p.x, q, p.y, 3, n, 601, fixed(3), VerifyCandidates)
	if stat, crit, _, _ := chiSquareAgainst(counts, p.y); stat <= crit {
		t.Errorf("candidates from x checked against x̂: χ²=%.2f ≤ %.3f, the test does not see it", stat, crit)
	}
}

// TestVerifyCandidatesRepeats: a repeated candidate is never accepted
// (its target entry is 0 after the first rejection) but still consumes a
// residual update.
func TestVerifyCandidatesRepeats(t *testing.T) {
	x := []float64{0.9, 0.1}
	y := []float64{0.1, 0.9}
	rng := rand.New(rand.NewPCG(7, 7))
	for range 10_000 {
		j, tok := VerifyCandidates(x, y, []int{0, 0, 0}, rng)
		if j > 0 {
			t.Fatalf("repeat %d accepted (token %d)", j, tok)
		}
		if j == -1 && tok != 1 {
			t.Fatalf("after three rejections of token 0 the residual is all token 1, got %d", tok)
		}
	}
}

// randomTree is a tree of n nodes over vocabulary v, children drawn from
// each node's x (dist(n)), with repeated candidates as leaves.
func randomTree(rng *rand.Rand, n int, x func(t Tree, node int) []float64) Tree {
	var t Tree
	dup := map[int]bool{}
	seen := map[[2]int]bool{}
	for i := range n {
		p := rng.IntN(i+1) - 1
		for p >= 0 && dup[p] {
			p = t.Parents[p]
		}
		tok := sampling.Sample(x(t, p), rng)
		k := [2]int{p, tok}
		dup[i] = seen[k]
		seen[k] = true
		t.Parents = append(t.Parents, p)
		t.Tokens = append(t.Tokens, tok)
	}
	return t
}

// TestVerifyTreeFollowsTheTarget: the first two committed tokens of a
// random tree's verification follow the target's joint law over two
// positions (χ² over the V² pairs, n = 300,000, α = 0.001): the tree is
// drawn anew each time from per-context distributions x(prefix), the
// target is y(prefix). With candidates drawn from the wrong distribution
// the test fails.
func TestVerifyTreeFollowsTheTarget(t *testing.T) {
	const v, n = 4, 300_000
	xs := map[int][]float64{-1: {0.5, 0.2, 0.2, 0.1}}
	ys := map[int][]float64{-1: {0.25, 0.25, 0.3, 0.2}}
	for tok := range v { // the second position's distributions depend on the first token
		xs[tok] = normalize([]float64{float64(1 + tok), 2, 3, float64(4 - tok)})
		ys[tok] = normalize([]float64{3, float64(1 + tok), 1, 2})
	}
	joint := make([]float64, v*v)
	for a := range v {
		for b := range v {
			joint[a*v+b] = ys[-1][a] * ys[a][b]
		}
	}
	run := func(seed uint64, draftFrom func(prefixTok int) []float64) []int {
		rng := rand.New(rand.NewPCG(seed, 2))
		counts := make([]int, v*v)
		for range n {
			nodes := 1 + rng.IntN(6)
			last := func(t Tree, node int) int { // the token a node's children follow
				if node < 0 {
					return -1
				}
				return t.Tokens[node]
			}
			tr := randomTree(rng, nodes, func(t Tree, node int) []float64 { return draftFrom(last(t, node)) })
			ctxTok := func(node int) int { return last(tr, node) }
			res, err := VerifyTree(tr, func(node int) []float64 { return xs[ctxTok(node)] },
				func(node int) []float64 { return ys[ctxTok(node)] }, rng)
			if err != nil {
				t.Fatal(err)
			}
			first, second := res.Token, -1
			if len(res.Path) > 0 {
				first = tr.Tokens[res.Path[0]]
				if len(res.Path) > 1 {
					second = tr.Tokens[res.Path[1]]
				} else {
					second = res.Token
				}
			} else {
				second = sampling.Sample(ys[first], rng) // the next round's token
			}
			counts[first*v+second]++
		}
		return counts
	}
	counts := run(700, func(tok int) []float64 { return xs[tok] })
	if stat, crit, df, zeroHit := chiSquareAgainst(counts, joint); zeroHit || stat > crit {
		t.Errorf("tree output does not follow y: χ²=%.2f > %.3f (df %d)", stat, crit, df)
	}
	wrong := func(tok int) []float64 { return ys[tok] } // drafted from another distribution than x̂
	if stat, crit, _, _ := chiSquareAgainst(run(701, wrong), joint); stat <= crit {
		t.Errorf("candidates drafted from the wrong distribution: χ²=%.2f ≤ %.3f, not seen", stat, crit)
	}
}

// TestTreeCheck: what is not a tree is refused.
func TestTreeCheck(t *testing.T) {
	for _, c := range []struct {
		name string
		tr   Tree
		ok   bool
	}{
		{"chain", Tree{Parents: []int{-1, 0, 1}, Tokens: []int{1, 2, 3}}, true},
		{"siblings and repeats", Tree{Parents: []int{-1, -1, -1, 0}, Tokens: []int{1, 1, 2, 3}}, true},
		{"parent after child", Tree{Parents: []int{1, -1}, Tokens: []int{1, 2}}, false},
		{"self parent", Tree{Parents: []int{0}, Tokens: []int{1}}, false},
		{"below -1", Tree{Parents: []int{-2}, Tokens: []int{1}}, false},
		{"child of a repeat", Tree{Parents: []int{-1, -1, 1}, Tokens: []int{1, 1, 2}}, false},
		{"lengths", Tree{Parents: []int{-1}, Tokens: []int{1, 2}}, false},
	} {
		if err := c.tr.Check(); (err == nil) != c.ok {
			t.Errorf("%s: err = %v", c.name, err)
		}
	}
	x := []float64{0.5, 0.5, 0}
	_, err := VerifyTree(Tree{Parents: []int{-1}, Tokens: []int{2}}, func(int) []float64 { return x }, func(int) []float64 { return x }, rand.New(rand.NewPCG(1, 1)))
	if !errors.Is(err, ErrOutsideSupport) {
		t.Errorf("candidate outside the support: err = %v", err)
	}
}
