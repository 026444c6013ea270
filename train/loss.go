package train

import (
	"fmt"
	"math"

	"github.com/hlmproject/hlm/tensor"
)

// Loss is a divergence between the student's next-token distribution
// x = softmax(z) and the teacher's y, minimised over the student's logits z.
type Loss int

const (
	// FKL is the forward KL divergence KL(y‖x) = Σ y·log(y/x): cross-entropy
	// on the teacher's soft labels (mode-covering).
	FKL Loss = iota
	// RKL is the reverse KL divergence KL(x‖y) = Σ x·log(x/y) (mode-seeking).
	RKL
	// TVD is the total variation distance ½Σ|x − y|; 1 − TVD is the
	// probability that speculative sampling accepts a draft from x when the
	// target is y (Leviathan et al. 2023), so minimising it maximises
	// acceptance directly (DistillSpec, Zhou et al. 2024).
	TVD
	// JSD is the Jensen–Shannon divergence ½KL(x‖m) + ½KL(y‖m), m = (x+y)/2.
	JSD
)

var lossNames = []string{"fkl", "rkl", "tvd", "jsd"}

func (l Loss) String() string {
	if l >= 0 && int(l) < len(lossNames) {
		return lossNames[l]
	}
	return fmt.Sprintf("Loss(%d)", int(l))
}

// ParseLoss reads a loss name (fkl, rkl, tvd, jsd).
func ParseLoss(s string) (Loss, error) {
	for i, n := range lossNames {
		if n == s {
			return Loss(i), nil
		}
	}
	return 0, fmt.Errorf("unknown loss %q (want fkl, rkl, tvd or jsd)", s)
}

// tiny keeps logarithms of teacher probabilities that underflowed to zero
// finite (RKL would otherwise be infinite for any x > 0 there).
const tiny = 1e-30

// lossRow computes the loss of one position and writes its gradient with
// respect to the logits, scaled by scale, into dz (when dz is not nil). It
// also returns the total variation distance TV(x, y), whose complement is the
// acceptance probability of a draft sampled from x. ws is a work buffer of
// at least 2·len(z) float64s.
//
// With g_i = ∂loss/∂x_i (up to a constant), the softmax Jacobian gives
// ∂loss/∂z_i = x_i·(g_i − Σ_j x_j·g_j); FKL's gradient is simply x − y.
// log x_i = z_i − logsumexp(z) is exact, so each element costs at most two
// logarithms (JSD: log y_i and log(x_i + y_i)).
func lossRow[F Float](l Loss, dz, z []F, y []float32, scale float64, ws []float64) (loss, tv float64) {
	v := len(z)
	x, g := ws[:v], ws[v:2*v]
	mx := math.Inf(-1)
	for _, zi := range z {
		mx = max(mx, float64(zi))
	}
	var sum float64
	if is32[F]() {
		sum = tensor.ExpShifted(x, as32(z), mx, 1) // vectorised, same bits as tensor.Exp
	} else {
		for i, zi := range z {
			e := tensor.Exp(float64(zi) - mx)
			x[i] = e
			sum += e
		}
	}
	lse := mx + math.Log(sum)
	inv := 1 / sum
	if l == FKL {
		// One pass: every sum keeps its element order, so the values are
		// those of separate passes.
		for i, zi := range z {
			xi, yi := x[i]*inv, float64(y[i])
			tv += math.Abs(xi - yi)
			if yi > 0 {
				loss += yi * (math.Log(yi) - (float64(zi) - lse))
			}
			if dz != nil {
				dz[i] = F(scale * (xi - yi))
			}
		}
		return loss, tv / 2
	}
	for i := range x {
		x[i] *= inv
		tv += math.Abs(x[i] - float64(y[i]))
	}
	tv /= 2

	switch l {
	case RKL:
		for i, zi := range z {
			g[i] = (float64(zi) - lse) - math.Log(max(float64(y[i]), tiny))
			loss += x[i] * g[i]
		}
	case TVD:
		loss = tv
		for i, xi := range x {
			switch yi := float64(y[i]); {
			case xi > yi:
				g[i] = 0.5
			case xi < yi:
				g[i] = -0.5
			default:
				g[i] = 0
			}
		}
	case JSD:
		// JSD = ½Σ x·log(2x/(x+y)) + ½Σ y·log(2y/(x+y)); g_i = ½·log(2x_i/(x_i+y_i)).
		for i, zi := range z {
			xi, yi := x[i], float64(y[i])
			if xi+yi <= 0 {
				g[i] = 0
				continue
			}
			lm := math.Log(xi + yi)
			g[i] = (math.Ln2 + (float64(zi) - lse) - lm) / 2
			loss += xi * g[i]
			if yi > 0 {
				loss += yi * (math.Ln2 + math.Log(yi) - lm) / 2
			}
		}
	default:
		panic("train: unknown loss")
	}
	if dz == nil {
		return loss, tv
	}
	var mean float64
	for i, xi := range x {
		mean += xi * g[i]
	}
	for i, xi := range x {
		dz[i] = F(scale * xi * (g[i] - mean))
	}
	return loss, tv
}

// Eval computes the loss over n rows of logits against the teacher's
// distributions y (n×V), writing the gradient of the mean loss into dz when
// dz is not nil. It returns the mean loss and the mean TV distance.
// Per-row results are summed in row order, so the result does not depend on
// the thread count.
func Eval[F Float](l Loss, dz, z []F, y []float32, n, v int) (loss, tv float64) {
	rl, rt := make([]float64, n), make([]float64, n)
	scale := 1 / float64(n)
	tensor.ParallelFor(n, 20*n*v, func(lo, hi int) {
		ws := make([]float64, 2*v)
		for r := lo; r < hi; r++ {
			var d []F
			if dz != nil {
				d = dz[r*v : (r+1)*v]
			}
			rl[r], rt[r] = lossRow(l, d, z[r*v:(r+1)*v], y[r*v:(r+1)*v], scale, ws)
		}
	})
	for r := range rl {
		loss += rl[r]
		tv += rt[r]
	}
	return loss / float64(n), tv / float64(n)
}
