package tensor

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

func readQ5Golden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "q5_0", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestQ5_0Golden holds the Q5_0 layout to llama.cpp's (testdata/q5_0,
// make.sh): hlm dequantizes gguf-py's blocks and llama-quantize's blocks
// to gguf-py's values, and quantizes gguf-py's inputs to its bytes, bit
// for bit.
func TestQ5_0Golden(t *testing.T) {
	for _, stem := range []string{"ggufpy", "llamaquantize"} {
		blocks := readQ5Golden(t, stem+".q5_0")
		want := BytesToF32(readQ5Golden(t, stem+".f32"))
		if len(blocks)%q5Bytes != 0 || len(blocks)/q5Bytes*QK != len(want) {
			t.Fatalf("%s: %d bytes of blocks for %d values", stem, len(blocks), len(want))
		}
		got := make([]float32, len(want))
		DequantizeRow(got, Q5_0, blocks)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s: element %d (block %d) = %g, gguf-py %g", stem, i, i/QK, got[i], want[i])
			}
		}
	}
	src := BytesToF32(readQ5Golden(t, "ggufpy_source.f32"))
	want := readQ5Golden(t, "ggufpy.q5_0")
	got := QuantizeQ5_0(nil, src)
	for b := 0; b < len(want)/q5Bytes; b++ {
		if g, w := got[b*q5Bytes:(b+1)*q5Bytes], want[b*q5Bytes:(b+1)*q5Bytes]; !bytes.Equal(g, w) {
			t.Fatalf("QuantizeQ5_0 block %d:\n got %x\nwant %x (gguf-py)", b, g, w)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("QuantizeQ5_0: %d bytes, gguf-py %d", len(got), len(want))
	}
}

// TestQ5_0Layout pins the element order of a hand-made block: code j is
// byte j's low nibble (j < 16) or byte j−16's high nibble, its bit 4 bit j
// of qh.
func TestQ5_0Layout(t *testing.T) {
	blk := make([]byte, q5Bytes)
	binary.LittleEndian.PutUint16(blk, F32ToF16(0.5))
	want := make([]float32, QK)
	var qh uint32
	for j := 0; j < QK; j++ {
		code := (7*j + 3) % 32
		want[j] = 0.5 * float32(code-16)
		qh |= uint32(code>>4) << j
		if j < QK/2 {
			blk[6+j] |= byte(code & 15)
		} else {
			blk[6+j-QK/2] |= byte(code&15) << 4
		}
	}
	binary.LittleEndian.PutUint32(blk[2:], qh)
	got := make([]float32, QK)
	DequantizeRow(got, Q5_0, blk)
	for j := range want {
		if got[j] != want[j] {
			t.Fatalf("element %d = %g, want %g", j, got[j], want[j])
		}
	}
}

