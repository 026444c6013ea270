package hybrid

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hlmproject/hlm/codec"
	"github.com/hlmproject/hlm/policy"
)

// Method names, as accepted by `hlm sim --method` and the session
// parameters' "method" key.
const (
	LLM          = "llm"
	SLM          = "slm"
	HLM          = "hlm"
	RandHLM      = "rand-hlm"
	UHLM         = "u-hlm"
	CUHLMOffline = "cu-hlm-offline"
	CUHLMOnline  = "cu-hlm-online"
	UIHLM        = "ui-hlm"
	IHLM         = "i-hlm"
	KSQS         = "k-sqs"
	CSQS         = "c-sqs"
	SQ           = "s-q"
	QS           = "q-s"
	Coupled      = "coupled"
	Replica      = "replica"
	CoupledList  = "coupled-list"
	TreeQS       = "tree-q-s"
	TreeKSQS     = "tree-k-sqs"
)

// A Method is one row of the method table: everything the device and the
// server do differently per method. The round loop, the meters and the
// wire are the same for all; a method is its drafting strategy (how a
// round's drafts are made and what is sent), its codec, its upload rule
// and its verification strategy. Adding a method is a row here and, if it
// drafts or verifies in a new way, a strategy beside the others.
type Method struct {
	Name    string
	Family  Family
	Summary string // one line: what a round does, and the source
	// Lossless: the output is distributed as the LLM's whatever the draft
	// (given its sampling settings), by construction of the verification.
	Lossless bool

	// Uncertainty: the device measures each draft's uncertainty (U-HLM
	// eq. 6–7); Attention: it needs the draft's attention row (U+I eq. 5).
	Uncertainty, Attention bool
	// SamplesSLM: by default the draft is sampled from the SLM's own
	// distribution rather than from what is sent (CU-HLM's top-k, S-Q:
	// lossy by design; sample_from overrides).
	SamplesSLM bool
	// CUHLMThreshold: the default u_th is CU-HLM's 0.8, not U-HLM's 0.431.
	CUHLMThreshold bool
	// Controlled: draft=ddqn may choose L and ℓ per round (Q-S Sec. IV-B).
	Controlled bool
	// ListK: the method sends list_k drafts per position (list matching).
	ListK bool
	// ServerDraft: the server runs the draft model too (replica).
	ServerDraft bool
	// Tree: the drafts are a token tree (Upload.Parents), verified in one
	// pass by recursive rejection sampling (draft_tree.go).
	Tree bool
	// Keys are the method-specific run parameters the method reads (a
	// key in no row's Keys is read by every method); Params.Unused
	// warns of the others.
	Keys []string

	uploader func(Params) policy.Uploader
	// uploadKeys are the keys the upload rule reads, named when it never
	// uploaded (Warnings) where neither Uncertainty nor Attention says it.
	uploadKeys []string
	codec      func(Params) (codec.Codec, error) // nil: token ids only
	drafter    drafter
	verifier   verifier
}

// The method-specific keys that several rows of the table read.
var (
	// observedKeys: the skip family's draft uncertainty, measured for the
	// upload rule or, by the simulator, only observed.
	observedKeys   = []string{"m", "theta_max"}
	uncertainKeys  = keyGroups([]string{"u_th"}, observedKeys)
	fullKeys       = []string{"prob_bits", "index_bits", "bonus"} // the full codec, one-token rounds
	importanceKeys = []string{"imp_k", "gamma"}
	lengthKeys     = []string{"l", "draft", "l_min", "l_max"} // the draft-length policy of a block
	batchKeys      = []string{"ell", "budget_bits", "batch_max"}
	treeKeys       = []string{"ell", "budget_bits", "tree_nodes", "tree_depth", "tree_shape"}
)

