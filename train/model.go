package train

import "fmt"

// Model runs the decoder forward over a batch of sequences, keeping what
// the backward pass needs, and back again into the gradients G.
//
// A batch is b sequences of t tokens each, all starting at position 0; row
// r = s·t + i of every activation is token i of sequence s.
type Model[F Float] struct {
	P *Params[F] // parameters
	G *Params[F] // gradients (same layout), accumulated by Backward

	rope *rope[F]
	s    scratch[F]
	b, t int
	toks []int

	// Saved activations of the last Forward.
	res    [][]F // res[l]: residual stream entering block l; res[L] leaves the last block
	layers []layerActs[F]
	xf     []F // final-normed stream, n×Dim
	invf   []F
	logits []F // n×Vocab

	// Backward work buffers.
	dx, dxn, dao, dq, dk, dv, dha, dh1, dh3 []F
}

type layerActs[F Float] struct {
	xn1, inv1, q, k, v, prob, ao, mid, xn2, inv2, h1, h3, ha []F
}

// NewModel wraps parameters with a zeroed gradient buffer.
func NewModel[F Float](p *Params[F]) *Model[F] {
	c := p.Shape.Config
	return &Model[F]{P: p, G: p.Like(), rope: newRope[F](c.HeadSize(), c.SeqLen, c.RopeTheta)}
}

// grow sizes the activation buffers for n = b·t rows.
func grow[F Float](buf []F, n int) []F {
	if cap(buf) < n {
		return make([]F, n)
	}
	return buf[:n]
}

// Forward evaluates b sequences of t tokens (tokens is b·t ids, row-major)
// and returns the logits, (b·t)×Vocab, valid until the next Forward.
func (m *Model[F]) Forward(tokens []int, b, t int) ([]F, error) {
	c := m.P.Shape.Config
	n := b * t
	switch {
	case b <= 0 || t <= 0 || len(tokens) != n:
		return nil, fmt.Errorf("train: batch of %d tokens is not %d sequences × %d", len(tokens), b, t)
	case t > c.SeqLen:
		return nil, fmt.Errorf("train: sequences of %d tokens exceed the context length %d", t, c.SeqLen)
	}
	for _, id := range tokens {
		if id < 0 || id >= c.Vocab {
			return nil, fmt.Errorf("train: token %d outside the vocabulary of %d", id, c.Vocab)
		}
	}
	m.b, m.t, m.toks = b, t, tokens
	d, kv, h := c.Dim, c.KVDim(), c.Hidden
	as := attnShape{b: b, t: t, heads: c.Heads, kvHeads: c.KVHeads, hs: c.HeadSize()}
	if len(m.res) != c.Layers+1 {
		m.res = make([][]F, c.Layers+1)
		m.layers = make([]layerActs[F], c.Layers)
	}
	for l := range m.res {
		m.res[l] = grow(m.res[l], n*d)
	}
	x := m.res[0]
	for r, id := range tokens {
		copy(x[r*d:(r+1)*d], m.P.Embedding[id*d:(id+1)*d])
	}
	for l := range m.layers {
		a, p := &m.layers[l], &m.P.Layers[l]
		for _, s := range []*[]F{&a.xn1, &a.q, &a.ao, &a.mid, &a.xn2} {
			*s = grow(*s, n*d)
		}
		a.k, a.v = grow(a.k, n*kv), grow(a.v, n*kv)
		a.h1, a.h3, a.ha = grow(a.h1, n*h), grow(a.h3, n*h), grow(a.ha, n*h)
		a.inv1, a.inv2 = grow(a.inv1, n), grow(a.inv2, n)
		a.prob = grow(a.prob, b*c.Heads*t*t)
		x := m.res[l]

		rmsnorm(a.xn1, a.inv1, x, p.AttnNorm, n, d, c.NormEps)
		linear(a.q, a.xn1, p.Wq, n, d, d)
		linear(a.k, a.xn1, p.Wk, n, d, kv)
		linear(a.v, a.xn1, p.Wv, n, d, kv)
		m.rope.apply(a.q, n, d, t, false)
		m.rope.apply(a.k, n, kv, t, false)
		attention(a.ao, a.prob, a.q, a.k, a.v, as)
		linear(a.mid, a.ao, p.Wo, n, d, d)
		for i := range a.mid {
			a.mid[i] += x[i]
		}

		rmsnorm(a.xn2, a.inv2, a.mid, p.FFNNorm, n, d, c.NormEps)
		linear(a.h1, a.xn2, p.W1, n, d, h)
		linear(a.h3, a.xn2, p.W3, n, d, h)
		swiglu(a.ha, a.h1, a.h3)
		out := m.res[l+1]
		linear(out, a.ha, p.W2, n, h, d)
		for i := range out {
			out[i] += a.mid[i]
		}
	}
	m.xf, m.invf = grow(m.xf, n*d), grow(m.invf, n)
	rmsnorm(m.xf, m.invf, m.res[c.Layers], m.P.FinalNorm, n, d, c.NormEps)
	m.logits = grow(m.logits, n*c.Vocab)
	linear(m.logits, m.xf, m.P.Output, n, d, c.Vocab)
	return m.logits, nil
}

// grads are the gradient views Backward writes: nil for a frozen tensor.
func (m *Model[F]) grad(name string, g []F) []F {
	t, ok := m.P.Info(name)
	if !ok {
		panic("train: no tensor " + name)
	}
	if t.Frozen {
		return nil
	}
	return g
}