// randomQ5 is a rows × nb blocks Q5_0 matrix of random codes, with scales
// of both signs and magnitudes 0.01…0.02.
func randomQ5(t testing.TB, rng *rand.Rand, rows, nb int) *Matrix {
	data := make([]byte, rows*nb*q5Bytes)
	for i := range data {
		data[i] = byte(rng.UintN(256))
	}
	for b := 0; b < rows*nb; b++ {
		d := 0.01 + 0.01*rng.Float32()
		if b%3 == 0 {
			d = -d
		}
		binary.LittleEndian.PutUint16(data[b*q5Bytes:], F32ToF16(d))
	}
	m, err := NewRaw(Q5_0, rows, nb*QK, data)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestQ5_0Levels: every level this CPU runs gives the portable product's
// bits for Q5_0 matrices of random codes (every code and high bit
// pattern), for 1…9 tokens (whole tiles, partial ones, token groups), on 1
// and 3 threads; RowDot gives the same bits; a product shared with a Q8_0
// matrix of the same input (one quantization) changes nothing.
func TestQ5_0Levels(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	defer SetThreads(0)
	for _, nb := range []int{1, 2, 3, 9} {
		for _, rows := range []int{1, 3, 4, 5, 9, 13, 40} {
			m := randomQ5(t, rng, rows, nb)
			cols := m.Cols
			const n = 9
			x := randVec(rng, n*cols)
			specialBlocks(x, QK)
			want := make([]float32, n*rows)
			atLevel(levelPortable, func() { MatMul(want, m, x, n) })
			for _, l := range levels() {
				for _, nt := range []int{1, 2, 3, 4, 5, 8, 9} {
					checkLevels(t, m, x, nt, want, l, 1, 3)
				}
				atLevel(l, func() {
					for r := 0; r < rows; r++ {
						if got := m.RowDot(r, x[cols:2*cols]); math.Float32bits(got) != math.Float32bits(want[rows+r]) {
							t.Fatalf("%s: RowDot row %d = %g, MatMul %g", levelNames[l], r, got, want[rows+r])
						}
					}
					q8, _ := NewF32(5, cols, randVec(rng, 5*cols))
					q8, _ = q8.Convert(Q8_0)
					o8, o5 := make([]float32, n*q8.Rows), make([]float32, n*rows)
					MatMuls([][]float32{o8, o5}, []*Matrix{q8, m}, x, n)
					for i := range o5 {
						if math.Float32bits(o5[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s: MatMuls with a Q8_0 matrix: element %d = %g, alone %g", levelNames[l], i, o5[i], want[i])
						}
					}
				})
			}
		}
	}
}

// TestQ5_0DotAccuracy bounds the Q5_0 product against the float64 dot of
// the dequantized rows, as TestQuantDotAccuracy does for Q8_0 and Q4_0:
// the inputs' 8-bit quantization moves each by at most half a step of its
// block (dx/2), so |error| ≤ Σ_b (dx_b/2)·Σ|w| plus 1e-6 of Σ|w·x| for the
// float32 sums.
func TestQ5_0DotAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 54))
	const rows, nb = 50, 8
	m := randomQ5(t, rng, rows, nb)
	x := randVec(rng, nb*QK)
	acts := quantizeActs(nil, x, Q8_0)
	row := make([]float32, m.Cols)
	var worst float64
	for r := 0; r < rows; r++ {
		m.Row(row, r)
		var bound, absSum float64
		for b := 0; b < nb; b++ {
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
			t.Errorf("row %d: %g, float64 reference %g: error %g > bound %g", r, got, ref, e, bound)
		} else {
			worst = max(worst, e/bound)
		}
	}
	t.Logf("Q5_0: largest error %.2f of its bound", worst)
}

// TestQ5_0Sizes: rows of a whole number of blocks only, and the byte count
// must match (a truncated tensor is an error, not a panic).
func TestQ5_0Sizes(t *testing.T) {
	for _, tc := range []struct {
		rows, cols, bytes int
		ok                bool
	}{
		{2, 64, 2 * 2 * q5Bytes, true},
		{2, 64, 2*2*q5Bytes - 1, false},
		{2, 48, 2 * 2 * q5Bytes, false},
		{0, 32, 0, true},
	} {
		_, err := NewRaw(Q5_0, tc.rows, tc.cols, make([]byte, tc.bytes))
		if (err == nil) != tc.ok {
			t.Errorf("NewRaw(Q5_0, %d, %d, %d bytes): err = %v, want ok %v", tc.rows, tc.cols, tc.bytes, err, tc.ok)
		}
	}
	if got := fmt.Sprint(Q5_0, Q5_0.BlockSize(), Q5_0.BlockBytes()); got != "Q5_0 32 22" {
		t.Errorf("Q5_0, block size, bytes = %s", got)
	}
}

// BenchmarkQ5_0 is the Q5_0 product at Gemma 3 1B's shape of the query
// projection (1152 → 1024) for 1, 4, 8 and 16 tokens at each level, with
// Q4_0 and Q8_0 of the same shape for comparison; at the levels that pack
// rows (pack.go), also with the row-major tiles (rowmajor).
//
//	go test -run='^$' -bench=Q5_0 -benchtime=200x ./tensor
func BenchmarkQ5_0(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const rows, cols = 1024, 1152
	base, _ := NewF32(rows, cols, randVec(rng, rows*cols))
	for _, typ := range []DType{Q5_0, Q4_0, Q8_0} {
		m, _ := base.Convert(typ)
		for _, l := range levels() {
			for _, n := range []int{1, 4, 8, 16} {
				x := randVec(rng, n*cols)
				out := make([]float32, n*rows)
				b.Run(fmt.Sprintf("%v/%s/n=%d", typ, levelNames[l], n), func(b *testing.B) {
					atLevel(l, func() { benchMatMul1(b, out, m, x, n) })
				})
				if ks := kernelSets[l]; ks != nil && ks.q5packed[1] != nil {
					b.Run(fmt.Sprintf("%v/%s/rowmajor/n=%d", typ, levelNames[l], n), func(b *testing.B) {
						packing = false
						defer func() { packing = true }()
						atLevel(l, func() { benchMatMul1(b, out, m, x, n) })
					})
				}
			}
		}
	}
}
