package hybrid

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/hlmproject/hlm/channel"
	"github.com/hlmproject/hlm/codec"
	"github.com/hlmproject/hlm/internal/words"
	"github.com/hlmproject/hlm/wire"
)

// A Key is one run parameter, defined once in the registry below: its
// name (the --set key, the session-parameter key on the wire, and, with
// '-' for '_', the flag of hlm sim and hlm edge where it is one), its help,
// the values it accepts, and whether the server needs it. Its default is
// DefaultParams's value. Everything else is read from the registry: Set,
// Get, the ranges Validate checks, the session parameters (SessionParams,
// ParseSessionParams), the --help listing with defaults, the flags and
// their conflict check, docs/protocol.md's table, and the randomized
// simulator ≡ network test's parameter draws. Adding a parameter is its
// field of Params, its default in DefaultParams and one entry here; a
// method-specific key is also named in its methods' Method.Keys (and
// given a non-default value in hybrid/unused_test.go's unusedAlt), and a
// key marked wire changes the session format (sessionFormats in
// params_wire_test.go says what to bump). docs/design.md, "Run
// parameters", lists the tests that name what was forgotten.
//
// The link's keys (bandwidth_hz, snr_db, …) are package channel's own
// registry (channel.Keys); Set and KeyHelp reach them too.
type Key struct {
	Name    string
	Help    string
	Accepts string // the values Set accepts, in words ("an integer in [1, 16]")
	// Wire: the server samples, verifies or decodes with it, so it
	// travels in the session parameters (SessionParams).
	Wire bool
	// Flag: hlm sim and hlm edge also take it as --NAME ('-' for '_').
	Flag bool
	// Action: setting it changes other fields (channel_preset) instead of
	// holding a value of its own: it has no default and never travels.
	Action bool
	// List: its values are comma-separated lists (tree_shape's "3,2,1"), so
	// a list of its values is separated otherwise (eval's sweeps: ';').
	List bool

	get func(p *Params) string
	// set parses v, checks it against Accepts and stores it; its error
	// says what was wanted (Set adds the key and the value).
	set func(p *Params, v string) error
	// draw is a value for randomized tests, from the key's typical range
	// (a subset of what it accepts, small enough to run quickly); nil:
	// the key is not drawn (a file, a non-reproducible setting).
	draw func(r *rand.Rand) string
}

// FlagName is the key's flag name: the key with '-' for '_'.
func (k Key) FlagName() string { return strings.ReplaceAll(k.Name, "_", "-") }

// Default is the key's value in DefaultParams ("" for an action).
func (k Key) Default() string {
	if k.Action {
		return ""
	}
	p := DefaultParams()
	return k.get(&p)
}

// Draw is a random value of the key for tests, from its typical range, or
// "" when the key is not drawn.
func (k Key) Draw(r *rand.Rand) string {
	if k.draw == nil {
		return ""
	}
	return k.draw(r)
}

// The constructors below make the registry's entries from a field and
// the values it accepts.

func (k Key) wire() Key   { k.Wire = true; return k }
func (k Key) flag() Key   { k.Flag = true; return k }
func (k Key) noDraw() Key { k.draw = nil; return k }

// typical narrows the values randomized tests draw (integers and numbers).
func (k Key) typical(lo, hi float64) Key {
	if strings.HasPrefix(k.Accepts, "an integer") {
		a, b := int(lo), int(hi)
		k.draw = func(r *rand.Rand) string { return strconv.Itoa(a + r.IntN(b-a+1)) }
	} else {
		k.draw = func(r *rand.Rand) string { return fmtFloat(lo + (hi-lo)*r.Float64()) }
	}
	return k
}

func fmtFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// intKey accepts the integers in [lo, hi].
func intKey(name, help string, lo, hi int, field func(p *Params) *int) Key {
	accepts := fmt.Sprintf("an integer in [%d, %d]", lo, hi)
	return Key{Name: name, Help: help, Accepts: accepts,
		get: func(p *Params) string { return strconv.Itoa(*field(p)) },
		set: func(p *Params, v string) error {
			x, err := strconv.Atoi(v)
			if err != nil || x < lo || x > hi {
				return fmt.Errorf("want %s", accepts)
			}
			*field(p) = x
			return nil
		},
		draw: func(r *rand.Rand) string { return strconv.Itoa(lo + r.IntN(min(hi-lo, 1<<20)+1)) },
	}
}

