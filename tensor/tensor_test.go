package tensor

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"
)

func TestF16RoundTripAllPatterns(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		f := F16ToF32(h)
		if f != f { // NaN
			if g := F16ToF32(F32ToF16(f)); g == g {
				t.Fatalf("NaN %#04x did not stay NaN", h)
			}
			continue
		}
		if back := F32ToF16(f); back != h {
			t.Fatalf("F32ToF16(F16ToF32(%#04x)=%g) = %#04x", h, f, back)
		}
	}
}

func TestF32ToF16RoundsToNearest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		f := float32(rng.NormFloat64() * math.Pow(2, float64(rng.IntN(40)-28)))
		h := F32ToF16(f)
		got := float64(F16ToF32(h))
		// No other half value may be strictly closer.
		for _, nb := range []uint16{h - 1, h + 1} {
			alt := F16ToF32(nb)
			if alt != alt || math.IsInf(float64(alt), 0) || (alt < 0) != (f < 0) && alt != 0 {
				continue
			}
			if math.Abs(float64(alt)-float64(f)) < math.Abs(got-float64(f)) {
				t.Fatalf("F32ToF16(%g) = %g but %g is closer", f, got, alt)
			}
		}
	}
	if F32ToF16(1e6) != 0x7c00 || F32ToF16(-1e6) != 0xfc00 {
		t.Errorf("overflow must give ±Inf")
	}
}

func TestBF16(t *testing.T) {
	for _, f := range []float32{0, 1, -2.5, 3.1415926, 1e-30, 65504} {
		got := BF16ToF32(F32ToBF16(f))
		if math.Abs(float64(got-f)) > math.Abs(float64(f))/128 {
			t.Errorf("bf16 %g -> %g", f, got)
		}
	}
}

func randVec(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

func TestQuantizeErrorBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	x := randVec(rng, 64*QK)
	for _, tc := range []struct {
		t   DType
		rel float64 // max error relative to the block's max |x|
	}{{Q8_0, 0.5/127 + 1e-3}, {Q4_0, 1.0/8 + 1e-3}, {Q5_0, 1.0/16 + 1e-3}, {F16, 1e-3}, {BF16, 1.0 / 128}} {
		data := EncodeRow(nil, tc.t, x)
		if want, _ := tc.t.RowBytes(len(x)); len(data) != want {
			t.Fatalf("%v: %d bytes, want %d", tc.t, len(data), want)
		}
		y := make([]float32, len(x))
		DequantizeRow(y, tc.t, data)
		for b := 0; b < len(x); b += QK {
			var amax float64
			for _, v := range x[b : b+QK] {
				amax = math.Max(amax, math.Abs(float64(v)))
			}
			for i := b; i < b+QK; i++ {
				if e := math.Abs(float64(y[i] - x[i])); e > tc.rel*amax {
					t.Fatalf("%v: element %d: %g -> %g (err %g > %g)", tc.t, i, x[i], y[i], e, tc.rel*amax)
				}
			}
		}
	}
}

func TestRowDotMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const rows, cols = 7, 8 * QK
	base, _ := NewF32(rows, cols, randVec(rng, rows*cols))
	x := randVec(rng, cols)
	// Q8_0 and Q4_0 products quantize x: TestQuantDotAccuracy bounds them.
	for _, typ := range []DType{F32, F16, BF16} {
		m, err := base.Convert(typ)
		if err != nil {
			t.Fatal(err)
		}
		for r := 0; r < rows; r++ {
			got, want := float64(m.RowDot(r, x)), m.RowDotRef(r, x)
			if math.Abs(got-want) > 1e-4*(1+math.Abs(want)) {
				t.Errorf("%v row %d: RowDot %g, reference %g", typ, r, got, want)
			}
		}
	}
}

func TestMatMulBlockEqualsSingleAndThreadsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const rows, cols, n = 300, 4 * QK, 5
	base, _ := NewF32(rows, cols, randVec(rng, rows*cols))
	x := randVec(rng, n*cols)
	defer SetThreads(0)
	for _, typ := range []DType{F32, F16, Q8_0, Q4_0, Q5_0} {
		m, _ := base.Convert(typ)
		SetThreads(1)
		block := make([]float32, n*rows)
		MatMul(block, m, x, n)
		SetThreads(3)
		block3 := make([]float32, n*rows)
		MatMul(block3, m, x, n)
		for i := 0; i < n; i++ {
			single := make([]float32, rows)
			MatVec(single, m, x[i*cols:(i+1)*cols])
			for r := range single {
				if single[r] != block[i*rows+r] || block[i*rows+r] != block3[i*rows+r] {
					t.Fatalf("%v: token %d row %d: single %g, block %g, block(3 threads) %g", typ, i, r, single[r], block[i*rows+r], block3[i*rows+r])
				}
			}
		}
	}
}

