package tensor

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// atLevel runs fn with the kernel level set to l (tests only).
func atLevel(l int, fn func()) {
	old := level
	level = l
	defer func() { level = old }()
	fn()
}

// levels are the kernel levels this machine can run, portable first.
func levels() []int {
	return availableLevels()
}

// levelHere reports whether this machine can run level l: kernelSets holds
// every level built for the architecture, the AVX-512 ones on an AVX2-only
// CPU too, where running them is an illegal instruction.
func levelHere(l int) bool { return slices.Contains(levels(), l) }

// checkLevels runs MatMul of the first n tokens of x at level l with each
// thread count and fails unless every output equals want (the portable
// product, at least n·m.Rows values) bit for bit.
func checkLevels(t *testing.T, m *Matrix, x []float32, n int, want []float32, l int, threads ...int) {
	t.Helper()
	rows := m.Rows
	for _, th := range threads {
		SetThreads(th)
		got := make([]float32, n*rows)
		atLevel(l, func() { MatMul(got, m, x, n) })
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%v %d×%d, %s, %d tokens, %d threads: token %d row %d = %g, portable %g",
					m.Type, rows, m.Cols, levelNames[l], n, th, i/rows, i%rows, got[i], want[i])
			}
		}
	}
}

// exactFMA32 is a·b + c rounded once to float32, in exact arithmetic.
func exactFMA32(a, b, c float32) float32 {
	exact := func(v float32) *big.Float { return new(big.Float).SetPrec(2000).SetFloat64(float64(v)) }
	x := exact(a)
	x.Mul(x, exact(b))
	x.Add(x, exact(c))
	f, _ := x.Float32()
	return f
}

func TestFMA32(t *testing.T) {
	// 1+2⁻¹² squared is 1 + 2⁻¹¹ + 2⁻²⁴: halfway between two float32
	// values; the tiny c decides the rounding, which rounding twice
	// (through float64) gets wrong.
	a := float32(1 + 1.0/4096)
	tiny := float32(math.Ldexp(1, -80))
	if naive := float32(math.FMA(float64(a), float64(a), float64(tiny))); naive == exactFMA32(a, a, tiny) {
		t.Fatalf("test case does not exercise double rounding")
	}
	cases := [][3]float32{
		{a, a, tiny}, {a, a, -tiny}, {-a, a, tiny}, {a, -a, -tiny},
		{1, 1, 0}, {0, 5, -0}, {float32(math.Inf(1)), 1, 1}, {3, 4, float32(math.Inf(-1))},
		{1e-30, 1e-30, 1e-45}, {1e38, 10, -1e38}, {float32(math.NaN()), 1, 2},
		{math.SmallestNonzeroFloat32, 0.5, 0}, {math.MaxFloat32, 2, 0},
	}
	rng := rand.New(rand.NewPCG(31, 32))
	for i := 0; i < 200000; i++ {
		f := func() float32 {
			return float32(rng.NormFloat64() * math.Ldexp(1, rng.IntN(60)-30))
		}
		x, y := f(), f()
		c := float32(-float64(x) * float64(y) * (1 + rng.NormFloat64()*math.Ldexp(1, -rng.IntN(30))))
		if i%3 == 0 {
			c = f()
		}
		cases = append(cases, [3]float32{x, y, c})
	}
	for _, c := range cases {
		got, want := fma32(c[0], c[1], c[2]), exactFMA32Safe(c[0], c[1], c[2])
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Fatalf("fma32(%g, %g, %g) = %g, want %g", c[0], c[1], c[2], got, want)
		}
	}
}

// exactFMA32Safe handles the non-finite cases big.Float does not.
func exactFMA32Safe(a, b, c float32) float32 {
	for _, v := range []float32{a, b, c} {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return float32(float64(a)*float64(b) + float64(c))
		}
	}
	return exactFMA32(a, b, c)
}

// TestParseLevel: names are case- and space-insensitive; unknown names,
// other architectures' levels and levels whose instructions the CPU lacks
// are errors (this architecture's levels: archLevels).
type parseCase struct {
	s         string
	max, want int
	err       bool
}

