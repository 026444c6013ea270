package stattest

import (
	"errors"
	"math"
)

// Conditional is a goodness-of-fit test for draws that each follow their
// own distribution: draw i is a token t_i from p_i, say a language model's
// next-token distribution after a generation's own prefix, so that the
// p_i differ from draw to draw. The draws must be independent given their
// distributions, or a martingale sequence: p_i may depend on earlier
// draws, never on t_i.
//
// Pearson's statistic of the counts O_v against E_v = Σ_i p_i(v) is
// conservative there: the counts' covariance Σ_i (diag p_i − p_i p_iᵀ) is
// smaller than the multinomial's, so its χ² tail overstates the p-value,
// the more so the more the p_i differ. Conditional uses that covariance:
// with the cells of E_v ≥ 5 kept (the rest pooled into one, or into the
// last kept cell when the pool is below 5 too) and one cell left out, the
// statistic
//
//	W = (O − E)ᵀ C⁻¹ (O − E),   C = Σ_i (diag P_i − P_i P_iᵀ),
//
// with P_i draw i's cell probabilities, is asymptotically χ² with (cells −
// 1) degrees of freedom. When all p_i are equal it is Pearson's statistic
// exactly.
type Conditional struct {
	draws []int
	dists [][]float64
}

// Add records draw t from p. p is kept, not copied: do not change it.
func (c *Conditional) Add(t int, p []float64) {
	c.draws = append(c.draws, t)
	c.dists = append(c.dists, p)
}

// N is the number of draws.
func (c *Conditional) N() int { return len(c.draws) }

// ErrSingular reports a covariance that cannot be inverted: too few draws
// or cells for the test.
var ErrSingular = errors.New("stattest: singular covariance")

// Test returns W, its degrees of freedom and the number of draws whose own
// distribution gave them probability 0 (impossible draws: the caller fails
// on any). With fewer than two cells W = 0 and df = 0.
func (c *Conditional) Test() (stat float64, df int, impossible int, err error) {
	if len(c.draws) == 0 {
		return 0, 0, 0, nil
	}
	V := len(c.dists[0])
	exp := make([]float64, V)
	for i, p := range c.dists {
		if len(p) != V {
			return 0, 0, 0, errors.New("stattest: distributions of different lengths")
		}
		if t := c.draws[i]; t < 0 || t >= V || !(p[t] > 0) {
			impossible++
		}
		for v, pv := range p {
			exp[v] += pv
		}
	}
	cell, m := cells(exp)
	if m < 2 {
		return 0, 0, impossible, nil
	}
	k := m - 1 // the last cell is left out: the counts sum to N
	d := make([]float64, k)
	cov := make([]float64, k*k)
	P := make([]float64, m)
	for i, p := range c.dists {
		clear(P)
		for v, pv := range p {
			P[cell[v]] += pv
		}
		if t := c.draws[i]; t >= 0 && t < V && cell[t] < k {
			d[cell[t]]++
		}
		for a := 0; a < k; a++ {
			d[a] -= P[a]
			cov[a*k+a] += P[a]
			for b := 0; b < k; b++ {
				cov[a*k+b] -= P[a] * P[b]
			}
		}
	}
	x, err := solveSPD(cov, d, k)
	if err != nil {
		return 0, 0, impossible, err
	}
	for a := range d {
		stat += d[a] * x[a]
	}
	return stat, k, impossible, nil
}

// cells maps each token to a cell: tokens of expected count ≥ 5 each get
// their own, in id order; the rest share one more cell, or join the last
// kept cell when their total is below 5 too. It returns the map and the
// number of cells.
func cells(exp []float64) ([]int, int) {
	cell := make([]int, len(exp))
	m, pool := 0, 0.0
	for v, e := range exp {
		if e >= 5 {
			cell[v] = m
			m++
		} else {
			cell[v] = -1
			pool += e
		}
	}
	poolCell := m
	switch {
	case pool >= 5 || (m == 0 && pool > 0):
		m++
	case m > 0:
		poolCell = m - 1
	}
	for v := range cell {
		if cell[v] < 0 {
			cell[v] = poolCell
		}
	}
	return cell, m
}

// solveSPD solves A x = b for a symmetric positive definite k×k matrix A
// (row-major) by Cholesky factorization; A is overwritten.
func solveSPD(A, b []float64, k int) ([]float64, error) {
	for j := 0; j < k; j++ {
		s := A[j*k+j]
		for l := 0; l < j; l++ {
			s -= A[j*k+l] * A[j*k+l]
		}
		if !(s > 1e-12*math.Max(1, math.Abs(A[j*k+j]))) {
			return nil, ErrSingular
		}
		A[j*k+j] = math.Sqrt(s)
		for i := j + 1; i < k; i++ {
			s := A[i*k+j]
			for l := 0; l < j; l++ {
				s -= A[i*k+l] * A[j*k+l]
			}
			A[i*k+j] = s / A[j*k+j]
		}
	}
	x := make([]float64, k)
	for i := 0; i < k; i++ { // L y = b
		s := b[i]
		for l := 0; l < i; l++ {
			s -= A[i*k+l] * x[l]
		}
		x[i] = s / A[i*k+i]
	}
	for i := k - 1; i >= 0; i-- { // Lᵀ x = y
		s := x[i]
		for l := i + 1; l < k; l++ {
			s -= A[l*k+i] * x[l]
		}
		x[i] = s / A[i*k+i]
	}
	return x, nil
}
