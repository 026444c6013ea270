package codec

import (
	"math"
	"math/rand/v2"
)

// Distribution generators for tests and benchmarks. All take a seeded
// *rand.Rand.

// gammaSample draws Gamma(a, 1) (Marsaglia–Tsang; boosted for a < 1).
func gammaSample(r *rand.Rand, a float64) float64 {
	if a < 1 {
		u := r.Float64()
		return gammaSample(r, a+1) * math.Pow(u, 1/a)
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}

// dirichlet draws a symmetric Dirichlet(alpha) vector of length v with all
// entries > 0 (entries that underflow are set to the smallest normal).
func dirichlet(r *rand.Rand, v int, alpha float64) []float64 {
	x := make([]float64, v)
	s := 0.0
	for i := range x {
		x[i] = gammaSample(r, alpha)
		s += x[i]
	}
	return normalizePositive(x, s)
}

// softmaxLogits draws logits N(0, sigma²) and returns their softmax: a
// peaked, LLM-like distribution for large sigma.
func softmaxLogits(r *rand.Rand, v int, sigma float64) []float64 {
	z := make([]float64, v)
	m := math.Inf(-1)
	for i := range z {
		z[i] = sigma * r.NormFloat64()
		m = math.Max(m, z[i])
	}
	s := 0.0
	for i := range z {
		z[i] = math.Exp(z[i] - m)
		s += z[i]
	}
	return normalizePositive(z, s)
}

// llmLike mimics a language-model next-token distribution: a Zipf-like
// head over a random permutation of ids, at temperature-like sharpness s.
func llmLike(r *rand.Rand, v int, s float64) []float64 {
	x := make([]float64, v)
	perm := r.Perm(v)
	sum := 0.0
	for rank, id := range perm {
		w := math.Pow(float64(rank+1), -s) * math.Exp(0.3*r.NormFloat64())
		x[id] = w
		sum += w
	}
	return normalizePositive(x, sum)
}

func normalizePositive(x []float64, s float64) []float64 {
	for i := range x {
		x[i] /= s
		if !(x[i] > 0) {
			x[i] = 0x1p-1022
		}
	}
	return x
}

// randomDist draws one of several shapes: flat or peaked Dirichlet,
// softmax of Gaussian logits, Zipf-like.
func randomDist(r *rand.Rand, v int) []float64 {
	switch r.IntN(5) {
	case 0:
		return dirichlet(r, v, 1)
	case 1:
		return dirichlet(r, v, 0.05)
	case 2:
		return softmaxLogits(r, v, 1+7*r.Float64())
	case 3:
		return llmLike(r, v, 0.8+1.2*r.Float64())
	default:
		return dirichlet(r, v, 10)
	}
}

// logUniformInt draws an integer log-uniformly from [lo, hi].
func logUniformInt(r *rand.Rand, lo, hi int) int {
	return int(math.Exp(math.Log(float64(lo)) + r.Float64()*(math.Log(float64(hi)+1)-math.Log(float64(lo)))))
}

func sum(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s
}

// peaked mimics a sharper next-token distribution: softmax of Gaussian
// logits (σ = 2.5) with three boosted tokens (+8…+12), so the top token
// holds a third or more of the mass and a long body the rest.
func peaked(r *rand.Rand, v int) []float64 {
	z := make([]float64, v)
	for i := range z {
		z[i] = 2.5 * r.NormFloat64()
	}
	for j := 0; j < 3; j++ {
		z[r.IntN(v)] += 8 + 4*r.Float64()
	}
	m := math.Inf(-1)
	for _, zi := range z {
		m = math.Max(m, zi)
	}
	s := 0.0
	for i := range z {
		z[i] = math.Exp(z[i] - m)
		s += z[i]
	}
	return normalizePositive(z, s)
}