func TestParseLevel(t *testing.T) {
	top := cpuLevel // the CPU's instructions; the tests run only what it has
	cases := []parseCase{
		{"", top, -1, false},
		{"portable", top, levelPortable, false},
		{"sse", top, -1, true},
	}
	for _, l := range archLevels {
		cases = append(cases, parseCase{" " + strings.ToUpper(levelNames[l]) + " ", isa(l), l, false})
		// A level beyond the CPU's instructions is an error, not a crash.
		if isa(l) != levelPortable {
			cases = append(cases, parseCase{levelNames[l], levelPortable, -1, true})
		}
	}
	for l := range numLevels {
		if rank(l) < 0 { // another architecture's level
			cases = append(cases, parseCase{levelNames[l], top, -1, true})
		}
	}
	for _, tc := range cases {
		got, err := parseLevel(tc.s, tc.max)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("parseLevel(%q, %d) = %d, %v; want %d, error %v", tc.s, tc.max, got, err, tc.want, tc.err)
		}
	}
	// SetKernels refuses a level the CPU lacks and keeps the one in use.
	for l := range numLevels {
		if rank(l) >= 0 && rank(isa(l)) <= rank(cpuLevel) {
			continue
		}
		old := level
		if err := SetKernels(levelNames[l]); err == nil || level != old {
			t.Errorf("SetKernels(%q) on a CPU without it: error %v, level %s (was %s)", levelNames[l], err, levelNames[level], levelNames[old])
		}
	}
	if avail := availableLevels(); avail[0] != levelPortable || avail[len(avail)-1] != defaultLevel {
		t.Errorf("available levels %v: want portable first and the default (%s) last", AvailableKernels(), levelNames[defaultLevel])
	}
}

// TestReportLevel logs the kernel levels in use and available and what
// they use: internal/crossarch reads it to check that the emulated arm64
// CPUs ran the neon kernels (with and without SDOT), not only the
// portable code.
func TestReportLevel(t *testing.T) {
	t.Logf("kernels: %s; available: %s; cpu: %s", Kernels(), strings.Join(AvailableKernels(), ", "), cpuFeatures())
}

// TestKernelLevelsAgree: at every level this CPU has, every tile shape,
// thread count and token count gives the portable code's bits, for F32,
// F16, BF16, Q8_0 and Q4_0, including rows not a multiple of the tile
// height and F32, F16 and BF16 rows not a multiple of 16 or 32.
func TestKernelLevelsAgree(t *testing.T) {
	if len(levels()) == 1 {
		t.Log("only the portable kernels on this machine (or built with purego)")
	}
	rng := rand.New(rand.NewPCG(41, 42))
	defer SetThreads(0)
	for _, typ := range []DType{F32, F16, BF16, Q8_0, Q4_0, Q5_0} {
		colsList := []int{32, 64, 96, 288}
		if typ == F32 || typ == F16 || typ == BF16 {
			// 2,049 and 4,100: one token's rows beyond the one-row
			// tiles of avx512-zen4 and avx512-zen5 (streamF32Cols,
			// streamF16Cols).
			colsList = []int{1, 7, 16, 17, 31, 33, 48, 100, 288, 2049, 4100}
		}
		for _, cols := range colsList {
			for _, rows := range []int{1, 3, 4, 5, 9, 13, 40} {
				base, _ := NewF32(rows, cols, randVec(rng, rows*cols))
				m, err := base.Convert(typ)
				if err != nil {
					t.Fatal(err)
				}
				const n = 9
				x := randVec(rng, n*cols)
				for i := 0; i < cols; i += 5 { // some exact zeros and large values
					x[i] = 0
					x[(i*7)%len(x)] *= 100
				}
				want := make([]float32, n*rows)
				atLevel(levelPortable, func() { MatMul(want, m, x, n) })
				for _, l := range levels() {
					for _, nt := range []int{1, 2, 3, 4, 5, 8, 9} {
						checkLevels(t, m, x, nt, want, l, 1, 3)
					}
					// RowDot and Dot give the same bits as the product.
					atLevel(l, func() {
						for r := 0; r < rows; r++ {
							if got := m.RowDot(r, x[cols:2*cols]); got != want[rows+r] {
								t.Fatalf("%v %s: RowDot row %d = %g, MatMul %g", typ, levelNames[l], r, got, want[rows+r])
							}
							if typ == F32 {
								if got := Dot(m.F32[r*cols:(r+1)*cols], x[:cols]); got != want[r] {
									t.Fatalf("%s: Dot row %d = %g, MatMul %g", levelNames[l], r, got, want[r])
								}
							}
						}
					})
				}
			}
		}
	}
}

