package hybrid

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/hlmproject/hlm/channel"
	"github.com/hlmproject/hlm/codec"
	"github.com/hlmproject/hlm/policy"
)

// ErrParam reports an unknown or impossible parameter.
var ErrParam = errors.New("hybrid: invalid parameter")

// MaxListK bounds list_k (drafts per position of coupled-list).
const MaxListK = 16

// Params are every knob of a run: the method and its parameters, sampling,
// timing, energy and the channel. Zero values mean "the method's default"
// only where a field says so; use DefaultParams.
type Params struct {
	Method      string
	Seed        uint64
	MaxTokens   int     // new tokens at most (r_max)
	Temperature float64 // sampling temperature of both models
	TopK        int     // top-k filter of both models (0: off)
	TopP        float64 // nucleus filter of both models (0 or 1: off)

	// Uncertainty (U-HLM eq. 6–7) and calibration (eq. 5).
	M        int     // perturbed temperatures
	ThetaMax float64 // temperatures uniform in [0, ThetaMax]
	UTh      float64 // upload threshold; NaN = the method's default
	CalibA   float64 // β ≈ a·u + b
	CalibB   float64
	RandP    float64 // Rand-HLM upload probability

	// Importance (U+I eq. 6–7).
	ImpK  int
	Gamma float64

	// Codecs.
	ProbBits   int     // bits per probability of the full and top-k codecs (32, 16, 8)
	IndexBits  bool    // full codec sends (index, value) pairs as CU-HLM counts them
	K          int     // top-k size of cu-hlm-offline (CU-HLM k* = 30)
	SQSK       int     // support size K of k-sqs
	Theta      float64 // TVD tolerance θ of the online top-k (eq. 24)
	Eta        float64 // softplus temperature η (eq. 22)
	Ell        int     // lattice resolution ℓ
	Budget     int     // bits per batch for k-sqs / c-sqs (SQS Sec. 4)
	ConfAlpha  float64 // C-SQS target dropped mass α
	ConfEta    float64 // C-SQS learning rate η (0: a fixed threshold, SQS Fig. 5's non-adaptive C-SQS)
	ConfBeta   float64 // C-SQS initial threshold β₁
	SampleFrom string  // "recon" (sample what is sent) or "slm" (sample the SLM's own distribution); "" = method default

	// Draft length (SD family).
	Draft     string // "fixed", "heuristic" or "ddqn"
	DDQNModel string // trained policy for draft=ddqn
	L         int    // fixed draft length, or the heuristic's initial length
	LMin      int
	LMax      int // largest draft length of the heuristic (0: no cap)
	// BatchMax caps the drafts of a budget-filled batch (k-sqs, c-sqs).
	// 0, the default, is no cap: the bit budget B decides the batch, as
	// in SQS Sec. 4 (L^t = max{L : Σ b_n <= B}), bounded only by the
	// tokens left to generate and the context.
	BatchMax int

	// Timing (seconds of virtual time; Q-S eq. 9) and energy (U+I).
	TauSLM, TauLLM float64
	// MeasureTau replaces τ_SLM and τ_LLM by the wall-clock time the device
	// actually spent drafting each round and the verifier answering it (in
	// the simulator: the server's computation). Results then depend on the
	// machine and are not reproducible to the byte.
	MeasureTau     bool
	EnergyUpload   float64
	EnergyResample float64
	EnergySLM      float64

	// Diagnostics: the device reports each skipped token's probability and
	// the server returns its target probability, so the true skip rate can
	// be measured. Costs bytes on the wire (counted in frame bytes, never in
	// the papers' uplink bits).
	Diagnostics bool

	// Entropy has the simulator measure the mean Shannon entropy (nats) of
	// the exact distribution each committed token followed
	// (Result.MeanEntropy; Q-S Fig. 3b's per-token entropy). Off by default:
	// it costs a pass over the vocabulary per token.
	Entropy bool

	// Sampler is how the server samples where it samples on its own (the
	// LLM-only method): "standard" (the session's random stream) or "gumbel"
	// (the keyed noise of coupled verification, so that `llm` with gumbel
	// gives exactly the tokens `coupled` gives with any draft).
	Sampler string

	// ListK is the number of drafts per position of coupled-list (list
	// matching); 1 is plain coupling.
	ListK int

	// Bonus lets the one-token methods (hlm, rand-hlm, u-hlm, cu-hlm-*,
	// ui-hlm, i-hlm) follow an accepted draft with a token sampled from the
	// LLM's next distribution, as block speculative decoding does. Off by
	// default: U-HLM eq. 4/6, CU-HLM Algorithm 1 and U+I Sec. II commit
	// exactly one token per round — the accepted draft, or the resampled
	// token on rejection. With the bonus, throughput and the quality of
	// every uploading method are inflated (pair 2: 23% of HLM's tokens).
	// The block methods always take the bonus (Q-S eq. 3).
	Bonus bool

	Channel channel.Config
}

