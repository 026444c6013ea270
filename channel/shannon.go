package channel

import (
	"math"
	"math/rand/v2"
	"time"
)

// Shannon is the block-fading Shannon link (channel=shannon): each round
// draws a power gain h and has rate W·log2(1 + h·SNR̄) (U-HLM eq. 3,
// CU-HLM eq. 5, U+I eq. 2 with ρ(t) = h(t)·p·d^−α/σ²).
type Shannon struct {
	common
	bandwidth float64 // W, Hz
	meanSNR   float64 // SNR̄ = E[SNR] since E[h] = 1, linear
	fading    string
	los       float64 // Rician: amplitude √(K/(K+1)) of the line-of-sight component
	sigma     float64 // Rician: std. dev. √(1/(2(K+1))) of each scattered quadrature
	rng       *rand.Rand
}

var _ Link = (*Shannon)(nil)

func newShannon(cfg Config) *Shannon {
	k := DBToLinear(cfg.RicianKdB)
	return &Shannon{
		common:    commonOf(cfg),
		bandwidth: cfg.BandwidthHz,
		meanSNR:   MeanSNR(cfg),
		fading:    cfg.Fading,
		los:       math.Sqrt(k / (k + 1)),
		sigma:     math.Sqrt(1 / (2 * (k + 1))),
		rng:       newRand(cfg.Seed),
	}
}

// Round draws the round's fading gain h and returns rate W·log2(1 + h·SNR̄)
// with SNR = h·SNR̄. Without fading no randomness is used.
func (s *Shannon) Round(time.Duration) State {
	snr := s.meanSNR * s.gain()
	return s.state(ShannonRate(s.bandwidth, snr), snr)
}

// MeanSNR is the link's average linear SNR SNR̄ (E[h] = 1 for every fading).
func (s *Shannon) MeanSNR() float64 { return s.meanSNR }

// gain draws the power gain h of one round; E[h] = 1 for every fading.
func (s *Shannon) gain() float64 {
	switch s.fading {
	case FadingRayleigh:
		// |CN(0,1)|² is exponential with mean 1.
		return s.rng.ExpFloat64()
	case FadingRician:
		// |√(K/(K+1)) + CN(0, 1/(K+1))|²: LOS power K/(K+1), scattered
		// power 1/(K+1), the sum 1.
		re := s.los + s.sigma*s.rng.NormFloat64()
		im := s.sigma * s.rng.NormFloat64()
		return re*re + im*im
	default:
		return 1
	}
}