// TestQuantDotAccuracy bounds the error of the integer products against the
// float64 dot of the dequantized weights: quantizing x to 8 bits moves
// each element by at most half a step of its block (dx/2), so the error is
// at most Σ_b (dx_b/2)·Σ|w| over the block, plus float32 rounding.
func TestQuantDotAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	for _, typ := range []DType{Q8_0, Q4_0, Q5_0} {
		const rows, cols = 50, 8 * QK
		base, _ := NewF32(rows, cols, randVec(rng, rows*cols))
		m, _ := base.Convert(typ)
		x := randVec(rng, cols)
		acts := quantizeActs(nil, x, typ)
		row := make([]float32, cols)
		var worst float64
		for r := 0; r < rows; r++ {
			m.Row(row, r)
			var bound, absSum float64
			for b := 0; b < cols/QK; b++ {
				var s float64
				for j := b * QK; j < (b+1)*QK; j++ {
					s += math.Abs(float64(row[j]))
					absSum += math.Abs(float64(row[j]) * float64(x[j]))
				}
				bound += float64(acts[b].d) / 2 * s
			}
			bound += 1e-6 * absSum
			got, ref := float64(m.RowDot(r, x)), m.RowDotRef(r, x)
			if e := math.Abs(got - ref); e > bound {
				t.Errorf("%v row %d: %g, float64 reference %g: error %g > bound %g", typ, r, got, ref, e, bound)
			} else {
				worst = max(worst, e/bound)
			}
		}
		t.Logf("%v: largest error %.2f of its bound", typ, worst)
	}
}

func TestQuantizeActsEdgeCases(t *testing.T) {
	x := make([]float32, 3*QK)
	x[0] = float32(math.NaN())
	x[1] = 3
	x[QK] = float32(math.Inf(-1))
	x[QK+1] = 1
	a := quantizeActs(nil, x, Q8_0)
	if a[0].q[0] != -127 || a[0].q[1] != 127 || a[0].d != 3.0/127 {
		t.Errorf("NaN block: q %v…, d %g", a[0].q[:2], a[0].d)
	}
	if a[1].q[1] != 0 || !math.IsInf(float64(a[1].d), 1) {
		t.Errorf("Inf block: q %v…, d %g", a[1].q[:2], a[1].d)
	}
	if a[2].d != 0 || a[2].q != [QK]int8{} {
		t.Errorf("zero block: %+v", a[2])
	}
	if want := -128 * (int32(a[0].q[0]) + int32(a[0].q[1])); a[0].corr[0] != want {
		t.Errorf("corr %d, want %d", a[0].corr[0], want)
	}
}

// TestParallelForConcurrentAndNested: concurrent callers and nested calls
// each cover their range exactly once.
func TestParallelForConcurrentAndNested(t *testing.T) {
	defer SetThreads(0)
	SetThreads(3)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for it := 0; it < 50; it++ {
				n := 1 + (g*31+it*17)%200
				hits := make([]int32, n)
				var mu sync.Mutex
				ParallelFor(n, 1<<20, func(lo, hi int) {
					ParallelFor(hi-lo, 1<<20, func(a, b int) {
						mu.Lock()
						for i := lo + a; i < lo+b; i++ {
							hits[i]++
						}
						mu.Unlock()
					})
				})
				for i, h := range hits {
					if h != 1 {
						errs <- fmt.Errorf("caller %d n=%d: item %d run %d times", g, n, i, h)
						return
					}
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestAttentionKernels: DotRows gives Dot's bits, WeightedSum the bits of
// its Go loop, at every level, for head sizes around the vector widths.
func TestAttentionKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	for _, hs := range []int{1, 8, 15, 16, 24, 48, 64, 100, 128, 200} {
		for _, n := range []int{0, 1, 7, 9, 33} {
			stride := hs + 5
			m := randVec(rng, n*stride+hs)
			x := randVec(rng, hs)
			a := randVec(rng, n)
			wantScores := make([]float32, n)
			for i := range wantScores {
				wantScores[i] = dotF32(x, m[i*stride:i*stride+hs])
			}
			wantSum := make([]float32, hs)
			for i := range wantSum {
				for j, at := range a {
					wantSum[i] += float32(at * m[j*stride+i])
				}
			}
			for _, l := range levels() {
				atLevel(l, func() {
					scores := make([]float32, n)
					DotRows(scores, m, stride, x)
					sum := make([]float32, hs)
					WeightedSum(sum, a, m, stride)
					for i := range scores {
						if scores[i] != wantScores[i] || scores[i] != Dot(x, m[i*stride:]) {
							t.Fatalf("%s hs=%d n=%d: score %d = %g, want %g", levelNames[l], hs, n, i, scores[i], wantScores[i])
						}
					}
					for i := range sum {
						if math.Float32bits(sum[i]) != math.Float32bits(wantSum[i]) {
							t.Fatalf("%s hs=%d n=%d: sum %d = %g, want %g", levelNames[l], hs, n, i, sum[i], wantSum[i])
						}
					}
				})
			}
		}
	}
}

// TestMatMulsEqualsMatMul: products sharing an input in one pass (mixed
// types, so both quantized inputs are built) give MatMul's bits.
func TestMatMulsEqualsMatMul(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 48))
	const cols, n = 96, 5
	x := randVec(rng, n*cols)
	var ws []*Matrix
	var outs, want [][]float32
	for i, typ := range []DType{F32, Q8_0, F32, Q4_0, Q8_0, F16, Q5_0} {
		r := 7 + 10*i
		if i == 0 {
			r = 0 // an empty matrix first: the others keep their own rows
		}
		base, _ := NewF32(r, cols, randVec(rng, r*cols))
		m, _ := base.Convert(typ)
		ws = append(ws, m)
		outs = append(outs, make([]float32, n*m.Rows))
		w := make([]float32, n*m.Rows)
		MatMul(w, m, x, n)
		want = append(want, w)
	}
	defer SetThreads(0)
	SetThreads(2)
	MatMuls(outs, ws, x, n)
	for i := range outs {
		for j := range outs[i] {
			if outs[i][j] != want[i][j] {
				t.Fatalf("matrix %d (%v) element %d: %g, MatMul %g", i, ws[i].Type, j, outs[i][j], want[i][j])
			}
		}
	}
}