// ZeroGrad clears the gradients.
func (m *Model[F]) ZeroGrad() { clear(m.G.Data) }

// Backward adds to G the gradient of a loss whose gradient with respect to
// the last Forward's logits is dlogits ((b·t)×Vocab). Frozen tensors get no
// gradient, and the pass stops below the lowest trainable tensor.
func (m *Model[F]) Backward(dlogits []F) {
	c := m.P.Shape.Config
	b, t := m.b, m.t
	n := b * t
	d, kv, h := c.Dim, c.KVDim(), c.Hidden
	as := attnShape{b: b, t: t, heads: c.Heads, kvHeads: c.KVHeads, hs: c.HeadSize()}

	// below[l]: something at or below block l's input is trainable, so the
	// gradient must reach it. below[0] is the embedding.
	embName := "token_embd.weight"
	below := make([]bool, c.Layers+1)
	if t, _ := m.P.Info(embName); !t.Frozen {
		below[0] = true
	}
	for l := 0; l < c.Layers; l++ {
		tr := false
		for _, tn := range m.P.Tensors {
			if tn.layer == l && !tn.Frozen {
				tr = true
			}
		}
		below[l+1] = below[l] || tr
	}
	g := m.G
	outName := "output.weight"
	if m.P.Shape.Tied {
		outName = embName
	}
	for _, s := range []*[]F{&m.dx, &m.dxn, &m.dao, &m.dq} {
		*s = grow(*s, n*d)
	}
	m.dk, m.dv = grow(m.dk, n*kv), grow(m.dv, n*kv)
	m.dha, m.dh1, m.dh3 = grow(m.dha, n*h), grow(m.dh1, n*h), grow(m.dh3, n*h)

	// Classifier and final norm.
	dnorm := m.grad("output_norm.weight", g.FinalNorm)
	var dxf []F
	if dnorm != nil || below[c.Layers] {
		dxf = m.dxn
		clear(dxf)
	}
	linearBack(&m.s, dxf, m.grad(outName, g.Output), dlogits, m.xf, m.P.Output, n, d, c.Vocab)
	if dxf == nil {
		return
	}
	dx := m.dx
	clear(dx)
	var dxp []F
	if below[c.Layers] {
		dxp = dx
	}
	rmsnormBack(dxp, dnorm, dxf, m.res[c.Layers], m.invf, m.P.FinalNorm, n, d)

	for l := c.Layers - 1; l >= 0 && below[l+1]; l-- {
		a, p, gl := &m.layers[l], &m.P.Layers[l], &g.Layers[l]
		pre := fmt.Sprintf("blk.%d.", l)
		// Feed-forward: out = mid + W2·(silu(W1·xn2) ⊙ W3·xn2); dx is d out.
		clear(m.dha)
		linearBack(&m.s, m.dha, m.grad(pre+"ffn_down.weight", gl.W2), dx, a.ha, p.W2, n, h, d)
		clear(m.dh1)
		clear(m.dh3)
		swigluBack(m.dh1, m.dh3, m.dha, a.h1, a.h3)
		dxn := m.dxn
		clear(dxn)
		linearBack(&m.s, dxn, m.grad(pre+"ffn_gate.weight", gl.W1), m.dh1, a.xn2, p.W1, n, d, h)
		linearBack(&m.s, dxn, m.grad(pre+"ffn_up.weight", gl.W3), m.dh3, a.xn2, p.W3, n, d, h)
		// dx is now d mid (the residual path) plus the norm's share.
		rmsnormBack(dx, m.grad(pre+"ffn_norm.weight", gl.FFNNorm), dxn, a.mid, a.inv2, p.FFNNorm, n, d)

		// Attention: mid = x + Wo·attn(rope(Wq·xn1), rope(Wk·xn1), Wv·xn1).
		clear(m.dao)
		linearBack(&m.s, m.dao, m.grad(pre+"attn_output.weight", gl.Wo), dx, a.ao, p.Wo, n, d, d)
		clear(m.dq)
		clear(m.dk)
		clear(m.dv)
		attentionBack(m.dq, m.dk, m.dv, m.dao, a.prob, a.q, a.k, a.v, as)
		m.rope.apply(m.dq, n, d, t, true)
		m.rope.apply(m.dk, n, kv, t, true)
		clear(dxn)
		linearBack(&m.s, dxn, m.grad(pre+"attn_q.weight", gl.Wq), m.dq, a.xn1, p.Wq, n, d, d)
		linearBack(&m.s, dxn, m.grad(pre+"attn_k.weight", gl.Wk), m.dk, a.xn1, p.Wk, n, d, kv)
		linearBack(&m.s, dxn, m.grad(pre+"attn_v.weight", gl.Wv), m.dv, a.xn1, p.Wv, n, d, kv)
		var dxIn []F
		if below[l] {
			dxIn = dx
		}
		rmsnormBack(dxIn, m.grad(pre+"attn_norm.weight", gl.AttnNorm), dxn, m.res[l], a.inv1, p.AttnNorm, n, d)
	}
	if demb := m.grad(embName, g.Embedding); demb != nil {
		for r, id := range m.toks {
			row := demb[id*d : (id+1)*d]
			for i, v := range dx[r*d : (r+1)*d] {
				row[i] += v
			}
		}
	}
}
