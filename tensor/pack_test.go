package tensor

import (
	"bytes"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestPackBlocks checks the packed layout against its definition: every
// row of every whole group unpacks to its Data, the packed copy is the size
// of the groups' rows, and it is made once.
func TestPackBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, typ := range []DType{Q8_0, Q4_0} {
		for _, shape := range [][2]int{{16, 32}, {17, 64}, {40, 96}, {64, 768}} {
			rows, cols := shape[0], shape[1]
			base, _ := NewF32(rows, cols, randVec(rng, rows*cols))
			m, err := base.Convert(typ)
			if err != nil {
				t.Fatal(err)
			}
			p := m.packedRows()
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
			if &m.packedRows()[0] != &p[0] {
				t.Fatalf("%v %d×%d: a second call packed again", typ, rows, cols)
			}
		}
	}
	small, _ := NewF32(15, 32, randVec(rng, 15*32))
	for _, typ := range []DType{Q8_0, Q4_0, F16} {
		q, _ := small.Convert(typ)
		if q.packedRows() != nil {
			t.Fatalf("%v: a matrix of fewer than 16 rows was packed", typ)
		}
	}
	big, _ := NewF32(16, 32, randVec(rng, 16*32))
	if f16, _ := big.Convert(F16); f16.packedRows() != nil {
		t.Fatal("an F16 matrix was packed")
	}
}

// BenchmarkPackBlocks measures packing (the first product's extra pass) of
// a 4096 × 4096 matrix (Llama-2-7B's attention shape), in MB/s of its
// storage.
//
//	go test -run='^$' -bench=PackBlocks ./tensor
func BenchmarkPackBlocks(b *testing.B) {
	const rows, cols = 4096, 4096
	for _, typ := range []DType{Q8_0, Q4_0} {
		data := make([]byte, rows*cols/QK*typ.BlockBytes())
		for i := range data {
			data[i] = byte(i * 7)
		}
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				packBlocks(data, typ, rows, cols)
			}
		})
	}
}

// TestPackConcurrentFirstUse: products that start together on a matrix not
// packed yet (each may pack; one copy wins) all give the portable code's
// bits. Run with -race to check the handover.
func TestPackConcurrentFirstUse(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const rows, cols, n, workers = 48, 128, 3, 4
	base, _ := NewF32(rows, cols, randVec(rng, rows*cols))
	x := randVec(rng, n*cols)
	for _, typ := range []DType{Q8_0, Q4_0} {
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

// TestReleaseData: a matrix lets its Data's pages go (SetDataRelease) once
// its packed copy exists, again on ReleaseData, and never while it
// computes from Data.
func TestReleaseData(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, typ := range []DType{Q8_0, Q4_0, F16} {
		for _, rows := range []int{8, 32} {
			base, _ := NewF32(rows, 64, randVec(rng, rows*64))
			m, err := base.Convert(typ)
			if err != nil {
				t.Fatal(err)
			}
			calls := 0
			m.SetDataRelease(func(b []byte) {
				if &b[0] != &m.Data[0] || len(b) != len(m.Data) {
					t.Fatalf("%v: released %d bytes that are not Data", typ, len(b))
				}
				calls++
			})
			m.ReleaseData() // nothing packed yet
			out := make([]float32, 2*rows)
			MatMul(out, m, randVec(rng, 2*64), 2)
			packs := level == levelAVX512 && typ != F16 && rows >= packRows
			if want := map[bool]int{true: 1, false: 0}[packs]; calls != want {
				t.Fatalf("%v %d rows: %d releases after the first product, want %d", typ, rows, calls, want)
			}
			m.ReleaseData()
			if want := map[bool]int{true: 2, false: 0}[packs]; calls != want {
				t.Fatalf("%v %d rows: %d releases after ReleaseData, want %d", typ, rows, calls, want)
			}
		}
	}
}
