package tensor

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// extremeKQuant returns a rows×(nb·256) K-quant matrix of random blocks in
// which some super-blocks take extreme values: every scale and min 63 (all
// 12 scale bytes 0xff), or 0, and every code 15 (Q6_K: 63) or 0; Q6_K
// scales −128 or 127.
func extremeKQuant(t testing.TB, rng *rand.Rand, typ DType, rows, nb int) *Matrix {
	m := randomKQuant(t, rng, typ, rows, nb)
	bb := typ.BlockBytes()
	for b := 0; b < rows*nb; b++ {
		blk := m.Data[b*bb : (b+1)*bb]
		kind := rng.IntN(5)
		if typ == Q4_K {
			switch kind {
			case 0: // scales and mins 63, codes 15
				fill(blk[4:16], 0xff)
				fill(blk[16:], 0xff)
			case 1: // scales and mins 63, codes 0
				fill(blk[4:16], 0xff)
				fill(blk[16:], 0)
			case 2: // scales and mins 0 except the high bits
				fill(blk[4:16], 0xc0)
			case 3: // codes alternately 0 and 15
				for i := range blk[16:] {
					blk[16+i] = 0x0f << (4 * (i % 2))
				}
			}
			continue
		}
		switch kind {
		case 0: // codes 63, scales −128
			fill(blk[:192], 0xff)
			fill(blk[192:208], 0x80)
		case 1: // codes 0, scales 127
			fill(blk[:192], 0)
			fill(blk[192:208], 0x7f)
		case 2: // codes 63 and 0, scales ±127 / −128
			for i := 0; i < 192; i++ {
				blk[i] = byte(0xff * (i % 2))
			}
			for i := 192; i < 208; i++ {
				blk[i] = []byte{0x7f, 0x80, 0x81}[i%3]
			}
		}
	}
	return m
}

func fill(b []byte, v byte) {
	for i := range b {
		b[i] = v
	}
}

// extremeActs returns n tokens of nb super-blocks of inputs whose codes
// include ±127 everywhere (every input ±1: all codes ±127), exact zeros,
// one large input per super-block, and random values.
func extremeActs(rng *rand.Rand, n, nb int) []float32 {
	x := randVec(rng, n*nb*QKK)
	for s := 0; s < n*nb; s++ {
		sb := x[s*QKK : (s+1)*QKK]
		switch s % 4 {
		case 0:
			for i := range sb {
				sb[i] = float32(1 - 2*int(rng.IntN(2)))
			}
		case 1:
			for i := range sb {
				sb[i] = -1
			}
			sb[rng.IntN(QKK)] = 0
		case 2:
			sb[rng.IntN(QKK)] *= 1000
			sb[rng.IntN(QKK)] = 0
		}
	}
	return x
}

// TestKQuantTiles calls every K-quant tile of every level this machine
// runs (Q4_K and Q6_K; AVX-512: T = 1…8 tokens, AVX2: T = 1…4; every R up
// to kRows[T]) directly on 1, 2 and 3 super-blocks of random and extreme
// codes, scales, mins and inputs: each of its R×T outputs has the bits of
// dotQ4KInt or dotQ6KInt for its row and token, and nothing else in the
// output is written. The AVX-512 tiles of three or more tokens read their
// group's scales from its first token (setGroupScales, as getK sets them
// for the groups MatMul runs).
func TestKQuantTiles(t *testing.T) {
	tested := 0
	for _, l := range levels() {
		ks := kernelSets[l]
		if ks == nil || ks.kRows[1] == 0 {
			continue
		}
		tested++
		checkKQuantTiles(t, levelNames[l], ks)
	}
	if tested == 0 {
		t.Skip("no K-quant tiles on this machine or build")
	}
}