// DefaultParams are the papers' defaults (SPEC "Defaults worth knowing"): the
// CU-HLM setting for the link (10 MHz, 10 dB average SNR, Rayleigh), b_prob =
// 8 with index bits, τ_SLM = 25.6 ms, τ_LLM = 104.6 ms, M = 20, θmax = 2,
// θ = 0.1, ℓ = 100, a 5000-bit batch budget, energy costs {300, 350, 100}.
func DefaultParams() Params {
	e := policy.DefaultEnergy()
	return Params{
		Method: HLM, MaxTokens: 64, Temperature: 1,
		M: 20, ThetaMax: 2, UTh: math.NaN(), CalibA: 0.815, CalibB: -0.066, RandP: policy.DefaultRandomP,
		ImpK: policy.DefaultK, Gamma: policy.DefaultGamma,
		ProbBits: 8, IndexBits: true, K: 30, SQSK: 8, Theta: 0.1, Eta: codec.DefaultEta, Ell: 100, Budget: 5000,
		ConfAlpha: 0.0005, ConfEta: 0.001, ConfBeta: 0.001,
		Draft: "fixed", L: policy.DefaultInitialL, LMin: policy.DefaultMinL, LMax: policy.DefaultMaxL,
		TauSLM: 0.0256, TauLLM: 0.1046,
		EnergyUpload: e.Upload, EnergyResample: e.Resample, EnergySLM: e.SLM,
		Diagnostics: true,
		Sampler:     "standard",
		ListK:       2,
		Channel:     channel.CUHLMConfig(),
	}
}

// Energy is the U+I energy model with the run's costs (see policy.Energy
// for the reading of its terms).
func (p Params) Energy() policy.Energy {
	return policy.Energy{Upload: p.EnergyUpload, Resample: p.EnergyResample, SLM: p.EnergySLM}
}

// UploadThreshold is u_th: the explicit value, or the method's default
// (0.8 for CU-HLM, 0.431 for U-HLM and U+I).
func (p Params) UploadThreshold() float64 {
	if !math.IsNaN(p.UTh) {
		return p.UTh
	}
	if p.method().CUHLMThreshold {
		return policy.CUHLMThreshold
	}
	return policy.UHLMThreshold
}

// SamplesRecon reports whether the device samples its draft from the
// distribution it sends (quantize-then-sample, lossless) rather than from the
// SLM's own distribution (CU-HLM's top-k and S-Q, lossy by design).
func (p Params) SamplesRecon() bool {
	switch p.SampleFrom {
	case "recon":
		return true
	case "slm":
		return false
	}
	return !p.method().SamplesSLM
}

// Family tells how a method runs its rounds.
type Family int

const (
	FamilyLLM   Family = iota // server only
	FamilySkip                // one token per round, the device may skip the upload (HLM, U-HLM, …)
	FamilyBlock               // a block of drafts per round, always uploaded (Q-S, SQS, S-Q)
)

// OneToken reports that an upload commits exactly one token: a one-token
// method (FamilySkip) without the bonus (see Params.Bonus).
func (p Params) OneToken() bool { return p.Family() == FamilySkip && !p.Bonus }