// MethodHelp lists the methods for --help texts: a line per method with
// its summary, "lossless" where it is, and the method-specific keys it
// reads (the others' keys do nothing to it: Params.Unused), wrapped at
// width columns.
func MethodHelp(width int) string {
	var b strings.Builder
	for _, m := range methods {
		text := m.Summary
		if m.Lossless {
			text += "; lossless"
		}
		if len(m.Keys) > 0 {
			text += "; reads " + strings.Join(m.Keys, ", ")
		}
		line := fmt.Sprintf("  %-15s", m.Name)
		for _, w := range strings.Fields(text) {
			if len(line)+1+len(w) > width && len(line) > 18 {
				b.WriteString(line + "\n")
				line = strings.Repeat(" ", 17)
			}
			line += " " + w
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// keyGroups is the concatenation of groups of keys.
func keyGroups(groups ...[]string) []string { return slices.Concat(groups...) }

// methods is the method table, in the order the documentation lists it.
var methods = []*Method{
	{Name: LLM, Keys: []string{"sampler"}, Family: FamilyLLM, Lossless: true, Summary: "LLM only: the server samples every token",
		drafter: noDrafts{}, verifier: llmVerifier{}},
	{Name: SLM, Keys: observedKeys, Family: FamilySkip, Summary: "SLM only: the device samples every token, nothing is sent",
		uploader: never, drafter: oneDraft{}, verifier: standard{}},
	{Name: HLM, Keys: keyGroups(fullKeys, observedKeys), Family: FamilySkip, Lossless: true, Summary: "every token verified, the full distribution uploaded",
		uploader: always, codec: fullCodec, drafter: oneDraft{}, verifier: standard{}},
	{Name: RandHLM, Keys: keyGroups([]string{"rand_p"}, fullKeys, observedKeys), Family: FamilySkip, Summary: "upload at random with probability rand_p (U-HLM's baseline)",
		uploader: func(p Params) policy.Uploader { return policy.Random{P: p.RandP} }, uploadKeys: []string{"rand_p"}, codec: fullCodec, drafter: oneDraft{}, verifier: standard{}},
	{Name: UHLM, Keys: keyGroups(uncertainKeys, fullKeys), Family: FamilySkip, Uncertainty: true, Summary: "upload when the uncertainty exceeds u_th (U-HLM eq. 6–8)",
		uploader: threshold, codec: fullCodec, drafter: oneDraft{}, verifier: standard{}},
	{Name: CUHLMOffline, Keys: keyGroups(uncertainKeys, []string{"k", "prob_bits", "bonus"}), Family: FamilySkip, Uncertainty: true, SamplesSLM: true, CUHLMThreshold: true,
		Summary:  "U-HLM skipping and a fixed top-k of the SLM's distribution (CU-HLM eq. 21)",
		uploader: threshold, codec: func(p Params) (codec.Codec, error) { return codec.TopK{K: p.K, ProbBits: p.ProbBits}, nil },
		drafter: oneDraft{}, verifier: standard{}},
	{Name: CUHLMOnline, Keys: keyGroups(uncertainKeys, []string{"prob_bits", "theta", "eta", "calib_a", "calib_b", "bonus"}), Family: FamilySkip, Uncertainty: true, SamplesSLM: true, CUHLMThreshold: true,
		Summary:  "U-HLM skipping and a per-token top-k from the predicted rejection (CU-HLM eq. 23–24)",
		uploader: threshold, codec: func(p Params) (codec.Codec, error) {
			return codec.TopK{K: 0, ProbBits: p.ProbBits, Theta: p.Theta, Eta: p.Eta}, nil
		}, drafter: oneDraft{}, verifier: standard{}},
	{Name: UIHLM, Keys: keyGroups(uncertainKeys, importanceKeys, fullKeys), Family: FamilySkip, Uncertainty: true, Attention: true, Summary: "upload when uncertain and important (U+I eq. 7)",
		uploader: func(p Params) policy.Uploader {
			return policy.UncertaintyImportance{UTh: p.UploadThreshold(), K: p.ImpK, Gamma: p.Gamma}
		}, codec: fullCodec, drafter: oneDraft{}, verifier: standard{}},
	{Name: IHLM, Keys: keyGroups(importanceKeys, fullKeys, observedKeys), Family: FamilySkip, Attention: true, Summary: "upload when important (U+I's importance-only baseline)",
		uploader: func(p Params) policy.Uploader { return policy.ImportanceOnly{K: p.ImpK, Gamma: p.Gamma} },
		codec:    fullCodec, drafter: oneDraft{}, verifier: standard{}},
	{Name: KSQS, Keys: keyGroups([]string{"sqs_k"}, batchKeys), Family: FamilyBlock, Lossless: true, Summary: "top-K sparse lattice drafts filled to a bit budget (SQS)",
		uploader: always, codec: func(p Params) (codec.Codec, error) { return codec.KSQS{K: p.SQSK, L: p.Ell}, nil },
		drafter: encodedBlock{budget: true}, verifier: standard{}},
	{Name: CSQS, Keys: keyGroups([]string{"conf_alpha", "conf_eta", "conf_beta"}, batchKeys), Family: FamilyBlock, Lossless: true, Summary: "conformal sparse lattice drafts filled to a bit budget (SQS)",
		uploader: always, codec: func(p Params) (codec.Codec, error) {
			cs := codec.NewCSQS()
			cs.L = p.Ell
			cs.Alpha, cs.Eta, cs.Beta = p.ConfAlpha, p.ConfEta, p.ConfBeta
			return cs, nil
		}, drafter: encodedBlock{budget: true}, verifier: standard{}},
	{Name: SQ, Keys: keyGroups([]string{"ell"}, lengthKeys, []string{"ddqn_model"}), Family: FamilyBlock, SamplesSLM: true, Controlled: true, Summary: "sample, then lattice-quantize (Q-S's lossy baseline)",
		uploader: always, codec: latticeCodec, drafter: encodedBlock{}, verifier: standard{}},
	{Name: QS, Keys: keyGroups([]string{"ell"}, lengthKeys, []string{"ddqn_model"}), Family: FamilyBlock, Lossless: true, Controlled: true,
		Summary:  "lattice-quantize, then sample: a block of L drafts (Q-S Proposition 1)",
		uploader: always, codec: latticeCodec, drafter: encodedBlock{}, verifier: standard{}},
	{Name: Coupled, Keys: lengthKeys, Family: FamilyBlock, Lossless: true, Summary: "draft ids only, drawn by keyed-noise races the server repeats (drafter-invariant)",
		uploader: always, drafter: idsBlock{coupled: true}, verifier: coupledVerifier{}},
	{Name: Replica, Keys: lengthKeys, Family: FamilyBlock, Lossless: true, ServerDraft: true, Summary: "draft ids only; the server recomputes x with its own SLM copy and checks a hash",
		uploader: always, drafter: idsBlock{}, verifier: replicaVerifier{}},
	{Name: CoupledList, Keys: keyGroups([]string{"list_k"}, lengthKeys), Family: FamilyBlock, Lossless: true, ListK: true,
		Summary:  "list_k coupled drafts per position, list matching (Rowan, Phan, Khisti 2025)",
		uploader: always, drafter: listBlock{}, verifier: listVerifier{}},
	{Name: TreeQS, Keys: treeKeys, Family: FamilyBlock, Lossless: true, Tree: true,
		Summary:  "a token tree within budget_bits: lattice-quantized distributions, candidates drafted from them, recursive rejection sampling (beyond the papers)",
		uploader: always, codec: latticeCodec, drafter: treeBlock{}, verifier: treeVerifier{}},
	{Name: TreeKSQS, Keys: keyGroups([]string{"sqs_k"}, treeKeys), Family: FamilyBlock, Lossless: true, Tree: true,
		Summary:  "a token tree within budget_bits: top-K sparse lattice distributions (SQS), candidates drafted from them, recursive rejection sampling (beyond the papers)",
		uploader: always, codec: func(p Params) (codec.Codec, error) { return codec.KSQS{K: p.SQSK, L: p.Ell}, nil },
		drafter: treeBlock{}, verifier: treeVerifier{}},
}

// budgetFilled reports whether the method fills each batch to the bit
// budget (K-SQS, C-SQS).
func (m *Method) budgetFilled() bool {
	b, ok := m.drafter.(encodedBlock)
	return ok && b.budget
}

// Methods lists the method names in the table's order.
var Methods []string

var methodIndex = map[string]*Method{}

func init() {
	for _, m := range methods {
		Methods = append(Methods, m.Name)
		methodIndex[m.Name] = m
	}
}

// MethodByName returns the method of a name, or an ErrParam naming the
// methods there are.
func MethodByName(name string) (*Method, error) {
	if m, ok := methodIndex[name]; ok {
		return m, nil
	}
	return nil, fmt.Errorf("%w: unknown method %q (want one of %s)", ErrParam, name, strings.Join(Methods, ", "))
}

// method is p's row of the table (a method that does not exist is caught
// by Validate; until then it reads as hlm's, so that no caller panics).
func (p Params) method() *Method {
	if m, ok := methodIndex[p.Method]; ok {
		return m
	}
	return methodIndex[HLM]
}

// Upload rules shared by several methods.
func never(Params) policy.Uploader  { return policy.Never{} }
func always(Params) policy.Uploader { return policy.Always{} }
func threshold(p Params) policy.Uploader {
	return policy.Threshold{UTh: p.UploadThreshold()}
}

// Codecs shared by several methods.
func fullCodec(p Params) (codec.Codec, error) {
	return codec.Full{ProbBits: p.ProbBits, IndexBits: p.IndexBits}, nil
}

func latticeCodec(p Params) (codec.Codec, error) {
	if p.Draft == DraftDDQN {
		return codec.VarLattice{L: p.Ell}, nil // ℓ chosen per round, carried in the payload
	}
	return codec.Lattice{L: p.Ell}, nil
}

// Codec is the codec p's method sends its distributions with, built from
// p's settings (prob_bits, k, sqs_k, ell, the conformal keys, …) exactly as
// the device and the server build it; nil for the methods that send token
// ids only (llm, slm, coupled, replica, coupled-list). A codec whose
// settings are impossible is an error wrapping ErrParam.
func Codec(p Params) (codec.Codec, error) {
	m, err := MethodByName(p.Method)
	if err != nil {
		return nil, err
	}
	if m.codec == nil {
		return nil, nil
	}
	c, err := m.codec(p)
	if err != nil {
		return nil, err
	}
	if v, ok := c.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrParam, err)
		}
	}
	return c, nil
}

