package train

import (
	"math"

	"github.com/hlmproject/hlm/tensor"
)

// The operations of the decoder, each a forward and its backward. Matrices
// are row-major: an activation is n rows (one per token) of width cols; a
// weight W is [out][in] as in the engine (y = W·x). Backward functions add
// into their gradient outputs (so a tied embedding collects both of its
// gradients) and skip a gradient whose destination is nil (a frozen weight,
// or an input nothing below needs).

// scratch holds buffers reused across calls (transposes).
type scratch[F Float] struct {
	a, b, c []F
}

// linear computes y[r] = W·x[r] for n rows: y is n×out, x is n×in, w is out×in.
// For float32 it is the engine's tensor.MatMul (register-blocked tiles, one
// fixed summation order per element).
func linear[F Float](y, x, w []F, n, in, out int) {
	if is32[F]() {
		tensor.MatMul(as32(y), f32Matrix(w, out, in), as32(x), n)
		return
	}
	tensor.ParallelFor(n, n*in*out, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			xr := x[r*in : (r+1)*in]
			yr := y[r*out : (r+1)*out]
			for o := range yr {
				yr[o] = dot(xr, w[o*in:(o+1)*in])
			}
		}
	})
}

// f32Matrix views a float32 slice as a rows×cols tensor.Matrix.
func f32Matrix[F Float](v []F, rows, cols int) *tensor.Matrix {
	m, err := tensor.NewF32(rows, cols, as32(v[:rows*cols]))
	if err != nil {
		panic(err) // shapes come from the layout
	}
	return m
}

// linearBack adds dx += dy·W and dw += dyᵀ·x (either may be nil). Each output
// element is one dot product over a contiguous row of a transposed operand,
// so every element has one summation order whatever the thread count: dx is
// the product of Wᵀ (in×out) with the rows of dy, dw that of xᵀ (in×n) with
// the rows of dyᵀ (out×n).
func linearBack[F Float](s *scratch[F], dx, dw, dy, x, w []F, n, in, out int) {
	if dx != nil {
		wt := transpose(s.a, w, out, in) // in×out
		s.a = wt
		s.c = grow(s.c, n*in)
		linear(s.c, dy, wt, n, out, in)
		addTo(dx, s.c)
	}
	if dw != nil {
		dyt := transpose(s.a, dy, n, out) // out×n
		xt := transpose(s.b, x, n, in)    // in×n
		s.a, s.b = dyt, xt
		s.c = grow(s.c, out*in)
		linear(s.c, dyt, xt, out, n, in)
		addTo(dw, s.c)
	}
}

// addTo adds src to dst element-wise.
func addTo[F Float](dst, src []F) {
	tensor.ParallelFor(len(dst), len(dst), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dst[i] += src[i]
		}
	})
}

// rmsnorm writes y[r] = g ⊙ x[r]·inv[r] with inv[r] = 1/sqrt(mean(x[r]²)+eps)
// for n rows of width d, and keeps inv for the backward pass.
func rmsnorm[F Float](y, inv, x, g []F, n, d int, eps float32) {
	tensor.ParallelFor(n, 4*n*d, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			xr, yr := x[r*d:(r+1)*d], y[r*d:(r+1)*d]
			var ss F
			for _, v := range xr {
				ss += F(v * v)
			}
			ss = ss/F(d) + F(eps)
			iv := F(1 / math.Sqrt(float64(ss)))
			inv[r] = iv
			for i, v := range xr {
				yr[i] = g[i] * F(iv*v)
			}
		}
	})
}

// rmsnormBack adds the gradients of y = g ⊙ x·inv: with u = g ⊙ dy,
// dx = inv·u − inv³/d·(u·x)·x, and dg = Σ_r dy ⊙ x·inv.
func rmsnormBack[F Float](dx, dg, dy, x, inv, g []F, n, d int) {
	if dx != nil {
		tensor.ParallelFor(n, 6*n*d, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				xr, dyr, dxr := x[r*d:(r+1)*d], dy[r*d:(r+1)*d], dx[r*d:(r+1)*d]
				iv := inv[r]
				var ux F
				for i, v := range xr {
					ux += F(F(g[i]*dyr[i]) * v)
				}
				c := F(F(iv*iv)*iv) * ux / F(d)
				for i, v := range xr {
					dxr[i] += F(iv*F(g[i]*dyr[i])) - F(c*v)
				}
			}
		})
	}
	if dg != nil {
		tensor.ParallelFor(d, 2*n*d, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				var s F
				for r := 0; r < n; r++ {
					s += F(dy[r*d+i] * F(x[r*d+i]*inv[r]))
				}
				dg[i] += s
			}
		})
	}
}

