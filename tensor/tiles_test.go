package tensor

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestFloatTiles calls every F32, F16 and BF16 tile of every level this
// machine has (R ≤ rows[T], T ≤ maxT) directly, over row lengths with and
// without a partial chunk: each of its R×T outputs has the bits of the
// type's dot product (dotF32, dotF16, dotBF16) for its row and token, and
// nothing else in the output is written. MatMul only reaches the heights
// its row counts leave over; this reaches them all.
func TestFloatTiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	tested := 0
	for _, l := range levels()[1:] {
		ks := kernelSets[l]
		if ks == nil { // rows one at a time (arm64): TestKernelLevelsAgree
			continue
		}
		for _, typ := range []DType{F32, F16, BF16} {
			heights := &ks.f32Rows
			if typ != F32 {
				heights = &ks.f16Rows
			}
			if heights[1] == 0 {
				continue
			}
			for _, cols := range []int{1, 16, 31, 32, 47, 64, 100, 96} {
				rows, n := maxR+2, maxT+1
				base, _ := NewF32(rows, cols, randVec(rng, rows*cols))
				m, err := base.Convert(typ)
				if err != nil {
					t.Fatal(err)
				}
				x := randVec(rng, n*cols)
				want := func(tok, r int) float32 {
					xt := x[tok*cols : (tok+1)*cols]
					switch typ {
					case F16:
						return dotF16Go(m.row(r), xt)
					case BF16:
						return dotBF16Go(m.row(r), xt)
					}
					return dotF32(m.F32[r*cols:(r+1)*cols], xt)
				}
				maxT := ks.maxT
				if typ != F32 {
					maxT = ks.f16MaxT
					if ks.f16Whole && cols%32 != 0 {
						continue // these tiles take whole 32-element chunks only
					}
				}
				for T := 1; T <= maxT; T++ {
					for R := 1; R <= heights[T]; R++ {
						r0, t0 := R%2, T%2 // not only from row and token 0
						what := fmt.Sprintf("%s %v cols=%d tile R=%d T=%d", levelNames[l], typ, cols, R, T)
						run := func(out *float32, ldo uintptr) {
							switch typ {
							case F32:
								ks.f32[R][T](&m.F32[r0*cols], uintptr(4*cols), &x[t0*cols], uintptr(4*cols), cols, out, ldo)
							case F16:
								ks.f16[R][T](&m.Data[r0*2*cols], uintptr(2*cols), &x[t0*cols], uintptr(4*cols), cols, out, ldo)
							case BF16:
								ks.bf16[R][T](&m.Data[r0*2*cols], uintptr(2*cols), &x[t0*cols], uintptr(4*cols), cols, out, ldo)
							}
						}
						checkTile(t, what, R, T, run, func(tok, r int) float32 { return want(t0+tok, r0+r) })
						tested++
					}
				}
			}
		}
	}
	if tested == 0 {
		t.Skip("no vector kernels on this machine or build")
	}
}

// dotF16Go and dotBF16Go are dotF16 and dotBF16 without the assembly
// chunks: the definitions in Go alone.
func dotF16Go(w []byte, x []float32) float32 {
	return atPortable(func() float32 { return dotF16(w, x) })
}
func dotBF16Go(w []byte, x []float32) float32 {
	return atPortable(func() float32 { return dotBF16(w, x) })
}

func atPortable(f func() float32) (v float32) {
	atLevel(levelPortable, func() { v = f() })
	return v
}

// TestPackedTiles calls the packed Q8_0, Q4_0 and Q5_0 tiles (16 rows × 1
// or 2 tokens) of every level that has them (avx512; avx512-zen4's
// one-token tiles without prefetch) directly on each group of a packed
// matrix: every output has the bits of dotQuant (Q5_0: dotQ5) for its row
// and token, and nothing else is written.
func TestPackedTiles(t *testing.T) {
	tested := 0
	for _, l := range levels() {
		if ks := kernelSets[l]; ks != nil && ks.q4packed[1] != nil {
			tested++
			checkPackedTiles(t, ks)
		}
	}
	if tested == 0 {
		t.Skip("no AVX-512 packed tiles on this machine or build")
	}
}

func checkPackedTiles(t *testing.T, ks *kernelSet) {
	rng := rand.New(rand.NewPCG(73, 74))
	for _, typ := range []DType{Q8_0, Q4_0, Q5_0} {
		tiles := map[DType]*[3]qTileFn{Q8_0: &ks.q8packed, Q4_0: &ks.q4packed, Q5_0: &ks.q5packed}[typ]
		dot := func(w []byte, a []actBlock) float32 { return dotQuant(typ, w, a) }
		if typ == Q5_0 {
			dot = dotQ5
		}
		for _, nb := range []int{1, 3, 24} {
			rows, cols, n := 2*packRows, nb*QK, 3
			m, acts := quantTileInputs(t, rng, typ, rows, cols, n)
			packed := packedNow(m, layoutBlocks)
			ldg := uintptr(packRows * m.rowBytes)
			ldx := uintptr(nb) * unsafe.Sizeof(actBlock{})
			for g := 0; g < rows/packRows; g++ {
				for T := 1; T <= 2; T++ {
					for t0 := 0; t0+T <= n; t0++ {
						checkTile(t, fmt.Sprintf("%v nb=%d group %d T=%d from token %d", typ, nb, g, T, t0), packRows, T,
							func(out *float32, ldo uintptr) {
								tiles[T](&packed[uintptr(g)*ldg], ldg, &acts[t0*nb], ldx, nb, out, ldo)
							},
							func(tok, r int) float32 {
								return dot(m.row(g*packRows+r), acts[(t0+tok)*nb:(t0+tok+1)*nb])
							})
					}
				}
			}
		}
	}
}
