package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hlmproject/hlm/model"
)

// The gradient of every operation is checked against central finite
// differences of its float64 forward: for a random projection w,
// L(θ) = Σ w·f(θ), the analytic ∂L/∂θ from the backward pass must match
// (L(θ+h) − L(θ−h))/2h for every input element.

const (
	fdStep = 1e-6
	// fdTol bounds |analytic − numeric| / max(1, |numeric|) (the central
	// difference of a smooth float64 function is accurate to ~1e-9 here).
	fdTol = 1e-6
)

func randVec(rng *rand.Rand, n int, scale float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64() * scale
	}
	return v
}

// checkGrad compares grad with finite differences of loss over the
// elements of x.
func checkGrad(t *testing.T, what string, x, grad []float64, loss func() float64) {
	t.Helper()
	worst := 0.0
	for i := range x {
		old := x[i]
		x[i] = old + fdStep
		lp := loss()
		x[i] = old - fdStep
		lm := loss()
		x[i] = old
		num := (lp - lm) / (2 * fdStep)
		err := math.Abs(grad[i]-num) / max(1, math.Abs(num))
		worst = max(worst, err)
		if err > fdTol {
			t.Fatalf("%s[%d]: analytic %.10g, finite difference %.10g (error %.3g > %g)", what, i, grad[i], num, err, fdTol)
		}
	}
	t.Logf("%s: %d elements, worst relative error %.2g", what, len(x), worst)
}

func project(w, y []float64) float64 {
	var s float64
	for i := range y {
		s += w[i] * y[i]
	}
	return s
}

func TestLinearGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	n, in, out := 5, 7, 6
	x, w := randVec(rng, n*in, 1), randVec(rng, out*in, 0.5)
	proj := randVec(rng, n*out, 1)
	y := make([]float64, n*out)
	loss := func() float64 { linear(y, x, w, n, in, out); return project(proj, y) }
	dx, dw := make([]float64, n*in), make([]float64, out*in)
	var s scratch[float64]
	linearBack(&s, dx, dw, proj, x, w, n, in, out)
	checkGrad(t, "linear dx", x, dx, loss)
	checkGrad(t, "linear dw", w, dw, loss)
}

func TestRMSNormGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 1))
	n, d := 4, 9
	x, g := randVec(rng, n*d, 1), randVec(rng, d, 1)
	proj := randVec(rng, n*d, 1)
	y, inv := make([]float64, n*d), make([]float64, n)
	loss := func() float64 { rmsnorm(y, inv, x, g, n, d, 1e-5); return project(proj, y) }
	loss()
	dx, dg := make([]float64, n*d), make([]float64, d)
	rmsnormBack(dx, dg, proj, x, inv, g, n, d)
	checkGrad(t, "rmsnorm dx", x, dx, loss)
	checkGrad(t, "rmsnorm dg", g, dg, loss)
}

func TestRopeGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1))
	b, tt, d := 2, 5, 8
	n := b * tt
	rp := newRope[float64](4, 16, 10000)
	x := randVec(rng, n*d, 1)
	proj := randVec(rng, n*d, 1)
	y := make([]float64, n*d)
	loss := func() float64 { copy(y, x); rp.apply(y, n, d, tt, false); return project(proj, y) }
	dx := append([]float64(nil), proj...)
	rp.apply(dx, n, d, tt, true)
	checkGrad(t, "rope dx", x, dx, loss)
	// The rotation is orthogonal: inverse(apply(x)) = x.
	copy(y, x)
	rp.apply(y, n, d, tt, false)
	rp.apply(y, n, d, tt, true)
	for i := range y {
		if math.Abs(y[i]-x[i]) > 1e-12 {
			t.Fatalf("rope inverse: element %d %g, want %g", i, y[i], x[i])
		}
	}
}