// span is an interval of numbers, each end open or closed.
type span struct {
	lo, hi         float64
	loOpen, hiOpen bool
}

var (
	finite      = span{lo: -math.MaxFloat64, hi: math.MaxFloat64}
	nonNegative = span{hi: math.MaxFloat64}
	positive    = span{hi: math.MaxFloat64, loOpen: true}
	unit        = span{hi: 1}
	openUnit    = span{hi: 1, loOpen: true, hiOpen: true}
)

func (s span) contains(x float64) bool {
	return (x > s.lo || !s.loOpen && x == s.lo) && (x < s.hi || !s.hiOpen && x == s.hi)
}

func (s span) String() string {
	switch {
	case s == finite:
		return "a finite number"
	case s.hi == math.MaxFloat64 && s.loOpen:
		return "a finite number > " + fmtFloat(s.lo)
	case s.hi == math.MaxFloat64:
		return "a finite number ≥ " + fmtFloat(s.lo)
	}
	l, r := "[", "]"
	if s.loOpen {
		l = "("
	}
	if s.hiOpen {
		r = ")"
	}
	return fmt.Sprintf("a number in %s%s, %s%s", l, fmtFloat(s.lo), fmtFloat(s.hi), r)
}

// floatKey accepts the numbers in s (never NaN or ±Inf).
func floatKey(name, help string, s span, field func(p *Params) *float64) Key {
	accepts := s.String()
	k := Key{Name: name, Help: help, Accepts: accepts,
		get: func(p *Params) string { return fmtFloat(*field(p)) },
		set: func(p *Params, v string) error {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || !s.contains(x) {
				return fmt.Errorf("want %s", accepts)
			}
			*field(p) = x
			return nil
		},
	}
	if s.hi < math.MaxFloat64 && s.lo > -math.MaxFloat64 {
		k = k.typical(s.lo, s.hi)
	}
	return k
}

func boolKey(name, help string, field func(p *Params) *bool) Key {
	return Key{Name: name, Help: help, Accepts: "true or false",
		get: func(p *Params) string { return strconv.FormatBool(*field(p)) },
		set: func(p *Params, v string) error {
			x, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("want true or false")
			}
			*field(p) = x
			return nil
		},
		draw: func(r *rand.Rand) string { return strconv.FormatBool(r.IntN(2) == 0) },
	}
}

// enumKey accepts one of values (the empty value written "default"); drawn (all values when
// none are given) are what randomized tests draw.
func enumKey[T ~string](name, help string, values []T, field func(p *Params) *T, drawn ...T) Key {
	text := func(v T) string { // the empty value reads "default"
		if v == "" {
			return "default"
		}
		return string(v)
	}
	names := make([]string, len(values))
	for i, v := range values {
		names[i] = text(v)
	}
	if len(drawn) == 0 {
		drawn = values
	}
	accepts := "one of " + strings.Join(names, ", ")
	return Key{Name: name, Help: help, Accepts: accepts,
		get: func(p *Params) string { return text(*field(p)) },
		set: func(p *Params, v string) error {
			i := slices.Index(names, v)
			if i < 0 {
				return fmt.Errorf("want %s", accepts)
			}
			*field(p) = values[i]
			return nil
		},
		draw: func(r *rand.Rand) string { return text(drawn[r.IntN(len(drawn))]) },
	}
}

// intChoiceKey accepts one of values.
func intChoiceKey(name, help string, values []int, field func(p *Params) *int) Key {
	names := make([]string, len(values))
	for i, v := range values {
		names[i] = strconv.Itoa(v)
	}
	accepts := "one of " + strings.Join(names, ", ")
	return Key{Name: name, Help: help, Accepts: accepts,
		get: func(p *Params) string { return strconv.Itoa(*field(p)) },
		set: func(p *Params, v string) error {
			x, err := strconv.Atoi(v)
			if err != nil || !slices.Contains(values, x) {
				return fmt.Errorf("want %s", accepts)
			}
			*field(p) = x
			return nil
		},
		draw: func(r *rand.Rand) string { return names[r.IntN(len(names))] },
	}
}