// checkKQuantTiles is TestKQuantTiles for the tiles of one level.
func checkKQuantTiles(t *testing.T, name string, ks *kernelSet) {
	rng := rand.New(rand.NewPCG(71, 72))
	const n = maxT + 2 // tokens laid out; tiles start at token 0, 1 or 2
	type set struct {
		typ   DType
		tiles *[maxR + 1][maxT + 1]kTileFn
		rows  [maxT + 1]int
	}
	// Every table with the most rows any of its uses takes.
	heights := ks.kRows
	for T := range heights {
		heights[T] = max(heights[T], ks.kRowsNarrow[T])
	}
	sets := []set{{Q4_K, &ks.k4, heights}, {Q6_K, &ks.k6, heights}}
	if ks.k4WideRows[1] > 0 {
		sets = append(sets, set{Q4_K, &ks.k4Wide, ks.k4WideRows})
	}
	for _, st := range sets {
		typ, tiles, dot := st.typ, st.tiles, dotQ4KInt
		if typ == Q6_K {
			dot = dotQ6KInt
		}
		for nb := 1; nb <= 3; nb++ {
			rows := maxR + 2
			m := extremeKQuant(t, rng, typ, rows, nb)
			acts := quantizeActsK(nil, extremeActs(rng, n, nb))
			want := make([][]float32, n)
			for tok := range want {
				want[tok] = make([]float32, rows)
				for r := range want[tok] {
					want[tok][r] = dot(m.row(r), acts[tok*nb:(tok+1)*nb])
				}
			}
			for T := 1; T <= ks.kMaxT; T++ {
				for R := 1; R <= st.rows[T]; R++ {
					tile := tiles[R][T]
					if tile == nil {
						t.Fatalf("%s %v: no tile R=%d T=%d", name, typ, R, T)
					}
					for t0 := 0; t0+T <= n && t0 < 3; t0++ {
						if ks.kGroupScales {
							setGroupScales(acts, n, nb, t0)
						}
						r0 := t0 % 2 // rows from 0 or 1
						checkTile(t, fmt.Sprintf("%s %v nb=%d tile R=%d T=%d at token %d", name, typ, nb, R, T, t0), R, T,
							func(out *float32, ldo uintptr) {
								tile(&m.Data[r0*m.rowBytes], uintptr(m.rowBytes), &acts[t0*nb], uintptr(nb)*unsafe.Sizeof(actBlockK{}), nb, out, ldo)
							},
							func(tok, r int) float32 { return want[t0+tok][r0+r] })
					}
				}
			}
		}
	}
}

// TestKQuantBlocksMatMul: Q4_K and Q6_K products of 1…17 tokens (groups of
// the tiles' width and a shorter last group, both paths of forTiles) on 1
// and 2 threads give the portable code's bits at every level, for row
// counts that leave partial tiles, with extreme codes and inputs.
func TestKQuantBlocksMatMul(t *testing.T) {
	rng := rand.New(rand.NewPCG(73, 74))
	defer SetThreads(0)
	for _, typ := range []DType{Q4_K, Q6_K} {
		for _, nb := range []int{1, 3} {
			for _, rows := range []int{1, 6, 13, 70} {
				m := extremeKQuant(t, rng, typ, rows, nb)
				const nmax = 17
				x := extremeActs(rng, nmax, nb)
				for n := 1; n <= nmax; n++ {
					want := make([]float32, n*rows)
					atLevel(levelPortable, func() { MatMul(want, m, x, n) })
					for _, l := range levels() {
						checkLevels(t, m, x, n, want, l, 1, 2)
					}
				}
			}
		}
	}
}

// TestQuantizeActsKLevels: at every level, the K-quant inputs' codes, sums
// and scales are the portable code's bit for bit, for quantTestInputs'
// special and random super-blocks (ties, zeros, −0, subnormals, huge
// values, infinities, NaNs, codes ±127), with nb = 1, 2, 7 and 24
// super-blocks a call, the inputs 32-byte aligned or not.
func TestQuantizeActsKLevels(t *testing.T) {
	rng := rand.New(rand.NewPCG(75, 76))
	const n = 24
	x := quantTestInputs(rng, QKK, n+1)
	for _, shift := range []int{0, 5} {
		xs := x[shift : shift+n*QKK]
		var want []actBlockK
		atLevel(levelPortable, func() { want = quantizeActsK(nil, xs) })
		for _, l := range levels() {
			for _, nb := range []int{1, 2, 7, 24} {
				for s := 0; s+nb <= n; s += nb {
					var got []actBlockK
					atLevel(l, func() { got = quantizeActsK(nil, xs[s*QKK:(s+nb)*QKK]) })
					for b := range got {
						w := want[s+b]
						if got[b].q != w.q || got[b].bs16 != w.bs16 || got[b].bs32 != w.bs32 ||
							math.Float32bits(got[b].d) != math.Float32bits(w.d) {
							t.Fatalf("%s, inputs shifted by %d, nb %d: block %d:\n got %+v\nwant %+v", levelNames[l], shift, nb, s+b, got[b], w)
						}
					}
				}
			}
		}
	}
	if a := quantizeActsK(nil, x[:QKK]); uintptr(unsafe.Pointer(&a[0]))%64 != 0 || unsafe.Sizeof(actBlockK{}) != 384 ||
		unsafe.Offsetof(actBlockK{}.bs16) != 256 || unsafe.Offsetof(actBlockK{}.bs32) != 320 || unsafe.Offsetof(actBlockK{}.d) != 352 {
		t.Fatalf("actBlockK: not 64-byte aligned, or size and offsets differ from the tiles' 384, 256, 320, 352")
	}
}