// specialBlocks writes the hard cases of an input quantizer into blocks
// 0…7 of bs inputs of x: ties after scaling (block 0: (i − bs/2)/2), zeros
// (1), a NaN (2), subnormals (3), huge values (4), +Inf (5), −Inf and NaN
// (6), NaN only (7); the other blocks keep their values.
func specialBlocks(x []float32, bs int) {
	for i := 0; i < bs; i++ {
		x[i] = float32(i-bs/2) * 0.5
		x[bs+i] = 0
		x[3*bs+i] = float32(math.Ldexp(float64(x[3*bs+i]), -140))
		x[4*bs+i] *= 1e37
		x[7*bs+i] = float32(math.NaN())
	}
	x[2*bs+3] = float32(math.NaN())
	x[5*bs+7] = float32(math.Inf(1))
	x[6*bs] = float32(math.Inf(-1))
	x[6*bs+1] = float32(math.NaN())
}

// quantTestInputs returns n ≥ 24 blocks of bs inputs for the input
// quantizers: specialBlocks' eight, then all −0 (block 8); −0, +0, NaN,
// subnormals and one normal value (9); ties after scaling, with amax 127
// (10: d = 1, x = k + ½) and 127·2⁻²⁰ (11: d = 2⁻²⁰); a subnormal d whose
// inverse is finite (12: amax 10⁻³⁶) or overflows to +Inf, with a zero
// (13: every code −127, as 0·Inf is NaN); subnormals so small that d is 0 (14); values
// within a few ulps of amax, whose codes round to ±127 from either side
// (15); −Inf with finite values (16); NaN and −0 only, a NaN last (17); ±1 (18, codes
// ±127); −1 and a zero (19); NaNs first (the first 8 inputs, or 32 for
// super-blocks: every running maximum's first operand) and the maximum
// 100 later, in the running maximum a of four (20–23); then normal values
// scaled by 2^e, e drawn from −150…120 (subnormal to huge) — all from the
// seeded rng. No input's code x·id rounds above 127 (amax·id ≤
// 127·(1+2⁻²²) also for a subnormal d): the upper clamp never binds.
func quantTestInputs(rng *rand.Rand, bs, n int) []float32 {
	x := randVec(rng, n*bs)
	specialBlocks(x, bs)
	blk := func(b int) []float32 { return x[b*bs : (b+1)*bs] }
	negZero := float32(math.Copysign(0, -1))
	for i := range blk(8) {
		blk(8)[i] = negZero
		blk(9)[i] = []float32{negZero, 0, float32(math.NaN()), 1e-42, -3e-39}[i%5]
		blk(10)[i] = float32(i%254-127) + 0.5
		blk(11)[i] = float32(math.Ldexp(float64(i%254-127)+0.5, -20))
		blk(12)[i] *= 1e-37
		blk(13)[i] *= 1e-38
		blk(14)[i] = float32(1-2*(i%2)) * 1e-45
		blk(15)[i] = float32(1-2*rng.IntN(2)) * (1 - float32(rng.IntN(8))*0x1p-24)
		blk(17)[i] = negZero
		blk(18)[i] = float32(1 - 2*(i%2))
		blk(19)[i] = -1
	}
	blk(9)[bs-1] = 2.5
	blk(10)[0], blk(11)[0], blk(12)[0] = -127, float32(math.Ldexp(-127, -20)), 1e-36
	blk(13)[bs/2] = 0
	blk(15)[0] = 1
	blk(16)[0] = float32(math.Inf(-1))
	blk(17)[1], blk(17)[bs-1] = float32(math.NaN()), float32(math.NaN())
	blk(19)[rng.IntN(bs)] = 0
	for a := 0; a < 4; a++ {
		for i := range min(32, bs/4) {
			blk(20 + a)[i] = float32(math.NaN())
		}
		blk(20 + a)[min(bs-1, 8*(4+a)+3)] = 100
	}
	for b := 24; b < n; b++ {
		e := rng.IntN(271) - 150
		for i := range blk(b) {
			blk(b)[i] = float32(math.Ldexp(float64(blk(b)[i]), e))
		}
	}
	return x
}