// DraftPolicy is how a block method chooses its draft length L (key draft).
type DraftPolicy string

const (
	DraftFixed     DraftPolicy = "fixed"     // L = l every round
	DraftHeuristic DraftPolicy = "heuristic" // L grows on full acceptance, shrinks on rejection (l, l_min, l_max)
	DraftDDQN      DraftPolicy = "ddqn"      // L and ℓ per round from a trained policy (ddqn_model; Q-S Sec. IV-B)
)

// Sampler is how the server samples where it samples on its own (the
// LLM-only method; key sampler).
type Sampler string

const (
	SamplerStandard Sampler = "standard" // the session's random stream
	SamplerGumbel   Sampler = "gumbel"   // the keyed noise of coupled verification
)

// DraftSource is what the device samples its draft from (key sample_from).
type DraftSource string

const (
	SampleDefault DraftSource = ""      // the method's choice (written "default") (Method.SamplesSLM)
	SampleRecon   DraftSource = "recon" // what is sent: quantize, then sample (lossless)
	SampleSLM     DraftSource = "slm"   // the SLM's own distribution
)

// Limits of the integer keys: generous, but no value that could exhaust
// memory or overflow a count on the way.
const (
	// MaxTokensLimit is the most new tokens max_tokens may ask.
	MaxTokensLimit = 1 << 24
	maxIndex       = 1 << 22 // a vocabulary index or size
	maxDraftLen    = 1 << 16
	maxBudgetBits  = 1 << 30
)

