package tensor

import (
	"math"
	"sync"
)

// RMSNormRows applies RMSNorm to each row of len(weight) values of x (a
// block of tokens), on several threads when there are enough rows; each
// row's result is RMSNorm's.
func RMSNormRows(out, x, weight []float32, eps float32) {
	// The sum of squares is one chain of dependent additions: a row costs
	// about what 8·dim multiply-adds of a product do.
	normRows(normLoop{out: out, x: x, weight: weight, eps: eps}, 8)
}

// normLoop is the work of RMSNormRows or LayerNormRows as a Loop.
type normLoop struct {
	out, x, weight, bias []float32
	eps                  float32
	layer                bool // LayerNorm, else RMSNorm
}

// Run normalizes rows [lo, hi).
func (l *normLoop) Run(lo, hi int) {
	dim := len(l.weight)
	for r := lo; r < hi; r++ {
		out, x := l.out[r*dim:(r+1)*dim], l.x[r*dim:(r+1)*dim]
		if l.layer {
			LayerNorm(out, x, l.weight, l.bias, l.eps)
		} else {
			RMSNorm(out, x, l.weight, l.eps)
		}
	}
}

// normLoops recycles the normLoops that run on the threads.
var normLoops = sync.Pool{New: func() any { return new(normLoop) }}

// normRows runs nl over the rows of nl.x, on the threads when the rows
// cost enough (cost multiply-adds per element).
func normRows(nl normLoop, cost int) {
	dim := len(nl.weight)
	if dim == 0 {
		return
	}
	rows := len(nl.x) / dim
	if rows == 1 || cost*rows*dim < minParallelWork {
		nl.Run(0, rows)
		return
	}
	l := normLoops.Get().(*normLoop)
	*l = nl
	ParallelLoop(rows, cost*rows*dim, l)
	*l = normLoop{} // the pool holds no rows
	normLoops.Put(l)
}

// RMSNorm writes x normalized by its root mean square and scaled by weight:
// out[i] = weight[i]·x[i]/sqrt(mean(x²)+eps). out may alias x.
func RMSNorm(out, x, weight []float32, eps float32) {
	var ss float32
	for _, v := range x {
		ss += float32(v * v)
	}
	ss /= float32(len(x))
	ss += eps
	inv := float32(1 / math.Sqrt(float64(ss)))
	for i, v := range x {
		out[i] = weight[i] * float32(inv*v)
	}
}

// Softmax normalizes x in place into probabilities: e_i = e^(x_i − max) in
// float64 by ExpShifted (this package's exponential, so the bits are the
// same on every machine), then x_i = float32(e_i / Σe).
func Softmax(x []float32) {
	if len(x) == 0 {
		return
	}
	maxv := x[0]
	for _, v := range x[1:] {
		if v > maxv {
			maxv = v
		}
	}
	buf := f64Pool.Get().(*[]float64)
	if cap(*buf) < len(x) {
		// Room to grow: attention rows lengthen by one a decode step.
		*buf = make([]float64, len(x), max(len(x), 2*cap(*buf)))
	}
	e := (*buf)[:len(x)]
	inv := 1 / ExpShifted(e, x, float64(maxv), 1)
	for i, v := range e {
		x[i] = float32(v * inv)
	}
	f64Pool.Put(buf)
}

var f64Pool = sync.Pool{New: func() any { return new([]float64) }}

// SwiGLU writes silu(gate)·up into gate: silu(g) = g·σ(g), σ(g) = 1/(1+e^−g),
// computed as swiglu1 spells out (the vector kernels give the same bits).
// A block of tokens (from gateParallel values on) is split over the
// threads; every value is computed alone, so the split changes no bit.
func SwiGLU(gate, up []float32) { gatedOp(gate, up[:len(gate)], swiglu) }

// gatedOp applies op (an element-wise function of gate and up, written into
// gate; up may be nil) to a block of values, split over the threads from
// gateParallel values on. Every value is computed alone, so the split
// changes no bit.
func gatedOp(gate, up []float32, op func(gate, up []float32)) {
	if n := len(gate); n >= gateParallel {
		chunks := (n + gateChunk - 1) / gateChunk
		l := gatedLoops.Get().(*gatedLoop)
		l.gate, l.up, l.op = gate, up, op
		// An exponential and a division per value: about 8 multiply-adds'
		// worth of a product each.
		ParallelLoop(chunks, 8*n, l)
		*l = gatedLoop{}
		gatedLoops.Put(l)
		return
	}
	op(gate, up)
}

// gatedLoop is gatedOp's work in chunks of gateChunk values, as a Loop.
type gatedLoop struct {
	gate, up []float32
	op       func(gate, up []float32)
}