// TestRMSNormRows checks that a block's rows, normalized on several
// threads and in place, get RMSNorm's bits row by row.
func TestRMSNormRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	SetThreads(2)
	defer SetThreads(0)
	for _, rows := range []int{1, 3, 8, 33} {
		const dim = 768
		x, w := randVec(rng, rows*dim), randVec(rng, dim)
		want := make([]float32, len(x))
		for r := 0; r < rows; r++ {
			RMSNorm(want[r*dim:(r+1)*dim], x[r*dim:(r+1)*dim], w, 1e-5)
		}
		got := append([]float32(nil), x...)
		RMSNormRows(got, got, w, 1e-5)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%d rows: element %d is %g, RMSNorm gives %g", rows, i, got[i], want[i])
			}
		}
	}
}

func TestRMSNormSoftmaxSwiGLU(t *testing.T) {
	x := []float32{1, 2, 3, 4}
	w := []float32{1, 1, 2, 0.5}
	out := make([]float32, 4)
	RMSNorm(out, x, w, 0)
	rms := math.Sqrt((1 + 4 + 9 + 16) / 4.0)
	for i := range x {
		if want := float64(w[i]) * float64(x[i]) / rms; math.Abs(float64(out[i])-want) > 1e-6 {
			t.Errorf("RMSNorm[%d] = %g, want %g", i, out[i], want)
		}
	}
	p := []float32{1, 2, 3}
	Softmax(p)
	z := math.Exp(1) + math.Exp(2) + math.Exp(3)
	for i, v := range p {
		if want := math.Exp(float64(i+1)) / z; math.Abs(float64(v)-want) > 1e-6 {
			t.Errorf("Softmax[%d] = %g, want %g", i, v, want)
		}
	}
	g, u := []float32{-1, 0, 2}, []float32{3, 5, 0.5}
	SwiGLU(g, u)
	for i, gv := range []float64{-1, 0, 2} {
		want := gv / (1 + math.Exp(-gv)) * float64([]float32{3, 5, 0.5}[i])
		if math.Abs(float64(g[i])-want) > 1e-6 {
			t.Errorf("SwiGLU[%d] = %g, want %g", i, g[i], want)
		}
	}
}

func TestRopeRotatesPairs(t *testing.T) {
	// Position 3 inside the precomputed table (8 positions) and outside it.
	for _, positions := range []int{8, 0} {
		r := NewRope(4, 10000, positions)
		x := []float32{1, 0, 1, 0, 0, 1, 0, 1}
		r.Apply(x, 3)
		// Pair 0 of each head rotates by 3 rad, pair 1 by 3/100 rad.
		want := []float64{math.Cos(3), math.Sin(3), math.Cos(0.03), math.Sin(0.03), -math.Sin(3), math.Cos(3), -math.Sin(0.03), math.Cos(0.03)}
		for i := range x {
			if math.Abs(float64(x[i])-want[i]) > 1e-6 {
				t.Errorf("table of %d positions: rope[%d] = %g, want %g", positions, i, x[i], want[i])
			}
		}
	}
}

// TestRopeTableBits checks that the precomputed rotations give the bits of
// the ones computed on the fly, at every position of the table and past it.
func TestRopeTableBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	const hs, positions = 64, 300
	tab, fly := NewRope(hs, 10000, positions), NewRope(hs, 10000, 0)
	if len(fly.cs) != 0 || len(tab.cs) != positions*hs {
		t.Fatalf("tables of %d and %d values", len(tab.cs), len(fly.cs))
	}
	for pos := 0; pos < positions+5; pos++ {
		x := randVec(rng, 3*hs)
		y := append([]float32(nil), x...)
		tab.Apply(x, pos)
		fly.Apply(y, pos)
		for i := range x {
			if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
				t.Fatalf("pos %d: element %d is %g from the table, %g computed", pos, i, x[i], y[i])
			}
		}
	}
	if big := NewRope(128, 10000, 1<<30); len(big.cs)*4 > ropeTableBytes {
		t.Errorf("table of %d bytes exceeds the %d-byte cap", len(big.cs)*4, ropeTableBytes)
	}
}