// rope holds the rotation table of rotary position embeddings for positions
// [0, seq): pairs (x[2i], x[2i+1]) of each head turn by pos·θ^(−2i/headSize),
// the engine's (llama2.c's) pairing and float32 angle arithmetic.
type rope[F Float] struct {
	hs       int
	cos, sin []F // [seq][hs/2]
}

func newRope[F Float](headSize, seq int, theta float64) *rope[F] {
	half := headSize / 2
	r := &rope[F]{hs: headSize, cos: make([]F, seq*half), sin: make([]F, seq*half)}
	for i := 0; i < half; i++ {
		f := float32(1 / math.Pow(theta, float64(float32(2*i)/float32(headSize))))
		for p := 0; p < seq; p++ {
			s, c := math.Sincos(float64(float32(p) * f))
			r.cos[p*half+i], r.sin[p*half+i] = F(c), F(s)
		}
	}
	return r
}

// apply rotates every head of the n rows of x (width d) in place; row r is
// at position r mod t. inverse rotates backwards (the transpose), which is
// the backward pass of the rotation.
func (rp *rope[F]) apply(x []F, n, d, t int, inverse bool) {
	half := rp.hs / 2
	tensor.ParallelFor(n, 4*n*d, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			p := r % t
			cs, sn := rp.cos[p*half:(p+1)*half], rp.sin[p*half:(p+1)*half]
			row := x[r*d : (r+1)*d]
			for h := 0; h+rp.hs <= d; h += rp.hs {
				for i := 0; i < half; i++ {
					c, s := cs[i], sn[i]
					if inverse {
						s = -s
					}
					v0, v1 := row[h+2*i], row[h+2*i+1]
					row[h+2*i] = F(v0*c) - F(v1*s)
					row[h+2*i+1] = F(v0*s) + F(v1*c)
				}
			}
		}
	})
}

// attnShape is the shape of causal grouped-query attention over b sequences
// of t positions.
type attnShape struct {
	b, t, heads, kvHeads, hs int
}

func (a attnShape) dim() int   { return a.heads * a.hs }
func (a attnShape) kvDim() int { return a.kvHeads * a.hs }

// attention computes, for every sequence, query head h and position i, the
// probabilities p = softmax(q_i·k_j/√hs, j ≤ i) over the keys of h's KV group
// and out_i = Σ_j p_j v_j. q and out are (b·t)×dim, k and v (b·t)×kvDim; the
// probabilities are kept in prob, b·heads·t·t (row i holds i+1 entries).
func attention[F Float](out, prob, q, k, v []F, a attnShape) {
	dim, kvd, t, hs := a.dim(), a.kvDim(), a.t, a.hs
	group := a.heads / a.kvHeads
	scale := F(1 / math.Sqrt(float64(hs)))
	tensor.ParallelFor(a.b*a.heads, a.b*a.heads*t*t*hs, func(lo, hi int) {
		ws := make([]float64, t)
		for bh := lo; bh < hi; bh++ {
			b, h := bh/a.heads, bh%a.heads
			off, koff := h*hs, (h/group)*hs
			for i := 0; i < t; i++ {
				qi := q[(b*t+i)*dim+off : (b*t+i)*dim+off+hs]
				p := prob[(bh*t+i)*t : (bh*t+i)*t+i+1]
				mx := F(math.Inf(-1))
				for j := range p {
					kj := k[(b*t+j)*kvd+koff : (b*t+j)*kvd+koff+hs]
					p[j] = dotShort(qi, kj) * scale
					mx = max(mx, p[j])
				}
				sum := softmaxNum(p, mx, ws)
				is := 1 / sum
				o := out[(b*t+i)*dim+off : (b*t+i)*dim+off+hs]
				clear(o)
				for j := range p {
					p[j] *= is
					axpy(o, p[j], v[(b*t+j)*kvd+koff:(b*t+j)*kvd+koff+hs])
				}
			}
		}
	})
}