// TestQuantizeActsLevels: at every level, the vector quantization writes
// the portable code's blocks bit for bit (codes, corrections, d), for
// quantTestInputs' special and random blocks, with nb = 1, 2, 7 and 64
// blocks a call, the inputs 32-byte aligned or not.
func TestQuantizeActsLevels(t *testing.T) {
	rng := rand.New(rand.NewPCG(49, 50))
	const n = 80
	x := quantTestInputs(rng, QK, n+1)
	for _, typ := range []DType{Q8_0, Q4_0} {
		for _, shift := range []int{0, 3} {
			xs := x[shift : shift+n*QK]
			var want []actBlock
			atLevel(levelPortable, func() { want = quantizeActs(nil, xs, typ) })
			for _, l := range levels() {
				for _, nb := range []int{1, 2, 7, 64} {
					for s := 0; s+nb <= n; s += nb {
						var got []actBlock
						atLevel(l, func() { got = quantizeActs(nil, xs[s*QK:(s+nb)*QK], typ) })
						for b := range got {
							w := want[s+b]
							if got[b].q != w.q || got[b].corr != w.corr || math.Float32bits(got[b].d) != math.Float32bits(w.d) {
								t.Fatalf("%v %s, inputs shifted by %d, nb %d: block %d:\n got %+v\nwant %+v", typ, levelNames[l], shift, nb, s+b, got[b], w)
							}
						}
					}
				}
			}
		}
	}
}

// BenchmarkQuantizeActs measures the input quantizers (quantizeActs for
// Q8_0, quantizeActsK) on 8 tokens of 2048 and 8192 inputs at each level
// this machine runs, interleaved: each iteration quantizes once per level,
// so a load change on the shared machine hits every level alike; each
// level's time is reported in ns per input ("portable-ns/value", …).
//
//	go test -run='^$' -bench=QuantizeActs ./tensor
func BenchmarkQuantizeActs(b *testing.B) {
	rng := rand.New(rand.NewPCG(53, 54))
	for _, cols := range []int{2048, 8192} {
		x := randVec(rng, 8*cols)
		acts, actsK := make([]actBlock, len(x)/QK), makeActsK(len(x)/QKK)
		for _, k := range []struct {
			name string
			fn   func()
		}{
			{"q8_0", func() { quantizeActs(acts, x, Q8_0) }},
			{"k", func() { quantizeActsK(actsK, x) }},
		} {
			b.Run(fmt.Sprintf("%s/cols=%d", k.name, cols), func(b *testing.B) {
				ls := levels()
				spent := make([]time.Duration, len(ls))
				for i := 0; i < b.N; i++ {
					for j, l := range ls {
						start := time.Now()
						atLevel(l, k.fn)
						spent[j] += time.Since(start)
					}
				}
				for j, l := range ls {
					b.ReportMetric(float64(spent[j].Nanoseconds())/float64(b.N*len(x)), levelNames[l]+"-ns/value")
				}
			})
		}
	}
}

