package tensor

import (
	"bytes"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"unsafe"
)

// packedNow returns m's rows copied in layout l once they are made: it
// queues them behind the products and waits for them.
func packedNow(m *Matrix, l copyLayout) []byte {
	if p, _ := m.packedRows(l); p != nil {
		return p
	}
	WaitPacking()
	p, _ := m.packedRows(l)
	return p
}

// TestPackBlocks checks the packed layout against its definition: every
// row of every whole group unpacks to its Data, the packed copy is the size
// of the groups' rows, and it is made once, behind the first product.
func TestPackBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, typ := range []DType{Q8_0, Q4_0, Q5_0} {
		for _, shape := range [][2]int{{16, 32}, {17, 64}, {40, 96}, {64, 768}} {
			rows, cols := shape[0], shape[1]
			base, _ := NewF32(rows, cols, randVec(rng, rows*cols))
			m, err := base.Convert(typ)
			if err != nil {
				t.Fatal(err)
			}
			if p, _ := m.packedRows(layoutBlocks); p != nil {
				t.Fatalf("%v %d×%d: packed rows before they were made behind the products", typ, rows, cols)
			}
			p := packedNow(m, layoutBlocks)
			groups := rows / packRows
			if len(p) != groups*packRows*m.RowBytes() {
				t.Fatalf("%v %d×%d: %d packed bytes, want %d", typ, rows, cols, len(p), groups*packRows*m.RowBytes())
			}
			row := make([]byte, m.RowBytes())
			for r := 0; r < groups*packRows; r++ {
				unpackRow(row, p, typ, r, cols/QK)
				if !bytes.Equal(row, m.row(r)) {
					t.Fatalf("%v %d×%d: row %d unpacks to %x, want %x", typ, rows, cols, r, row, m.row(r))
				}
			}
			if again, _ := m.packedRows(layoutBlocks); &again[0] != &p[0] {
				t.Fatalf("%v %d×%d: a second call packed again", typ, rows, cols)
			}
		}
	}
	small, _ := NewF32(15, 32, randVec(rng, 15*32))
	for _, typ := range []DType{Q8_0, Q4_0, Q5_0, F16} {
		q, _ := small.Convert(typ)
		if packedNow(q, layoutBlocks) != nil {
			t.Fatalf("%v: a matrix of fewer than 16 rows was packed", typ)
		}
	}
	big, _ := NewF32(16, 32, randVec(rng, 16*32))
	if f16, _ := big.Convert(F16); packedNow(f16, layoutBlocks) != nil {
		t.Fatal("an F16 matrix was packed")
	}
}

// TestPackLarge packs copies of hugeMin bytes or more (on Linux mapped
// outside the Go heap, alloc_linux.go): the layout still unpacks to Data;
// a copy is given back when its matrix goes, and not before: after
// collections that free one matrix's copy, the other matrix's products
// still read theirs (an unmapped copy would crash them).
func TestPackLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const rows = 24 // one whole group of each layout, and a remainder
	large := func(typ DType) (*Matrix, int) {
		nb := hugeMin/rows/typ.BlockBytes() + 1
		if typ == Q8_0 {
			base, _ := NewF32(rows, nb*QK, randVec(rng, rows*nb*QK))
			m, _ := base.Convert(typ)
			return m, nb
		}
		return randomKQuant(t, rng, typ, rows, nb), nb
	}
	check := func(m *Matrix, nb int) {
		l := layoutKGroups
		if m.Type == Q8_0 {
			l = layoutBlocks
		}
		p := packedNow(m, l)
		row := make([]byte, m.RowBytes())
		for _, r := range []int{0, 7, 15} {
			if m.Type == Q8_0 {
				unpackRow(row, p, m.Type, r, nb)
			} else {
				unpackKRow(row, p, m.Type.BlockBytes(), r, nb)
			}
			if !bytes.Equal(row, m.row(r)) {
				t.Fatalf("%v: row %d of the large copy unpacks differently", m.Type, r)
			}
		}
	}
	check(large(Q8_0)) // dropped: its copy goes with it
	kept, nb := large(Q4_K)
	check(kept, nb)
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
	x := randVec(rng, kept.Cols)
	want, got := make([]float32, rows), make([]float32, rows)
	atLevel(levelPortable, func() { MatVec(want, kept, x) })
	MatVec(got, kept, x) // the packed copy where the level packs these rows
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("row %d after the collections: %g, want %g", i, got[i], want[i])
		}
	}
}

