package channel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Channel models (the "channel" key).
const (
	ChannelShannon = "shannon" // W·log2(1 + SNR) with block fading
	ChannelMarkov  = "markov"  // Q-S two-state rate model
	ChannelFixed   = "fixed"   // constant rate
	ChannelTrace   = "trace"   // piecewise-constant rate from a file
)

// Block fading distributions of the power gain h (the "fading" key).
const (
	FadingNone     = "none"     // h = 1
	FadingRayleigh = "rayleigh" // h ~ Exp(1)
	FadingRician   = "rician"   // h = |LOS + scatter|², unit mean, K-factor rician_k_db
)

// Initial state of the Markov chain (the "markov_init" key).
const (
	InitStationary = "stationary" // drawn from the stationary distribution
	InitLow        = "low"
	InitHigh       = "high"
)

var (
	channels    = []string{ChannelShannon, ChannelMarkov, ChannelFixed, ChannelTrace}
	fadings     = []string{FadingNone, FadingRayleigh, FadingRician}
	markovInits = []string{InitStationary, InitLow, InitHigh}
)

// Config selects and parameterises a link. Every field has a flat key (see
// Keys) so that it can be set from the command line with Set. Rates are in
// bit/s, powers in dBm, times in seconds on the command line and
// time.Duration in Go.
//
// Start from a preset (DefaultConfig, CUHLMConfig, QSConfig, or Preset by
// name) and change what differs: Validate checks every field whichever
// link is chosen, so a literal Config with fields left at zero is refused.
// Note the two defaults: DefaultConfig is U-HLM's 1 MHz link (about
// 174 kbit/s), while hlm's runs (hybrid.DefaultParams) use CUHLMConfig's
// 10 MHz at 10 dB (about 35 Mbit/s).
type Config struct {
	Channel string // shannon | markov | fixed | trace

	// Shannon link: rate W·log2(1 + h·SNR̄).
	BandwidthHz float64  // W
	SNRdB       *float64 // average SNR in dB; when non-nil it overrides the power/distance SNR
	TxPowerDBm  float64  // p
	NoiseDBm    float64  // N (σ²)
	DistanceM   float64  // d (ρ), metres
	PathLossExp float64  // α
	Fading      string   // none | rayleigh | rician
	RicianKdB   float64  // Rician K-factor in dB (LOS power / scattered power)

	// Fixed link.
	RateBps float64

	// Markov link (Q-S Sec. V-A): per-round transition probabilities.
	RateLowBps, RateHighBps float64
	PLowHigh, PHighLow      float64
	MarkovInit              string // stationary | low | high

	// Trace link.
	TraceFile string
	TraceLoop bool

	// Every link: downlink rate (+Inf = no delay) and per-message overheads.
	DownlinkBps  float64
	UpOverhead   time.Duration
	DownOverhead time.Duration

	// Seed of the link's random source; the same seed gives the same states.
	Seed uint64
}

// DefaultConfig is the U-HLM / U+I setting (U-HLM Sec. V, U+I Sec. IV),
// the link's "uhlm" preset (hybrid.DefaultParams starts from CUHLMConfig
// instead):
// W = 1 MHz, p = 23 dBm, N = −104 dBm, d = 2.5 km, α = 4, Rayleigh fading.
// Its mean SNR is p·d^−α/N ≈ 0.128 (−8.92 dB), a mean-SNR rate of about
// 174 kbit/s. The Markov and fixed fields hold the Q-S values and the Rician
// K-factor is CU-HLM's 10 dB, so switching channel or fading alone gives a
// meaningful link. Downlink: no delay; overheads: none.
func DefaultConfig() Config {
	return Config{
		Channel:     ChannelShannon,
		BandwidthHz: 1e6,
		TxPowerDBm:  23,
		NoiseDBm:    -104,
		DistanceM:   2500,
		PathLossExp: 4,
		Fading:      FadingRayleigh,
		RicianKdB:   10,
		RateBps:     1e6,
		RateLowBps:  350e3,
		RateHighBps: 4e6,
		PLowHigh:    0.1,
		PHighLow:    0.1,
		MarkovInit:  InitStationary,
		DownlinkBps: math.Inf(1),
		Seed:        1,
	}
}

