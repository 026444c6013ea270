package ddqn

import "math"

// Adam's constants (Kingma & Ba 2015, the usual defaults).
const (
	adamBeta1 = 0.9
	adamBeta2 = 0.999
	adamEps   = 1e-8
)

// adam is the Adam optimiser's state for one network: first and second
// moment estimates with the network's shape, and β₁ᵗ, β₂ᵗ kept as running
// products (not math.Pow) so that every step is exactly reproducible.
type adam struct {
	lr       float64
	m, v     *Net
	b1t, b2t float64 // β₁ᵗ, β₂ᵗ after t steps
}

func newAdam(shape *Net, lr float64) *adam {
	return &adam{lr: lr, m: newZeroNet(shape.Sizes), v: newZeroNet(shape.Sizes), b1t: 1, b2t: 1}
}

// step applies one update to p with gradient g:
//
//	m ← β₁m + (1−β₁)g,  v ← β₂v + (1−β₂)g²
//	p ← p − lr · (m/(1−β₁ᵗ)) / (√(v/(1−β₂ᵗ)) + ε)
func (o *adam) step(p, g *Net) {
	o.b1t = float64(o.b1t * adamBeta1) // rounded: not fused into 1 − β₁ᵗ below
	o.b2t = float64(o.b2t * adamBeta2)
	c1, c2 := 1-o.b1t, 1-o.b2t
	upd := func(p, g, m, v []float64) {
		for k, gk := range g {
			m[k] = float64(adamBeta1*m[k]) + float64((1-adamBeta1)*gk)
			v[k] = float64(adamBeta2*v[k]) + float64((1-adamBeta2)*float64(gk*gk))
			step := o.lr * (m[k] / c1) / (math.Sqrt(v[k]/c2) + adamEps)
			p[k] -= step
		}
	}
	for l := range p.W {
		upd(p.W[l], g.W[l], o.m.W[l], o.v.W[l])
		upd(p.B[l], g.B[l], o.m.B[l], o.v.B[l])
	}
}