// BenchmarkKQuantBlocks measures Q4_K and Q6_K products of a few tokens on
// one thread (a verification block, a small batch), including the inputs'
// quantization: a 512×768 matrix (in L2) times n tokens, in multiply-adds
// per second.
//
//	go test -run='^$' -bench=KQuantBlocks ./tensor
func BenchmarkKQuantBlocks(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const rows, nb = 512, 3
	for _, typ := range []DType{Q4_K, Q6_K} {
		m := randomKQuant(b, rng, typ, rows, nb)
		for _, n := range []int{1, 2, 4, 8, 9, 16} {
			x := randVec(rng, n*m.Cols)
			out := make([]float32, n*rows)
			b.Run(fmt.Sprintf("%v/n=%d", typ, n), func(b *testing.B) { benchMatMul1(b, out, m, x, n) })
		}
	}
}

// TestKQuantWideRows runs the K-quant products whose inputs exceed
// kNarrowBytes (avx512-zen4 takes four-row tiles there for Q4_K and one-row
// ones for Q6_K) at every level against the portable code, bit for bit,
// with row counts that leave remainders of every height.
func TestKQuantWideRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(81, 82))
	defer SetThreads(0)
	nb := int(kNarrowBytes/unsafe.Sizeof(actBlockK{})) + 1 // the narrowest wide row
	for _, typ := range []DType{Q4_K, Q6_K} {
		for _, rows := range []int{5, 13, 19} {
			m := extremeKQuant(t, rng, typ, rows, nb)
			// Every height of the packed tiles (pack.go, packKGroup) and
			// token groups of each size, a short last one included.
			for _, n := range []int{1, 2, 3, 4, 5, 9, 17} {
				x := randVec(rng, n*m.Cols)
				want := make([]float32, n*rows)
				atLevel(levelPortable, func() { MatMul(want, m, x, n) })
				for _, l := range levels() {
					checkLevels(t, m, x, n, want, l, 1, 2)
				}
			}
			WaitPacking()
			if ks := kernelSets[levelAVX512Zen4]; levelHere(levelAVX512Zen4) && ks != nil && ks.kPacked != nil && rows >= kPackRows && m.packed.Load() == nil {
				t.Errorf("%v %d×%d: avx512-zen4 did not pack the wide rows", typ, rows, m.Cols)
			}
		}
	}
}

