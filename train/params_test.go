package train

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hlmproject/hlm/tensor"
)

func TestShapeCount(t *testing.T) {
	for _, tied := range []bool{false, true} {
		s := tinyShape(tied)
		p, err := NewParams[float32](s)
		if err != nil {
			t.Fatal(err)
		}
		if uint64(len(p.Data)) != s.count() {
			t.Errorf("tied=%v: layout has %d parameters, count says %d", tied, len(p.Data), s.count())
		}
	}
}

func TestTranspose(t *testing.T) {
	for _, sh := range [][2]int{{1, 1}, {3, 5}, {8, 8}, {16, 24}, {9, 17}, {64, 7}, {130, 66}} {
		rows, cols := sh[0], sh[1]
		a := make([]float32, rows*cols)
		for i := range a {
			a[i] = float32(i)
		}
		got := transpose(nil, a, rows, cols)
		for r := range rows {
			for c := range cols {
				if got[c*rows+r] != a[r*cols+c] {
					t.Fatalf("%d×%d: element (%d,%d) = %v, want %v", rows, cols, r, c, got[c*rows+r], a[r*cols+c])
				}
			}
		}
	}
}

// TestVectorExpSameBits: the vectorised exponentials of the softmax
// numerators and the SwiGLU sigmoids give the bits of tensor.Exp one value
// at a time, including saturated, infinite and NaN inputs.
func TestVectorExpSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	special := []float32{0, -0, 1e-30, -708, -709, -800, 700, 80, -80, float32(math.Inf(-1)), float32(math.Inf(1)), float32(math.NaN())}
	for trial := range 200 {
		n := 1 + rng.IntN(70)
		g := make([]float32, n)
		for i := range g {
			g[i] = float32(rng.NormFloat64() * 10)
			if trial%3 == 0 && rng.IntN(4) == 0 {
				g[i] = special[rng.IntN(len(special))]
			}
		}
		// Sigmoids.
		ws := make([]float64, n)
		sg := make([]float32, n)
		sigmoids(sg, g, ws)
		for i, v := range g {
			want := float32(1 / (1 + tensor.Exp(-float64(v))))
			if math.Float32bits(sg[i]) != math.Float32bits(want) {
				t.Fatalf("trial %d: sigmoid(%v) = %v, want %v", trial, v, sg[i], want)
			}
		}
		// Softmax numerators against the row maximum.
		mx := float32(math.Inf(-1))
		for _, v := range g {
			mx = max(mx, v)
		}
		p := append([]float32(nil), g...)
		sum := softmaxNum(p, mx, ws)
		var wantSum float32
		for i, v := range g {
			e := float32(tensor.Exp(float64(v - mx)))
			wantSum += e
			if math.Float32bits(p[i]) != math.Float32bits(e) && !(e != e && p[i] != p[i]) {
				t.Fatalf("trial %d: e^(%v − %v) = %v, want %v", trial, v, mx, p[i], e)
			}
		}
		if math.Float32bits(sum) != math.Float32bits(wantSum) && !(sum != sum && wantSum != wantSum) {
			t.Fatalf("trial %d: sum %v, want %v", trial, sum, wantSum)
		}
	}
}
