package tensor

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

// prepackedOf returns m's storage in the prepacked layout, as a prepacked
// matrix.
func prepackedOf(t *testing.T, m *Matrix) *Matrix {
	t.Helper()
	var b bytes.Buffer
	if err := m.WritePacked(&b); err != nil {
		t.Fatal(err)
	}
	if b.Len() != len(m.Data) {
		t.Fatalf("%v %d×%d: %d prepacked bytes, want %d", m.Type, m.Rows, m.Cols, b.Len(), len(m.Data))
	}
	pm, err := NewPrepacked(m.Type, m.Rows, m.Cols, b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return pm
}

// TestPrepacked checks that a prepacked matrix is the matrix it was made
// from: the same rows (Row, RowDot, Bytes, WriteRowMajor), the same
// products bit for bit at every level this machine runs, with 1 and 2
// threads and 1 to 9 tokens (the packed tiles where the level has them,
// the row-major copy elsewhere, the rows past the last group in place);
// that where a level reads the packed rows they end up copied into memory
// of their own (moveToOwn) with the same products, and either copy lets
// the mapped pages go; and that writing it prepacked again gives the same
// bytes.
func TestPrepacked(t *testing.T) {
	defer SetThreads(Threads())
	rng := rand.New(rand.NewPCG(11, 12))
	for _, typ := range []DType{Q8_0, Q4_0, Q5_0} {
		for _, shape := range [][2]int{{5, 64}, {16, 32}, {17, 64}, {40, 96}, {64, 768}} {
			rows, cols := shape[0], shape[1]
			base, _ := NewF32(rows, cols, randVec(rng, rows*cols))
			m, err := base.Convert(typ)
			if err != nil {
				t.Fatal(err)
			}
			pm := prepackedOf(t, m)
			if pm.Prepacked() != (rows >= packRows) {
				t.Fatalf("%v %d×%d: Prepacked() = %v", typ, rows, cols, pm.Prepacked())
			}
			if rows >= packRows && bytes.Equal(pm.Data, m.Data) {
				t.Fatalf("%v %d×%d: the prepacked layout is the row-major one", typ, rows, cols)
			}
			if !bytes.Equal(pm.Bytes(), m.Data) {
				t.Fatalf("%v %d×%d: Bytes of the prepacked matrix differ from the row-major storage", typ, rows, cols)
			}
			var rm bytes.Buffer
			if err := pm.WriteRowMajor(&rm); err != nil || !bytes.Equal(rm.Bytes(), m.Data) {
				t.Fatalf("%v %d×%d: WriteRowMajor differs from the row-major storage (%v)", typ, rows, cols, err)
			}
			var again bytes.Buffer
			if err := pm.WritePacked(&again); err != nil || !bytes.Equal(again.Bytes(), pm.Data) {
				t.Fatalf("%v %d×%d: writing a prepacked matrix prepacked changed it (%v)", typ, rows, cols, err)
			}
			x := randVec(rng, 9*cols)
			want, got := make([]float32, cols), make([]float32, cols)
			for r := 0; r < rows; r++ {
				m.Row(want, r)
				pm.Row(got, r)
				for c := range want {
					if math.Float32bits(got[c]) != math.Float32bits(want[c]) {
						t.Fatalf("%v %d×%d: Row(%d)[%d] = %g, want %g", typ, rows, cols, r, c, got[c], want[c])
					}
				}
				if a, b := pm.RowDot(r, x), m.RowDot(r, x); math.Float32bits(a) != math.Float32bits(b) {
					t.Fatalf("%v %d×%d: RowDot(%d) = %g, want %g", typ, rows, cols, r, a, b)
				}
			}
			for _, n := range []int{1, 2, 3, 8, 9} {
				ref := make([]float32, n*rows)
				atLevel(levelPortable, func() { MatMul(ref, m, x, n) })
				for _, l := range levels() {
					fresh := prepackedOf(t, m) // no row-major copy yet
					var released atomic.Int64
					fresh.SetDataRelease(func(b []byte) { released.Add(int64(len(b))) })
					checkLevels(t, fresh, x, n, ref, l, 1, 2)
					var reads bool
					atLevel(l, func() { reads = ReadsPacked(typ) })
					// Where the level reads packed rows, the first product
					// reads the prepacked bytes and queues their copy into
					// memory of its own; where it reads rows row-major, the
					// row-major copy is made. Either copy replaces the
					// mapped pages of the packed groups (the moved ones
					// once more when the move is done).
					WaitPacking()
					want := int64(rows / packRows * packRows * m.RowBytes())
					if reads {
						want *= 2
					}
					if got := released.Load(); got != want {
						t.Fatalf("%v %d×%d, %s: %d bytes of Data let go, want %d (reads packed: %v)", typ, rows, cols, levelNames[l], got, want, reads)
					}
					if reads && rows >= packRows {
						p, _ := fresh.packedRows()
						if &p[0] == &fresh.Data[0] || !bytes.Equal(p, fresh.Data[:len(p)]) {
							t.Fatalf("%v %d×%d, %s: the packed rows are not a copy of the prepacked bytes once moved", typ, rows, cols, levelNames[l])
						}
						if fresh.unpacked.Load() != nil {
							t.Fatalf("%v %d×%d, %s: a level that reads packed rows unpacked the matrix", typ, rows, cols, levelNames[l])
						}
						checkLevels(t, fresh, x, n, ref, l, 1, 2) // from the copy
					}
				}
			}
		}
	}
}

// TestPrepackedRefused checks that NewPrepacked refuses a type without a
// packed layout and storage of the wrong size.
func TestPrepackedRefused(t *testing.T) {
	if _, err := NewPrepacked(F16, 16, 32, make([]byte, 16*64)); err == nil {
		t.Fatal("an F16 matrix was accepted as prepacked")
	}
	if _, err := NewPrepacked(Q4_K, 16, 256, make([]byte, 16*144)); err == nil {
		t.Fatal("a Q4_K matrix was accepted as prepacked")
	}
	if _, err := NewPrepacked(Q8_0, 16, 32, make([]byte, 16*34-1)); err == nil {
		t.Fatal("a Q8_0 matrix one byte short was accepted")
	}
	f16, _ := NewF32(16, 32, make([]float32, 16*32))
	if err := f16.WritePacked(&bytes.Buffer{}); err == nil {
		t.Fatal("an F32 matrix was written prepacked")
	}
}

// TestWhileMoving computes products of a matrix while its packed rows
// are made behind them (a row-major matrix's packed, a prepacked one's
// copied), at each step of the move (moveStep holds the mover there), and
// again from several goroutines while it runs free: the groups made so far
// are read from the new rows, the others from the prepacked bytes or with
// the row-major tiles, whose pages are let go as they are moved; every
// product equals the portable code's, bit for bit, for 1 to 3 tokens.
// Q8_0 and Q5_0 at this machine's level, and Q4_K and Q6_K rows too long
// for one token's input to stay in L1 at avx512-zen4, which packs those.
func TestWhileMoving(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	if ReadsPacked(Q8_0) {
		const rows, cols = 40*packRows + 5, 4096 // 8–14 steps of 3–5 groups, and a tail
		for _, typ := range []DType{Q8_0, Q5_0} {
			base, _ := NewF32(rows, cols, randVec(rng, rows*cols))
			m, _ := base.Convert(typ)
			checkWhileMoving(t, rng, m, false)
			checkWhileMoving(t, rng, m, true)
		}
	} else {
		t.Logf("the %s level reads no packed Q8_0 rows", Kernels())
	}
	if ks := kernelSets[levelAVX512Zen4]; ks != nil && ks.kPacked != nil {
		nb := int(kNarrowBytes/unsafe.Sizeof(actBlockK{})) + 1 // the narrowest rows packed
		for _, typ := range []DType{Q4_K, Q6_K} {
			m := randomKQuant(t, rng, typ, 24*kPackRows+3, nb)
			atLevel(levelAVX512Zen4, func() { checkWhileMoving(t, rng, m, false) })
		}
	} else {
		t.Logf("no avx512-zen4 level here: K-quant rows not checked")
	}
}

// checkWhileMoving is TestWhileMoving for one matrix m, row-major or
// (prepacked) in the prepacked layout.
func checkWhileMoving(t *testing.T, rng *rand.Rand, m *Matrix, prepacked bool) {
	t.Helper()
	defer SetThreads(Threads())
	rows, cols := m.Rows, m.Cols
	x := randVec(rng, 3*cols)
	ref := make([]float32, 3*rows)
	atLevel(levelPortable, func() { MatMul(ref, m, x, 3) })
	layout := "row-major"
	if prepacked {
		layout = "prepacked"
	}
	check := func(what string, mm *Matrix) {
		t.Helper()
		got := make([]float32, 3*rows)
		for n := 1; n <= 3; n++ {
			for _, threads := range []int{1, 2} {
				SetThreads(threads)
				MatMul(got, mm, x, n)
				for j := 0; j < n*rows; j++ {
					if math.Float32bits(got[j]) != math.Float32bits(ref[j]) {
						t.Fatalf("%v %s, %s, %d tokens, %d threads: output %d = %g, want %g", m.Type, layout, what, n, threads, j, got[j], ref[j])
					}
				}
			}
		}
	}
	fresh := func() *Matrix {
		if prepacked {
			return prepackedOf(t, m)
		}
		c, err := NewRaw(m.Type, rows, cols, m.Data)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	size, _ := m.packGroup()
	gb := size * m.RowBytes()
	whole := int64(rows / size * gb)
	// Step by step.
	mm := fresh()
	stepped, resume, quit := make(chan int64), make(chan struct{}), make(chan struct{})
	moveStep = func() {
		select {
		case stepped <- mm.ownUpTo.Load():
			select {
			case <-resume:
			case <-quit:
			}
		case <-quit:
		}
	}
	defer func() { close(quit); WaitPacking(); moveStep = nil }() // lets a held mover go if a check failed
	check("before the move", mm)                                  // queues it
	steps := 0
	for upTo := int64(0); upTo < whole; steps++ {
		upTo = <-stepped
		check(fmt.Sprintf("%d of %d bytes moved", upTo, whole), mm)
		resume <- struct{}{}
	}
	WaitPacking()
	moveStep = nil
	per := max(1, releaseBytes/gb) // groups a step
	if want := (rows/size + per - 1) / per; steps != want || steps < 3 {
		t.Fatalf("%v %s: the move took %d steps, want %d (and 3 or more)", m.Type, layout, steps, want)
	}
	if p := mm.packed.Load(); p == nil || len(*p) != int(whole) || &(*p)[0] == &mm.Data[0] {
		t.Fatalf("%v %s: no packed rows of their own after the move", m.Type, layout)
	}
	check("moved", mm)
	// Free-running, from several goroutines, the pages counted.
	for round := 0; round < 3; round++ {
		mm := fresh()
		var released atomic.Int64
		mm.SetDataRelease(func(b []byte) { released.Add(int64(len(b))) })
		var wg sync.WaitGroup
		for w := 0; w < 3; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got := make([]float32, 2*rows)
				for i := 0; i < 12; i++ {
					n := 1 + (i+w)%2
					MatMul(got, mm, x, n)
					for j := 0; j < n*rows; j++ {
						if math.Float32bits(got[j]) != math.Float32bits(ref[j]) {
							t.Errorf("%v %s, round %d, goroutine %d, product %d: output %d = %g, want %g", m.Type, layout, round, w, i, j, got[j], ref[j])
							return
						}
					}
				}
			}()
		}
		wg.Wait()
		WaitPacking()
		if t.Failed() {
			return
		}
		// Each moved byte once, then once more when the copy is done:
		// those of a prepacked matrix, all of a row-major one's Data.
		want := 2 * whole
		if !prepacked {
			want = whole + int64(len(mm.Data))
		}
		if released.Load() != want {
			t.Fatalf("%v %s, round %d: %d bytes let go, want %d", m.Type, layout, round, released.Load(), want)
		}
	}
}