// Family of the method.
func (p Params) Family() Family { return p.method().Family }

// param describes one key of Set.
type param struct {
	help string
	set  func(p *Params, v string) error
}

func floatKey(help string, f func(p *Params) *float64) param {
	return param{help, func(p *Params, v string) error {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return err
		}
		*f(p) = x
		return nil
	}}
}

func intKey(help string, f func(p *Params) *int) param {
	return param{help, func(p *Params, v string) error {
		x, err := strconv.Atoi(v)
		if err != nil {
			return err
		}
		*f(p) = x
		return nil
	}}
}

func boolKey(help string, f func(p *Params) *bool) param {
	return param{help, func(p *Params, v string) error {
		x, err := strconv.ParseBool(v)
		if err != nil {
			return err
		}
		*f(p) = x
		return nil
	}}
}

var keys = map[string]param{
	"method":          {"method name (see Methods)", func(p *Params, v string) error { p.Method = v; return nil }},
	"seed":            {"random seed of the run", func(p *Params, v string) error { x, err := strconv.ParseUint(v, 10, 64); p.Seed = x; return err }},
	"max_tokens":      intKey("new tokens at most (r_max)", func(p *Params) *int { return &p.MaxTokens }),
	"temperature":     floatKey("sampling temperature of both models (0: greedy)", func(p *Params) *float64 { return &p.Temperature }),
	"top_k":           intKey("top-k filter applied by both models (0: off)", func(p *Params) *int { return &p.TopK }),
	"top_p":           floatKey("nucleus filter applied by both models (0 or 1: off)", func(p *Params) *float64 { return &p.TopP }),
	"m":               intKey("perturbed temperatures per token (U-HLM M)", func(p *Params) *int { return &p.M }),
	"theta_max":       floatKey("perturbed temperatures are uniform in [0, theta_max]", func(p *Params) *float64 { return &p.ThetaMax }),
	"u_th":            floatKey("uncertainty threshold: upload when u > u_th (default 0.8 CU-HLM, 0.431 U-HLM/U+I)", func(p *Params) *float64 { return &p.UTh }),
	"calib_a":         floatKey("slope a of β = a·u + b (CU-HLM eq. 7)", func(p *Params) *float64 { return &p.CalibA }),
	"calib_b":         floatKey("intercept b of β = a·u + b", func(p *Params) *float64 { return &p.CalibB }),
	"rand_p":          floatKey("Rand-HLM upload probability", func(p *Params) *float64 { return &p.RandP }),
	"imp_k":           intKey("U+I top-k attention test: k weights above the threshold", func(p *Params) *int { return &p.ImpK }),
	"gamma":           floatKey("U+I threshold margin γ·std(A) below max(A)", func(p *Params) *float64 { return &p.Gamma }),
	"prob_bits":       intKey("bits per probability in the full and top-k codecs (32, 16, 8)", func(p *Params) *int { return &p.ProbBits }),
	"index_bits":      boolKey("full codec sends (index, value) pairs (CU-HLM eq. 4 accounting)", func(p *Params) *bool { return &p.IndexBits }),
	"k":               intKey("top-k size of cu-hlm-offline (CU-HLM k*)", func(p *Params) *int { return &p.K }),
	"sqs_k":           intKey("support size K of k-sqs", func(p *Params) *int { return &p.SQSK }),
	"theta":           floatKey("TVD tolerance θ of the online top-k (CU-HLM eq. 24)", func(p *Params) *float64 { return &p.Theta }),
	"eta":             floatKey("softplus temperature η of the online top-k (CU-HLM eq. 22; default 10: error of eq. 22 ≤ ln2/η)", func(p *Params) *float64 { return &p.Eta }),
	"ell":             intKey("lattice resolution ℓ (Q-S, SQS)", func(p *Params) *int { return &p.Ell }),
	"budget_bits":     intKey("bits per batch for k-sqs and c-sqs (SQS B)", func(p *Params) *int { return &p.Budget }),
	"conf_alpha":      floatKey("C-SQS target dropped mass α", func(p *Params) *float64 { return &p.ConfAlpha }),
	"conf_eta":        floatKey("C-SQS threshold learning rate η (0: a fixed threshold)", func(p *Params) *float64 { return &p.ConfEta }),
	"conf_beta":       floatKey("C-SQS initial threshold β₁", func(p *Params) *float64 { return &p.ConfBeta }),
	"sample_from":     {"draft from what is sent (recon) or from the SLM (slm); default per method", func(p *Params, v string) error { p.SampleFrom = v; return nil }},
	"draft":           {"draft length policy of q-s/s-q: fixed, heuristic, or ddqn (L and ℓ per round from ddqn_model)", func(p *Params, v string) error { p.Draft = v; return nil }},
	"ddqn_model":      {"file of a trained DDQN policy (hlm train-ddqn) for draft=ddqn", func(p *Params, v string) error { p.DDQNModel = v; return nil }},
	"l":               intKey("draft length (fixed) or initial length (heuristic)", func(p *Params) *int { return &p.L }),
	"l_min":           intKey("smallest draft length of the heuristic", func(p *Params) *int { return &p.LMin }),
	"l_max":           intKey("largest draft length of the heuristic (0: no cap)", func(p *Params) *int { return &p.LMax }),
	"batch_max":       intKey("largest k-sqs/c-sqs batch (0, default: no cap; the bit budget decides)", func(p *Params) *int { return &p.BatchMax }),
	"tau_slm":         floatKey("SLM time per token, seconds (default 0.0256)", func(p *Params) *float64 { return &p.TauSLM }),
	"tau_llm":         floatKey("LLM time per verification pass, seconds (default 0.1046)", func(p *Params) *float64 { return &p.TauLLM }),
	"measure_tau":     boolKey("use the measured drafting and verification times instead of tau_slm/tau_llm (not reproducible)", func(p *Params) *bool { return &p.MeasureTau }),
	"energy_upload":   floatKey("U+I ε_u, per uploaded Mbit (policy.Energy)", func(p *Params) *float64 { return &p.EnergyUpload }),
	"energy_resample": floatKey("U+I ε_r, per resampled token", func(p *Params) *float64 { return &p.EnergyResample }),
	"energy_slm":      floatKey("U+I ε_s, per SLM-drafted token", func(p *Params) *float64 { return &p.EnergySLM }),
	"bonus":           boolKey("one-token methods: follow an accepted draft with an LLM-sampled bonus token (off: the papers' one token per round)", func(p *Params) *bool { return &p.Bonus }),
	"sampler":         {"server-side sampling of the llm method: standard or gumbel (keyed noise, as coupled)", func(p *Params, v string) error { p.Sampler = v; return nil }},
	"list_k":          intKey("drafts per position of coupled-list (list matching, 1..16)", func(p *Params) *int { return &p.ListK }),
	"diagnostics":     boolKey("exchange per-token probabilities to measure the true skip rate", func(p *Params) *bool { return &p.Diagnostics }),
	"entropy":         boolKey("simulator: measure the mean entropy of the exact distribution each committed token followed (mean_entropy, nats)", func(p *Params) *bool { return &p.Entropy }),
	"channel_preset":  {"reset the channel to a preset: " + strings.Join(channel.PresetNames(), ", "), func(p *Params, v string) error { c, err := channel.Preset(v); p.Channel = c; return err }},
}