func TestAttentionGrad(t *testing.T) {
	for _, tc := range []struct{ heads, kv int }{{2, 2}, {4, 2}, {4, 1}} {
		t.Run(fmt.Sprintf("heads%d_kv%d", tc.heads, tc.kv), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(4, uint64(tc.heads*10+tc.kv)))
			a := attnShape{b: 2, t: 4, heads: tc.heads, kvHeads: tc.kv, hs: 3}
			n := a.b * a.t
			q, k, v := randVec(rng, n*a.dim(), 1), randVec(rng, n*a.kvDim(), 1), randVec(rng, n*a.kvDim(), 1)
			proj := randVec(rng, n*a.dim(), 1)
			out, prob := make([]float64, n*a.dim()), make([]float64, a.b*a.heads*a.t*a.t)
			loss := func() float64 { attention(out, prob, q, k, v, a); return project(proj, out) }
			loss()
			dq, dk, dv := make([]float64, len(q)), make([]float64, len(k)), make([]float64, len(v))
			attentionBack(dq, dk, dv, proj, prob, q, k, v, a)
			checkGrad(t, "attention dq", q, dq, loss)
			checkGrad(t, "attention dk", k, dk, loss)
			checkGrad(t, "attention dv", v, dv, loss)
		})
	}
}

func TestAttentionIsCausal(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 1))
	a := attnShape{b: 1, t: 5, heads: 2, kvHeads: 1, hs: 4}
	n := a.t
	q, k, v := randVec(rng, n*a.dim(), 1), randVec(rng, n*a.kvDim(), 1), randVec(rng, n*a.kvDim(), 1)
	out, prob := make([]float64, n*a.dim()), make([]float64, a.heads*a.t*a.t)
	attention(out, prob, q, k, v, a)
	before := append([]float64(nil), out[:3*a.dim()]...)
	for i := 3 * a.kvDim(); i < len(k); i++ { // change keys and values of positions 3, 4
		k[i] += 1
		v[i] -= 1
	}
	attention(out, prob, q, k, v, a)
	for i, want := range before {
		if out[i] != want {
			t.Fatalf("output of an earlier position changed with a later key: element %d", i)
		}
	}
}

func TestSwiGLUGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 1))
	n := 23
	g, u := randVec(rng, n, 2), randVec(rng, n, 1)
	proj := randVec(rng, n, 1)
	act := make([]float64, n)
	loss := func() float64 { swiglu(act, g, u); return project(proj, act) }
	dg, du := make([]float64, n), make([]float64, n)
	swigluBack(dg, du, proj, g, u)
	checkGrad(t, "swiglu dgate", g, dg, loss)
	checkGrad(t, "swiglu dup", u, du, loss)
}

func TestLossGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 1))
	n, v := 3, 11
	y := make([]float32, n*v)
	for r := 0; r < n; r++ {
		var s float64
		p := randVec(rng, v, 1.5)
		for i := range p {
			p[i] = math.Exp(p[i])
			s += p[i]
		}
		for i := range p {
			y[r*v+i] = float32(p[i] / s)
		}
	}
	for _, l := range []Loss{FKL, RKL, TVD, JSD} {
		t.Run(l.String(), func(t *testing.T) {
			z := randVec(rng, n*v, 1.5)
			dz := make([]float64, n*v)
			Eval(l, dz, z, y, n, v)
			loss := func() float64 { m, _ := Eval[float64](l, nil, z, y, n, v); return m }
			checkGrad(t, l.String()+" dz", z, dz, loss)
		})
	}
}

func TestLossValues(t *testing.T) {
	// Closed forms on a 3-token vocabulary.
	z := []float64{0, math.Log(2), math.Log(5)} // x = (1/8, 2/8, 5/8)
	x := []float64{1. / 8, 2. / 8, 5. / 8}
	yf := []float32{0.5, 0.25, 0.25}
	y := []float64{0.5, 0.25, 0.25}
	kl := func(a, b []float64) (s float64) {
		for i := range a {
			s += a[i] * math.Log(a[i]/b[i])
		}
		return
	}
	m := []float64{(x[0] + y[0]) / 2, (x[1] + y[1]) / 2, (x[2] + y[2]) / 2}
	want := map[Loss]float64{
		FKL: kl(y, x),
		RKL: kl(x, y),
		TVD: 0.375,
		JSD: kl(x, m)/2 + kl(y, m)/2,
	}
	for l, w := range want {
		got, tv := Eval[float64](l, nil, z, yf, 1, 3)
		if math.Abs(got-w) > 1e-7 || math.Abs(tv-0.375) > 1e-7 {
			t.Errorf("%v: loss %.9g, want %.9g; tv %.9g, want 0.375", l, got, w, tv)
		}
	}
}