// registry is every run parameter of Params, in the order of the session
// parameters for the keys that travel; the rest follow by topic.
var registry = []Key{
	enumKey("method", "method name (docs/design.md, Methods; hlm sim --help lists them)", methodNames(), func(p *Params) *string { return &p.Method }).wire().flag(),
	{Name: "seed", Help: "random seed of the run", Accepts: "an integer in [0, 18446744073709551615]",
		get: func(p *Params) string { return strconv.FormatUint(p.Seed, 10) },
		set: func(p *Params, v string) error {
			x, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return fmt.Errorf("want an integer in [0, 18446744073709551615]")
			}
			p.Seed = x
			return nil
		},
		draw: func(r *rand.Rand) string { return strconv.FormatUint(r.Uint64(), 10) }, Wire: true, Flag: true},
	floatKey("temperature", "sampling temperature of both models (0: greedy)", nonNegative, func(p *Params) *float64 { return &p.Temperature }).typical(0, 2).wire().flag(),
	intKey("top_k", "top-k filter applied by both models (0: off)", 0, maxIndex, func(p *Params) *int { return &p.TopK }).typical(0, 40).wire().flag(),
	floatKey("top_p", "nucleus filter applied by both models (0 or 1: off)", unit, func(p *Params) *float64 { return &p.TopP }).wire().flag(),
	boolKey("bonus", "one-token methods: follow an accepted draft with an LLM-sampled bonus token (off: the papers' one token per round)", func(p *Params) *bool { return &p.Bonus }).wire(),
	enumKey("sampler", "server-side sampling of the llm method: standard or gumbel (keyed noise, as coupled)",
		[]Sampler{SamplerStandard, SamplerGumbel}, func(p *Params) *Sampler { return &p.Sampler }).wire(),
	intKey("list_k", "drafts per position of coupled-list (list matching)", 1, MaxListK, func(p *Params) *int { return &p.ListK }).typical(1, 4).wire(),
	intChoiceKey("prob_bits", "bits per probability in the full and top-k codecs", []int{8, 16, 32}, func(p *Params) *int { return &p.ProbBits }).wire(),
	boolKey("index_bits", "full codec sends (index, value) pairs (CU-HLM eq. 4 accounting)", func(p *Params) *bool { return &p.IndexBits }).wire(),
	intKey("k", "top-k size of cu-hlm-offline (CU-HLM k*)", 1, maxIndex, func(p *Params) *int { return &p.K }).typical(1, 64).wire(),
	intKey("sqs_k", "support size K of k-sqs", 1, maxIndex, func(p *Params) *int { return &p.SQSK }).typical(1, 32).wire(),
	intKey("ell", "lattice resolution ℓ (Q-S, SQS)", 1, codec.MaxL, func(p *Params) *int { return &p.Ell }).typical(1, 300).wire(),
	enumKey("draft", "draft length policy of the block methods: fixed (l), heuristic (l, l_min, l_max), or ddqn (L and ℓ per round from ddqn_model; q-s and s-q)",
		[]DraftPolicy{DraftFixed, DraftHeuristic, DraftDDQN}, func(p *Params) *DraftPolicy { return &p.Draft }, DraftFixed, DraftHeuristic).wire(),

	// Device-only settings: they never reach the server.
	intKey("max_tokens", "new tokens at most (r_max)", 1, MaxTokensLimit, func(p *Params) *int { return &p.MaxTokens }).typical(1, 48).flag(),
	intKey("m", "perturbed temperatures per token (U-HLM M)", 1, 1<<16, func(p *Params) *int { return &p.M }).typical(1, 24),
	floatKey("theta_max", "perturbed temperatures are uniform in [0, theta_max]", positive, func(p *Params) *float64 { return &p.ThetaMax }).typical(0.5, 3),
	{Name: "u_th", Help: "uncertainty threshold: upload when u > u_th (default: 0.8 for CU-HLM, 0.431 for U-HLM and U+I)",
		Accepts: "a number in [0, 1], or default",
		get: func(p *Params) string {
			if math.IsNaN(p.UTh) {
				return "default"
			}
			return fmtFloat(p.UTh)
		},
		set: func(p *Params, v string) error {
			if v == "default" {
				p.UTh = math.NaN()
				return nil
			}
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || !unit.contains(x) {
				return fmt.Errorf("want a number in [0, 1], or default (the method's)")
			}
			p.UTh = x
			return nil
		},
		draw: func(r *rand.Rand) string {
			if r.IntN(3) == 0 {
				return "default"
			}
			return fmtFloat(r.Float64())
		}},
	floatKey("calib_a", "slope a of β = a·u + b (CU-HLM eq. 7)", finite, func(p *Params) *float64 { return &p.CalibA }).typical(0.5, 1),
	floatKey("calib_b", "intercept b of β = a·u + b", finite, func(p *Params) *float64 { return &p.CalibB }).typical(-0.1, 0.1),
	floatKey("rand_p", "Rand-HLM upload probability", unit, func(p *Params) *float64 { return &p.RandP }),
	intKey("imp_k", "U+I top-k attention test: k weights above the threshold", 1, maxIndex, func(p *Params) *int { return &p.ImpK }).typical(1, 8),
	floatKey("gamma", "U+I threshold margin γ·std(A) below max(A)", nonNegative, func(p *Params) *float64 { return &p.Gamma }).typical(0, 2),
	intKey("budget_bits", "bits per batch for k-sqs and c-sqs (SQS B), per round for the tree methods (a round always sends at least one draft, whatever its size)", 1, maxBudgetBits, func(p *Params) *int { return &p.Budget }).typical(100, 8000),
	intKey("tree_nodes", "tree methods: nodes per round at most", 1, wire.MaxTreeNodes, func(p *Params) *int { return &p.TreeNodes }).typical(1, 24),
	intKey("tree_depth", "tree methods: levels per round at most", 1, maxDraftLen, func(p *Params) *int { return &p.TreeDepth }).typical(1, 8),
	treeShapeKey(),
	floatKey("theta", "TVD tolerance θ of the online top-k (CU-HLM eq. 24)", positive, func(p *Params) *float64 { return &p.Theta }).typical(0.01, 0.5),
	floatKey("eta", "softplus temperature η of the online top-k (CU-HLM eq. 22; error of eq. 22 ≤ ln2/η)", positive, func(p *Params) *float64 { return &p.Eta }).typical(1, 20),
	floatKey("conf_alpha", "C-SQS target dropped mass α", openUnit, func(p *Params) *float64 { return &p.ConfAlpha }).typical(1e-4, 0.05),
	floatKey("conf_eta", "C-SQS threshold learning rate η (0: a fixed threshold)", nonNegative, func(p *Params) *float64 { return &p.ConfEta }).typical(0, 0.01),
	floatKey("conf_beta", "C-SQS initial threshold β₁", finite, func(p *Params) *float64 { return &p.ConfBeta }).typical(0, 0.01),
	enumKey("sample_from", "draft from what is sent (recon) or from the SLM (slm)",
		[]DraftSource{SampleDefault, SampleRecon, SampleSLM}, func(p *Params) *DraftSource { return &p.SampleFrom }),
	{Name: "ddqn_model", Help: "file of a trained DDQN policy (hlm train-ddqn) for draft=ddqn", Accepts: "a file name",
		get: func(p *Params) string { return p.DDQNModel },
		set: func(p *Params, v string) error { p.DDQNModel = v; return nil }},
	intKey("l", "draft length (fixed) or initial length (heuristic)", 1, maxDraftLen, func(p *Params) *int { return &p.L }).typical(1, 8),
	intKey("l_min", "smallest draft length of the heuristic", 1, maxDraftLen, func(p *Params) *int { return &p.LMin }).typical(1, 3),
	intKey("l_max", "largest draft length of the heuristic (0: no cap)", 0, maxDraftLen, func(p *Params) *int { return &p.LMax }).typical(0, 10),
	intKey("batch_max", "largest k-sqs/c-sqs batch (0: no cap; the bit budget decides)", 0, maxDraftLen, func(p *Params) *int { return &p.BatchMax }).typical(0, 10),
	floatKey("tau_slm", "SLM time per token, seconds", nonNegative, func(p *Params) *float64 { return &p.TauSLM }).typical(0, 0.05),
	floatKey("tau_llm", "LLM time per verification pass, seconds", nonNegative, func(p *Params) *float64 { return &p.TauLLM }).typical(0, 0.2),
	boolKey("measure_tau", "use the measured drafting and verification times instead of tau_slm/tau_llm (not reproducible)", func(p *Params) *bool { return &p.MeasureTau }).noDraw(),
	floatKey("energy_upload", "U+I ε_u, per uploaded Mbit (policy.Energy)", nonNegative, func(p *Params) *float64 { return &p.EnergyUpload }).typical(0, 500),
	floatKey("energy_resample", "U+I ε_r, per resampled token", nonNegative, func(p *Params) *float64 { return &p.EnergyResample }).typical(0, 500),
	floatKey("energy_slm", "U+I ε_s, per SLM-drafted token", nonNegative, func(p *Params) *float64 { return &p.EnergySLM }).typical(0, 500),
	boolKey("fit_prompt", "cut a prompt that leaves no room for max_tokens to BOS and its last tokens (hlm eval's datasets); false: a prompt must fit the context, and generation stops when it is full", func(p *Params) *bool { return &p.FitPrompt }),
	boolKey("diagnostics", "exchange per-token probabilities to measure the true skip rate", func(p *Params) *bool { return &p.Diagnostics }),
	boolKey("entropy", "simulator: measure the mean entropy of the exact distribution each committed token followed (mean_entropy, nats)", func(p *Params) *bool { return &p.Entropy }).noDraw(),
	{Name: "channel_preset", Help: "reset the channel to a preset", Accepts: "one of " + strings.Join(channel.PresetNames(), ", "), Action: true,
		get: func(p *Params) string { return "" },
		set: func(p *Params, v string) error {
			c, err := channel.Preset(v)
			if err != nil {
				return fmt.Errorf("want one of %s", strings.Join(channel.PresetNames(), ", "))
			}
			p.Channel = c
			return nil
		}},
}