// Run computes chunks [lo, hi).
func (l *gatedLoop) Run(lo, hi int) {
	a, b := lo*gateChunk, min(len(l.gate), hi*gateChunk)
	var up []float32
	if l.up != nil {
		up = l.up[a:b]
	}
	l.op(l.gate[a:b], up)
}

// gatedLoops recycles the gatedLoops that run on the threads.
var gatedLoops = sync.Pool{New: func() any { return new(gatedLoop) }}

const (
	gateParallel = 8192 // values from which gatedOp uses the threads
	gateChunk    = 1024 // values per unit of work (a multiple of the kernels' lanes)
)

// swiglu is SwiGLU on the calling thread.
func swiglu(gate, up []float32) {
	i := 0
	if ks := kernels(); ks != nil && ks.swiglu != nil {
		i = len(gate) / ks.swigluLanes * ks.swigluLanes
		if i > 0 {
			ks.swiglu(&gate[0], &up[0], i, &expConsts)
		}
	}
	for ; i < len(gate); i++ {
		gate[i] = swiglu1(gate[i], up[i])
	}
}

// swiglu1 is silu(g)·u with σ from e = e^−|g| ≤ 1 (expNeg, float64):
// σ = 1/(1+e) for g ≥ 0 and e/(1+e) otherwise, then (g·float32(σ))·u in
// float32.
func swiglu1(g, u float32) float32 {
	v := float64(g)
	e := expNeg(-math.Abs(v))
	num := e
	if v >= 0 {
		num = 1
	}
	return g * float32(num/(1+e)) * u
}

// Add adds src to dst element-wise.
func Add(dst, src []float32) {
	src = src[:len(dst)]
	for i := range dst {
		dst[i] += src[i]
	}
}

// Rope holds the rotation frequencies of rotary position embeddings for one
// head size. By default pairs (x[2i], x[2i+1]) of every head are rotated by
// pos·θ^(−2i/headSize) (the "normal" GPT-J style pairing of llama2.c and
// GGML's llama, not the half-split pairing of Hugging Face checkpoints, whose
// q/k rows loaders permute). RopeConfig adds the variants of other families:
// the half-split (NeoX) pairing, rotating only the first dims of a head,
// linear position scaling and per-frequency divisors (Llama-3.1's
// rope_freqs). The angles are float32(pos)·f with f in float32.
type Rope struct {
	HeadSize int
	dims     int       // rotated dims per head
	neox     bool      // pairs (i, i+dims/2) instead of (2i, 2i+1)
	freq     []float32 // dims/2 inverse frequencies
	mscale   float32   // multiplies cos and sin (YaRN, attention factor)
	// cs holds (cos, sin) of every angle of positions below len(cs)/HeadSize,
	// as Apply would compute them: a decode step would otherwise spend a
	// sine and a cosine per frequency on each of q and k, per layer.
	cs []float32
}

// RopeConfig describes a rotary embedding.
type RopeConfig struct {
	HeadSize int
	Dims     int     // rotated dims per head, even; 0: HeadSize
	Theta    float64 // base
	Scale    float64 // linear scaling: positions divided by Scale; 0 or 1: none
	// Factors divide the frequencies (len Dims/2; nil: none), as GGUF's
	// rope_freqs of Llama-3.1 and llama.cpp's rope do.
	Factors []float32
	Neox    bool // rotate pairs (i, i+Dims/2) instead of (2i, 2i+1)
	// Yarn, when its OrigCtx is > 0, replaces linear scaling.
	Yarn Yarn
	// AttnFactor multiplies every rotation (llama.cpp's
	// rope.scaling.attn_factor); 0: 1.
	AttnFactor float64
}

// Yarn is YaRN's rotary scaling (Peng, Quesnelle, Fan, Shippole 2023,
// "YaRN: Efficient Context Window Extension of Large Language Models",
// eqs. 17–19 and 22), as llama.cpp's rope_yarn and transformers'
// _compute_yarn_parameters compute it: frequency i is f_i/Factor
// ("interpolated") below the correction range of dimensions, f_i itself
// ("extrapolated") above it, and a linear ramp between; the rotations are
// scaled by 1 + 0.1·ln Factor.
type Yarn struct {
	Factor  float64
	OrigCtx int // the context the model was trained on
	// BetaFast and BetaSlow bound the correction range in rotations over
	// OrigCtx (0: 32 and 1).
	BetaFast, BetaSlow float64
}

