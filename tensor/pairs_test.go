package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestPairActsLayout: pairActs puts token 2p's block in the low half of
// each 64-byte row of pair p and token 2p+1's in the high half (zeros past
// the last token), the scale in all 8 lanes of its half, block-major, in
// 64-byte aligned storage at the offsets the tiles read (gen_kernels.go).
func TestPairActsLayout(t *testing.T) {
	if unsafe.Sizeof(actPair{}) != 192 || unsafe.Offsetof(actPair{}.corr) != 64 || unsafe.Offsetof(actPair{}.d) != 128 {
		t.Fatalf("actPair: size %d, corr at %d, d at %d; the pair tiles read 192, 64, 128",
			unsafe.Sizeof(actPair{}), unsafe.Offsetof(actPair{}.corr), unsafe.Offsetof(actPair{}.d))
	}
	rng := rand.New(rand.NewPCG(61, 62))
	var buf pairBuf
	for _, n := range []int{1, 2, 3, 4, 5, 8, 9, 17} {
		const nb = 3
		acts := quantizeActs(nil, randVec(rng, n*nb*QK), Q4_0)
		np := (n + 1) / 2
		pairs := buf.resize(nb * np)
		if a := uintptr(unsafe.Pointer(&pairs[0])); a%64 != 0 {
			t.Fatalf("n=%d: pairs at %#x, not 64-byte aligned", n, a)
		}
		for i := range pairs { // stale values must not survive
			pairs[i].q[1][5], pairs[i].corr[1][2], pairs[i].d[1][7] = 9, 9, 9
		}
		pairActs(pairs, acts, n, nb)
		for b := 0; b < nb; b++ {
			for p := 0; p < np; p++ {
				got := &pairs[b*np+p]
				for h := 0; h < 2; h++ {
					var want actBlock
					if tok := 2*p + h; tok < n {
						want = acts[tok*nb+b]
					}
					if got.q[h] != want.q || got.corr[h] != want.corr {
						t.Fatalf("n=%d block %d pair %d half %d: codes or corrections are not token %d's", n, b, p, h, 2*p+h)
					}
					for l, d := range got.d[h] {
						if math.Float32bits(d) != math.Float32bits(want.d) {
							t.Fatalf("n=%d block %d pair %d half %d lane %d: scale %g, want %g", n, b, p, h, l, d, want.d)
						}
					}
				}
			}
		}
	}
}

// TestQuantPairTiles calls every AVX-512 token-pair tile (R ≤ pRows[T],
// T = 2…pMaxT, Q8_0 and Q4_0) directly: each of its R×T outputs has the
// bits of dotQuant for its row and token — every token different, so a
// half computed from the wrong token, codes or scale fails — and nothing
// else in the output is written (an odd T's last pair has a real token or
// the zero padding in its high half: neither is stored).
func TestQuantPairTiles(t *testing.T) {
	ks := kernelSets[levelAVX512]
	if cpuLevel < levelAVX512 || ks == nil || ks.pMaxT == 0 {
		t.Skip("no AVX-512 pair tiles on this machine or build")
	}
	rng := rand.New(rand.NewPCG(63, 64))
	const n = maxT + 1 // tokens laid out; tiles start at pair 0 or 1
	for _, typ := range []DType{Q8_0, Q4_0} {
		tiles := &ks.q8p
		if typ == Q4_0 {
			tiles = &ks.q4p
		}
		for _, nb := range []int{1, 2, 7} {
			cols, rows := nb*QK, maxR+2
			m, acts := quantTileInputs(t, rng, typ, rows, cols, n)
			want := make([][]float32, n)
			for tok := range want {
				want[tok] = make([]float32, rows)
				for r := range want[tok] {
					want[tok][r] = dotQuant(typ, m.row(r), acts[tok*nb:(tok+1)*nb])
				}
			}
			var buf pairBuf
			np := (n + 1) / 2
			pairs := buf.resize(nb * np)
			pairActs(pairs, acts, n, nb)
			for T := 2; T <= ks.pMaxT; T++ {
				for R := 1; R <= ks.pRows[T]; R++ {
					if tiles[R][T] == nil {
						t.Fatalf("%v: no pair tile R=%d T=%d", typ, R, T)
					}
					for p0 := 0; 2*p0+T <= n; p0++ {
						r0 := p0 % 2 // rows from 0 or 1
						checkTile(t, fmt.Sprintf("%v nb=%d tile R=%d T=%d at pair %d", typ, nb, R, T, p0), R, T,
							func(out *float32, ldo uintptr) {
								tiles[R][T](&m.Data[r0*m.rowBytes], uintptr(m.rowBytes), &pairs[p0], uintptr(np)*unsafe.Sizeof(actPair{}), nb, out, ldo)
							},
							func(tok, r int) float32 { return want[2*p0+tok][r0+r] })
					}
				}
			}
		}
	}
}