// treeShapeKey is tree_shape: "dynamic", or the candidates each node at
// depth 0, 1, … draws ("3,2,1").
func treeShapeKey() Key {
	const accepts = "dynamic, or candidates per node at each depth: 1 to 64 each, at most 32 depths (3,2,1)"
	return Key{Name: "tree_shape", Help: "tree methods: grow the tree by the expected accepted tokens per bit and per second, from the run's measured acceptance (dynamic), or to a fixed shape", Accepts: accepts, List: true,
		get: func(p *Params) string { return p.TreeShape },
		set: func(p *Params, v string) error {
			if _, err := parseTreeShape(v); err != nil {
				return fmt.Errorf("want %s", accepts)
			}
			p.TreeShape = v
			return nil
		},
		draw: func(r *rand.Rand) string {
			if r.IntN(2) == 0 {
				return "dynamic"
			}
			parts := make([]string, 1+r.IntN(4))
			for i := range parts {
				parts[i] = strconv.Itoa(1 + r.IntN(3))
			}
			return strings.Join(parts, ",")
		}}
}

// parseTreeShape reads tree_shape: nil for "dynamic", else the candidates
// per node at each depth.
func parseTreeShape(v string) ([]int, error) {
	if v == "dynamic" {
		return nil, nil
	}
	parts := strings.Split(v, ",")
	if len(parts) > 32 {
		return nil, fmt.Errorf("%d depths", len(parts))
	}
	out := make([]int, len(parts))
	for i, s := range parts {
		k, err := strconv.Atoi(s)
		if err != nil || k < 1 || k > 64 {
			return nil, fmt.Errorf("depth %d: %q", i, s)
		}
		out[i] = k
	}
	return out, nil
}

