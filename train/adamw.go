package train

import (
	"errors"
	"fmt"
	"math"

	"github.com/hlmproject/hlm/tensor"
)

// Schedule is the learning-rate schedule: linear warmup from 0 to LR over
// Warmup steps, then cosine decay to MinLR at step Steps.
type Schedule struct {
	LR, MinLR     float64
	Warmup, Steps int
}

// At is the learning rate of step s (0-based).
func (s Schedule) At(step int) float64 {
	if step < s.Warmup {
		return s.LR * float64(step+1) / float64(s.Warmup)
	}
	if s.Steps <= s.Warmup {
		return s.LR
	}
	f := min(1, float64(step-s.Warmup)/float64(s.Steps-s.Warmup))
	return s.MinLR + (s.LR-s.MinLR)*(1+math.Cos(math.Pi*f))/2
}

// AdamW is the optimizer's configuration (Loshchilov & Hutter 2019):
// decoupled weight decay on matrices only, and clipping of the global
// gradient norm to Clip (0: off).
type AdamW struct {
	Schedule
	Beta1, Beta2, Eps float64
	WeightDecay       float64
	Clip              float64
}

// DefaultAdamW is the usual setting for small language models.
func DefaultAdamW() AdamW {
	return AdamW{Schedule: Schedule{LR: 3e-3, MinLR: 3e-4, Warmup: 20, Steps: 1000}, Beta1: 0.9, Beta2: 0.95, Eps: 1e-8, WeightDecay: 0.01, Clip: 1}
}

// Validate rejects settings that cannot train.
func (a AdamW) Validate() error {
	switch {
	case !(a.LR > 0) || math.IsInf(a.LR, 0):
		return fmt.Errorf("learning rate %g: want > 0", a.LR)
	case a.MinLR < 0 || a.MinLR > a.LR:
		return fmt.Errorf("minimum learning rate %g: want 0 ≤ min ≤ %g", a.MinLR, a.LR)
	case a.Warmup < 0 || a.Steps <= 0:
		return fmt.Errorf("warmup %d / steps %d: want warmup ≥ 0 and steps > 0", a.Warmup, a.Steps)
	case !(a.Beta1 >= 0 && a.Beta1 < 1) || !(a.Beta2 >= 0 && a.Beta2 < 1):
		return fmt.Errorf("betas %g, %g: want [0, 1)", a.Beta1, a.Beta2)
	case !(a.Eps > 0):
		return fmt.Errorf("epsilon %g: want > 0", a.Eps)
	case !(a.WeightDecay >= 0):
		return fmt.Errorf("weight decay %g: want ≥ 0", a.WeightDecay)
	case !(a.Clip >= 0):
		return fmt.Errorf("gradient clip %g: want ≥ 0 (0: off)", a.Clip)
	}
	return nil
}

// ErrNonFinite reports a NaN or infinite gradient: the step was not taken.
var ErrNonFinite = errors.New("non-finite gradient")

// Optimizer is AdamW's state for one set of parameters.
type Optimizer[F Float] struct {
	Config AdamW
	Step   int // steps taken
	M, V   []F // first and second moments, in the parameters' layout
}

// NewOptimizer makes a fresh optimizer for p.
func NewOptimizer[F Float](cfg AdamW, p *Params[F]) *Optimizer[F] {
	return &Optimizer[F]{Config: cfg, M: make([]F, len(p.Data)), V: make([]F, len(p.Data))}
}

// GradNorm is the L2 norm of the gradients of the trainable tensors, summed
// in layout order in float64.
func GradNorm[F Float](p, g *Params[F]) float64 {
	var ss float64
	for _, t := range p.Tensors {
		if t.Frozen {
			continue
		}
		for _, x := range g.Data[t.Off : t.Off+t.Size()] {
			ss += float64(x) * float64(x)
		}
	}
	return math.Sqrt(ss)
}

// Update takes one AdamW step of p along g and returns the gradient norm
// before clipping and the learning rate used. A non-finite gradient leaves
// p and the optimizer unchanged and returns ErrNonFinite.
func (o *Optimizer[F]) Update(p, g *Params[F]) (norm, lr float64, err error) {
	c := o.Config
	norm = GradNorm(p, g)
	if math.IsNaN(norm) || math.IsInf(norm, 0) {
		return norm, 0, ErrNonFinite
	}
	clip := 1.0
	if c.Clip > 0 && norm > c.Clip {
		clip = c.Clip / norm
	}
	lr = c.At(o.Step)
	o.Step++
	bc1 := 1 - math.Pow(c.Beta1, float64(o.Step))
	bc2 := 1 - math.Pow(c.Beta2, float64(o.Step))
	for _, t := range p.Tensors {
		if t.Frozen {
			continue
		}
		wd := 0.0
		if t.Matrix {
			wd = c.WeightDecay
		}
		lo, n := t.Off, t.Size()
		tensor.ParallelFor(n, 10*n, func(a, b int) {
			for i := lo + a; i < lo+b; i++ {
				gi := float64(g.Data[i]) * clip
				m := c.Beta1*float64(o.M[i]) + (1-c.Beta1)*gi
				v := c.Beta2*float64(o.V[i]) + (1-c.Beta2)*gi*gi
				o.M[i], o.V[i] = F(m), F(v)
				x := float64(p.Data[i])
				x -= lr * ((m/bc1)/(math.Sqrt(v/bc2)+c.Eps) + wd*x)
				p.Data[i] = F(x)
			}
		})
	}
	return norm, lr, nil
}