// TestQuantPairsMatMul: Q8_0 and Q4_0 products of 1…17 tokens (one-token
// tiles, pair tiles of every group size, odd and even, both paths of
// forTiles) on 1 and 2 threads give the portable code's bits at every
// level, for row counts that leave partial tiles.
func TestQuantPairsMatMul(t *testing.T) {
	rng := rand.New(rand.NewPCG(65, 66))
	defer SetThreads(0)
	for _, typ := range []DType{Q8_0, Q4_0} {
		for _, cols := range []int{32, 160} {
			for _, rows := range []int{1, 6, 13, 70} {
				base, _ := NewF32(rows, cols, randVec(rng, rows*cols))
				m, err := base.Convert(typ)
				if err != nil {
					t.Fatal(err)
				}
				const maxN = 17
				x := randVec(rng, maxN*cols)
				for n := 1; n <= maxN; n++ {
					want := make([]float32, n*rows)
					atLevel(levelPortable, func() { MatMul(want, m, x, n) })
					for _, l := range levels()[1:] {
						checkLevels(t, m, x, n, want, l, 1, 2)
					}
				}
			}
		}
	}
	if len(levels()) == 1 {
		t.Log("only the portable kernels on this machine (or built with purego)")
	}
}

// checkTile runs a tile of R rows × T tokens into an output with a stride
// of R+3 floats and T+2 token rows, all preset to a NaN sentinel, and fails
// unless every output it owns equals want(token, row) bit for bit and every
// other one still holds the sentinel.
func checkTile(t *testing.T, what string, R, T int, run func(out *float32, ldo uintptr), want func(tok, r int) float32) {
	t.Helper()
	sentinel := math.Float32frombits(0x7fc0dead)
	ldo := R + 3
	out := make([]float32, (T+2)*ldo)
	for i := range out {
		out[i] = sentinel
	}
	run(&out[0], uintptr(4*ldo))
	for i, got := range out {
		tok, r := i/ldo, i%ldo
		w := sentinel
		if tok < T && r < R {
			w = want(tok, r)
		}
		if math.Float32bits(got) != math.Float32bits(w) {
			t.Fatalf("%s: out[token %d][row %d] = %g, want %g", what, tok, r, got, w)
		}
	}
}

// quantTileInputs returns a random rows × cols matrix of type typ (Q8_0 or
// Q4_0) and n tokens of inputs quantized for it, with exact zeros and
// large values among them.
func quantTileInputs(t *testing.T, rng *rand.Rand, typ DType, rows, cols, n int) (*Matrix, []actBlock) {
	t.Helper()
	base, _ := NewF32(rows, cols, randVec(rng, rows*cols))
	m, err := base.Convert(typ)
	if err != nil {
		t.Fatal(err)
	}
	x := randVec(rng, n*cols)
	for i := 0; i < len(x); i += 7 {
		x[i] = 0
		x[(i*5)%len(x)] *= 50
	}
	return m, quantizeActs(nil, x, typ)
}
