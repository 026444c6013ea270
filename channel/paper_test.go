package channel

import (
	"math"
	"math/bits"
	"testing"
	"time"
)

// relErr is |got − want|/|want|.
func relErr(got, want float64) float64 { return math.Abs(got-want) / math.Abs(want) }

// TestUHLMArithmetic checks the U-HLM / U+I link (W = 1 MHz, p = 23 dBm,
// N = −104 dBm, d = 2.5 km, α = 4) against the formula SNR = p·d^−α/N
// worked out here independently.
func TestUHLMArithmetic(t *testing.T) {
	// In watts: p = 10^2.3 mW = 0.1995 W, N = 10^−10.4 mW = 3.981e−14 W,
	// d^−α = 2500^−4 = 2.56e−14, so SNR = 0.1995·2.56e−14/3.981e−14 = 0.1283.
	p := math.Pow(10, 23.0/10) * 1e-3
	n := math.Pow(10, -104.0/10) * 1e-3
	want := p * math.Pow(2500, -4) / n
	// The same in dB: 23 − 40·log10(2500) + 104 = −8.918 dB.
	wantDB := 23 - 40*math.Log10(2500) + 104
	if relErr(want, math.Pow(10, wantDB/10)) > 1e-12 {
		t.Fatalf("watts %g and dB %g derivations disagree", want, math.Pow(10, wantDB/10))
	}
	if want < 0.128 || want > 0.129 {
		t.Fatalf("independent mean SNR %g, expected ≈ 0.128", want)
	}

	cfg := DefaultConfig()
	if got := MeanSNR(cfg); relErr(got, want) > 1e-9 {
		t.Errorf("MeanSNR = %.12g, want %.12g", got, want)
	}
	cfg.Fading = FadingNone
	link, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := link.(*Shannon).MeanSNR(); relErr(got, want) > 1e-9 {
		t.Errorf("Shannon.MeanSNR = %.12g, want %.12g", got, want)
	}
	s := link.Round(0)
	wantRate := 1e6 * math.Log2(1+want)
	if relErr(s.SNR, want) > 1e-9 || relErr(s.UpRate, wantRate) > 1e-9 {
		t.Errorf("no-fading round: SNR %.12g rate %.12g, want %.12g and %.12g", s.SNR, s.UpRate, want, wantRate)
	}
	full := 32000 * 32 // U-HLM full-precision payload B = |V|·b_prob
	t.Logf("U-HLM: mean SNR %.6f (%.3f dB), rate %.1f bit/s, full 32-bit distribution (%d bits) %v",
		want, wantDB, wantRate, full, s.UpTime(full))
}

// CU-HLM's setting (Sec. V): V = 32,000, b_prob = 8, b_index = ⌈log2 V⌉ = 15,
// τ_SLM = 25.6 ms, τ_LLM = 104.6 ms, W = 10 MHz, average SNR 10 dB.
const (
	cuVocab = 32000
	tauSLM  = 25600 * time.Microsecond
	tauLLM  = 104600 * time.Microsecond
)

// cuPayload is B = |V|·(b_prob + b_index) of CU-HLM eq. 4 with b_prob = 8.
func cuPayload() int { return cuVocab * (8 + bits.Len(cuVocab-1)) }