// methodNames are the method table's names (registry's method key).
func methodNames() []string {
	names := make([]string, len(methods))
	for i, m := range methods {
		names[i] = m.Name
	}
	return names
}

var keyIndex = func() map[string]*Key {
	idx := make(map[string]*Key, len(registry))
	for i := range registry {
		idx[registry[i].Name] = &registry[i]
	}
	return idx
}()

// Keys are the registry's keys, in its order (session keys first).
func Keys() []Key { return slices.Clone(registry) }

// LookupKey is the registry's key of a name.
func LookupKey(name string) (Key, bool) {
	k, ok := keyIndex[name]
	if !ok {
		return Key{}, false
	}
	return *k, true
}

// Set sets one parameter by name; channel keys (bandwidth_hz, snr_db,
// fading, …) go to the channel configuration. The error names the key,
// the value and what the key accepts.
func (p *Params) Set(key, value string) error {
	if k, ok := keyIndex[key]; ok {
		if err := k.set(p, value); err != nil {
			return keyError(key, "%s=%q: %v", key, value, err)
		}
		return nil
	}
	if err := p.Channel.Set(key, value); err != nil {
		if errors.Is(err, channel.ErrUnknownKey) {
			if near := nearestKey(key); near != "" {
				return fmt.Errorf("%w: unknown key %q; did you mean %s? (hlm sim --help lists them)", ErrParam, key, near)
			}
			return fmt.Errorf("%w: unknown key %q (hlm sim --help lists them)", ErrParam, key)
		}
		return fmt.Errorf("%w: %v", ErrParam, err)
	}
	return nil
}

// nearestKey is the parameter name nearest to a mistyped key (the same
// name in lower case first: L for l), or "" when none is near.
func nearestKey(key string) string {
	var names []string
	for _, k := range KeyHelp() {
		if k.Name == strings.ToLower(key) {
			return k.Name
		}
		names = append(names, k.Name)
	}
	return words.Closest(key, names)
}

// Get is p's value of a key, in the text Set parses back to the same
// value (floats in the shortest form that round-trips); channel keys
// included. An action key (channel_preset) has no value.
func (p Params) Get(key string) (string, error) {
	if k, ok := keyIndex[key]; ok {
		return k.get(&p), nil
	}
	v, err := p.Channel.Get(key)
	if err != nil {
		return "", fmt.Errorf("%w: unknown key %q (hlm sim --help lists them)", ErrParam, key)
	}
	return v, nil
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

// KeyDoc is one line of the parameter listing: a key, its help, its
// default and what it accepts.
type KeyDoc struct {
	Name, Help, Default, Accepts string
}

// KeyHelp lists every key, channel keys included, sorted by name, with
// its default (DefaultParams) and what it accepts.
func KeyHelp() []KeyDoc {
	var out []KeyDoc
	for _, k := range registry {
		out = append(out, KeyDoc{k.Name, k.Help, k.Default(), k.Accepts})
	}
	def := DefaultParams().Channel
	for _, k := range channel.Keys() {
		v, _ := def.Get(k.Name)
		out = append(out, KeyDoc{Name: k.Name, Help: k.Help, Default: v, Accepts: k.Accepts})
	}
	slices.SortFunc(out, func(a, b KeyDoc) int { return strings.Compare(a.Name, b.Name) })
	return out
}
