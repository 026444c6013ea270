package tensor

import "math"

// The operations of the decoder families beyond Llama's: LayerNorm, biases,
// GELU (tanh form), GeGLU, ReLU and tanh soft-capping. Each value is
// computed alone in one fixed order of float32 and float64 operations, with
// this package's own exponential, so the bits are the same on every machine
// and for any split of the work.

// tanh is tanh(u) from e = e^(−2|u|) ≤ 1: sign(u)·(1−e)/(1+e).
func tanh(u float64) float64 {
	e := expNeg(-2 * math.Abs(u))
	t := (1 - e) / (1 + e)
	if u < 0 {
		return -t
	}
	return t
}

// Tanh is tanh by this package's exponential (the same bits everywhere).
func Tanh(u float64) float64 {
	if u != u {
		return u
	}
	return tanh(u)
}

// geluC is √(2/π).
const geluC = 0.7978845608028654

// gelu1 is GELU's tanh approximation, 0.5·x·(1+tanh(√(2/π)·(x+0.044715·x³))),
// in float64 from the float32 input: transformers' gelu_pytorch_tanh and
// gelu_new, and ggml's GELU computed exactly. The conversion around the
// cube keeps compilers that fuse a multiply and an add (arm64) from doing
// so, so every machine rounds the same steps (the vector kernels too).
func gelu1(x float32) float32 {
	v := float64(x)
	return float32(0.5 * v * (1 + tanh(geluC*(v+float64(0.044715*v*v*v)))))
}

// GELU applies GELU (tanh form) to x in place; a block of tokens is split
// over the threads (every value alone: the same bits for any split).
func GELU(x []float32) { gatedOp(x, nil, gelu) }

// GeGLU writes gelu(gate)·up into gate (Gemma's feed-forward), split over
// the threads as GELU.
func GeGLU(gate, up []float32) { gatedOp(gate, up[:len(gate)], geglu) }

// gelu is GELU on the calling thread: the vector kernel over the multiple
// of 4 values where there is one, gelu1 for the rest.
func gelu(x, _ []float32) {
	i := 0
	if ks := kernels(); ks != nil && ks.gelu != nil {
		if i = len(x) &^ 3; i > 0 {
			ks.gelu(&x[0], nil, i, &expConsts)
		}
	}
	for ; i < len(x); i++ {
		x[i] = gelu1(x[i])
	}
}

// geglu is GeGLU on the calling thread, as gelu.
func geglu(gate, up []float32) {
	i := 0
	if ks := kernels(); ks != nil && ks.geglu != nil {
		if i = len(gate) &^ 3; i > 0 {
			ks.geglu(&gate[0], &up[0], i, &expConsts)
		}
	}
	for ; i < len(gate); i++ {
		gate[i] = gelu1(gate[i]) * up[i]
	}
}

// ReLU applies max(x, 0) in place (OPT's feed-forward).
func ReLU(x []float32) {
	for i, v := range x {
		if !(v > 0) {
			x[i] = 0
		}
	}
}

// Softcap writes c·tanh(x/c) in place (Gemma-2's soft-capping of
// attention scores and final logits).
func Softcap(x []float32, c float32) {
	for i, v := range x {
		x[i] = float32(float64(c) * tanh(float64(v/c)))
	}
}

// AddRows adds bias to every row of len(bias) values of x.
func AddRows(x, bias []float32) {
	n := len(bias)
	for r := 0; r+n <= len(x); r += n {
		Add(x[r:r+n], bias)
	}
}

// LayerNorm writes (x − mean)/sqrt(var + eps)·weight + bias, the mean and
// the (biased) variance of x in float32 in one order; bias may be nil. out
// may alias x.
func LayerNorm(out, x, weight, bias []float32, eps float32) {
	n := float32(len(x))
	var sum float32
	for _, v := range x {
		sum += v
	}
	mean := sum / n
	var ss float32
	for _, v := range x {
		d := v - mean
		ss += float32(d * d)
	}
	inv := float32(1 / math.Sqrt(float64(ss/n+eps)))
	for i, v := range x {
		// The conversion keeps the product rounded before the bias is
		// added: compilers that fuse a multiply and an add (arm64) may
		// otherwise do so, across statements too.
		y := float32(weight[i] * float32((v-mean)*inv))
		if bias != nil {
			y += bias[i]
		}
		out[i] = y
	}
}

// LayerNormRows applies LayerNorm to each row of len(weight) values of x,
// on several threads when there are enough rows.
func LayerNormRows(out, x, weight, bias []float32, eps float32) {
	normRows(normLoop{out: out, x: x, weight: weight, bias: bias, eps: eps, layer: true}, 12)
}
