package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

// TestWhileMoving computes products of a matrix while its packed rows
// are made behind them, at each step of the move (moveStep holds the
// mover there), and again from several goroutines while it runs free:
// the groups made so far are read from the new rows, the others with the
// row-major tiles, whose pages are let go as they are packed; every
// product equals the portable code's, bit for bit, for 1 to 3 tokens.
// Q8_0 and Q5_0 at this machine's level, Q4_K and Q6_K rows too long
// for one token's input to stay in L1 at avx512-zen4, which packs those,
// and Q4_K and Q6_K rows of a mapped file (here: of a matrix with a
// release function) at avx512-zen5, which copies them as they are.
func TestWhileMoving(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	if ks := kernels(); ks != nil && ks.readsPacked(Q8_0) && q5Sets[level] != nil && ks.readsPacked(Q5_0) {
		const rows, cols = 40*packRows + 5, 4096 // 8–14 steps of 3–5 groups, and a tail
		for _, typ := range []DType{Q8_0, Q5_0} {
			base, _ := NewF32(rows, cols, randVec(rng, rows*cols))
			m, _ := base.Convert(typ)
			checkWhileMoving(t, rng, m, layoutBlocks)
		}
	} else {
		t.Logf("the %s level reads no packed Q8_0 rows", Kernels())
	}
	if ks := kernelSets[levelAVX512Zen4]; levelHere(levelAVX512Zen4) && ks != nil && ks.kPacked != nil {
		nb := int(kNarrowBytes/unsafe.Sizeof(actBlockK{})) + 1 // the narrowest rows packed
		for _, typ := range []DType{Q4_K, Q6_K} {
			m := randomKQuant(t, rng, typ, 24*kPackRows+3, nb)
			atLevel(levelAVX512Zen4, func() { checkWhileMoving(t, rng, m, layoutKGroups) })
		}
	} else {
		t.Logf("no avx512-zen4 level here: packed K-quant rows not checked")
	}
	if ks := kernelSets[levelAVX512Zen5]; levelHere(levelAVX512Zen5) && ks != nil && ks.kCopy {
		defer func(min int) { copyMin = min }(copyMin)
		copyMin = 0 // a small matrix, moved in a few steps
		for _, typ := range []DType{Q4_K, Q6_K} {
			m := randomKQuant(t, rng, typ, 3*kPackRows*40+3, 7) // 3–4 steps
			atLevel(levelAVX512Zen5, func() { checkWhileMoving(t, rng, m, layoutRows) })
		}
	} else {
		t.Logf("no avx512-zen5 level here: copied K-quant rows not checked")
	}
}

// checkWhileMoving is TestWhileMoving for one matrix m, whose copy the
// level makes in layout l.
func checkWhileMoving(t *testing.T, rng *rand.Rand, m *Matrix, l copyLayout) {
	t.Helper()
	defer SetThreads(Threads())
	rows, cols := m.Rows, m.Cols
	x := randVec(rng, 3*cols)
	ref := make([]float32, 3*rows)
	atLevel(levelPortable, func() { MatMul(ref, m, x, 3) })
	check := func(what string, mm *Matrix) {
		t.Helper()
		got := make([]float32, 3*rows)
		for n := 1; n <= 3; n++ {
			for _, threads := range []int{1, 2} {
				SetThreads(threads)
				MatMul(got, mm, x, n)
				for j := 0; j < n*rows; j++ {
					if math.Float32bits(got[j]) != math.Float32bits(ref[j]) {
						t.Fatalf("%v, %s, %d tokens, %d threads: output %d = %g, want %g", m.Type, what, n, threads, j, got[j], ref[j])
					}
				}
			}
		}
	}
	fresh := func() *Matrix {
		c, err := NewRaw(m.Type, rows, cols, m.Data)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDataRelease(func([]byte) {}) // as a mapped file's (layoutRows copies only those)
		return c
	}
	size, _ := m.packGroup(l)
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
		t.Fatalf("%v: the move took %d steps, want %d (and 3 or more)", m.Type, steps, want)
	}
	if p := mm.packed.Load(); p == nil || len(*p) != int(whole) || &(*p)[0] == &mm.Data[0] || copyLayout(mm.layout.Load()) != l {
		t.Fatalf("%v: no rows of their own in layout %d after the move", m.Type, l)
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
							t.Errorf("%v, round %d, goroutine %d, product %d: output %d = %g, want %g", m.Type, round, w, i, j, got[j], ref[j])
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
		// Each packed byte once, then all of Data when the copy is done.
		want := whole + int64(len(mm.Data))
		if released.Load() != want {
			t.Fatalf("%v, round %d: %d bytes let go, want %d", m.Type, round, released.Load(), want)
		}
	}
}

// TestCopyLayoutsApart computes one matrix at the levels that copy its
// rows in different layouts (avx512-zen4 packs long K-quant rows in
// groups, avx512-zen5 copies a mapped file's as they are): the first
// level's copy is the matrix's only one, and every other level computes
// from Data, bit for bit as the portable code, in either order.
func TestCopyLayoutsApart(t *testing.T) {
	z4, z5 := kernelSets[levelAVX512Zen4], kernelSets[levelAVX512Zen5]
	if !levelHere(levelAVX512Zen4) || !levelHere(levelAVX512Zen5) || z4 == nil || z4.kPacked == nil || z5 == nil || !z5.kCopy {
		t.Skip("this machine lacks avx512-zen4 or avx512-zen5: no two copy layouts of one matrix to keep apart")
	}
	defer func(min int) { copyMin = min }(copyMin)
	copyMin = 0
	rng := rand.New(rand.NewPCG(15, 16))
	nb := int(kNarrowBytes/unsafe.Sizeof(actBlockK{})) + 1 // rows avx512-zen4 packs
	orders := []struct {
		first, then int
		want        copyLayout
	}{{levelAVX512Zen4, levelAVX512Zen5, layoutKGroups}, {levelAVX512Zen5, levelAVX512Zen4, layoutRows}}
	for _, typ := range []DType{Q4_K, Q6_K} {
		for _, o := range orders {
			m := randomKQuant(t, rng, typ, 4*kPackRows+3, nb)
			m.SetDataRelease(func([]byte) {})
			x := randVec(rng, 2*m.Cols)
			want, got := make([]float32, 2*m.Rows), make([]float32, 2*m.Rows)
			atLevel(levelPortable, func() { MatMul(want, m, x, 2) })
			for _, l := range []int{o.first, o.then, o.first, o.then} {
				for n := 1; n <= 2; n++ {
					atLevel(l, func() { MatMul(got, m, x, n) })
					for j := 0; j < n*m.Rows; j++ {
						if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
							t.Fatalf("%v, %s after %s, %d tokens: output %d = %g, want %g", typ, levelNames[l], levelNames[o.first], n, j, got[j], want[j])
						}
					}
				}
				WaitPacking()
			}
			if got := copyLayout(m.layout.Load()); got != o.want || m.packed.Load() == nil {
				t.Fatalf("%v, %s first: layout %d, want %d", typ, levelNames[o.first], got, o.want)
			}
		}
	}
}
