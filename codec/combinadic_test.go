package codec

import (
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestBinomWalkerMatchesBig(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	b := newBinom()
	for it := 0; it < 3000; it++ {
		n := r.IntN(2000)
		k := r.IntN(n+3) - 1
		if it%10 == 0 { // large n, k near either end (as in the codecs)
			n = r.IntN(40000)
			k = r.IntN(min(n, 300)+2) - 1
			if r.IntN(2) == 0 {
				k = n - k
			}
		}
		b.moveTo(n, k)
		want := big.NewInt(0)
		if k >= 0 && k <= n {
			want.Binomial(int64(n), int64(k))
		}
		if got := b.value(); got.Cmp(want) != 0 {
			t.Fatalf("C(%d, %d): got %v bits, want %v bits", n, k, got.BitLen(), want.BitLen())
		}
	}
}

// TestCompositionRankWorkedExample pins the lexicographic order of the
// compositions of ℓ = 2 into K = 3 parts: C(ℓ+K−1, K−1) = C(4, 2) = 6 of
// them, indexed in ⌈log2 6⌉ = 3 bits. Through stars and bars, (1,0,1) is
// the string 1 0 0 1 (n = 4 positions); its ones are at distances 3 and 0
// from the end, so c = {0, 3} and its rank is C(0,1) + C(3,2) = 0 + 3 = 3.
func TestCompositionRankWorkedExample(t *testing.T) {
	order := [][]int32{
		{0, 0, 2}, // rank 0
		{0, 1, 1}, // 1
		{0, 2, 0}, // 2
		{1, 0, 1}, // 3
		{1, 1, 0}, // 4
		{2, 0, 0}, // 5
	}
	for want, b := range order {
		got, err := CompositionRank(b)
		if err != nil {
			t.Fatal(err)
		}
		if got.Int64() != int64(want) {
			t.Errorf("rank%v = %v, want %d", b, got, want)
		}
		back, err := CompositionUnrank(big.NewInt(int64(want)), 2, 3)
		if err != nil || !slices.Equal(back, b) {
			t.Errorf("unrank(%d) = %v, %v; want %v", want, back, err, b)
		}
	}
	if _, err := CompositionUnrank(big.NewInt(6), 2, 3); err == nil {
		t.Error("unrank(6) of 6 compositions succeeded")
	}
	sp, _ := compositionSpace(2, 3)
	if sp.bits != 3 {
		t.Errorf("bits = %d, want 3", sp.bits)
	}
}

// compositions enumerates all compositions of l into k parts in
// lexicographic order.
func compositions(l, k int) [][]int32 {
	if k == 1 {
		return [][]int32{{int32(l)}}
	}
	var out [][]int32
	for first := 0; first <= l; first++ {
		for _, rest := range compositions(l-first, k-1) {
			out = append(out, append([]int32{int32(first)}, rest...))
		}
	}
	return out
}

func TestCompositionRankExhaustive(t *testing.T) {
	for k := 1; k <= 6; k++ {
		for l := 0; l <= 7; l++ {
			all := compositions(l, k)
			want := new(big.Int).Binomial(int64(l+k-1), int64(k-1))
			if int64(len(all)) != want.Int64() {
				t.Fatalf("ℓ=%d K=%d: enumerated %d, want %v", l, k, len(all), want)
			}
			for pos, b := range all {
				got, err := CompositionRank(b)
				if err != nil || got.Int64() != int64(pos) {
					t.Fatalf("ℓ=%d K=%d: rank%v = %v (%v), want %d", l, k, b, got, err, pos)
				}
				back, err := CompositionUnrank(big.NewInt(int64(pos)), l, k)
				if err != nil || !slices.Equal(back, b) {
					t.Fatalf("ℓ=%d K=%d: unrank(%d) = %v (%v), want %v", l, k, pos, back, err, b)
				}
			}
		}
	}
}

// subsets enumerates the w-subsets of {0..n-1} in colexicographic order.
func subsets(n, w int) [][]int {
	if w == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for last := w - 1; last < n; last++ {
		for _, s := range subsets(last, w-1) {
			out = append(out, append(slices.Clone(s), last))
		}
	}
	return out
}

func TestSubsetRankExhaustive(t *testing.T) {
	for n := 1; n <= 10; n++ {
		for w := 0; w <= n; w++ {
			sp, err := newSubsetSpace(n, w)
			if err != nil {
				t.Fatal(err)
			}
			all := subsets(n, w)
			if int64(len(all)) != sp.count.Int64() {
				t.Fatalf("n=%d w=%d: %d subsets, count %v", n, w, len(all), sp.count)
			}
			for pos, s := range all {
				if got := sp.rank(s); got.Int64() != int64(pos) {
					t.Fatalf("n=%d w=%d: rank%v = %v, want %d", n, w, s, got, pos)
				}
				back, err := sp.unrank(big.NewInt(int64(pos)))
				if err != nil || !slices.Equal(back, s) {
					t.Fatalf("n=%d w=%d: unrank(%d) = %v (%v), want %v", n, w, pos, back, err, s)
				}
			}
			if _, err := sp.unrank(new(big.Int).Set(sp.count)); err == nil {
				t.Fatalf("n=%d w=%d: unrank(count) succeeded", n, w)
			}
		}
	}
}

// rankRef is Σ C(c_m, m) with math/big binomials.
func rankRef(c []int) *big.Int {
	r := new(big.Int)
	for i, cm := range c {
		r.Add(r, new(big.Int).Binomial(int64(cm), int64(i+1)))
	}
	return r
}

func TestSubsetRankLarge(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct{ n, w int }{
		{32000, 1}, {32000, 64}, {32000, 1000}, {32000, 31990}, {32000, 32000},
		{1 << 22, 30}, {500, 250}, {32099, 100},
	} {
		perm := r.Perm(tc.n)[:tc.w]
		if tc.w > tc.n/2 {
			perm = r.Perm(tc.n)[:tc.w]
		}
		c := slices.Clone(perm)
		slices.Sort(c)
		sp, err := newSubsetSpace(tc.n, tc.w)
		if err != nil {
			t.Fatal(err)
		}
		want := new(big.Int).Binomial(int64(tc.n), int64(tc.w))
		if sp.count.Cmp(want) != 0 {
			t.Fatalf("count C(%d,%d) wrong", tc.n, tc.w)
		}
		got := sp.rank(c)
		if tc.w <= 1000 {
			if ref := rankRef(c); got.Cmp(ref) != 0 {
				t.Fatalf("n=%d w=%d: rank differs from reference", tc.n, tc.w)
			}
		}
		back, err := sp.unrank(got)
		if err != nil || !slices.Equal(back, c) {
			t.Fatalf("n=%d w=%d: round trip failed: %v", tc.n, tc.w, err)
		}
	}
}

// TestUnrankNearTies: ranks at and next to binomial boundaries (where the
// lgamma estimate is closest to a tie) unrank to the same subset with and
// without the floating-point shortcut, and round-trip.
func TestUnrankNearTies(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range [][2]int{{32000, 64}, {32000, 1000}, {1200, 600}, {33099, 1000}, {50, 7}, {1 << 22, 3}} {
		n, w := tc[0], tc[1]
		sp, err := newSubsetSpace(n, w)
		if err != nil {
			t.Fatal(err)
		}
		one := big.NewInt(1)
		ranks := []*big.Int{big.NewInt(0), new(big.Int).Sub(sp.count, one)}
		for i := 0; i < 6; i++ {
			c := new(big.Int).Binomial(int64(w-1+r.IntN(n-w+1)), int64(w))
			ranks = append(ranks, c, new(big.Int).Sub(c, one), new(big.Int).Add(c, one))
		}
		for _, rk := range ranks {
			if rk.Sign() < 0 || rk.Cmp(sp.count) >= 0 {
				continue
			}
			fast, ok := unrankGreedy(rk, n, w, false)
			exact, ok2 := unrankGreedy(rk, n, w, true)
			if !ok || !ok2 || !slices.Equal(fast, exact) {
				t.Fatalf("n=%d w=%d: fast and exact unrank differ (%v, %v)", n, w, ok, ok2)
			}
			if back := rankTerms(exact); back.Cmp(rk) != 0 {
				t.Fatalf("n=%d w=%d: round trip failed", n, w)
			}
		}
	}
}