// CUHLMConfig is the CU-HLM setting (CU-HLM Sec. V, Fig. 10a, Table II):
// W = 10 MHz, average SNR 10 dB, Rayleigh fading. For Fig. 10b set
// fading=rician (K = 10 dB is already the default) and sweep snr_db over
// −20…10.
func CUHLMConfig() Config {
	c := DefaultConfig()
	c.BandwidthHz = 10e6
	snr := 10.0
	c.SNRdB = &snr
	return c
}

// QSConfig is the Q-S setting (Q-S Sec. V-A): a two-state Markov uplink
// with a low state of 350 kbit/s and a high state of 4 Mbit/s and a
// delay-free downlink. The paper gives neither transition probabilities nor
// the per-state rates (its 350 kbit/s and 4 Mbit/s are the averages of two
// separate experiment regimes), so these are our choices:
// p_low→high = p_high→low = 0.1 per round, i.e. a mean stay of 10 rounds in
// each state, stationary occupancy 1/2 each, mean rate 2.175 Mbit/s, and the
// first state drawn from the stationary distribution.
func QSConfig() Config {
	c := DefaultConfig()
	c.Channel = ChannelMarkov
	return c
}

// presets maps the preset names to their configs.
var presets = []struct {
	name string
	cfg  func() Config
}{
	{"uhlm", DefaultConfig},
	{"cuhlm", CUHLMConfig},
	{"qs", QSConfig},
}

// PresetNames lists the names Preset accepts.
func PresetNames() []string {
	names := make([]string, len(presets))
	for i, p := range presets {
		names[i] = p.name
	}
	return names
}

// Preset returns a named configuration: "uhlm" (DefaultConfig, also U+I),
// "cuhlm" (CUHLMConfig) or "qs" (QSConfig).
func Preset(name string) (Config, error) {
	for _, p := range presets {
		if p.name == name {
			return p.cfg(), nil
		}
	}
	return Config{}, fmt.Errorf("%w: unknown preset %q (valid: %s)", ErrConfig, name, strings.Join(PresetNames(), ", "))
}

// Validate reports the first invalid field. Every numeric field is checked
// whichever channel is selected (a negative bandwidth is wrong whatever the
// model); the trace file is required only for channel=trace.
func (c Config) Validate() error {
	bad := func(key, format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		if why := c.Unused(key); why != "" {
			// A field the chosen link does not read is still checked; say
			// so, and where a valid one comes from.
			msg += " (channel=" + c.Channel + " does not read it, but every field is checked: start from DefaultConfig() or a Preset)"
		}
		return fmt.Errorf("%w: %s: %s", ErrConfig, key, msg)
	}

	if !slices.Contains(channels, c.Channel) {
		return bad("channel", "%q is not one of %s", c.Channel, strings.Join(channels, ", "))
	}
	if !positive(c.BandwidthHz) {
		return bad("bandwidth_hz", "%g must be positive and finite", c.BandwidthHz)
	}
	if c.SNRdB != nil && !finiteNum(*c.SNRdB) {
		return bad("snr_db", "%g must be finite", *c.SNRdB)
	}
	if !finiteNum(c.TxPowerDBm) {
		return bad("tx_power_dbm", "%g must be finite", c.TxPowerDBm)
	}
	if !finiteNum(c.NoiseDBm) {
		return bad("noise_dbm", "%g must be finite", c.NoiseDBm)
	}
	if !positive(c.DistanceM) {
		return bad("distance_m", "%g must be positive and finite", c.DistanceM)
	}
	if !(c.PathLossExp >= 0) || !finiteNum(c.PathLossExp) {
		return bad("pathloss_exp", "%g must be non-negative and finite", c.PathLossExp)
	}
	if !slices.Contains(fadings, c.Fading) {
		return bad("fading", "%q is not one of %s", c.Fading, strings.Join(fadings, ", "))
	}
	if !finiteNum(c.RicianKdB) {
		return bad("rician_k_db", "%g must be finite", c.RicianKdB)
	}
	if m := MeanSNR(c); !positive(m) {
		return bad("snr", "mean SNR %g (linear) is not a positive finite number; check tx_power_dbm, noise_dbm, distance_m, pathloss_exp, snr_db", m)
	}
	if !positive(c.RateBps) {
		return bad("rate_bps", "%g must be positive and finite", c.RateBps)
	}
	if !positive(c.RateLowBps) {
		return bad("rate_low_bps", "%g must be positive and finite", c.RateLowBps)
	}
	if !positive(c.RateHighBps) {
		return bad("rate_high_bps", "%g must be positive and finite", c.RateHighBps)
	}
	if c.RateLowBps > c.RateHighBps {
		return bad("rate_low_bps", "%g exceeds rate_high_bps %g", c.RateLowBps, c.RateHighBps)
	}
	if !probVal(c.PLowHigh) {
		return bad("p_low_high", "%g is not a probability in [0, 1]", c.PLowHigh)
	}
	if !probVal(c.PHighLow) {
		return bad("p_high_low", "%g is not a probability in [0, 1]", c.PHighLow)
	}
	if !slices.Contains(markovInits, c.MarkovInit) {
		return bad("markov_init", "%q is not one of %s", c.MarkovInit, strings.Join(markovInits, ", "))
	}
	if c.MarkovInit == InitStationary && c.PLowHigh+c.PHighLow == 0 {
		return bad("markov_init", "no stationary distribution when p_low_high = p_high_low = 0; set markov_init to low or high")
	}
	if c.Channel == ChannelTrace && c.TraceFile == "" {
		return bad("trace_file", "required for channel=trace")
	}
	if !(c.DownlinkBps > 0) {
		return bad("downlink_bps", "%g must be positive (+Inf for no delay)", c.DownlinkBps)
	}
	if c.UpOverhead < 0 {
		return bad("up_overhead_s", "%v must not be negative", c.UpOverhead)
	}
	if c.DownOverhead < 0 {
		return bad("down_overhead_s", "%v must not be negative", c.DownOverhead)
	}
	return nil
}

