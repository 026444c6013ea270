package tensor

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// TestQ4KLayout dequantizes a hand-built Q4_K super-block and checks every
// element against the layout of GGML's dequantize_row_q4_K, written out
// independently: 6-bit scales and mins packed in 12 bytes, element e of
// group i = e/64 taken from the low (e%64 < 32) or high nibble of
// qs[32i + e%32], value d·sc·q − dmin·m with sub-block j = e/32.
func TestQ4KLayout(t *testing.T) {
	blk := make([]byte, q4KBytes)
	binary.LittleEndian.PutUint16(blk[0:], F32ToF16(1.0))
	binary.LittleEndian.PutUint16(blk[2:], F32ToF16(0.5))
	// sc0..3 = 1,2,3,4 and m0..3 = 5,6,7,8 in the low 6 bits; the high two
	// bits of bytes 0..7 carry the high bits of sc4..7 and m4..7.
	copy(blk[4:], []byte{1 | 1<<6, 2, 3, 4 | 2<<6, 5, 6 | 3<<6, 7, 8, 0x21, 0x43, 0x65, 0x87})
	sc := [8]float32{1, 2, 3, 4, 0x1 | 1<<4, 0x3, 0x5, 0x7 | 2<<4}
	mn := [8]float32{5, 6, 7, 8, 0x2, 0x4 | 3<<4, 0x6, 0x8}
	for l := 0; l < 128; l++ {
		blk[16+l] = byte(l%16) | byte(15-(l*7)%16)<<4
	}
	y := make([]float32, QKK)
	DequantizeRow(y, Q4_K, blk)
	for e := 0; e < QKK; e++ {
		g, l, j := e/64, e%32, e/32
		b := blk[16+32*g+l]
		q := b & 0xF
		if e%64 >= 32 {
			q = b >> 4
		}
		want := 1.0*sc[j]*float32(q) - 0.5*mn[j]
		if y[e] != want {
			t.Fatalf("element %d: %g, want %g", e, y[e], want)
		}
	}
}

// TestQ6KLayout does the same for Q6_K: halves of 128 elements; within a
// half, element 32·k + l (k < 4) takes the low or high nibble of ql and a
// 2-bit field of qh as GGML's dequantize_row_q6_K does, with the int8
// scale of its 16-element sub-block.
func TestQ6KLayout(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	blk := make([]byte, q6KBytes)
	for i := 0; i < 192; i++ {
		blk[i] = byte(rng.UintN(256))
	}
	for i := 0; i < 16; i++ {
		blk[192+i] = byte(int8(rng.IntN(255) - 127))
	}
	binary.LittleEndian.PutUint16(blk[208:], F32ToF16(0.25))
	y := make([]float32, QKK)
	DequantizeRow(y, Q6_K, blk)
	for e := 0; e < QKK; e++ {
		n, r := e/128, e%128
		k, l := r/32, r%32
		ql := blk[64*n:]
		qh := blk[128+32*n:]
		var lo byte
		switch k {
		case 0:
			lo = ql[l] & 0xF
		case 1:
			lo = ql[l+32] & 0xF
		case 2:
			lo = ql[l] >> 4
		case 3:
			lo = ql[l+32] >> 4
		}
		hi := (qh[l] >> (2 * k)) & 3
		code := int(lo|hi<<4) - 32
		scale := int8(blk[192+8*n+l/16+2*k])
		want := float32(0.25*float32(scale)) * float32(code)
		if y[e] != want {
			t.Fatalf("element %d: %g, want %g", e, y[e], want)
		}
	}
}

// randomKQuant returns a rows×(nb·256) matrix of type typ (Q4_K or Q6_K)
// with random codes and scales and small random f16 super-block scales.
func randomKQuant(t testing.TB, rng *rand.Rand, typ DType, rows, nb int) *Matrix {
	bb := typ.BlockBytes()
	data := make([]byte, rows*nb*bb)
	for i := range data {
		data[i] = byte(rng.UintN(256))
	}
	for b := 0; b < rows*nb; b++ {
		blk := data[b*bb : (b+1)*bb]
		if typ == Q4_K {
			binary.LittleEndian.PutUint16(blk, F32ToF16(0.01+0.01*rng.Float32()))
			binary.LittleEndian.PutUint16(blk[2:], F32ToF16(0.02*rng.Float32()))
		} else {
			binary.LittleEndian.PutUint16(blk[208:], F32ToF16(0.01+0.01*rng.Float32()))
		}
	}
	m, err := NewRaw(typ, rows, nb*QKK, data)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestKQuantDot bounds the error of the K-quant integer products against
// the float64 dot of the dequantized row: quantizing x to 8 bits moves each
// element by at most half a step of its super-block (dx/2), so the error is
// at most Σ_b (dx_b/2)·Σ|w| over the super-block, plus float32 rounding.
func TestKQuantDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, typ := range []DType{Q4_K, Q6_K} {
		const rows, nb = 20, 3
		m := randomKQuant(t, rng, typ, rows, nb)
		x := randVec(rng, nb*QKK)
		acts := quantizeActsK(nil, x)
		row := make([]float32, m.Cols)
		var worst float64
		for r := 0; r < rows; r++ {
			m.Row(row, r)
			var bound, absSum float64
			for b := 0; b < nb; b++ {
				var s float64
				for j := b * QKK; j < (b+1)*QKK; j++ {
					s += math.Abs(float64(row[j]))
					absSum += math.Abs(float64(row[j]) * float64(x[j]))
				}
				bound += float64(acts[b].d) / 2 * s
			}
			bound += 1e-5 * absSum
			got, ref := float64(m.RowDot(r, x)), m.RowDotRef(r, x)
			if e := math.Abs(got - ref); e > bound {
				t.Errorf("%v row %d: %g, float64 reference %g: error %g > bound %g", typ, r, got, ref, e, bound)
			} else {
				worst = max(worst, e/bound)
			}
		}
		t.Logf("%v: largest error %.2f of its bound", typ, worst)
		if _, err := m.Convert(typ); err == nil {
			t.Errorf("converting to %v should be refused", typ)
		}
	}
}
