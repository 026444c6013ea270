package hybrid

import (
	"errors"
	"fmt"
	"math"

	"github.com/hlmproject/hlm/channel"
	"github.com/hlmproject/hlm/codec"
	"github.com/hlmproject/hlm/policy"
)

// ErrParam reports an unknown or impossible parameter.
var ErrParam = errors.New("invalid parameter")

// KeyError is a value one key of the registry refuses (Params.Validate,
// Params.Set): Key names it, for a caller that reports the field (an API
// answering with the request's field). It wraps ErrParam, and its text is
// "invalid parameter: KEY=VALUE: why".
type KeyError struct {
	Key string
	msg string
}

func (e *KeyError) Error() string { return ErrParam.Error() + ": " + e.msg }
func (e *KeyError) Unwrap() error { return ErrParam }

// keyError is the KeyError of key, its text from format and args.
func keyError(key, format string, args ...any) *KeyError {
	return &KeyError{Key: key, msg: fmt.Sprintf(format, args...)}
}

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
	ProbBits   int         // bits per probability of the full and top-k codecs (32, 16, 8)
	IndexBits  bool        // full codec sends (index, value) pairs as CU-HLM counts them
	K          int         // top-k size of cu-hlm-offline (CU-HLM k* = 30)
	SQSK       int         // support size K of k-sqs
	Theta      float64     // TVD tolerance θ of the online top-k (eq. 24)
	Eta        float64     // softplus temperature η (eq. 22)
	Ell        int         // lattice resolution ℓ
	Budget     int         // bits per batch for k-sqs / c-sqs (SQS Sec. 4)
	ConfAlpha  float64     // C-SQS target dropped mass α
	ConfEta    float64     // C-SQS learning rate η (0: a fixed threshold, SQS Fig. 5's non-adaptive C-SQS)
	ConfBeta   float64     // C-SQS initial threshold β₁
	SampleFrom DraftSource // what the draft is sampled from; "" (SampleDefault): the method's choice

	// Draft length (SD family).
	Draft     DraftPolicy
	DDQNModel string // trained policy for draft=ddqn
	L         int    // fixed draft length, or the heuristic's initial length
	LMin      int
	LMax      int // largest draft length of the heuristic (0: no cap)
	// The token trees (tree-q-s, tree-k-sqs): at most TreeNodes nodes and
	// TreeDepth levels per round, grown by the draft's own probabilities
	// (TreeShape "dynamic") or to a fixed shape (candidates per node at
	// each depth, e.g. "3,2,1"), within Budget bits per round.
	TreeNodes int
	TreeDepth int
	TreeShape string
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
	Sampler Sampler

	// ListK is the number of drafts per position of coupled-list (list
	// matching); 1 is plain coupling.
	ListK int

	// FitPrompt cuts a prompt that leaves no room for MaxTokens to its
	// BOS and last tokens (FitPrompt) — what an evaluation over datasets
	// with long passages needs. Off, the default of every command that
	// takes a prompt from the user: a prompt must leave room for one token
	// (else the session is refused with model.ErrContextFull), and the
	// generation stops when the context is full (StopContext).
	FitPrompt bool

	// Bonus lets the one-token methods (hlm, rand-hlm, u-hlm, cu-hlm-*,
	// ui-hlm, i-hlm) follow an accepted draft with a token sampled from the
	// LLM's next distribution, as block speculative decoding does. Off by
	// default: U-HLM eq. 4, CU-HLM eq. 6, CU-HLM Algorithm 1 and U+I Sec. II commit
	// exactly one token per round — the accepted draft, or the resampled
	// token on rejection. With the bonus, throughput and the quality of
	// every uploading method are inflated (pair 2: 23% of HLM's tokens).
	// The block methods always take the bonus (Q-S eq. 3).
	Bonus bool

	Channel channel.Config
}

// DefaultParams are the papers' defaults: CU-HLM Sec. V's setting for the
// link (10 MHz, 10 dB average SNR, Rayleigh), b_prob = 8 with index bits,
// τ_SLM = 25.6 ms, τ_LLM = 104.6 ms and θ = 0.1; U-HLM's M = 20 and
// θmax = 2; SQS Sec. 4's ℓ = 100 and 5000-bit batch budget; U+I's energy
// costs {300, 350, 100}.
func DefaultParams() Params {
	e := policy.DefaultEnergy()
	return Params{
		Method: HLM, MaxTokens: 64, Temperature: 1,
		M: 20, ThetaMax: 2, UTh: math.NaN(), CalibA: 0.815, CalibB: -0.066, RandP: policy.DefaultRandomP,
		ImpK: policy.DefaultK, Gamma: policy.DefaultGamma,
		ProbBits: 8, IndexBits: true, K: 30, SQSK: 8, Theta: 0.1, Eta: codec.DefaultEta, Ell: 100, Budget: 5000,
		ConfAlpha: 0.0005, ConfEta: 0.001, ConfBeta: 0.001,
		TreeNodes: 32, TreeDepth: 8, TreeShape: "dynamic",
		Draft: DraftFixed, L: policy.DefaultInitialL, LMin: policy.DefaultMinL, LMax: policy.DefaultMaxL,
		TauSLM: 0.0256, TauLLM: 0.1046,
		EnergyUpload: e.Upload, EnergyResample: e.Resample, EnergySLM: e.SLM,
		Diagnostics: true,
		Sampler:     SamplerStandard,
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
	case SampleRecon:
		return true
	case SampleSLM:
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

// Validate reports impossible parameters: a value outside what its key
// accepts (the registry, keys.go: the error names the key, the value and
// the range), then the combinations no single key can check.
func (p Params) Validate() error {
	for i := range registry {
		k := &registry[i]
		if k.Action {
			continue
		}
		v := k.get(&p)
		probe := p
		if err := k.set(&probe, v); err != nil {
			var zero Params
			if k.get(&zero) == v { // a field left at Go's zero value
				return keyError(k.Name, "%s=%s: %v (a Params starts from DefaultParams(); this field is at its zero value)", k.Name, v, err)
			}
			return keyError(k.Name, "%s=%s: %v", k.Name, v, err)
		}
	}
	m := p.method()
	switch {
	case p.LMax > 0 && p.LMax < p.LMin:
		return fmt.Errorf("%w: l_max=%d is below l_min=%d (0: no cap)", ErrParam, p.LMax, p.LMin)
	case p.Draft == DraftDDQN && !m.Controlled:
		return fmt.Errorf("%w: draft=ddqn chooses L and ℓ of the lattice methods q-s and s-q, not %s", ErrParam, p.Method)
	case m.Tree && p.SampleFrom == SampleSLM:
		// A tree's candidates are drawn without replacement from what is
		// sent; the server checks each against that support.
		return fmt.Errorf("%w: sample_from=slm with %s: a tree's candidates are drawn from the distributions sent (recon), and one drawn from the SLM's own may lie outside what was sent; use a chain method (q-s, k-sqs) to draft from the SLM", ErrParam, p.Method)
	}
	return p.Channel.Validate()
}
