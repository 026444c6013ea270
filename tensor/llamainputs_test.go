package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLlamaInputsBlocks: with SetLlamaInputs, a block of 32 inputs gets
// llama.cpp's float16 scale and codes round(x·127/max|x|), and a
// super-block of 256 llama.cpp's Q8_K: iscale = −127/m with m the input of
// largest magnitude, d = 1/iscale; both represent x to within half a step.
func TestLlamaInputsBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	x := randVec(rng, QKK)
	x[5] = 10 // the largest magnitude, positive: the Q8_K codes are those of −x
	var a actBlock
	quantizeBlockLlama(&a, x[:QK], 128)
	if want := F16ToF32(F32ToF16(10.0 / 127)); a.d != want {
		t.Errorf("Q8_0 scale %g, want float16(10/127) = %g", a.d, want)
	}
	if a.q[5] != 127 {
		t.Errorf("Q8_0 code of the largest input %d, want 127", a.q[5])
	}
	var k actBlockK
	quantizeBlockKLlama(&k, x)
	if want := float32(1 / (float32(-127) / 10)); k.d != want || k.q[5] != -127 {
		t.Errorf("Q8_K scale %g, code of the largest input %d; want %g and −127", k.d, k.q[5], want)
	}
	var s32 int32
	for j, v := range x {
		if e := math.Abs(float64(k.d*float32(k.q[j]) - v)); e > math.Abs(float64(k.d))/2*1.0001 {
			t.Fatalf("Q8_K element %d: %g represented as %g", j, v, k.d*float32(k.q[j]))
		}
		if j < 32 {
			s32 += int32(k.q[j])
		}
	}
	if k.bs32[0] != s32 {
		t.Errorf("Q8_K sum of the first 32 codes %d, want %d", k.bs32[0], s32)
	}
	var zero actBlockK
	quantizeBlockKLlama(&zero, make([]float32, QKK))
	if zero.d != 0 || zero.bs32 != [8]int32{} {
		t.Errorf("zero super-block: d %g, sums %v", zero.d, zero.bs32)
	}
}

// TestLlamaInputsLevels: with llama.cpp's input quantization every level
// still gives the portable product's bits, for every integer weight type,
// 1…9 tokens and 1 or 3 threads (the K-quant tiles see negative scales),
// and the products differ from hlm's own quantization's.
func TestLlamaInputsLevels(t *testing.T) {
	rng := rand.New(rand.NewPCG(63, 64))
	defer SetThreads(0)
	defer SetLlamaInputs(false)
	for _, typ := range []DType{Q8_0, Q4_0, Q5_0, Q4_K, Q6_K} {
		var m *Matrix
		switch typ {
		case Q4_K, Q6_K:
			m = randomKQuant(t, rng, typ, 13, 2)
		default:
			base, _ := NewF32(13, 4*QK, randVec(rng, 13*4*QK))
			m, _ = base.Convert(typ)
		}
		const n = 9
		x := randVec(rng, n*m.Cols)
		own := make([]float32, n*m.Rows)
		atLevel(levelPortable, func() { MatMul(own, m, x, n) })
		SetLlamaInputs(true)
		want := make([]float32, n*m.Rows)
		atLevel(levelPortable, func() { MatMul(want, m, x, n) })
		for _, l := range levels() {
			for _, nt := range []int{1, 2, 3, 4, 5, 8, 9} {
				checkLevels(t, m, x, nt, want, l, 1, 3)
			}
		}
		SetLlamaInputs(false)
		differ := 0
		for i := range own {
			if own[i] != want[i] {
				differ++
			}
		}
		if differ == 0 {
			t.Errorf("%v: llama.cpp's input quantization changed none of %d outputs", typ, len(own))
		}
	}
}