// attentionBack adds the gradients of attention for dout into dq, dk and dv.
// Work is split by (sequence, KV head) so that the query heads sharing keys
// and values add into them one after another, in a fixed order.
func attentionBack[F Float](dq, dk, dv, dout, prob, q, k, v []F, a attnShape) {
	dim, kvd, t, hs := a.dim(), a.kvDim(), a.t, a.hs
	group := a.heads / a.kvHeads
	scale := F(1 / math.Sqrt(float64(hs)))
	tensor.ParallelFor(a.b*a.kvHeads, 2*a.b*a.heads*t*t*hs, func(lo, hi int) {
		dp := make([]F, t)
		for bk := lo; bk < hi; bk++ {
			b, kh := bk/a.kvHeads, bk%a.kvHeads
			koff := kh * hs
			for h := kh * group; h < (kh+1)*group; h++ {
				bh := b*a.heads + h
				off := h * hs
				for i := 0; i < t; i++ {
					row := b*t + i
					do := dout[row*dim+off : row*dim+off+hs]
					p := prob[(bh*t+i)*t : (bh*t+i)*t+i+1]
					d := dp[:i+1]
					var sum F
					for j := range p {
						vj := v[(b*t+j)*kvd+koff : (b*t+j)*kvd+koff+hs]
						d[j] = dotShort(do, vj)
						sum += F(p[j] * d[j])
						axpy(dv[(b*t+j)*kvd+koff:(b*t+j)*kvd+koff+hs], p[j], do)
					}
					qi := q[row*dim+off : row*dim+off+hs]
					dqi := dq[row*dim+off : row*dim+off+hs]
					for j := range p {
						ds := F(p[j]*(d[j]-sum)) * scale
						axpy(dqi, ds, k[(b*t+j)*kvd+koff:(b*t+j)*kvd+koff+hs])
						axpy(dk[(b*t+j)*kvd+koff:(b*t+j)*kvd+koff+hs], ds, qi)
					}
				}
			}
		}
	})
}

// softmaxNum writes p[j] = e^(p[j] − mx) and returns their sum, added in
// j order in F. For float32 the exponentials come from tensor.ExpShifted
// (vectorised) over the float32 differences, which is tensor.Exp of each:
// the same bits as the one-at-a-time loop, which float64 and rows holding a
// NaN or only −Inf take. ws holds at least len(p) values.
func softmaxNum[F Float](p []F, mx F, ws []float64) F {
	var sum F
	if is32[F]() && float64(mx) > math.Inf(-1) && !math.IsInf(float64(mx), 1) {
		d := as32(p)
		for j := range d {
			d[j] -= float32(mx)
		}
		tensor.ExpShifted(ws, d, 0, 1)
		for j, e := range ws[:len(p)] {
			p[j] = F(e)
			sum += F(e)
		}
		return sum
	}
	for j, s := range p {
		e := F(tensor.Exp(float64(s - mx)))
		p[j] = e
		sum += e
	}
	return sum
}

// sigmoidChunk is how many values the SwiGLU passes take their
// exponentials for at once.
const sigmoidChunk = 512

// sigmoids writes σ(g[i]) = F(1/(1 + e^−g[i])) into sg, with the
// exponentials from tensor.ExpShifted (vectorised: −g exactly, then the same
// kernel as tensor.Exp) when every g is at least −708 (where Exp would
// saturate to +Inf), else one at a time: the same bits either way. ws holds
// at least len(g) values.
func sigmoids[F Float](sg, g []F, ws []float64) {
	if is32[F]() {
		g32 := as32(g)
		ok := true
		for _, v := range g32 {
			if !(v >= -708) {
				ok = false
				break
			}
		}
		if ok {
			tensor.ExpShifted(ws, g32, 0, -1)
			for i, e := range ws[:len(g)] {
				sg[i] = F(1 / (1 + e))
			}
			return
		}
	}
	for i, v := range g {
		sg[i] = F(1 / (1 + tensor.Exp(-float64(v))))
	}
}

// sigmoidChunks calls fn for chunks [a, b) of the n values of g, split over
// the threads, with sg[:b−a] = σ(g[a:b]) (sigmoids).
func sigmoidChunks[F Float](g []F, work int, fn func(a, b int, sg []F)) {
	n := len(g)
	tensor.ParallelFor((n+sigmoidChunk-1)/sigmoidChunk, work, func(lo, hi int) {
		var ws [sigmoidChunk]float64
		var sg [sigmoidChunk]F
		for c := lo; c < hi; c++ {
			a, b := c*sigmoidChunk, min(n, (c+1)*sigmoidChunk)
			sigmoids(sg[:b-a], g[a:b], ws[:])
			fn(a, b, sg[:b-a])
		}
	})
}

// swiglu writes silu(g)·u into act, silu(g) = g·σ(g).
func swiglu[F Float](act, g, u []F) {
	sigmoidChunks(g[:len(act)], 8*len(act), func(a, b int, sg []F) {
		for i := a; i < b; i++ {
			act[i] = F(g[i]*sg[i-a]) * u[i]
		}
	})
}

// swigluBack adds dg += dact·u·silu'(g) and du += dact·silu(g), with
// silu'(g) = σ(g)·(1 + g·(1 − σ(g))).
func swigluBack[F Float](dg, du, dact, g, u []F) {
	sigmoidChunks(g[:len(dact)], 10*len(dact), func(a, b int, sgs []F) {
		for i := a; i < b; i++ {
			sg := sgs[i-a]
			silu := F(g[i] * sg)
			dg[i] += F(dact[i]*u[i]) * F(sg*(1+F(g[i]*(1-sg))))
			du[i] += F(dact[i] * silu)
		}
	})
}