// yarnCorrDims is the range of frequency indices over which YaRN ramps,
// in float32 as ggml_rope_yarn_corr_dims computes it.
func yarnCorrDims(dims int, y Yarn, theta float64) (lo, hi float32) {
	fast, slow := y.BetaFast, y.BetaSlow
	if fast == 0 {
		fast = 32
	}
	if slow == 0 {
		slow = 1
	}
	dim := func(rot float64) float32 {
		return float32(dims) * float32(math.Log(float64(float32(y.OrigCtx)/(float32(rot)*2*float32(math.Pi))))) /
			(2 * float32(math.Log(float64(float32(theta)))))
	}
	lo = max(0, float32(math.Floor(float64(dim(fast)))))
	hi = min(float32(dims-1), float32(math.Ceil(float64(dim(slow)))))
	return lo, hi
}

// ropeTableBytes caps the precomputed angles (positions past the table
// are computed as they come).
const ropeTableBytes = 4 << 20

// NewRope builds the frequencies for a head size and base θ (10000 for Llama
// 2), and the rotations of the first positions positions (fewer if that
// table would exceed 4 MiB).
func NewRope(headSize int, theta float64, positions int) *Rope {
	return NewRopeFrom(RopeConfig{HeadSize: headSize, Theta: theta}, positions)
}

// NewRopeFrom builds a rotary embedding from c (see NewRope).
func NewRopeFrom(c RopeConfig, positions int) *Rope {
	dims := c.Dims
	if dims <= 0 || dims > c.HeadSize {
		dims = c.HeadSize
	}
	dims &^= 1
	r := &Rope{HeadSize: c.HeadSize, dims: dims, neox: c.Neox, freq: make([]float32, dims/2), mscale: 1}
	yarn := c.Yarn.OrigCtx > 0 && c.Yarn.Factor > 0
	var lo, hi float32
	if yarn {
		lo, hi = yarnCorrDims(dims, c.Yarn, c.Theta)
		r.mscale = float32(1 + 0.1*math.Log(c.Yarn.Factor))
	}
	if c.AttnFactor > 0 {
		r.mscale *= float32(c.AttnFactor)
	}
	for i := range r.freq {
		// float32 arithmetic, as llama2.c and PyTorch compute the angles.
		r.freq[i] = float32(1 / math.Pow(c.Theta, float64(float32(2*i)/float32(dims))))
		if i < len(c.Factors) && c.Factors[i] != 0 {
			r.freq[i] /= c.Factors[i]
		}
		switch {
		case yarn:
			y := (float32(i) - lo) / max(0.001, hi-lo)
			mix := 1 - min(1, max(0, y)) // 1: extrapolate (keep f), 0: interpolate
			interp := r.freq[i] * float32(1/c.Yarn.Factor)
			r.freq[i] = interp*(1-mix) + r.freq[i]*mix
		case c.Scale > 0 && c.Scale != 1:
			r.freq[i] *= float32(1 / c.Scale)
		}
	}
	if len(r.freq) > 0 {
		positions = max(0, min(positions, ropeTableBytes/(8*len(r.freq))))
		r.cs = make([]float32, 0, 2*len(r.freq)*positions)
		for pos := 0; pos < positions; pos++ {
			for _, f := range r.freq {
				c, s := r.rotation(pos, f)
				r.cs = append(r.cs, c, s)
			}
		}
	}
	return r
}

// rotation is the (cos, sin) of the angle pos·f, scaled by mscale.
func (r *Rope) rotation(pos int, f float32) (c, s float32) {
	s64, c64 := math.Sincos(float64(float32(pos) * f))
	if r.mscale != 1 {
		return float32(c64) * r.mscale, float32(s64) * r.mscale
	}
	return float32(c64), float32(s64)
}

// Apply rotates every head of x (len a multiple of HeadSize) for position pos.
func (r *Rope) Apply(x []float32, pos int) {
	hs, nf := r.HeadSize, len(r.freq)
	var table []float32
	if pos < len(r.cs)/max(1, 2*nf) {
		table = r.cs[2*nf*pos : 2*nf*(pos+1)]
	}
	half := r.dims / 2
	for i, f := range r.freq {
		var fc, fs float32
		if table != nil {
			fc, fs = table[2*i], table[2*i+1]
		} else {
			fc, fs = r.rotation(pos, f)
		}
		a, b := 2*i, 2*i+1
		if r.neox {
			a, b = i, i+half
		}
		for h := 0; h+hs <= len(x); h += hs {
			v0, v1 := x[h+a], x[h+b]
			x[h+a] = float32(v0*fc) - float32(v1*fs)
			x[h+b] = float32(v0*fs) + float32(v1*fc)
		}
	}
}
