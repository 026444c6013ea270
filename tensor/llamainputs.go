package tensor

import (
	"math"
	"sync/atomic"
)

// llama.cpp's quantization of the inputs of the integer products. hlm and
// llama.cpp's CPU backend multiply the same weight codes by inputs
// quantized to 8 bits in the same blocks, and sum the products of a block
// in the same exact integers, but they keep the inputs' scales differently:
//
//   - Q8_0, Q4_0 and Q5_0 weights (inputs in blocks of 32, llama.cpp's
//     quantize_row_q8_0 on x86 and ARM): llama.cpp stores each block's
//     scale d = max|x|/127 as float16 (block_q8_0.d) and multiplies by the
//     rounded value; its codes are round(x·(127/max|x|)). hlm keeps d in
//     float32 and its codes are round(x·(1/d)).
//   - K-quants (super-blocks of 256, quantize_row_q8_K_ref): llama.cpp
//     scales by iscale = −127/m, m the input of largest magnitude with its
//     sign, so its codes are those of −x when m > 0, and d = 1/iscale in
//     float32; hlm by 1/(max|x|/127).
//
// The float16 scale moves each block's contribution by up to 2^−11 of its
// value, about an eighth of what rounding the inputs to 8 bits costs (up to
// 1/254 of the block's largest input); on a small model that is enough to
// move the logits visibly (model/llama's quantized goldens). hlm's default
// is the float32 scale. SetLlamaInputs switches to llama.cpp's, so that
// hlm's products of a quantized file are llama.cpp's up to the order of
// the float sums: that is how the goldens made by llama.cpp are matched,
// and what hlm nll --llama-inputs measures.
var llamaInputs atomic.Bool

// SetLlamaInputs makes the integer products quantize their inputs as
// llama.cpp's CPU backend does (on) or as hlm does (off, the default); see
// above. The quantization then runs in Go at every level (the tiles are
// unchanged), so the results still do not depend on the level, the thread
// count or the batch. It must not be called while products run.
func SetLlamaInputs(on bool) { llamaInputs.Store(on) }

// LlamaInputs reports whether SetLlamaInputs is on.
func LlamaInputs() bool { return llamaInputs.Load() }

// quantizeBlockLlama is quantizeBlock as llama.cpp's quantize_row_q8_0
// (AVX2 and NEON: codes rounded to nearest, ties to even) computes it.
func quantizeBlockLlama(a *actBlock, x []float32, off int32) {
	var amax float32
	for _, v := range x {
		if m := math.Float32frombits(math.Float32bits(v) &^ (1 << 31)); m > amax {
			amax = m
		}
	}
	id := float32(0)
	if amax != 0 {
		id = 127 / amax
	}
	for j, v := range x {
		a.q[j] = int8(max(-127, min(127, cvtRound(float32(v*id)))))
	}
	for l := range a.corr {
		s := int32(a.q[4*l]) + int32(a.q[4*l+1]) + int32(a.q[4*l+2]) + int32(a.q[4*l+3])
		a.corr[l] = -off * s
	}
	a.d = F16ToF32(F32ToF16(amax / 127))
}

// quantizeBlockKLlama is one super-block of quantizeActsK as llama.cpp's
// quantize_row_q8_K_ref computes it.
func quantizeBlockKLlama(a *actBlockK, x []float32) {
	var amax, m float32
	for _, v := range x {
		if ax := math.Float32frombits(math.Float32bits(v) &^ (1 << 31)); ax > amax {
			amax, m = ax, v
		}
	}
	a.q, a.d = [QKK]int8{}, 0
	if amax != 0 {
		iscale := -127 / m
		for j, v := range x {
			a.q[j] = int8(max(-127, min(127, cvtRound(float32(iscale*v)))))
		}
		a.d = 1 / iscale
	}
	for j := range a.bs16 {
		var s int32
		for _, q := range a.q[16*j : 16*j+16] {
			s += int32(q)
		}
		a.bs16[j] = s
	}
	for j := range a.bs32 {
		a.bs32[j] = a.bs16[2*j] + a.bs16[2*j+1]
	}
}
