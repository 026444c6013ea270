// Package stattest holds the statistics that hlm's statistical tests share:
// Pearson's chi-square statistic, its critical values at significance 0.001
// and its survival function. Every statistical test states its seed, its
// number of draws and its significance; it fails when Pearson's statistic
// exceeds the critical value.
package stattest

import "math"

// Alpha is the significance level of the critical values.
const Alpha = 0.001

// crit001 holds the upper 0.001 critical values of χ²(df) for df = 1…30
// (standard tables; cross-checked against Survival in TestChi2Table).
var crit001 = [...]float64{
	0, 10.828, 13.816, 16.266, 18.467, 20.515, 22.458, 24.322, 26.124, 27.877,
	29.588, 31.264, 32.909, 34.528, 36.123, 37.697, 39.252, 40.790, 42.312,
	43.820, 45.315, 46.797, 48.268, 49.728, 51.179, 52.620, 54.052, 55.476,
	56.892, 58.301, 59.703,
}

// Critical returns the upper-0.001 critical value of χ²(df): the table
// for df ≤ 30, the Wilson–Hilferty approximation (accurate to < 0.5% there)
// above.
func Critical(df int) float64 {
	if df >= 1 && df < len(crit001) {
		return crit001[df]
	}
	const z = 3.090232306167813 // Φ⁻¹(0.999)
	k := float64(df)
	t := 1 - 2/(9*k) + z*math.Sqrt(2/(9*k))
	return k * t * t * t
}

// Survival returns P(χ²(df) > x) = Q(df/2, x/2), the regularized upper
// incomplete gamma function (series below a+1, continued fraction above, as
// in Numerical Recipes §6.2).
func Survival(df int, x float64) float64 {
	a, x := float64(df)/2, x/2
	if x <= 0 {
		return 1
	}
	lg, _ := math.Lgamma(a)
	if x < a+1 {
		sum, del, ap := 1/a, 1/a, a
		for range 10000 {
			ap++
			del *= x / ap
			sum += del
			if math.Abs(del) < math.Abs(sum)*1e-15 {
				break
			}
		}
		return 1 - sum*math.Exp(-x+a*math.Log(x)-lg)
	}
	const tiny = 1e-300
	b := x + 1 - a
	c := 1 / tiny
	d := 1 / b
	h := d
	for i := 1; i < 10000; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-15 {
			break
		}
	}
	return math.Exp(-x+a*math.Log(x)-lg) * h
}

// ChiSquare returns Pearson's statistic Σ (O − E)²/E of observed counts
// against cell probabilities probs (n = Σ observed) and its degrees of
// freedom. Cells with expected count below 5 are pooled into one cell
// (dropped if the pool is still below 5, after adding it to the last cell).
// Cells of probability zero must have no observations: they are reported
// separately by the caller and skipped here.
func ChiSquare(observed []int, probs []float64) (stat float64, df int) {
	n := 0
	for _, o := range observed {
		n += o
	}
	var obs, exp []float64
	poolO, poolE := 0.0, 0.0
	for i, p := range probs {
		if p <= 0 {
			continue
		}
		e := p * float64(n)
		if e < 5 {
			poolO += float64(observed[i])
			poolE += e
			continue
		}
		obs = append(obs, float64(observed[i]))
		exp = append(exp, e)
	}
	if poolE > 0 {
		if poolE >= 5 || len(exp) == 0 {
			obs = append(obs, poolO)
			exp = append(exp, poolE)
		} else {
			obs[len(obs)-1] += poolO
			exp[len(exp)-1] += poolE
		}
	}
	for i := range obs {
		d := obs[i] - exp[i]
		stat += d * d / exp[i]
	}
	return stat, len(obs) - 1
}
