package tensor

import (
	"bytes"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"
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
					// mapped pages of the packed groups.
					waitMoves()
					if got, want := released.Load(), int64(rows/packRows*packRows*m.RowBytes()); got != want {
						t.Fatalf("%v %d×%d, %s: %d bytes of Data let go, want %d (reads packed: %v)", typ, rows, cols, levelNames[l], got, want, reads)
					}
					if reads && rows >= packRows {
						p := fresh.packedRows()
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

// TestPrepackedWhileMoving computes products of a prepacked matrix while
// its packed rows are being copied into memory of their own (the groups
// copied so far read from the copy, the rest from the prepacked bytes,
// whose pages are let go as they are copied): every product equals the
// row-major matrix's, bit for bit.
func TestPrepackedWhileMoving(t *testing.T) {
	if !ReadsPacked(Q8_0) {
		t.Skipf("the %s level reads no packed Q8_0 rows", Kernels())
	}
	rng := rand.New(rand.NewPCG(13, 14))
	const rows, cols = 40 * packRows, 4096 // steps of 3 groups: 14 steps
	base, _ := NewF32(rows, cols, randVec(rng, rows*cols))
	m, _ := base.Convert(Q8_0)
	x := randVec(rng, 2*cols)
	ref := make([]float32, 2*rows)
	atLevel(levelPortable, func() { MatMul(ref, m, x, 2) })
	for round := 0; round < 3; round++ {
		pm := prepackedOf(t, m)
		var released atomic.Int64
		pm.SetDataRelease(func(b []byte) { released.Add(int64(len(b))) })
		got := make([]float32, 2*rows)
		for i := 0; i < 40; i++ {
			MatMul(got, pm, x, 1+i%2)
			for j := 0; j < (1+i%2)*rows; j++ {
				if math.Float32bits(got[j]) != math.Float32bits(ref[j]) {
					t.Fatalf("round %d, product %d: output %d = %g, want %g", round, i, j, got[j], ref[j])
				}
			}
		}
		waitMoves()
		if released.Load() != int64(len(pm.Data)) {
			t.Fatalf("round %d: %d bytes let go, want %d", round, released.Load(), len(pm.Data))
		}
	}
}
