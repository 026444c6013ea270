package ddqn

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

var (
	// ErrConfig reports an invalid configuration or network shape.
	ErrConfig = errors.New("ddqn: invalid configuration")
	// ErrFormat reports a malformed or inconsistent model file.
	ErrFormat = errors.New("ddqn: malformed model file")
	// ErrLimit reports a size beyond the package's limits.
	ErrLimit = errors.New("ddqn: size limit exceeded")
)

// Size limits, enforced by NewNet, NewAgent and Load. They bound what a
// model file can make Load allocate.
const (
	MaxWidth  = 4096    // units in any layer, inputs and actions included
	MaxHidden = 8       // hidden layers
	MaxParams = 1 << 22 // weights plus biases of a network
)

// Net is a fully connected network: inputs → hidden layers (ReLU) → one
// linear output (a Q-value) per action. Layer l maps Sizes[l] units to
// Sizes[l+1] units:
//
//	a[0]   = x
//	a[l+1] = ReLU(W[l]·a[l] + B[l])   for hidden layers
//	Q      = W[L-1]·a[L-1] + B[L-1]   for the last (output) layer, L = len(W)
//
// The fields are exported so that a network can be inspected, saved and
// rebuilt; code that edits them must keep the shapes consistent.
type Net struct {
	// Sizes are the layer widths: Sizes[0] inputs, Sizes[1:len-1] hidden
	// units, Sizes[len-1] actions. len(Sizes) ≥ 2.
	Sizes []int
	// W[l] is layer l's weight matrix, Sizes[l+1]×Sizes[l], row-major:
	// W[l][j*Sizes[l]+i] connects unit i of layer l to unit j of layer l+1.
	W [][]float64
	// B[l] is layer l's bias vector, Sizes[l+1].
	B [][]float64
}

// checkSizes validates layer widths against the package limits.
func checkSizes(inputs int, hidden []int, actions int) error {
	if len(hidden) > MaxHidden {
		return fmt.Errorf("%w: %d hidden layers, at most %d", ErrLimit, len(hidden), MaxHidden)
	}
	check := func(what string, n int) error {
		if n < 1 {
			return fmt.Errorf("%w: %s = %d, need ≥ 1", ErrConfig, what, n)
		}
		if n > MaxWidth {
			return fmt.Errorf("%w: %s = %d, at most %d", ErrLimit, what, n, MaxWidth)
		}
		return nil
	}
	if err := check("inputs", inputs); err != nil {
		return err
	}
	for i, h := range hidden {
		if err := check(fmt.Sprintf("hidden[%d]", i), h); err != nil {
			return err
		}
	}
	if err := check("actions", actions); err != nil {
		return err
	}
	params, prev := 0, inputs
	for _, w := range append(append([]int(nil), hidden...), actions) {
		params += (prev + 1) * w // ≤ 9 × 4097 × 4096, no overflow
		prev = w
	}
	if params > MaxParams {
		return fmt.Errorf("%w: %d parameters, at most %d", ErrLimit, params, MaxParams)
	}
	return nil
}

// NewNet returns a network with the given widths, its weights drawn from
// rng layer by layer in row-major order with He (Kaiming) uniform
// initialisation: U(−√(6/fan_in), +√(6/fan_in)) for the ReLU layers and
// U(−√(3/fan_in), +√(3/fan_in)) (unit gain) for the linear output layer.
// Biases start at zero. hidden may be empty (a linear Q-function).
func NewNet(inputs int, hidden []int, actions int, rng *rand.Rand) (*Net, error) {
	if err := checkSizes(inputs, hidden, actions); err != nil {
		return nil, err
	}
	if rng == nil {
		return nil, fmt.Errorf("%w: nil rng", ErrConfig)
	}
	n := newZeroNet(append(append([]int{inputs}, hidden...), actions))
	for l, w := range n.W {
		gain := 6.0 // ReLU: Var(w) = 2/fan_in
		if l == len(n.W)-1 {
			gain = 3 // linear output: Var(w) = 1/fan_in
		}
		// w = k·bound/2⁵² with k uniform on [−2⁵², 2⁵²): one rounding,
		// no additions, so no platform can fuse anything here.
		scale := math.Sqrt(gain/float64(n.Sizes[l])) / (1 << 52)
		for k := range w {
			w[k] = float64(int64(rng.Uint64()>>11)-1<<52) * scale
		}
	}
	return n, nil
}

