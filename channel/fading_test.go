package channel

import (
	"math"
	"slices"
	"testing"
	"time"
)

// gains draws n fading gains h = SNR/SNR̄ from a Shannon link.
func gains(t *testing.T, cfg Config, n int) []float64 {
	t.Helper()
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	link := l.(*Shannon)
	h := make([]float64, n)
	for i := range h {
		h[i] = link.Round(0).SNR / link.MeanSNR()
	}
	return h
}

// meanSE returns the sample mean of xs and its standard error.
func meanSE(xs []float64) (mean, se float64) {
	var s, s2 float64
	for _, x := range xs {
		s += x
		s2 += x * x
	}
	n := float64(len(xs))
	mean = s / n
	return mean, math.Sqrt((s2/n - mean*mean) / n)
}

// TestRayleighGain: n = 10^6 draws, seed 1. The mean is within 5 standard
// errors (1/√n) of 1, and the Kolmogorov–Smirnov distance to the
// exponential CDF 1 − e^−x, i.e. P(h > x) = e^−x, is below the critical
// value 1.9495/√n of significance 0.001.
func TestRayleighGain(t *testing.T) {
	const n = 1_000_000
	cfg := DefaultConfig()
	h := gains(t, cfg, n)
	mean, _ := meanSE(h)
	if math.Abs(mean-1) > 5/math.Sqrt(n) {
		t.Errorf("mean h = %.5f, want 1 ± %.4f", mean, 5/math.Sqrt(n))
	}
	slices.Sort(h)
	d := 0.0
	for i, x := range h {
		f := -math.Expm1(-x) // 1 − e^−x
		d = max(d, math.Abs(float64(i+1)/n-f), math.Abs(f-float64(i)/n))
	}
	crit := math.Sqrt(-math.Log(0.001/2)/2) / math.Sqrt(n)
	if d > crit {
		t.Errorf("KS distance %.5f > critical %.5f (α = 0.001, n = %d)", d, crit, n)
	}
	t.Logf("Rayleigh: n = %d, mean h = %.5f, KS D = %.5f (critical %.5f at α = 0.001)", n, mean, d, crit)
}

// TestRicianGain: n = 10^6 draws per K, seed 1. E[h] = 1 and
// E[h²] = (K² + 4K + 2)/(K + 1)², each within 5 standard errors
// estimated from the sample.
func TestRicianGain(t *testing.T) {
	const n = 1_000_000
	for _, kdB := range []float64{-10, 0, 10, 20} {
		cfg := DefaultConfig()
		cfg.Fading = FadingRician
		cfg.RicianKdB = kdB
		h := gains(t, cfg, n)
		mean, se := meanSE(h)
		h2 := make([]float64, n)
		for i, x := range h {
			h2[i] = x * x
		}
		m2, se2 := meanSE(h2)
		k := math.Pow(10, kdB/10)
		want2 := (k*k + 4*k + 2) / ((k + 1) * (k + 1))
		if math.Abs(mean-1) > 5*se {
			t.Errorf("K = %g dB: mean h = %.5f, want 1 ± %.5f", kdB, mean, 5*se)
		}
		if math.Abs(m2-want2) > 5*se2 {
			t.Errorf("K = %g dB: E[h²] = %.5f, want %.5f ± %.5f", kdB, m2, want2, 5*se2)
		}
		t.Logf("Rician K = %g dB: mean h = %.5f (±%.5f), E[h²] = %.5f want %.5f (±%.5f)", kdB, mean, se, m2, want2, se2)
	}
}

func TestNoFadingIsConstant(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Fading = FadingNone
	for i, h := range gains(t, cfg, 100) {
		if h != 1 {
			t.Fatalf("round %d: h = %g, want 1", i, h)
		}
	}
}