// tinyShape is a decoder small enough for a full finite-difference check:
// grouped-query attention (4 heads, 2 KV heads), odd hidden width.
func tinyShape(tied bool) Shape {
	return Shape{Config: model.Config{Arch: "llama", Dim: 8, Hidden: 6, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 7, SeqLen: 8, RopeTheta: 10000, NormEps: 1e-5}, Tied: tied}
}

func TestModelGrad(t *testing.T) {
	for _, tied := range []bool{false, true} {
		for _, l := range []Loss{FKL, TVD} {
			t.Run(fmt.Sprintf("tied=%v/%v", tied, l), func(t *testing.T) {
				p, err := NewParams[float64](tinyShape(tied))
				if err != nil {
					t.Fatal(err)
				}
				p.InitRandom(11, 0.5)
				rng := rand.New(rand.NewPCG(8, 1))
				for i := range p.FinalNorm { // norms away from 1 exercise their gradients
					p.FinalNorm[i] += rng.NormFloat64() * 0.2
				}
				b, tt, v := 2, 5, p.Shape.Vocab
				toks := make([]int, b*tt)
				for i := range toks {
					toks[i] = rng.IntN(v)
				}
				y := make([]float32, b*tt*v)
				for r := 0; r < b*tt; r++ {
					var s float32
					for i := 0; i < v; i++ {
						y[r*v+i] = float32(rng.Float64() + 0.05)
						s += y[r*v+i]
					}
					for i := 0; i < v; i++ {
						y[r*v+i] /= s
					}
				}
				m := NewModel(p)
				loss := func() float64 {
					z, err := m.Forward(toks, b, tt)
					if err != nil {
						t.Fatal(err)
					}
					ls, _ := Eval[float64](l, nil, z, y, b*tt, v)
					return ls
				}
				z, _ := m.Forward(toks, b, tt)
				dz := make([]float64, len(z))
				Eval(l, dz, z, y, b*tt, v)
				m.ZeroGrad()
				m.Backward(dz)
				grad := append([]float64(nil), m.G.Data...)
				checkGrad(t, "model params", p.Data, grad, loss)
			})
		}
	}
}

func TestFrozenTensors(t *testing.T) {
	// With everything below the final norm frozen, Backward must give
	// exactly the full gradient for the trainable tensors and zero elsewhere.
	p, _ := NewParams[float64](tinyShape(false))
	p.InitRandom(12, 0.5)
	rng := rand.New(rand.NewPCG(9, 1))
	b, tt, v := 1, 6, p.Shape.Vocab
	toks := make([]int, b*tt)
	for i := range toks {
		toks[i] = rng.IntN(v)
	}
	dz := randVec(rng, b*tt*v, 1)
	full := NewModel(p)
	full.Forward(toks, b, tt)
	full.Backward(dz)

	q := p.Clone()
	var frozen []string
	for _, tn := range q.Tensors {
		if tn.Name != "output.weight" && tn.Name != "output_norm.weight" && tn.Name != "blk.1.ffn_down.weight" {
			frozen = append(frozen, tn.Name)
		}
	}
	if err := q.Freeze(true, frozen...); err != nil {
		t.Fatal(err)
	}
	part := NewModel(q)
	part.Forward(toks, b, tt)
	part.Backward(dz)
	for _, tn := range q.Tensors {
		got := part.G.Data[tn.Off : tn.Off+tn.Size()]
		want := full.G.Data[tn.Off : tn.Off+tn.Size()]
		for i := range got {
			if tn.Frozen && got[i] != 0 {
				t.Fatalf("%s is frozen but got a gradient", tn.Name)
			}
			if !tn.Frozen && got[i] != want[i] {
				t.Fatalf("%s[%d]: %g with frozen neighbours, %g without", tn.Name, i, got[i], want[i])
			}
		}
	}
	if q.Trainable() != p.Shape.Vocab*p.Shape.Dim+p.Shape.Dim+p.Shape.Dim*p.Shape.Hidden {
		t.Errorf("trainable count %d", q.Trainable())
	}
	if err := q.Freeze(true, "no.such.tensor"); err == nil {
		t.Error("freezing an unknown tensor: no error")
	}
}
