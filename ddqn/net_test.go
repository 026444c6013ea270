package ddqn

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// refForward is the oracle forward pass, written from the definition with
// explicit indices. It returns every layer's pre-activation z[l] (z[last]
// is Q) so that tests can see how close an input is to a ReLU kink.
func refForward(n *Net, x []float64) (z [][]float64) {
	a := x
	for l := range n.W {
		in, out := n.Sizes[l], n.Sizes[l+1]
		zl := make([]float64, out)
		next := make([]float64, out)
		for j := 0; j < out; j++ {
			zl[j] = n.B[l][j]
			for i := 0; i < in; i++ {
				zl[j] += n.W[l][j*in+i] * a[i]
			}
			next[j] = math.Max(zl[j], 0)
		}
		z = append(z, zl)
		a = next
	}
	return z
}

func TestForwardByHand(t *testing.T) {
	// 2 inputs → 2 ReLU units → 2 actions.
	n := &Net{
		Sizes: []int{2, 2, 2},
		W:     [][]float64{{1, -1, 0.5, 2}, {1, 1, -2, 0.25}},
		B:     [][]float64{{0, -1}, {0.5, 0}},
	}
	// h = ReLU([1·3 − 1·1 + 0, 0.5·3 + 2·1 − 1]) = [2, 2.5]
	// Q = [2 + 2.5 + 0.5, −4 + 0.625 + 0] = [5, −3.375]
	q := n.Forward([]float64{3, 1}, nil)
	if q[0] != 5 || q[1] != -3.375 {
		t.Fatalf("Forward = %v, want [5 -3.375]", q)
	}
	// A negative pre-activation is cut: x = (−1, 1): h = ReLU([−2, 0.5]) = [0, 0.5].
	q = n.Forward([]float64{-1, 1}, q) // reuses q
	if q[0] != 1 || q[1] != 0.125 {
		t.Fatalf("Forward = %v, want [1 0.125]", q)
	}
}

func TestForwardMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, hidden := range [][]int{nil, {7}, {16, 9}, {5, 5, 5}} {
		n, err := NewNet(4, hidden, 3, rng)
		if err != nil {
			t.Fatal(err)
		}
		tr := newTrace(n)
		for range 50 {
			x := []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
			z := refForward(n, x)
			want := z[len(z)-1]
			got := n.Forward(x, nil)
			got2 := n.forward(x, tr)
			for k := range want {
				d := math.Abs(got[k] - want[k])
				if d > 1e-12*(1+math.Abs(want[k])) || got2[k] != got[k] {
					t.Fatalf("hidden %v: Q[%d] = %v (trace %v), reference %v, abs diff %.3g", hidden, k, got[k], got2[k], want[k], d)
				}
			}
		}
	}
}

func TestNewNetValidates(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, c := range []struct {
		inputs  int
		hidden  []int
		actions int
		want    error
	}{
		{0, nil, 2, ErrConfig},
		{2, nil, 0, ErrConfig},
		{2, []int{3, 0}, 2, ErrConfig},
		{2, []int{-5}, 2, ErrConfig},
		{MaxWidth + 1, nil, 2, ErrLimit},
		{2, []int{MaxWidth + 1}, 2, ErrLimit},
		{2, make([]int, MaxHidden+1), 2, ErrLimit},
		{2, []int{4096, 4096}, 2, ErrLimit}, // 16.8M parameters
	} {
		if _, err := NewNet(c.inputs, c.hidden, c.actions, rng); !errors.Is(err, c.want) {
			t.Errorf("NewNet(%d, %v, %d) error %v, want %v", c.inputs, c.hidden, c.actions, err, c.want)
		}
	}
	if _, err := NewNet(2, nil, 2, nil); !errors.Is(err, ErrConfig) {
		t.Errorf("nil rng: error %v", err)
	}
}