// Set sets one parameter by name; channel keys (bandwidth_hz, snr_db,
// fading, …) go to the channel configuration.
func (p *Params) Set(key, value string) error {
	if k, ok := keys[key]; ok {
		if err := k.set(p, value); err != nil {
			return fmt.Errorf("%w: %s=%q: %v", ErrParam, key, value, err)
		}
		return nil
	}
	if err := p.Channel.Set(key, value); err != nil {
		if errors.Is(err, channel.ErrUnknownKey) {
			return fmt.Errorf("%w: unknown key %q (see --help for the list)", ErrParam, key)
		}
		return fmt.Errorf("%w: %v", ErrParam, err)
	}
	return nil
}

// SetAll applies "key=value" assignments in order.
func (p *Params) SetAll(kvs []string) error {
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("%w: %q is not key=value", ErrParam, kv)
		}
		if err := p.Set(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
			return err
		}
	}
	return nil
}

// KeyHelp lists every key with its help, sorted, channel keys included.
func KeyHelp() [][2]string {
	var out [][2]string
	for k, v := range keys {
		out = append(out, [2]string{k, v.help})
	}
	for _, k := range channel.Keys() {
		out = append(out, [2]string{k.Name, k.Help})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// Validate reports impossible parameters.
func (p Params) Validate() error {
	m, err := MethodByName(p.Method)
	if err != nil {
		return err
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrParam}, args...)...)
	}
	switch {
	case p.MaxTokens < 1:
		return bad("max_tokens %d < 1", p.MaxTokens)
	case !(p.Temperature >= 0) || math.IsInf(p.Temperature, 0):
		return bad("temperature %g", p.Temperature)
	case p.TopK < 0 || !(p.TopP >= 0 && p.TopP <= 1):
		return bad("top_k %d / top_p %g", p.TopK, p.TopP)
	case p.M < 1 || p.M > 1<<16 || !(p.ThetaMax > 0):
		return bad("m %d / theta_max %g", p.M, p.ThetaMax)
	case !math.IsNaN(p.UTh) && !(p.UTh >= 0 && p.UTh <= 1):
		return bad("u_th %g outside [0, 1]", p.UTh)
	case !(p.RandP >= 0 && p.RandP <= 1):
		return bad("rand_p %g outside [0, 1]", p.RandP)
	case p.ImpK < 1 || !(p.Gamma >= 0):
		return bad("imp_k %d / gamma %g", p.ImpK, p.Gamma)
	case p.ProbBits != 8 && p.ProbBits != 16 && p.ProbBits != 32:
		return bad("prob_bits %d (want 8, 16 or 32)", p.ProbBits)
	case p.K < 1 || p.SQSK < 1:
		return bad("k %d / sqs_k %d", p.K, p.SQSK)
	case !(p.Theta > 0) || !(p.Eta > 0):
		return bad("theta %g / eta %g", p.Theta, p.Eta)
	case p.Ell < 1 || p.Budget < 1:
		return bad("ell %d / budget_bits %d", p.Ell, p.Budget)
	case !(p.ConfAlpha > 0 && p.ConfAlpha < 1) || !(p.ConfEta >= 0) || math.IsInf(p.ConfEta, 1) || math.IsNaN(p.ConfBeta):
		return bad("conf_alpha %g / conf_eta %g / conf_beta %g", p.ConfAlpha, p.ConfEta, p.ConfBeta)
	case p.SampleFrom != "" && p.SampleFrom != "recon" && p.SampleFrom != "slm":
		return bad("sample_from %q (want recon or slm)", p.SampleFrom)
	case p.Sampler != "standard" && p.Sampler != "gumbel":
		return bad("sampler %q (want standard or gumbel)", p.Sampler)
	case p.Draft != "fixed" && p.Draft != "heuristic" && p.Draft != "ddqn":
		return bad("draft %q (want fixed, heuristic or ddqn)", p.Draft)
	case p.Draft == "ddqn" && !m.Controlled:
		return bad("draft=ddqn chooses L and ℓ of the lattice methods q-s and s-q, not %s", p.Method)
	case p.L < 1 || p.LMin < 1 || p.LMax < 0 || (p.LMax > 0 && p.LMax < p.LMin) || p.BatchMax < 0:
		return bad("l %d / l_min %d / l_max %d / batch_max %d", p.L, p.LMin, p.LMax, p.BatchMax)
	case !(p.TauSLM >= 0) || !(p.TauLLM >= 0):
		return bad("tau_slm %g / tau_llm %g", p.TauSLM, p.TauLLM)
	case p.ListK < 1 || p.ListK > MaxListK:
		return bad("list_k %d outside [1, %d]", p.ListK, MaxListK)
	}
	return p.Channel.Validate()
}