func BenchmarkMatVec(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, typ := range []DType{F32, F16, Q8_0, Q4_0, Q4_K, Q6_K} {
		const rows, cols = 768, 768
		base, _ := NewF32(rows, cols, randVec(rng, rows*cols))
		m, err := base.Convert(typ)
		if err != nil { // K-quants are read only: random blocks with small scales
			data := make([]byte, rows*cols/QKK*typ.BlockBytes())
			for i := range data {
				data[i] = byte(rng.UintN(256))
			}
			for blk := 0; blk < len(data); blk += typ.BlockBytes() { // normal f16 scales
				off := 0
				if typ == Q6_K {
					off = 208
				}
				binary.LittleEndian.PutUint16(data[blk+off:], F32ToF16(0.01))
				if typ == Q4_K {
					binary.LittleEndian.PutUint16(data[blk+2:], F32ToF16(0.01))
				}
			}
			m, _ = NewRaw(typ, rows, cols, data)
		}
		x := randVec(rng, cols)
		out := make([]float32, rows)
		b.Run(typ.String(), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				MatVec(out, m, x)
			}
			b.ReportMetric(float64(2*rows*cols)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// TestKQuantLevels: at every level this CPU has, the K-quant products give
// the portable code's bits for every tile shape, token count and thread
// count, and RowDot gives the product's bits.
func TestKQuantLevels(t *testing.T) {
	if len(levels()) == 1 {
		t.Log("only the portable kernels on this machine (or built with purego)")
	}
	rng := rand.New(rand.NewPCG(13, 14))
	defer SetThreads(0)
	for _, typ := range []DType{Q4_K, Q6_K} {
		for _, nb := range []int{1, 2, 3} {
			for _, rows := range []int{1, 3, 4, 5, 9, 13} {
				m := randomKQuant(t, rng, typ, rows, nb)
				const n = 9
				x := randVec(rng, n*m.Cols)
				x[3] = 0
				x[7] *= 100 // one large input: the other codes of its super-block shrink
				want := make([]float32, n*rows)
				atLevel(levelPortable, func() { MatMul(want, m, x, n) })
				for _, l := range levels() {
					for _, nt := range []int{1, 2, 3, 4, 5, 8, 9} {
						checkLevels(t, m, x, nt, want, l, 1, 3)
					}
					atLevel(l, func() {
						for r := 0; r < rows; r++ {
							if got := m.RowDot(r, x[m.Cols:2*m.Cols]); got != want[rows+r] {
								t.Fatalf("%v %s: RowDot row %d = %g, MatMul %g", typ, levelNames[l], r, got, want[rows+r])
							}
						}
					})
				}
			}
		}
	}
}

// TestExpShifted: accuracy against math.Exp (1e-14 relative), edge values,
// and bit-identity of every level's kernels (AVX-512, AVX2) with the
// portable code.
func TestExpShifted(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, n := range []int{0, 1, 3, 4, 5, 8, 12, 31, 33, 1000, 32000} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * 8)
		}
		if n > 3 {
			x[0], x[1], x[2] = float32(math.Inf(-1)), float32(math.NaN()), -1e30
		}
		if n > 12 { // in the second vector of the AVX-512 loop's pairs too
			x[9], x[11], x[12] = float32(math.Inf(-1)), float32(math.NaN()), -1e30
		}
		shift, scale := 30.0, 1/0.7
		if n%2 == 0 { // terms of one magnitude: the order of the sums shows in their bits
			for i := range x {
				x[i] = -rng.Float32()
			}
			shift, scale = 0, 1
		}
		got := make([]float64, n)
		sum := ExpShifted(got, x, shift, scale)
		var ref float64
		for i, v := range x {
			d := (float64(v) - shift) * scale
			want := math.Exp(d)
			if d < expMin || d != d {
				want = 0
			}
			if math.Abs(got[i]-want) > 1e-14*want {
				t.Fatalf("n=%d: exp(%g) = %g, want %g", n, d, got[i], want)
			}
			ref += want
		}
		if math.Abs(sum-ref) > 1e-13*ref {
			t.Errorf("n=%d: sum %g, want %g", n, sum, ref)
		}
		port := make([]float64, n)
		var psum float64
		atLevel(levelPortable, func() { psum = ExpShifted(port, x, shift, scale) })
		for _, l := range levels()[1:] {
			atLevel(l, func() { sum = ExpShifted(got, x, shift, scale) })
			for i := range port {
				if math.Float64bits(port[i]) != math.Float64bits(got[i]) {
					t.Fatalf("n=%d element %d: %s %v, portable %v", n, i, levelNames[l], got[i], port[i])
				}
			}
			if math.Float64bits(psum) != math.Float64bits(sum) {
				t.Errorf("n=%d: %s sum %v, portable %v", n, levelNames[l], sum, psum)
			}
		}
	}
}