// TestCUHLMArithmetic checks CU-HLM eq. 4–6 without fading and measures the
// long-run HLM throughput (every token uploaded in full) under Rayleigh
// fading at an average SNR of 10 dB.
func TestCUHLMArithmetic(t *testing.T) {
	B := cuPayload()
	if B != 736000 {
		t.Fatalf("B = %d bits, want 736000", B)
	}
	cfg := CUHLMConfig()
	cfg.Fading = FadingNone
	link, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := link.Round(0)
	if wantRate := 10e6 * math.Log2(11); relErr(s.UpRate, wantRate) > 1e-9 {
		t.Errorf("rate %.12g bit/s, want %.12g", s.UpRate, wantRate)
	}
	up := s.UpTime(B)
	wantUp := 736000 / (10e6 * math.Log2(11))   // 21.28 ms
	if math.Abs(up.Seconds()-wantUp) > 0.5e-9 { // UpTime rounds to the nanosecond
		t.Errorf("τ_up = %v, want %.12f s", up, wantUp)
	}
	if up < 21200*time.Microsecond || up > 21400*time.Microsecond {
		t.Errorf("τ_up = %v, want ≈ 21.3 ms", up)
	}
	tpFlat := 1 / (tauSLM + up + tauLLM).Seconds() // CU-HLM eq. 6
	if tpFlat >= 7 {
		t.Errorf("no-fading throughput %.3f tokens/s, want < 7", tpFlat)
	}
	t.Logf("CU-HLM no fading: τ_up = %v, throughput 1/(τ_SLM+τ_up+τ_LLM) = %.4f tokens/s", up, tpFlat)

	// Rayleigh at an average 10 dB: tokens / total time over 10^5 rounds.
	// The mean of τ_up = B/(W·log2(1 + 10h)) with h ~ Exp(1) is infinite
	// (the integrand behaves like 1/h near h = 0), so this long-run
	// throughput has no limit: it falls slowly (about like 1/log n) with the
	// number of rounds n and varies from seed to seed (the sample mean of
	// τ_up is dominated by the deepest fade drawn), which is why several
	// seeds are reported. With n = 10^5 and seeds 1–5 the mean τ_up is
	// 87–95 ms and the throughput 4.44–4.61 tokens/s (seed 1: 4.607); an
	// independent check with another generator gave 71–99 ms and
	// 4.37–4.96 tokens/s. CU-HLM Sec. I says HLM is limited to "fewer than
	// 5 tokens per second under 10 MHz uplink bandwidth" (its Fig. 1 is at
	// SNR 10 dB, Rayleigh). Without fading our arithmetic gives 6.6
	// tokens/s, so the statement does not hold for the mean SNR alone; with
	// Rayleigh fading it holds for every seed we ran, though by a margin
	// (0–13 %) comparable to the seed-to-seed spread and the slow drift with
	// n, so it is a statement about this horizon, not a limit. The test
	// asserts only that fading lowers the throughput.
	const rounds = 100_000
	for seed := uint64(1); seed <= 5; seed++ {
		cfg := CUHLMConfig()
		cfg.Seed = seed
		link, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var total, upTotal time.Duration
		for i := range rounds {
			u := link.Round(time.Duration(i)).UpTime(B)
			upTotal += u
			total += tauSLM + u + tauLLM
		}
		tp := rounds / total.Seconds()
		t.Logf("CU-HLM Rayleigh 10 dB, seed %d: mean τ_up = %v, long-run throughput %.4f tokens/s over %d rounds",
			seed, upTotal/rounds, tp, rounds)
		if tp >= tpFlat {
			t.Errorf("seed %d: Rayleigh throughput %.4f not below the no-fading %.4f", seed, tp, tpFlat)
		}
	}
}

// TestCUHLMSNRSweep: CU-HLM Fig. 10 sweeps the average SNR from −20 to
// 10 dB; snr_db is in dB and the rate is eq. 5's W·log2(1 + SNR) with the
// linear SNR 10^(dB/10). At the preset's 10 dB the linear value is also 10,
// so a link that read snr_db as a linear ratio would pass every check made
// there; the other points of the sweep tell them apart (−20 dB is 0.01,
// 3 dB about 2).
func TestCUHLMSNRSweep(t *testing.T) {
	for _, db := range []float64{-20, -10, 0, 3, 10} {
		cfg := CUHLMConfig()
		cfg.SNRdB = &db
		cfg.Fading = FadingNone
		lin := math.Pow(10, db/10)
		if got := MeanSNR(cfg); relErr(got, lin) > 1e-12 {
			t.Errorf("%v dB: mean SNR %v, want 10^(dB/10) = %v", db, got, lin)
		}
		link, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		s := link.Round(0)
		want := 10e6 * math.Log2(1+lin)
		if relErr(s.UpRate, want) > 1e-12 || relErr(s.SNR, lin) > 1e-12 || relErr(NominalRate(cfg), want) > 1e-12 {
			t.Errorf("%v dB: rate %v (nominal %v), SNR %v; want W·log2(1 + %v) = %v", db, s.UpRate, NominalRate(cfg), s.SNR, lin, want)
		}
	}
}
