package sim

import (
	"context"
	"math"
	"sort"
	"testing"

	"github.com/hlmproject/hlm/codec"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/speculative"
)

// latticeTV is TV(q̄, q̂) for K-SQS with support size k and resolution
// ell on x: q̄ is x's top k renormalized (SQS eq. 17), q̂ what the codec
// sends.
func latticeTV(t *testing.T, x []float64, k, ell int) float64 {
	t.Helper()
	enc, err := codec.KSQS{K: k, L: ell}.Encode(x, -1)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int, len(x))
	for i := range ids {
		ids[i] = i
	}
	sort.SliceStable(ids, func(a, b int) bool { return x[ids[a]] > x[ids[b]] })
	bar := make([]float64, len(x))
	var kept float64
	for _, i := range ids[:k] {
		kept += x[i]
	}
	for _, i := range ids[:k] {
		bar[i] = x[i] / kept
	}
	return speculative.TV(bar, enc.Recon)
}

// TestLatticeBoundOnRealDistributions checks SQS's lattice bound
// TV(q̄, q̂) ≤ K/(4ℓ) (Appendix A.2, eq. 20) where it says something: the
// real draft distributions of the built-in pair at T = 1 and 0.6, top-K
// supports of 2 to 8 entries and ℓ = 10 or 20, so that the bound is 0.025
// to 0.2. Over 300 distributions the largest TV reaches 99–100% of the
// bound for K = 2 (tight there: one coordinate off by 1/(2ℓ)), 89–92% for
// K = 4 and 77–80% for K = 8 (seeded; the test asks 95%, 80% and 65%), so a
// quantizer even slightly worse than Algorithm 2's rounding would fail.
// Inputs built to be worst cases (every ℓ·q̄_i a hair from a
// half-integer) reach 98% of it for K up to 8.
func TestLatticeBoundOnRealDistributions(t *testing.T) {
	ms := pair(t, "")
	var xs [][]float64
	for _, temp := range []float64{1, 0.6} {
		p := hybrid.DefaultParams()
		p.MaxTokens, p.Temperature = 60, temp
		log, err := Collect(context.Background(), ms, p, []string{"Once upon a time", "Tom had a red car", "The little bird"}, 150, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, pr := range log.Pairs {
			xs = append(xs, pr.X)
		}
	}
	for _, tc := range []struct {
		k, ell   int
		minRatio float64 // the largest TV over the distributions, as a share of the bound, at least
	}{
		{2, 10, 0.95}, {2, 20, 0.95}, {4, 10, 0.8}, {4, 20, 0.8}, {8, 10, 0.65}, {8, 20, 0.65},
	} {
		bound := float64(tc.k) / (4 * float64(tc.ell))
		worst := 0.0
		for n, x := range xs {
			tv := latticeTV(t, x, tc.k, tc.ell)
			if tv > bound+1e-12 {
				t.Fatalf("distribution %d, K=%d ℓ=%d: TV(q̄, q̂) = %v > K/(4ℓ) = %v", n, tc.k, tc.ell, tv, bound)
			}
			worst = math.Max(worst, tv)
		}
		t.Logf("K=%d ℓ=%d: largest TV(q̄, q̂) over %d real distributions %.4f, bound %.4f (%.0f%%)", tc.k, tc.ell, len(xs), worst, bound, 100*worst/bound)
		if worst < tc.minRatio*bound {
			t.Errorf("K=%d ℓ=%d: largest TV %v is below %.0f%% of the bound %v: the check says little", tc.k, tc.ell, worst, 100*tc.minRatio, bound)
		}
	}
	for _, tc := range []struct{ k, ell int }{{2, 10}, {4, 10}, {8, 20}, {8, 100}} {
		x := halfIntegers(t, tc.k, tc.ell, 512)
		bound := float64(tc.k) / (4 * float64(tc.ell))
		tv := latticeTV(t, x, tc.k, tc.ell)
		if tv > bound+1e-12 || tv < 0.98*bound {
			t.Errorf("worst case K=%d ℓ=%d: TV(q̄, q̂) = %v, want in [0.98, 1]·K/(4ℓ) = %v", tc.k, tc.ell, tv, bound)
		}
	}
}

// halfIntegers is a distribution over v tokens with k (even) nonzero
// entries, each ℓ·q_i within 0.01 of a half-integer (half of them just
// below, half just above), summing to 1: Algorithm 2's rounding moves
// each by about 1/(2ℓ), the worst case of the lattice bound.
func halfIntegers(t *testing.T, k, ell, v int) []float64 {
	t.Helper()
	x := make([]float64, v)
	whole := ell - k/2 // the integer parts; the fractions add up to k/2
	for i := 0; i < k; i++ {
		m := whole / k
		if i < whole%k {
			m++
		}
		f := 0.49
		if i%2 == 1 {
			f = 0.51
		}
		x[3*i+1] = (float64(m) + f) / float64(ell)
	}
	var s float64
	for _, q := range x {
		s += q
	}
	if math.Abs(s-1) > 1e-9 {
		t.Fatalf("halfIntegers(%d, %d): sum %v", k, ell, s)
	}
	return x
}

// TestTheorem2OnRealRuns checks SQS Theorem 2 (eq. 9) on real C-SQS runs
// of the simulator (real draft distributions, real rejections, the
// rollback of Algorithm 1) where the bound is informative: η = 0.2 and a
// few hundred kept updates per run make α + (|β₁| + 1 + ηα)/(ηT) about
// 0.066 for α = 0.05, below 1 and within 0.02 of the measured average
// dropped mass (0.050; the test asks within 0.03). Telescoping eq. 8 gives that average
// exactly, α + (β₁ − β_end)/(ηT), which is checked too.
func TestTheorem2OnRealRuns(t *testing.T) {
	ms := pair(t, "")
	const alpha, eta, beta1 = 0.05, 0.2, 0.01
	for i, prompt := range []string{"Once upon a time", "Tom had a red car", "The little bird"} {
		p := hybrid.DefaultParams()
		p.Method, p.MaxTokens, p.Seed = hybrid.CSQS, 320, uint64(i)
		p.ConfAlpha, p.ConfEta, p.ConfBeta, p.Budget = alpha, eta, beta1, 1500
		r, err := One(context.Background(), ms, p, prompt, nil)
		if err != nil {
			t.Fatal(err)
		}
		var n, dropped float64
		for _, b := range r.Batches {
			for _, d := range b.Drafts {
				if d.Examined {
					n++
					dropped += d.Dropped
				}
			}
		}
		avg := dropped / n
		bound := alpha + (math.Abs(beta1)+1+eta*alpha)/(eta*n)
		end := r.Batches[len(r.Batches)-1].Beta
		t.Logf("%q: T = %.0f kept updates, average dropped %.4f (α = %v), Theorem 2 bound %.4f, β %v → %.4f", prompt, n, avg, alpha, bound, beta1, end)
		switch {
		case n < 150:
			t.Errorf("%q: only %.0f kept updates", prompt, n)
		case avg > bound:
			t.Errorf("%q: average dropped mass %v > Theorem 2's bound %v (T = %.0f)", prompt, avg, bound, n)
		case bound >= 1 || bound-avg > 0.03:
			t.Errorf("%q: bound %v against %v measured: not informative", prompt, bound, avg)
		case math.Abs(avg-(alpha+(beta1-end)/(eta*n))) > 1e-9:
			t.Errorf("%q: average %v, telescoped eq. 8 gives %v", prompt, avg, alpha+(beta1-end)/(eta*n))
		}
	}
}