// TestNewNetInit checks He-uniform initialisation: every weight within its
// bound, and the sample variance of a 256×256 layer (65,536 draws) within
// 3% of bound²/3 (the variance's standard error is about 0.35%).
func TestNewNetInit(t *testing.T) {
	n, err := NewNet(256, []int{256}, 8, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	for l, gain := range []float64{6, 3} {
		bound := math.Sqrt(gain / float64(n.Sizes[l]))
		var s, ss float64
		for _, w := range n.W[l] {
			if math.Abs(w) > bound {
				t.Fatalf("layer %d weight %v beyond ±%v", l, w, bound)
			}
			s += w
			ss += w * w
		}
		for _, b := range n.B[l] {
			if b != 0 {
				t.Fatalf("layer %d bias %v, want 0", l, b)
			}
		}
		if l == 0 {
			k := float64(len(n.W[l]))
			v := ss/k - (s/k)*(s/k)
			if want := bound * bound / 3; math.Abs(v-want) > 0.03*want {
				t.Errorf("layer %d variance %v, want %v ± 3%%", l, v, want)
			}
		}
	}
}

func TestClone(t *testing.T) {
	n, _ := NewNet(3, []int{4}, 2, rand.New(rand.NewPCG(5, 6)))
	c := n.Clone()
	c.W[0][0] += 1
	c.B[1][0] += 1
	c.Sizes[0] = 99
	if n.W[0][0] == c.W[0][0] || n.B[1][0] == c.B[1][0] || n.Sizes[0] == 99 {
		t.Fatal("Clone shares storage")
	}
}

// TestGradientCheck compares the backpropagated gradient of the minibatch
// Huber loss, (1/B) Σ h(Q(x_b)[a_b] − y_b), with central finite differences
// for every parameter of small random networks. With the ReLU pattern and
// the Huber branch fixed the loss is at most quadratic in any single
// parameter, so the central difference is exact but for rounding (about
// 1e-16/h = 1e-13); batches whose pre-activations or Huber residuals lie
// within 5e-2 of a kink are redrawn, and the test checks that no step of
// h = 1e-3 crosses one. Relative error |g − ĝ| / max(|g|, |ĝ|, 1e-6) must
// stay below 1e-5.
func TestGradientCheck(t *testing.T) {
	const (
		batch  = 4
		kappa  = 0.5 // residuals land on both sides of the Huber threshold
		h      = 1e-3
		margin = 5e-2
		tol    = 1e-5
	)
	rng := rand.New(rand.NewPCG(11, 12))
	for trial, hidden := range [][]int{{5}, {6, 4}, {3, 5, 4}, nil} {
		n, err := NewNet(3, hidden, 3, rng)
		if err != nil {
			t.Fatal(err)
		}
		for l := range n.B { // non-zero biases exercise their gradients
			for k := range n.B[l] {
				n.B[l][k] = 0.1 * rng.NormFloat64()
			}
		}
		var xs [][]float64
		var acts []int
		var ys []float64
		for len(xs) < batch {
			x := []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
			a := rng.IntN(3)
			y := 2 * rng.NormFloat64()
			z := refForward(n, x)
			near := math.Abs(math.Abs(z[len(z)-1][a]-y)-kappa) < margin
			for _, zl := range z[:len(z)-1] {
				for _, v := range zl {
					near = near || math.Abs(v) < margin
				}
			}
			if !near {
				xs, acts, ys = append(xs, x), append(acts, a), append(ys, y)
			}
		}
		// lossAt returns the reference loss and the kink pattern: which
		// pre-activations are positive and which residuals exceed κ.
		lossAt := func() (float64, string) {
			s, pattern := 0.0, []byte{}
			for b := range xs {
				z := refForward(n, xs[b])
				for _, zl := range z[:len(z)-1] {
					for _, v := range zl {
						pattern = append(pattern, bit(v > 0))
					}
				}
				d := z[len(z)-1][acts[b]] - ys[b]
				pattern = append(pattern, bit(math.Abs(d) > kappa))
				l, _ := huber(d, kappa)
				s += l
			}
			return s / batch, string(pattern)
		}
		loss0, pattern0 := lossAt()
		g := newZeroNet(n.Sizes)
		tr := newTrace(n)
		dq := make([]float64, 3)
		loss := 0.0
		for b := range xs {
			loss += sampleGrad(n, xs[b], acts[b], ys[b], kappa, 1.0/batch, g, tr, dq)
		}
		if d := math.Abs(loss/batch - loss0); d > 1e-12 {
			t.Fatalf("trial %d: loss %v, reference %v", trial, loss/batch, loss0)
		}
		worst := 0.0
		check := func(what string, p, gp []float64) {
			for k := range p {
				orig := p[k]
				p[k] = orig + h
				up, pu := lossAt()
				p[k] = orig - h
				down, pd := lossAt()
				p[k] = orig
				if pu != pattern0 || pd != pattern0 {
					t.Fatalf("trial %d %s[%d]: a step of %g crosses a kink; enlarge the margin", trial, what, k, h)
				}
				num := (up - down) / (2 * h)
				rel := math.Abs(gp[k]-num) / math.Max(math.Max(math.Abs(gp[k]), math.Abs(num)), 1e-6)
				worst = math.Max(worst, rel)
				if rel > tol {
					t.Errorf("trial %d (hidden %v) %s[%d]: backprop %.10g, finite difference %.10g, rel error %.3g", trial, hidden, what, k, gp[k], num, rel)
				}
			}
		}
		for l := range n.W {
			check("W"+string(rune('0'+l)), n.W[l], g.W[l])
			check("B"+string(rune('0'+l)), n.B[l], g.B[l])
		}
		t.Logf("hidden %v: max relative error %.3g", hidden, worst)
	}
}

func bit(b bool) byte {
	if b {
		return '1'
	}
	return '0'
}

func TestHuber(t *testing.T) {
	for _, c := range []struct{ d, kappa, loss, grad float64 }{
		{0.5, 1, 0.125, 0.5},
		{-1, 1, 0.5, -1},
		{3, 1, 2.5, 1},
		{-3, 2, 4, -2},
		{1e6, math.Inf(1), 5e11, 1e6},
	} {
		l, g := huber(c.d, c.kappa)
		if l != c.loss || g != c.grad {
			t.Errorf("huber(%v, %v) = %v, %v; want %v, %v", c.d, c.kappa, l, g, c.loss, c.grad)
		}
	}
}