// TestExpShiftedThreads: from ShareMin values on ExpShifted shares the
// exponentials out and sums them afterwards; the values and the sum have
// the bits of one thread's pass, at every level. The terms are of one
// magnitude, so that another order of the sum would show in its bits.
func TestExpShiftedThreads(t *testing.T) {
	defer SetThreads(Threads())
	rng := rand.New(rand.NewPCG(23, 24))
	for _, n := range []int{ShareMin, ShareMin + 3, 40003, 151936} {
		x := make([]float32, n)
		for i := range x {
			x[i] = -rng.Float32()
		}
		x[5], x[n-1] = float32(math.NaN()), float32(math.Inf(-1))
		for _, l := range levels() {
			var one, many []float64
			var s1, sN float64
			atLevel(l, func() {
				SetThreads(1)
				one = make([]float64, n)
				s1 = ExpShifted(one, x, 0, 1)
				SetThreads(4)
				many = make([]float64, n)
				sN = ExpShifted(many, x, 0, 1)
			})
			for i := range one {
				if math.Float64bits(one[i]) != math.Float64bits(many[i]) {
					t.Fatalf("n=%d %s element %d: 4 threads %v, one %v", n, levelNames[l], i, many[i], one[i])
				}
			}
			if math.Float64bits(s1) != math.Float64bits(sN) {
				t.Errorf("n=%d %s: sum on 4 threads %v, on one %v", n, levelNames[l], sN, s1)
			}
		}
	}
}

// TestExpShiftedAllocs: below ShareMin ExpShifted allocates nothing (a
// head's attention softmax takes it for every token).
func TestExpShiftedAllocs(t *testing.T) {
	x := make([]float32, 1000)
	dst := make([]float64, len(x))
	if n := testing.AllocsPerRun(50, func() { ExpShifted(dst, x, 0, 1) }); n != 0 {
		t.Errorf("ExpShifted of %d values allocates %v objects, want 0", len(x), n)
	}
}

func BenchmarkExpShifted(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := randVec(rng, 32000)
	dst := make([]float64, len(x))
	for i := 0; i < b.N; i++ {
		ExpShifted(dst, x, 5, 1)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/op")
}

func TestExp(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for i := 0; i < 100000; i++ {
		x := (rng.Float64()*2 - 1) * 700
		if got, want := Exp(x), math.Exp(x); math.Abs(got-want) > 1e-14*want {
			t.Fatalf("Exp(%g) = %g, want %g", x, got, want)
		}
	}
	for _, tc := range []struct{ x, want float64 }{{0, 1}, {-800, 0}, {800, math.Inf(1)}, {math.Inf(-1), 0}, {math.Inf(1), math.Inf(1)}} {
		if got := Exp(tc.x); got != tc.want {
			t.Errorf("Exp(%g) = %g, want %g", tc.x, got, tc.want)
		}
	}
	if !math.IsNaN(Exp(math.NaN())) {
		t.Error("Exp(NaN) is not NaN")
	}
}

// TestExpTableLayout: the assembly reads expConsts at the offsets
// gen_kernels.go names (expLog2e … expCoef there).
func TestExpTableLayout(t *testing.T) {
	c := &expConsts
	for _, f := range []struct {
		name      string
		off, want uintptr
	}{
		{"log2e", unsafe.Offsetof(c.log2e), 0},
		{"ln2Hi", unsafe.Offsetof(c.ln2Hi), 8},
		{"ln2Lo", unsafe.Offsetof(c.ln2Lo), 16},
		{"min", unsafe.Offsetof(c.min), 24},
		{"bias", unsafe.Offsetof(c.bias), 32},
		{"coef", unsafe.Offsetof(c.coef), 40},
	} {
		if f.off != f.want {
			t.Errorf("expTable.%s at offset %d, the kernels read %d", f.name, f.off, f.want)
		}
	}
}