// MeanSNR is the linear average SNR of the Shannon link: 10^(snr_db/10)
// when snr_db is set, else p·d^−α/N (U+I Sec. II-B with E[h] = 1) with p
// and N converted from dBm and d in metres (no reference distance, as in the
// papers). It does not validate cfg.
func MeanSNR(cfg Config) float64 {
	if cfg.SNRdB != nil {
		return DBToLinear(*cfg.SNRdB)
	}
	return DBmToWatts(cfg.TxPowerDBm) * math.Pow(cfg.DistanceM, -cfg.PathLossExp) / DBmToWatts(cfg.NoiseDBm)
}

// NominalRate is the uplink rate in bit/s a sender can plan with before
// the run: the fixed rate, the Markov chain's stationary mean (the two
// states equally likely when neither ever changes), or the Shannon rate at
// the mean SNR; +Inf for a trace, unknown in advance. It does not
// validate cfg.
func NominalRate(cfg Config) float64 {
	switch cfg.Channel {
	case ChannelFixed:
		return cfg.RateBps
	case ChannelMarkov:
		ph := 0.5
		if s := cfg.PLowHigh + cfg.PHighLow; s > 0 {
			ph = cfg.PLowHigh / s
		}
		return (1-ph)*cfg.RateLowBps + ph*cfg.RateHighBps
	case ChannelShannon:
		return ShannonRate(cfg.BandwidthHz, MeanSNR(cfg))
	}
	return math.Inf(1)
}

// New validates cfg and builds its link. For channel=trace it reads
// cfg.TraceFile.
func New(cfg Config) (Link, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	switch cfg.Channel {
	case ChannelShannon:
		return newShannon(cfg), nil
	case ChannelMarkov:
		return newMarkov(cfg), nil
	case ChannelFixed:
		return NewFixed(commonOf(cfg).state(cfg.RateBps, math.NaN())), nil
	case ChannelTrace:
		tr, err := ReadTraceFile(cfg.TraceFile)
		if err != nil {
			return nil, err
		}
		return &TraceLink{common: commonOf(cfg), trace: tr, loop: cfg.TraceLoop}, nil
	}
	return nil, fmt.Errorf("%w: channel %q", ErrConfig, cfg.Channel) // unreachable after Validate
}

// newRand is the link's random source: PCG seeded with (seed, a fixed
// stream constant), so a run is reproducible from its seed alone.
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x68_6c_6d_63_68_61_6e)) // "hlmchan"
}