// gateTestLengths are the lengths the element-wise kernels are checked at:
// around their lane counts, and blocks long enough to be split over the
// threads.
var gateTestLengths = []int{0, 1, 3, 4, 5, 8, 13, 17, 100, 768, gateParallel, 8*gateParallel/3 + 5}

// gateTestInputs are n random gate values times scale, the first of them
// replaced by edge when n > 20, and n random up values.
func gateTestInputs(rng *rand.Rand, n int, scale float32, edge []float32) (g, u []float32) {
	g, u = randVec(rng, n), randVec(rng, n)
	for i := range g {
		g[i] *= scale
		if i < len(edge) && n > 20 {
			g[i] = edge[i]
		}
	}
	return g, u
}

// sameBitsOrNaN reports whether a and b have the same bits or are both NaN.
func sameBitsOrNaN(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b
}

// TestSwiGLULevels: the vector SwiGLU gives swiglu1's bits at every level
// (lengths around the lane counts, edge values, blocks long enough to be
// split over the threads), and swiglu1 is within float32 rounding of
// g/(1+e^−g)·u computed with math.Exp.
func TestSwiGLULevels(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	edge := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		800, -800, 1e-40, -1e-40, 88, -88, 3.4e38, -3.4e38}
	SetThreads(3)
	defer SetThreads(0)
	for _, n := range gateTestLengths {
		g, u := gateTestInputs(rng, n, 6, edge)
		want := make([]float32, n)
		for i := range want {
			want[i] = swiglu1(g[i], u[i])
			ref := float64(g[i]) / (1 + math.Exp(-float64(g[i]))) * float64(u[i])
			if d := math.Abs(float64(want[i]) - ref); d > 3e-7*math.Abs(ref)+math.SmallestNonzeroFloat32 && !(math.IsNaN(ref) || math.Abs(ref) > math.MaxFloat32) {
				t.Fatalf("swiglu1(%g, %g) = %g, math.Exp gives %g", g[i], u[i], want[i], ref)
			}
		}
		for _, l := range levels() {
			got := append([]float32(nil), g...)
			atLevel(l, func() { SwiGLU(got, u) })
			for i := range got {
				if !sameBitsOrNaN(got[i], want[i]) {
					t.Fatalf("%s n=%d: SwiGLU(%g, %g) = %g, want %g", levelNames[l], n, g[i], u[i], got[i], want[i])
				}
			}
		}
	}
}

// TestGELULevels: the vector GeGLU and GELU give gelu1's bits at every
// level (lengths around the lane count, edge values: NaN, ±Inf, ±0,
// denormals, values whose e^(−2|u|) underflows, u < 0 and u ≥ 0; blocks long
// enough to be split over the threads), and gelu1 is within float32
// rounding of 0.5·x·(1 + tanh(…)) computed with math.Tanh.
func TestGELULevels(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 54))
	edge := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		800, -800, 1e-40, -1e-40, 30, -30, 3.4e38, -3.4e38, 1e-20, -1e-20, 5.5, -5.5}
	SetThreads(3)
	defer SetThreads(0)
	for _, n := range gateTestLengths {
		g, u := gateTestInputs(rng, n, 4, edge)
		wantGELU, wantGeGLU := make([]float32, n), make([]float32, n)
		for i, x := range g {
			wantGELU[i] = gelu1(x)
			wantGeGLU[i] = gelu1(x) * u[i]
			v := float64(x)
			ref := 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
			// 1 + tanh(u) cancels for large negative x: an absolute error
			// of a few float64 ulps of 0.5·|x| on top of float32 rounding.
			if d := math.Abs(float64(wantGELU[i]) - ref); d > 3e-7*math.Abs(ref)+1e-15*math.Abs(v)+math.SmallestNonzeroFloat32 && !(math.IsNaN(ref) || math.IsInf(ref, 0) || math.Abs(v) > 1e10) {
				t.Fatalf("gelu1(%g) = %g, math.Tanh gives %g", x, wantGELU[i], ref)
			}
		}
		for _, l := range levels() {
			gotGELU, gotGeGLU := append([]float32(nil), g...), append([]float32(nil), g...)
			atLevel(l, func() { GELU(gotGELU); GeGLU(gotGeGLU, u) })
			for i := range g {
				if !sameBitsOrNaN(gotGELU[i], wantGELU[i]) {
					t.Fatalf("%s n=%d: GELU(%g) = %g, want %g", levelNames[l], n, g[i], gotGELU[i], wantGELU[i])
				}
				if !sameBitsOrNaN(gotGeGLU[i], wantGeGLU[i]) {
					t.Fatalf("%s n=%d: GeGLU(%g, %g) = %g, want %g", levelNames[l], n, g[i], u[i], gotGeGLU[i], wantGeGLU[i])
				}
			}
		}
	}
}