// TestMarkovOccupancy: n = 10^6 rounds, seed 1, p_lh = 0.05, p_hl = 0.2.
// The share of high rounds is within 0.005 of p_lh/(p_lh + p_hl) = 0.2
// (its standard deviation is √(π(1−π)/n·(1+λ)/(1−λ)) ≈ 0.0011 with
// λ = 1 − p_lh − p_hl = 0.75, so 0.005 is about 4.7 of them), and the
// empirical transition frequencies are within 0.005 of p_lh and p_hl.
func TestMarkovOccupancy(t *testing.T) {
	const n = 1_000_000
	cfg := QSConfig()
	cfg.PLowHigh, cfg.PHighLow = 0.05, 0.2
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	link := l.(*Markov)
	var high, fromLow, lowHigh, fromHigh, highLow int
	prev := link.Round(0).UpRate
	for range n {
		r := link.Round(0).UpRate
		switch {
		case r == cfg.RateHighBps:
			high++
		case r != cfg.RateLowBps:
			t.Fatalf("rate %g is neither state", r)
		}
		if prev == cfg.RateLowBps {
			fromLow++
			if r == cfg.RateHighBps {
				lowHigh++
			}
		} else {
			fromHigh++
			if r == cfg.RateLowBps {
				highLow++
			}
		}
		prev = r
	}
	share := float64(high) / n
	if want := link.StationaryHigh(); math.Abs(share-want) > 0.005 || want != 0.2 {
		t.Errorf("high share %.5f, stationary %.5f (want 0.2), tolerance 0.005", share, want)
	}
	pLH, pHL := float64(lowHigh)/float64(fromLow), float64(highLow)/float64(fromHigh)
	if math.Abs(pLH-0.05) > 0.005 || math.Abs(pHL-0.2) > 0.005 {
		t.Errorf("empirical p_lh %.4f p_hl %.4f, want 0.05 and 0.2 ± 0.005", pLH, pHL)
	}
	if want := 0.8*350e3 + 0.2*4e6; math.Abs(link.MeanRate()-want) > 1e-6 {
		t.Errorf("MeanRate %g, want %g", link.MeanRate(), want)
	}
	t.Logf("Markov: n = %d, high share %.5f (stationary 0.2), p_lh %.4f, p_hl %.4f", n, share, pLH, pHL)
}

// TestMarkovInitial: markov_init=low/high fix the first state; stationary
// starts in high with probability 0.2 here (10^4 seeds, tolerance 0.02 ≈
// 5 standard deviations).
func TestMarkovInitial(t *testing.T) {
	cfg := QSConfig()
	cfg.PLowHigh, cfg.PHighLow = 0.05, 0.2
	for init, want := range map[string]float64{InitLow: 350e3, InitHigh: 4e6} {
		c := cfg
		c.MarkovInit = init
		l, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.Round(0).UpRate; got != want {
			t.Errorf("markov_init=%s: first rate %g, want %g", init, got, want)
		}
	}
	const seeds = 10_000
	high := 0
	for seed := range uint64(seeds) {
		cfg.Seed = seed
		l, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if l.Round(0).UpRate == cfg.RateHighBps {
			high++
		}
	}
	if share := float64(high) / seeds; math.Abs(share-0.2) > 0.02 {
		t.Errorf("stationary start in high for %.4f of seeds, want 0.2 ± 0.02", share)
	}
}

// TestReproducible: the same seed gives the same states, different seeds
// different ones, for every random link.
func TestReproducible(t *testing.T) {
	rician := DefaultConfig()
	rician.Fading = FadingRician
	for name, cfg := range map[string]Config{"rayleigh": DefaultConfig(), "rician": rician, "markov": QSConfig()} {
		run := func(seed uint64) []State {
			c := cfg
			c.Seed = seed
			l, err := New(c)
			if err != nil {
				t.Fatal(err)
			}
			out := make([]State, 1000)
			for i := range out {
				out[i] = l.Round(time.Duration(i) * time.Millisecond)
			}
			return out
		}
		a, b, c := run(7), run(7), run(8)
		if !slices.EqualFunc(a, b, sameState) {
			t.Errorf("%s: seed 7 twice gave different states", name)
		}
		if slices.EqualFunc(a, c, sameState) {
			t.Errorf("%s: seeds 7 and 8 gave the same states", name)
		}
	}
}

// sameState compares states treating NaN SNRs as equal.
func sameState(a, b State) bool {
	if math.IsNaN(a.SNR) && math.IsNaN(b.SNR) {
		a.SNR, b.SNR = 0, 0
	}
	return a == b
}

func BenchmarkRound(b *testing.B) {
	rician := DefaultConfig()
	rician.Fading = FadingRician
	for name, cfg := range map[string]Config{"rayleigh": DefaultConfig(), "rician": rician, "markov": QSConfig()} {
		b.Run(name, func(b *testing.B) {
			l, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			var total time.Duration
			for b.Loop() {
				total += l.Round(0).UpTime(736000)
			}
			_ = total
		})
	}
}