// newZeroNet allocates a network of the given (already validated) widths
// with all parameters zero.
func newZeroNet(sizes []int) *Net {
	n := &Net{Sizes: append([]int(nil), sizes...)}
	for l := 0; l+1 < len(sizes); l++ {
		n.W = append(n.W, make([]float64, sizes[l+1]*sizes[l]))
		n.B = append(n.B, make([]float64, sizes[l+1]))
	}
	return n
}

// Inputs returns the input width.
func (n *Net) Inputs() int { return n.Sizes[0] }

// Actions returns the output width, one Q-value per action.
func (n *Net) Actions() int { return n.Sizes[len(n.Sizes)-1] }

// maxWidth returns the widest layer, for scratch buffers.
func (n *Net) maxWidth() int {
	m := 0
	for _, s := range n.Sizes {
		m = max(m, s)
	}
	return m
}

// Clone returns a deep copy.
func (n *Net) Clone() *Net {
	c := &Net{Sizes: append([]int(nil), n.Sizes...)}
	for l := range n.W {
		c.W = append(c.W, append([]float64(nil), n.W[l]...))
		c.B = append(c.B, append([]float64(nil), n.B[l]...))
	}
	return c
}

// copyFrom overwrites n's parameters with src's (same shape).
func (n *Net) copyFrom(src *Net) {
	for l := range n.W {
		copy(n.W[l], src.W[l])
		copy(n.B[l], src.B[l])
	}
}

// validate checks that the shapes agree with Sizes and the limits, and that
// every parameter is finite.
func (n *Net) validate() error {
	if len(n.Sizes) < 2 {
		return fmt.Errorf("%w: %d layer widths, need ≥ 2", ErrFormat, len(n.Sizes))
	}
	if err := checkSizes(n.Sizes[0], n.Sizes[1:len(n.Sizes)-1], n.Sizes[len(n.Sizes)-1]); err != nil {
		return err
	}
	if len(n.W) != len(n.Sizes)-1 || len(n.B) != len(n.Sizes)-1 {
		return fmt.Errorf("%w: %d weight and %d bias arrays for %d layers", ErrFormat, len(n.W), len(n.B), len(n.Sizes)-1)
	}
	for l := range n.W {
		if len(n.W[l]) != n.Sizes[l+1]*n.Sizes[l] {
			return fmt.Errorf("%w: layer %d has %d weights, want %d×%d", ErrFormat, l, len(n.W[l]), n.Sizes[l+1], n.Sizes[l])
		}
		if len(n.B[l]) != n.Sizes[l+1] {
			return fmt.Errorf("%w: layer %d has %d biases, want %d", ErrFormat, l, len(n.B[l]), n.Sizes[l+1])
		}
		for _, v := range n.W[l] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: layer %d has a non-finite weight", ErrFormat, l)
			}
		}
		for _, v := range n.B[l] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: layer %d has a non-finite bias", ErrFormat, l)
			}
		}
	}
	return nil
}

// affine computes dst = W[l]·src + B[l], with ReLU if relu. Products are
// rounded explicitly (float64(…)) so that no platform fuses them into FMA
// instructions: the results are bit-identical on every GOARCH.
func (n *Net) affine(l int, src, dst []float64, relu bool) {
	in := n.Sizes[l]
	w := n.W[l]
	for j := range dst {
		row := w[j*in : (j+1)*in]
		s := n.B[l][j]
		for i, v := range src {
			s += float64(row[i] * v)
		}
		if relu && s < 0 {
			s = 0
		}
		dst[j] = s
	}
}