// BenchmarkGeGLU measures GeGLU on one thread over one token of
// Gemma-3-1B's feed-forward (6,912 values), in ns per value.
//
//	go test -run='^$' -bench=GeGLU ./tensor
func BenchmarkGeGLU(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const n = 6912
	g, u := randVec(rng, n), randVec(rng, n)
	x := make([]float32, n)
	SetThreads(1)
	defer SetThreads(0)
	for _, l := range levels() {
		b.Run(levelNames[l], func(b *testing.B) {
			atLevel(l, func() {
				for i := 0; i < b.N; i++ {
					copy(x, g)
					GeGLU(x, u)
				}
			})
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/value")
		})
	}
}

// BenchmarkKQuantKernels measures the K-quant tiles on one thread: a
// 256×1024 Q4_K or Q6_K matrix (in L2) times n tokens.
//
//	go test -run='^$' -bench=KQuantKernels ./tensor
func BenchmarkKQuantKernels(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, typ := range []DType{Q4_K, Q6_K} {
		m := randomKQuant(b, rng, typ, 256, 4)
		for _, n := range []int{1, 2, 4, 8} {
			x := randVec(rng, n*m.Cols)
			out := make([]float32, n*m.Rows)
			b.Run(fmt.Sprintf("%v/n=%d", typ, n), func(b *testing.B) { benchMatMul1(b, out, m, x, n) })
		}
	}
}

// BenchmarkMatMulKernels measures the micro-kernels on one thread: a
// 512×768 matrix (in L2/L3) times n tokens, in multiply-adds per second.
//
//	go test -run='^$' -bench=MatMulKernels ./tensor
func BenchmarkMatMulKernels(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, typ := range []DType{F32, F16, BF16, Q8_0, Q4_0} {
		for _, n := range []int{1, 4, 8} {
			const rows, cols = 512, 768
			base, _ := NewF32(rows, cols, randVec(rng, rows*cols))
			m, _ := base.Convert(typ)
			x := randVec(rng, n*cols)
			out := make([]float32, n*rows)
			b.Run(fmt.Sprintf("%v/n=%d", typ, n), func(b *testing.B) { benchMatMul1(b, out, m, x, n) })
		}
	}
}

// benchMatMul1 times MatMul(out, m, x, n) on one thread, in multiply-adds
// per second.
func benchMatMul1(b *testing.B, out []float32, m *Matrix, x []float32, n int) {
	SetThreads(1)
	defer SetThreads(0)
	MatMul(out, m, x, n) // packs where the level does
	WaitPacking()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		MatMul(out, m, x, n)
	}
	b.ReportMetric(float64(m.Rows*m.Cols*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
}

// BenchmarkQuantBlocks measures Q8_0 and Q4_0 products of a few tokens on
// one thread (a verification block, a small batch: the token-pair tiles at
// AVX-512), including the inputs' quantization: a 512×768 matrix (in L2)
// times n tokens, in multiply-adds per second.
//
//	go test -run='^$' -bench=QuantBlocks ./tensor
func BenchmarkQuantBlocks(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const rows, cols = 512, 768
	base, _ := NewF32(rows, cols, randVec(rng, rows*cols))
	for _, typ := range []DType{Q8_0, Q4_0} {
		m, _ := base.Convert(typ)
		for _, n := range []int{1, 2, 3, 4, 5, 8, 9, 16} {
			x := randVec(rng, n*cols)
			out := make([]float32, n*rows)
			b.Run(fmt.Sprintf("%v/n=%d", typ, n), func(b *testing.B) { benchMatMul1(b, out, m, x, n) })
			if hasAVX512() {
				b.Run(fmt.Sprintf("%v/rowmajor/n=%d", typ, n), func(b *testing.B) {
					packing = false
					defer func() { packing = true }()
					benchMatMul1(b, out, m, x, n)
				})
			}
		}
	}
}
