package speculative

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hlmproject/hlm/sampling"
)

// A small Markov "language" for block verification tests. The vocabulary
// has mV = 4 tokens; a prefix's context is its last token (or BOS = mV for
// the empty prefix) together with the parity of its length, so the draft
// and target distributions are genuine functions of the prefix and change
// along a block. The tables are drawn once from a fixed seed.
const mV = 4

type markov struct {
	x, y [][]float64 // [context] distribution; context = 2·last + parity
}

func ctx(last, length int) int { return 2*last + length%2 }

func newMarkov(seed uint64) markov {
	rng := rand.New(rand.NewPCG(seed, 0))
	m := markov{x: make([][]float64, 2*(mV+1)), y: make([][]float64, 2*(mV+1))}
	for c := range m.x {
		m.x[c] = peaked(rng, mV)
		m.y[c] = dirichlet1(rng, mV)
	}
	return m
}

// joint2 is the closed form of the first two committed tokens under the
// target: P(t1, t2) = y(t1 | BOS) · y(t2 | t1), flattened as t1·mV + t2.
func (m markov) joint2() []float64 {
	p := make([]float64, mV*mV)
	for t1 := range mV {
		for t2 := range mV {
			p[t1*mV+t2] = m.y[ctx(mV, 0)][t1] * m.y[ctx(t1, 1)][t2]
		}
	}
	return p
}

type blockVerifier func(xhats, ys [][]float64, drafts []int, rng *rand.Rand) BlockResult

// firstTwo generates from the empty prefix with block drafting of length L
// until two tokens are committed and returns them. Drafts are sampled from
// draftDist(x) and verified against the same draftDist(x), so for Q-S
// draftDist is the quantizer.
func (m markov) firstTwo(L int, draftDist func([]float64) []float64, verify blockVerifier, rng *rand.Rand) (int, int) {
	var committed []int
	xhats := make([][]float64, L)
	ys := make([][]float64, L+1)
	drafts := make([]int, L)
	for len(committed) < 2 {
		last := mV
		if len(committed) > 0 {
			last = committed[len(committed)-1]
		}
		length := len(committed)
		for l := range L {
			c := ctx(last, length+l)
			xhats[l] = draftDist(m.x[c])
			ys[l] = m.y[c]
			drafts[l] = sampling.Sample(xhats[l], rng)
			last = drafts[l]
		}
		ys[L] = m.y[ctx(last, length+L)]
		res := verify(xhats, ys, drafts, rng)
		committed = res.Committed(committed, drafts)
	}
	return committed[0], committed[1]
}

func identity(x []float64) []float64 { return x }

// runMarkov returns the counts of (t1, t2) over n generations.
func runMarkov(m markov, L, n int, seed uint64, draftDist func([]float64) []float64, verify blockVerifier) []int {
	rng := rand.New(rand.NewPCG(seed, 0))
	counts := make([]int, mV*mV)
	for range n {
		t1, t2 := m.firstTwo(L, draftDist, verify, rng)
		counts[t1*mV+t2]++
	}
	return counts
}

// TestVerifyBlockMarkov: block drafting on the Markov language, joint
// distribution of the first two committed tokens against the closed form
// y(t1|BOS)·y(t2|t1): 16 cells, df = 15, α = 0.001, critical value 37.697.
// n = 10^6 generations per case; seeds as listed. L = 3 is the case of the
// specification; L = 1 makes the bonus token the second committed token
// whenever the first draft is accepted, so the bonus path is tested too.
// Q-S drafts from and verifies against a coarse lattice (ℓ = 5).
func TestVerifyBlockMarkov(t *testing.T) {
	const n = 1_000_000
	m := newMarkov(51)
	want := m.joint2()
	cases := []struct {
		name  string
		L     int
		seed  uint64
		draft func([]float64) []float64
	}{
		{"L=3 full distribution", 3, 501, identity},
		{"L=3 Q-S lattice ℓ=5", 3, 502, func(x []float64) []float64 { return lattice(x, 5) }},
		{"L=1 full distribution", 1, 503, identity},
	}
	for _, c := range cases {
		counts := runMarkov(m, c.L, n, c.seed, c.draft, VerifyBlock)
		stat, crit, df, zeroHit := chiSquareAgainst(counts, want)
		t.Logf("%-22s n=%d seed=%d χ²=%.2f df=%d critical(α=%v)=%.3f", c.name, n, c.seed, stat, df, alpha, crit)
		if zeroHit || stat > crit {
			t.Errorf("%s: first two tokens do not follow the target: χ²=%.2f > %.3f", c.name, stat, crit)
		}
	}
}

// Wrong block verifiers.

// shiftedTargets verifies draft l against ys[l+1]: it forgets that ys[0]
// is the distribution of the first draft.
func shiftedTargets(xhats, ys [][]float64, drafts []int, rng *rand.Rand) BlockResult {
	for l, d := range drafts {
		if !accept(xhats[l][d], ys[l+1][d], rng) {
			return BlockResult{Accepted: l, Token: residualInverseCDF(ys[l+1], xhats[l], rng.Float64()), Resampled: true}
		}
	}
	return BlockResult{Accepted: len(drafts), Token: sampling.Sample(ys[len(drafts)], rng)}
}