// TestPackK checks that packed K-quant groups (packKGroup, made behind the
// products: moveGroups) hold each row's super-blocks (unpackKRow gives
// the rows back), that a copy of the rows as they are (layoutRows) holds
// all of them unchanged, and that making either lets go of every copied
// byte of the source once, then of all of it (ReleaseData).
func TestPackK(t *testing.T) {
	defer func(min int) { copyMin = min }(copyMin)
	copyMin = 0
	rng := rand.New(rand.NewPCG(83, 84))
	for _, l := range []copyLayout{layoutKGroups, layoutRows} {
		for _, typ := range []DType{Q4_K, Q6_K} {
			for _, rows := range []int{1, kPackRows, kPackRows + 2, 3*kPackRows + 1} {
				const nb = 3
				m := randomKQuant(t, rng, typ, rows, nb)
				bb := typ.BlockBytes()
				var released int
				m.SetDataRelease(func(b []byte) { released += len(b) })
				if !m.copies(l) {
					if l == layoutKGroups && rows < kPackRows {
						continue
					}
					t.Fatalf("%v %d rows: not copied in layout %d", typ, rows, l)
				}
				m.layout.Store(uint32(l))
				moveGroups(m)
				packed := *m.packed.Load()
				whole := rows
				if l == layoutKGroups {
					whole = rows / kPackRows * kPackRows
				}
				if len(packed) != whole*m.rowBytes || released != len(packed)+len(m.Data) {
					t.Fatalf("%v %d rows, layout %d: copied %d bytes, released %d, want %d and %d", typ, rows, l, len(packed), released, whole*m.rowBytes, whole*m.rowBytes+len(m.Data))
				}
				row := make([]byte, m.rowBytes)
				for r := 0; r < whole; r++ {
					if l == layoutKGroups {
						unpackKRow(row, packed, bb, r, nb)
					} else {
						copy(row, packed[r*m.rowBytes:])
					}
					if !bytes.Equal(row, m.Data[r*m.rowBytes:][:m.rowBytes]) {
						t.Fatalf("%v %d rows, layout %d: row %d differs", typ, rows, l, r)
					}
				}
			}
		}
	}
}

// TestCopiesRows: a level that copies K-quant rows as they are
// (layoutRows) copies only Q4_K and Q6_K matrices of copyMin bytes or
// more whose Data is a mapped file's (a release function set): not a
// matrix on the heap, whose copy would double it, nor a small one
// (docs/BENCHMARKS.md, "Copied K-quant rows on the Zen 5").
func TestCopiesRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(85, 86))
	mapped := func(m *Matrix) *Matrix { m.SetDataRelease(func([]byte) {}); return m }
	rowsFor := func(typ DType, nb, bytes int) int { return (bytes + nb*typ.BlockBytes() - 1) / (nb * typ.BlockBytes()) }
	const nb = 4
	big := rowsFor(Q4_K, nb, copyMin)
	q8, _ := NewRaw(Q8_0, 64, 32, make([]byte, 64*Q8_0.BlockBytes()))
	for _, c := range []struct {
		what string
		m    *Matrix
		want bool
	}{
		{"Q4_K of copyMin bytes, mapped", mapped(randomKQuant(t, rng, Q4_K, big, nb)), true},
		{"Q6_K of copyMin bytes, mapped", mapped(randomKQuant(t, rng, Q6_K, rowsFor(Q6_K, nb, copyMin), nb)), true},
		{"Q4_K a row short of copyMin, mapped", mapped(randomKQuant(t, rng, Q4_K, big-1, nb)), false},
		{"Q4_K of copyMin bytes on the heap", randomKQuant(t, rng, Q4_K, big, nb), false},
		{"Q8_0, mapped", mapped(q8), false},
	} {
		if got := c.m.copies(layoutRows); got != c.want {
			t.Errorf("%s (%d bytes): copies %v, want %v", c.what, len(c.m.Data), got, c.want)
		}
	}
}

// TestCopiesNotMappedWhole: the K-quant rows of a mapped file are copied
// as they are (layoutRows) unless the file says its pages are in 2 MiB
// pages already (SetDataMappedWhole), and that is asked once a product
// needs it, not before.
func TestCopiesNotMappedWhole(t *testing.T) {
	defer func(min int) { copyMin = min }(copyMin)
	copyMin = 0
	rng := rand.New(rand.NewPCG(85, 86))
	m := randomKQuant(t, rng, Q4_K, 4, 2)
	if m.copies(layoutRows) {
		t.Fatal("a matrix on the heap (no SetDataRelease) is copied")
	}
	m.SetDataRelease(func([]byte) {})
	if !m.copies(layoutRows) {
		t.Fatal("a mapped file's K-quant matrix is not copied")
	}
	for _, whole := range []bool{false, true} {
		asked := 0
		m.SetDataMappedWhole(func() bool { asked++; return whole })
		if got := m.copies(layoutRows); got == whole || asked != 1 {
			t.Errorf("mapped whole %v: copied %v (asked %d times), want %v", whole, got, asked, !whole)
		}
		if m.copies(layoutBlocks) || asked != 1 {
			t.Errorf("mapped whole %v: a block layout asked it (%d times) or copies a K-quant matrix", whole, asked)
		}
	}
}