// uploaderOf is the method's upload rule.
func uploaderOf(p Params) policy.Uploader {
	if u := p.method().uploader; u != nil {
		return u(p)
	}
	return policy.Always{}
}

// methodSpecific are the keys some rows of the method table list in Keys.
var methodSpecific = func() map[string]bool {
	m := map[string]bool{}
	for _, row := range methods {
		for _, k := range row.Keys {
			if _, ok := keyIndex[k]; !ok {
				panic(fmt.Sprintf("hybrid: method %s lists unknown key %q", row.Name, k))
			}
			m[k] = true
		}
	}
	return m
}()

// Unused says why setting key has no effect on a run with p: a link key
// its channel does not read (channel.Config.Unused), a method's key that
// p's method does not read, or a draft-policy key another policy reads.
// It is "" for a key that has an effect, or that is unknown (Set refuses
// those).
// Inert reports whether key is a method-specific key that p's run does
// not read (Unused says why): setting it to any value leaves the run
// byte-identical, wall clock aside, which TestUnusedKeysHaveNoEffect
// checks for every method, so a caller may reuse the run of another
// value (eval's grid does).
func (p Params) Inert(key string) bool { return methodSpecific[key] && p.Unused(key) != "" }

func (p Params) Unused(key string) string {
	if _, ok := keyIndex[key]; !ok {
		return p.Channel.Unused(key)
	}
	m := p.method()
	if methodSpecific[key] && !slices.Contains(m.Keys, key) {
		return fmt.Sprintf("method %s does not read it (its own keys: %s)", m.Name, strings.Join(m.Keys, ", "))
	}
	switch key {
	case "l_min", "l_max":
		if p.Draft != DraftHeuristic {
			return fmt.Sprintf("it is read with draft=heuristic, and draft=%s", p.Draft)
		}
	case "ddqn_model":
		if p.Draft != DraftDDQN {
			return fmt.Sprintf("it is read with draft=ddqn, and draft=%s", p.Draft)
		}
	}
	return ""
}