// targetOnRejection replaces a rejected draft by a sample from ys[l] rather
// than the residual.
func targetOnRejection(xhats, ys [][]float64, drafts []int, rng *rand.Rand) BlockResult {
	for l, d := range drafts {
		if !accept(xhats[l][d], ys[l][d], rng) {
			return BlockResult{Accepted: l, Token: sampling.Sample(ys[l], rng), Resampled: true}
		}
	}
	return BlockResult{Accepted: len(drafts), Token: sampling.Sample(ys[len(drafts)], rng)}
}

// staleBonus draws the bonus token from ys[L−1], the last draft's target.
func staleBonus(xhats, ys [][]float64, drafts []int, rng *rand.Rand) BlockResult {
	L := len(drafts)
	for l, d := range drafts {
		if !accept(xhats[l][d], ys[l][d], rng) {
			return BlockResult{Accepted: l, Token: residualInverseCDF(ys[l], xhats[l], rng.Float64()), Resampled: true}
		}
	}
	return BlockResult{Accepted: L, Token: sampling.Sample(ys[max(L-1, 0)], rng)}
}

// TestVerifyBlockDetectsWrongVerifiers runs the Markov test with n = 2·10^5
// generations (same α, same cells) on three wrong block verifiers.
func TestVerifyBlockDetectsWrongVerifiers(t *testing.T) {
	const n = 200_000
	m := newMarkov(51)
	want := m.joint2()
	bugs := []struct {
		name   string
		L      int
		verify blockVerifier
	}{
		{"targets shifted by one", 3, shiftedTargets},
		{"rejection resampled from y", 3, targetOnRejection},
		{"bonus from the previous target", 1, staleBonus},
	}
	for i, bug := range bugs {
		counts := runMarkov(m, bug.L, n, uint64(600+i), identity, bug.verify)
		stat, crit, df, zeroHit := chiSquareAgainst(counts, want)
		t.Logf("%-32s L=%d χ²=%9.1f (df=%d, critical %.3f)", bug.name, bug.L, stat, df, crit)
		if !zeroHit && stat <= crit {
			t.Errorf("%s: not detected, χ²=%.2f ≤ %.3f", bug.name, stat, crit)
		}
	}
}

// TestVerifyBlockExpectedTokens: for fixed drafts the number of committed
// tokens, Accepted+1, has mean ExpectedTokens(α) with α_l = min(1,
// y_l(d_l)/x̂_l(d_l)). n = 2·10^5 rounds per case, seed 700 + case, z-test at
// α = 0.001 two-sided (|z| ≤ 3.29).
func TestVerifyBlockExpectedTokens(t *testing.T) {
	const n = 200_000
	rng0 := rand.New(rand.NewPCG(71, 72))
	for c := range 5 {
		L := 1 + rng0.IntN(8)
		xhats := make([][]float64, L)
		ys := make([][]float64, L+1)
		drafts := make([]int, L)
		alpha := make([]float64, L)
		for l := range L {
			xhats[l] = dirichlet1(rng0, 6)
			ys[l] = dirichlet1(rng0, 6)
			drafts[l] = sampling.Sample(xhats[l], rng0)
			alpha[l] = AcceptRatio(xhats[l][drafts[l]], ys[l][drafts[l]])
		}
		ys[L] = dirichlet1(rng0, 6)
		g := ExpectedTokens(alpha)
		rng := rand.New(rand.NewPCG(uint64(700+c), 0))
		sum, sum2 := 0.0, 0.0
		for range n {
			r := VerifyBlock(xhats, ys, drafts, rng)
			k := float64(r.Accepted + 1)
			sum += k
			sum2 += k * k
			if r.Resampled == (r.Accepted == L) {
				t.Fatalf("Resampled=%v with Accepted=%d of %d", r.Resampled, r.Accepted, L)
			}
		}
		mean := sum / n
		sd := math.Sqrt((sum2/n - mean*mean) / n)
		z := (mean - g) / sd
		t.Logf("L=%d α=%.3f: mean %.4f, g=%.4f, z=%.2f", L, alpha, mean, g, z)
		if math.Abs(z) > 3.29 {
			t.Errorf("L=%d: mean committed %.4f, ExpectedTokens %.4f, z=%.2f", L, mean, g, z)
		}
	}
}

func TestVerifyBlockEdgeCases(t *testing.T) {
	rng := rand.New(rand.NewPCG(81, 82))
	y := []float64{0, 1}
	// L = 0: one plain target sample.
	if r := VerifyBlock(nil, [][]float64{y}, nil, rng); r != (BlockResult{Accepted: 0, Token: 1}) {
		t.Errorf("L=0: %+v", r)
	}
	// An out-of-range draft stops the block there.
	x := []float64{0.5, 0.5}
	r := VerifyBlock([][]float64{x, x}, [][]float64{x, x, y}, []int{0, 7}, rng)
	if r.Accepted != 1 || !r.Resampled || r.Token < 0 || r.Token > 1 {
		t.Errorf("invalid draft: %+v", r)
	}
	if got := r.Committed(nil, []int{0, 7}); len(got) != 2 || got[0] != 0 {
		t.Errorf("Committed = %v", got)
	}
	mustPanic(t, "len(ys) != L+1", func() { VerifyBlock([][]float64{x}, [][]float64{x}, []int{0}, rng) })
	mustPanic(t, "len(xhats) != L", func() { VerifyBlock(nil, [][]float64{x, x}, []int{0}, rng) })
	mustPanic(t, "length mismatch", func() { VerifyBlock([][]float64{{1}}, [][]float64{x, x}, []int{0}, rng) })
}