// Forward returns the Q-values of all actions for input x, written to out
// if it has room (cap(out) ≥ Actions()), otherwise to a new slice. It
// panics if len(x) ≠ Inputs(). Forward only reads n, so concurrent calls
// are safe.
func (n *Net) Forward(x []float64, out []float64) []float64 {
	if len(x) != n.Inputs() {
		panic(fmt.Sprintf("ddqn: Forward: input has %d values, network takes %d", len(x), n.Inputs()))
	}
	if cap(out) >= n.Actions() {
		out = out[:n.Actions()]
	} else {
		out = make([]float64, n.Actions())
	}
	last := len(n.W) - 1
	if last == 0 {
		n.affine(0, x, out, false)
		return out
	}
	m := n.maxWidth()
	bufA, bufB := make([]float64, m), make([]float64, m)
	src := x
	for l := 0; l < last; l++ {
		dst := bufA[:n.Sizes[l+1]]
		n.affine(l, src, dst, true)
		src, bufA, bufB = dst, bufB, bufA
	}
	n.affine(last, src, out, false)
	return out
}

// trace holds one sample's activations for backpropagation: acts[l] is the
// input of layer l (acts[0] the network input), acts[len-1] the Q-values.
type trace struct {
	acts       [][]float64
	delta, tmp []float64
}

func newTrace(n *Net) *trace {
	t := &trace{}
	for _, s := range n.Sizes {
		t.acts = append(t.acts, make([]float64, s))
	}
	m := n.maxWidth()
	t.delta, t.tmp = make([]float64, m), make([]float64, m)
	return t
}

// forward runs the network on x, keeping every layer's activations in t,
// and returns the Q-values (t's last activation slice).
func (n *Net) forward(x []float64, t *trace) []float64 {
	copy(t.acts[0], x)
	last := len(n.W) - 1
	for l := range n.W {
		n.affine(l, t.acts[l], t.acts[l+1], l < last)
	}
	return t.acts[last+1]
}

// backward adds to g the gradient, with respect to n's parameters, of a
// loss whose derivative with respect to the Q-values is dq, at the sample
// whose activations n.forward left in t. ReLU's derivative at 0 is taken
// as 0.
func (n *Net) backward(t *trace, dq []float64, g *Net) {
	delta := t.delta[:len(dq)]
	copy(delta, dq)
	for l := len(n.W) - 1; l >= 0; l-- {
		in := n.Sizes[l]
		a := t.acts[l]
		gw, gb := g.W[l], g.B[l]
		for j, d := range delta {
			if d == 0 {
				continue
			}
			gb[j] += d
			row := gw[j*in : (j+1)*in]
			for i, v := range a {
				row[i] += float64(d * v)
			}
		}
		if l == 0 {
			break
		}
		// δ[l-1]_i = ReLU'(a_i) · Σ_j W[l]_ji δ[l]_j
		prev := t.tmp[:in]
		clear(prev)
		w := n.W[l]
		for j, d := range delta {
			if d == 0 {
				continue
			}
			row := w[j*in : (j+1)*in]
			for i := range prev {
				prev[i] += float64(row[i] * d)
			}
		}
		for i, v := range a {
			if v <= 0 {
				prev[i] = 0
			}
		}
		// The next delta lives in the other scratch buffer.
		t.delta, t.tmp = t.tmp, t.delta
		delta = prev
	}
}

// zero sets every parameter to 0.
func (n *Net) zero() {
	for l := range n.W {
		clear(n.W[l])
		clear(n.B[l])
	}
}

// norm returns the Euclidean norm of all parameters taken as one vector.
func (n *Net) norm() float64 {
	s := 0.0
	for l := range n.W {
		for _, v := range n.W[l] {
			s += float64(v * v)
		}
		for _, v := range n.B[l] {
			s += float64(v * v)
		}
	}
	return math.Sqrt(s)
}

// scale multiplies every parameter by c.
func (n *Net) scale(c float64) {
	for l := range n.W {
		for k := range n.W[l] {
			n.W[l][k] *= c
		}
		for k := range n.B[l] {
			n.B[l][k] *= c
		}
	}
}
