package tensor

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestPackQ4 checks the packed layout against its definition: every row of
// every whole group unpacks to its Data, and the packed copy is the size
// of the groups' rows.
func TestPackQ4(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, shape := range [][2]int{{16, 32}, {17, 64}, {40, 96}, {64, 768}} {
		rows, cols := shape[0], shape[1]
		base, _ := NewF32(rows, cols, randVec(rng, rows*cols))
		m, err := base.Convert(Q4_0)
		if err != nil {
			t.Fatal(err)
		}
		p := m.packedQ4()
		groups := rows / q4PackRows
		if len(p) != groups*q4PackRows*m.RowBytes() {
			t.Fatalf("%d×%d: %d packed bytes, want %d", rows, cols, len(p), groups*q4PackRows*m.RowBytes())
		}
		row := make([]byte, m.RowBytes())
		for r := 0; r < groups*q4PackRows; r++ {
			unpackQ4Row(row, p, r, cols/QK)
			if !bytes.Equal(row, m.row(r)) {
				t.Fatalf("%d×%d: row %d unpacks to %x, want %x", rows, cols, r, row, m.row(r))
			}
		}
		if &m.packedQ4()[0] != &p[0] {
			t.Fatalf("%d×%d: a second call packed again", rows, cols)
		}
	}
	small, _ := NewF32(15, 32, randVec(rng, 15*32))
	q, _ := small.Convert(Q4_0)
	if q.packedQ4() != nil {
		t.Fatal("a matrix of fewer than 16 rows was packed")
	}
}

// BenchmarkPackQ4 measures packing (the first product's extra pass) of a
// 4096 × 4096 Q4_0 matrix (Llama-2-7B's attention shape), in MB/s of Q4_0.
//
//	go test -run='^$' -bench=PackQ4 ./tensor
func BenchmarkPackQ4(b *testing.B) {
	const rows, cols = 4096, 4096
	data := make([]byte, rows*cols/QK*18)
	for i := range data {
		data[i] = byte(i * 7)
	}
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		packQ4(data, rows, cols)
	}
}