// BenchmarkPackBlocks measures packing (what the mover does behind the
// first products, moveGroups, without the new pages' zeroing) of a 4096 ×
// 4096 matrix (Llama-2-7B's attention shape) on one thread, in MB/s of
// its storage.
//
//	go test -run='^$' -bench=PackBlocks ./tensor
func BenchmarkPackBlocks(b *testing.B) {
	const rows, cols = 4096, 4096
	for _, typ := range []DType{Q8_0, Q4_0, Q5_0} {
		data := make([]byte, rows*cols/QK*typ.BlockBytes())
		for i := range data {
			data[i] = byte(i * 7)
		}
		out := make([]byte, len(data))
		gb := packRows * cols / QK * typ.BlockBytes()
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				for g := 0; g < len(data); g += gb {
					packBlockGroup(out[g:g+gb], data[g:g+gb], typ, cols/QK)
				}
			}
		})
	}
}

// TestPackConcurrentFirstUse: products that start together on a matrix not
// packed yet (one queues its packing, all compute the groups not packed
// yet with the row-major tiles) all give the portable code's bits. Run
// with -race to check the handover.
func TestPackConcurrentFirstUse(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const rows, cols, n, workers = 48, 128, 3, 4
	base, _ := NewF32(rows, cols, randVec(rng, rows*cols))
	x := randVec(rng, n*cols)
	for _, typ := range []DType{Q8_0, Q4_0, Q5_0} {
		m, err := base.Convert(typ)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float32, n*rows)
		atLevel(levelPortable, func() { MatMul(want, m, x, n) })
		outs := make([][]float32, workers)
		var wg sync.WaitGroup
		for w := range outs {
			outs[w] = make([]float32, n*rows)
			wg.Add(1)
			go func() {
				defer wg.Done()
				MatMul(outs[w], m, x, n)
			}()
		}
		wg.Wait()
		for w, got := range outs {
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%v worker %d: out[%d] = %g, portable %g", typ, w, i, got[i], want[i])
				}
			}
		}
	}
}

// TestReleaseData: a matrix lets its Data's pages go (SetDataRelease) as
// its packed copy is made behind the first product — each packed row once, in pieces of at least
// releaseBytes, so that the copy never doubles the matrix —, all of Data
// once the copy exists, again on ReleaseData, and never while it computes
// from Data.
func TestReleaseData(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	defer SetThreads(0)
	for _, threads := range []int{1, 2} {
		SetThreads(threads)
		for _, typ := range []DType{Q8_0, Q4_0, Q5_0, F16} {
			for _, sh := range []struct{ rows, cols int }{{8, 64}, {32, 64}, {16*41 + 5, 2048}} {
				rows, cols := sh.rows, sh.cols
				base, _ := NewF32(rows, cols, randVec(rng, rows*cols))
				m, err := base.Convert(typ)
				if err != nil {
					t.Fatal(err)
				}
				group := packRows * m.RowBytes()
				packed := rows / packRows * group // the bytes of whole groups
				var mu sync.Mutex
				calls, covered := 0, make([]int, len(m.Data))
				m.SetDataRelease(func(b []byte) {
					mu.Lock()
					defer mu.Unlock()
					off := int(uintptr(unsafe.Pointer(&b[0])) - uintptr(unsafe.Pointer(&m.Data[0])))
					if off < 0 || off+len(b) > len(m.Data) {
						t.Fatalf("%v: released %d bytes at %d, not in Data", typ, len(b), off)
					}
					if len(b) != len(m.Data) && (off%group != 0 || len(b)%group != 0) {
						t.Fatalf("%v: released bytes [%d, %d), not whole groups", typ, off, off+len(b))
					}
					calls++
					for i := off; i < off+len(b); i++ {
						covered[i]++
					}
				})
				check := func(when string, inPacked, rest int) {
					t.Helper()
					for i, c := range covered {
						want := rest
						if i < packed {
							want = inPacked
						}
						if c != want {
							t.Fatalf("%v %d rows, %d threads, %s: byte %d released %d times, want %d", typ, rows, threads, when, i, c, want)
						}
					}
				}
				m.ReleaseData() // nothing packed yet
				check("before any product", 0, 0)
				out := make([]float32, 2*rows)
				MatMul(out, m, randVec(rng, 2*cols), 2)
				WaitPacking()
				if !hasAVX512() || typ == F16 || rows < packRows {
					check("not packed", 0, 0)
					continue
				}
				// Each packed byte once while packing, then all of Data.
				check("after the first product", 2, 1)
				if big := packed >= 4*releaseBytes; big && calls < packed/releaseBytes/2 {
					t.Fatalf("%v %d rows: %d releases while packing %d bytes", typ, rows, calls, packed)
				}
				m.ReleaseData()
				check("after ReleaseData", 3, 2)
			}
		}
	}
}
