package policy

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/hlmproject/hlm/importance"
)

// ErrInvalid is returned (wrapped) for impossible parameters.
var ErrInvalid = errors.New("policy: invalid parameter")

// Token is what the device knows about a freshly drafted token when it
// decides whether to upload.
type Token struct {
	// Pos is the absolute position of the token in the sequence.
	Pos int
	// Draft is the drafted token id.
	Draft int
	// XDraft is the draft model's probability of Draft, x_d.
	XDraft float64
	// U is the temperature-perturbation uncertainty (package uncertainty).
	U float64
	// Attention is the newest position's attention row over all previous
	// positions (last layer, head-averaged; package importance). Nil when
	// the engine did not capture it.
	Attention []float32
	// Dist is the distribution the draft was sampled from (the SLM's,
	// after temperature and filters; length V), for a rule of one's own
	// that measures something else from it (hybrid.SessionConfig.Uploader).
	// Read only: it is the device's.
	Dist []float64
}

// Uploader decides whether a drafted token is sent to the server for
// verification (true) or committed locally (false).
type Uploader interface {
	Upload(t Token, rng *rand.Rand) bool
}

// Defaults from the papers.
const (
	DefaultRandomP = 0.5   // Rand-HLM (CU-HLM Sec. V-A)
	UHLMThreshold  = 0.431 // U-HLM Sec. IV-A, risk-prone threshold
	CUHLMThreshold = 0.8   // CU-HLM Sec. V-B
	// U+I evaluates k ∈ {3,5,7,9,11}, γ ∈ {0.5,1,1.5}; (3, 1.5) is its
	// headline configuration (87.5% BERTScore, 40.7% energy saving).
	DefaultK     = 3
	DefaultGamma = 1.5
)

// maxK bounds k for parsing; an attention row longer than this is
// implausible for the models hlm runs.
const maxK = 1 << 20

var (
	_ Uploader = Always{}
	_ Uploader = Never{}
	_ Uploader = Random{}
	_ Uploader = Threshold{}
	_ Uploader = UncertaintyImportance{}
	_ Uploader = ImportanceOnly{}
)

// Always uploads every token: plain HLM, lossless.
type Always struct{}

// Upload returns true. It consumes no randomness.
func (Always) Upload(Token, *rand.Rand) bool { return true }

// Validate returns nil.
func (Always) Validate() error { return nil }

func (Always) String() string { return "always" }

// Never uploads nothing: the small model alone (SLM-only baseline).
type Never struct{}

// Upload returns false. It consumes no randomness.
func (Never) Upload(Token, *rand.Rand) bool { return false }

// Validate returns nil.
func (Never) Validate() error { return nil }

func (Never) String() string { return "never" }

// Random uploads each token independently with probability P (Rand-HLM;
// CU-HLM uses P = 0.5).
type Random struct {
	P float64 `json:"p"`
}

// Upload returns true with probability P, consuming one draw from rng.
func (r Random) Upload(_ Token, rng *rand.Rand) bool { return rng.Float64() < r.P }

// Validate requires 0 ≤ P ≤ 1.
func (r Random) Validate() error {
	if !(r.P >= 0 && r.P <= 1) {
		return fmt.Errorf("%w: random: p = %v (want 0 ≤ p ≤ 1)", ErrInvalid, r.P)
	}
	return nil
}

func (r Random) String() string { return "random:p=" + ftoa(r.P) }

// Threshold uploads a token iff its uncertainty exceeds UTh (U-HLM eq. 8,
// CU-HLM eq. 10): u > u_th → upload, u ≤ u_th → skip. A NaN uncertainty is
// treated as unknown and uploaded (the lossless choice).
type Threshold struct {
	UTh float64 `json:"u_th"`
}

// Upload reports !(t.U ≤ UTh). It consumes no randomness.
func (p Threshold) Upload(t Token, _ *rand.Rand) bool { return !(t.U <= p.UTh) }

// Validate requires a finite threshold. Thresholds outside [0, 1] are
// allowed (a calibrated risk-prone threshold can exceed 1: never upload).
func (p Threshold) Validate() error {
	if !finite(p.UTh) {
		return fmt.Errorf("%w: threshold: u_th = %v (want finite)", ErrInvalid, p.UTh)
	}
	return nil
}

func (p Threshold) String() string { return "threshold:u_th=" + ftoa(p.UTh) }

// UncertaintyImportance uploads a token iff it is both uncertain and
// important (U+I eq. 7): u > UTh and importance.Important(attention, K,
// Gamma). A token without an attention row is not important and is not
// uploaded. The U+I paper does not state θ_u; the default is U-HLM's
// 0.431, the paper's uncertainty baseline.
type UncertaintyImportance struct {
	UTh   float64 `json:"u_th"`
	K     int     `json:"k"`
	Gamma float64 `json:"gamma"`
}

// Upload reports u > UTh (NaN counts as uncertain) and importance. It
// consumes no randomness.
func (p UncertaintyImportance) Upload(t Token, _ *rand.Rand) bool {
	return !(t.U <= p.UTh) && importance.Important(t.Attention, p.K, p.Gamma)
}

// Validate requires a finite UTh, K ≥ 1 and a finite Gamma ≥ 0.
func (p UncertaintyImportance) Validate() error {
	if !finite(p.UTh) {
		return fmt.Errorf("%w: u+i: u_th = %v (want finite)", ErrInvalid, p.UTh)
	}
	return validateImportance("u+i", p.K, p.Gamma)
}

func (p UncertaintyImportance) String() string {
	return "u+i:u_th=" + ftoa(p.UTh) + ",k=" + strconv.Itoa(p.K) + ",gamma=" + ftoa(p.Gamma)
}

// ImportanceOnly uploads a token iff it is important (the "I" baseline of
// U+I Table I).
type ImportanceOnly struct {
	K     int     `json:"k"`
	Gamma float64 `json:"gamma"`
}

// Upload reports importance.Important(t.Attention, K, Gamma). It consumes
// no randomness.
func (p ImportanceOnly) Upload(t Token, _ *rand.Rand) bool {
	return importance.Important(t.Attention, p.K, p.Gamma)
}

// Validate requires K ≥ 1 and a finite Gamma ≥ 0.
func (p ImportanceOnly) Validate() error { return validateImportance("importance", p.K, p.Gamma) }

func (p ImportanceOnly) String() string {
	return "importance:k=" + strconv.Itoa(p.K) + ",gamma=" + ftoa(p.Gamma)
}

func validateImportance(name string, k int, gamma float64) error {
	if k < 1 || k > maxK {
		return fmt.Errorf("%w: %s: k = %d (want 1…%d)", ErrInvalid, name, k, maxK)
	}
	if !(gamma >= 0) || math.IsInf(gamma, 1) {
		return fmt.Errorf("%w: %s: gamma = %v (want finite, ≥ 0)", ErrInvalid, name, gamma)
	}
	return nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// ftoa formats a float so that strconv.ParseFloat returns it exactly.
func ftoa(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
