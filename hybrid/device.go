package hybrid

import (
	"fmt"
	"math/rand/v2"

	"github.com/hlmproject/hlm/codec"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/policy"
	"github.com/hlmproject/hlm/speculative"
	"github.com/hlmproject/hlm/uncertainty"
	"github.com/hlmproject/hlm/wire"
)

// Device is the SLM side of a session: it drafts, decides what to send and
// applies the server's verdicts. Not safe for concurrent use.
type Device struct {
	p      Params
	m      *Method
	vocab  int
	slm    *cache // nil for the LLM-only method
	rng    *rand.Rand
	seq    []int // prompt + committed output
	prompt int

	uploader policy.Uploader
	dlen     policy.DraftLength
	perturb  uncertainty.Perturbation
	enc      codec.Codec // nil: nothing to encode (slm, llm)
	batch    batched     // enc, when it keeps state across a batch (c-sqs)

	tree  *tree      // the token tree in flight (tree methods)
	stats *treeStats // the run's measured acceptance of tree candidates
	view  []drafted  // the committed path's drafts of the last tree verdict, for the meters

	unsent     []int32   // tokens committed locally since the last upload
	unsentProb []float32 // their draft probabilities (diagnostics)
	unsentX    [][]float64
	round      uint32
	pending    []drafted // drafts of the upload in flight
	// pendingCommitted counts the tokens committed locally that the
	// upload in flight carries (in seq, but not verified yet).
	pendingCommitted int

	ctrl    Controller // per-round L and ℓ (draft=ddqn)
	rate    float64    // uplink rate of the current round, set by the driver
	confSum float64    // Σ f_i over the committed tokens
	confN   int        // their count
	confs   []float64  // the latest ConfWindow f_i, oldest first
	lastL   int        // L and ℓ of the round in flight
	lastEll int

	// measure, when set, measures the uncertainty of drafts whose method
	// does not (SessionConfig.MeasureUncertainty), on its own stream.
	measure *rand.Rand
}

// drafted is one draft token of the current round.
type drafted struct {
	token   int
	sample  []float64 // the distribution it was drawn from
	slm     []float64 // the SLM's own distribution, when sample is another (Q-S: q̂); nil: sample
	recon   []float64 // what the server will reconstruct (nil when not uploaded)
	payload []byte    // codec payload
	bits    int       // codec payload bits
	support int
	dropped float64 // K-SQS, C-SQS: the SLM's mass outside the support (SQS eq. 4)
	u       float64
	imp     int // ui-hlm, i-hlm: attention weights above θ_imp (U+I eq. 6)
}

// slmProb is the SLM's own probability of token t at the draft's position
// (an entry of Q-S's confidence vector f^t, whatever the draft was sampled
// from).
func (dr drafted) slmProb(t int) float64 {
	if dr.slm != nil {
		return dr.slm[t]
	}
	return dr.sample[t]
}

// Step is what one device round produced.
type Step struct {
	// Upload is the message to verify, or nil when the round committed its
	// token locally (a skip) and nothing is sent.
	Upload *wire.Upload
	// Drafted counts SLM tokens produced this round (each costs τ_SLM).
	Drafted int
	// Probed counts the SLM passes of the round whose draft was not sent:
	// the draft a budget-filled C-SQS batch computes to learn that it
	// does not fit (its support decides its bits). Each costs τ_SLM and
	// the SLM's energy as a draft does.
	Probed int
	// Local is the token committed without verification, when skipped.
	Local int
	// U is the skipped token's uncertainty (NaN when not measured).
	U float64
	// Imp is the skipped token's importance for ui-hlm and i-hlm: its
	// attention weights above θ_imp (U+I eq. 6).
	Imp int
	// UplinkBits is the papers' bit count of Upload (0 when nil; see
	// UplinkBits).
	UplinkBits int
	// CodecBits is the distribution payload part of UplinkBits.
	CodecBits int
	// FullBits is what the full distributions at 32 bits per entry would
	// have cost for the same drafts (for the compression ratio).
	FullBits int
	// L and Ell are the draft length and lattice resolution a controller
	// chose for the round (draft=ddqn; zero otherwise).
	L, Ell int

	// What the round's meters need once the verdict is applied (the
	// device forgets its drafts then): the drafts sent, and the
	// distributions of the skipped tokens that ride along.
	drafts  []drafted
	unsentX [][]float64
	// budgetEnd: a budget-filled batch ended because its next draft did
	// not fit the bit budget (not because of the tokens left).
	budgetEnd bool
	// overBudget: the round's first draft alone cost more than the bit
	// budget, and went anyway (a round always carries one).
	overBudget bool
}

// NewDevice opens a device session for prompt (token ids, BOS included).
// slm may be nil only for the LLM-only method.
func NewDevice(p Params, slm model.Model, vocab int, prompt []int) (*Device, error) {
	return newDevice(p, slm, vocab, prompt, nil)
}

// DraftSession is the draft model's session of a finished generation,
// which a later one takes over (SessionConfig.Draft) so that the tokens
// of its prompt that the session holds — a conversation's earlier turns —
// are not evaluated again. The logits are those of a new session where
// the draft model's do not depend on the history of its evaluation
// (hlm's engine).
type DraftSession struct {
	c  *cache
	fp string // the model's fingerprint
}

// take is the session's cache for a generation with slm (nil: s is nil
// or of another model), which it hands over: s is empty afterwards.
func (s *DraftSession) take(slm model.Model) *cache {
	if s == nil || s.c == nil || s.fp != slm.Fingerprint() {
		return nil
	}
	c := s.c
	s.c = nil
	return c
}

// DraftSession hands over the device's draft-model session (nil for a
// method without a draft model) for a later generation to continue from;
// the device must not draft again.
func (d *Device) DraftSession(slm model.Model) *DraftSession {
	if d.slm == nil || slm == nil {
		return nil
	}
	c := d.slm
	d.slm = nil
	c.next, c.lent = nil, false // its rows may be a batch's buffer
	return &DraftSession{c: c, fp: slm.Fingerprint()}
}

func newDevice(p Params, slm model.Model, vocab int, prompt []int, from *DraftSession) (*Device, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if len(prompt) == 0 {
		return nil, fmt.Errorf("%w: empty prompt (start it with BOS)", ErrParam)
	}
	d := &Device{p: p, m: p.method(), vocab: vocab, rng: rand.New(rand.NewPCG(p.Seed, 0x646576696365)), prompt: len(prompt),
		seq: append([]int(nil), prompt...), perturb: uncertainty.Perturbation{M: p.M, ThetaMax: p.ThetaMax}}
	if d.m.Family != FamilyLLM {
		if slm == nil {
			return nil, fmt.Errorf("%w: method %s needs a draft model", ErrParam, p.Method)
		}
		if slm.Config().Vocab != vocab {
			return nil, fmt.Errorf("%w: SLM vocabulary %d, LLM vocabulary %d", ErrParam, slm.Config().Vocab, vocab)
		}
		if err := CheckDraft(p, slm); err != nil {
			return nil, err
		}
		d.slm = from.take(slm)
		if d.slm == nil {
			d.slm = newCache(slm.NewSession())
		}
		capture := model.CaptureNone
		if d.m.Attention {
			capture = model.CaptureLastLayer
		}
		d.slm.s.SetCapture(capture)
	}
	d.uploader = uploaderOf(p)
	if d.m.Family == FamilyBlock {
		if p.Draft == DraftHeuristic {
			d.dlen = &policy.Heuristic{Initial: p.L, Min: p.LMin, Max: p.LMax}
		} else {
			d.dlen = policy.Fixed{L: p.L}
		}
	}
	var err error
	if d.enc, err = Codec(p); err != nil {
		return nil, err
	}
	if p.Draft == DraftDDQN && p.DDQNModel != "" {
		if d.ctrl, err = LoadController(p.DDQNModel); err != nil {
			return nil, err
		}
	}
	d.batch, _ = d.enc.(batched)
	return d, nil
}

// measureUncertainty makes the device measure every draft's uncertainty
// on a random stream of its own (SessionConfig.MeasureUncertainty): one
// token per round only, where the uncertainty is the papers' (U-HLM eq. 7).
func (d *Device) measureUncertainty() error {
	if d.m.Family != FamilySkip {
		return fmt.Errorf("%w: method %s does not draft one token per round: its drafts' uncertainty is not measured", ErrParam, d.p.Method)
	}
	if !d.m.Uncertainty { // the method's own measurement draws from d.rng, as it always has
		d.measure = rand.New(rand.NewPCG(d.p.Seed, 0x6d656173757265))
	}
	return nil
}

// Params are the session's parameters.
func (d *Device) Params() Params { return d.p }

// Vocab is the vocabulary size both models share.
func (d *Device) Vocab() int { return d.vocab }

// Controlled reports that a Controller chooses each round's L and ℓ.
func (d *Device) Controlled() bool { return d.ctrl != nil }

// ControlState is the device's state at the start of a round whose uplink
// rate is rate (what a Controller chooses from); the rate is kept for the
// round.
func (d *Device) ControlState(rate float64) ControlState {
	d.rate = rate
	return d.controlState()
}

// Output is the committed output so far (without the prompt).
func (d *Device) Output() []int { return d.seq[d.prompt:] }

// Sequence is the prompt and the committed output.
func (d *Device) Sequence() []int { return d.seq }

// Synced is how many tokens of Sequence the server surely holds: all but
// those committed on the device since its last verified round — not sent
// yet, or carried by an upload whose verdict has not been applied (a
// generation interrupted in a round: the server may or may not have
// verified it). A device that continues its session with a new prompt
// (wire.Open.Keep) keeps at most these.
func (d *Device) Synced() int {
	n := len(d.seq) - len(d.unsent)
	if d.pending != nil {
		n -= d.pendingCommitted
	}
	return n
}

// Step runs one round up to the point where the device either has committed
// a token locally or has an upload to send. room is the number of tokens
// that may still be committed (max tokens and context length), ≥ 1.
func (d *Device) Step(room int) (Step, error) {
	if d.pending != nil {
		return Step{}, fmt.Errorf("hybrid: Step with a verdict outstanding")
	}
	st, err := d.m.drafter.step(d, room)
	if d.ctrl != nil {
		st.L, st.Ell = d.lastL, d.lastEll
	}
	if err == nil && st.Upload != nil {
		st.UplinkBits = UplinkBits(st.Upload, d.vocab)
	}
	return st, err
}

// outputDist is the exact distribution of the token a verified draft
// position commits, averaged over the draft (CU-HLM eq. 3, 17), for the
// simulator's deviation: speculative.OutputDist when the server's x̂ does not depend
// on which token was drafted (every codec but top-k, and top-k when the
// draft is sampled from what is sent), and TopK.OutputDist when it does
// (the draft's entry is appended to the top k).
func (d *Device) outputDist(dr drafted, xhat, y []float64) ([]float64, error) {
	if c, ok := d.enc.(codec.TopK); ok && !d.p.SamplesRecon() {
		return c.OutputDist(dr.sample, y, d.p.predictedBeta(dr.u))
	}
	return speculative.OutputDist(dr.sample, xhat, y), nil
}

// send builds the upload for drafts, carrying the locally committed tokens.
func (d *Device) send(drafts []drafted) Step {
	d.round++
	up := &wire.Upload{Round: d.round, Committed: d.unsent}
	if d.p.Diagnostics {
		up.CommittedProb = d.unsentProb
		if up.CommittedProb == nil {
			up.CommittedProb = []float32{}
		}
	}
	st := Step{Upload: up}
	for _, dr := range drafts {
		up.Drafts = append(up.Drafts, wire.Draft{Token: int32(dr.token), Bits: uint32(dr.bits), Payload: dr.payload})
		st.CodecBits += dr.bits
		st.FullBits += 32 * d.vocab
	}
	st.drafts, st.unsentX = drafts, d.unsentX
	d.pendingCommitted = len(d.unsent)
	d.unsent, d.unsentProb, d.unsentX = nil, nil, nil
	d.pending = drafts
	if d.pending == nil {
		d.pending = []drafted{}
	}
	return st
}

// Apply commits the server's verdict v on round st — the Step that made the
// upload in flight — and returns the tokens committed by it. A step that
// is not the round in flight is refused.
func (d *Device) Apply(st Step, v *wire.Verdict) ([]int, error) {
	if d.pending == nil || st.Upload == nil {
		return nil, fmt.Errorf("hybrid: verdict without an upload")
	}
	if st.Upload.Round != d.round || len(st.drafts) != len(d.pending) {
		return nil, fmt.Errorf("hybrid: verdict applied to round %d, but round %d is in flight", st.Upload.Round, d.round)
	}
	if v.Round != d.round {
		return nil, fmt.Errorf("hybrid: verdict for round %d, expected %d", v.Round, d.round)
	}
	if d.m.Tree {
		committed, view, err := d.applyTree(v)
		if err != nil {
			return nil, err
		}
		d.seq = append(d.seq, committed...)
		d.view = view
		d.pending = nil
		return committed, nil
	}
	K := d.p.listK()
	L := len(st.drafts) / K
	if v.Draft < 0 || v.Draft >= K {
		return nil, fmt.Errorf("hybrid: inconsistent verdict (draft %d of %d)", v.Draft, K)
	}
	if v.Accepted < 0 || v.Accepted > L || v.Token < 0 || int(v.Token) >= d.vocab || v.Resampled != (v.Accepted < L) {
		return nil, fmt.Errorf("hybrid: inconsistent verdict (accepted %d of %d, token %d, resampled %v)", v.Accepted, L, v.Token, v.Resampled)
	}
	chosen := st.drafts[v.Draft*L : (v.Draft+1)*L]
	var committed []int
	for _, dr := range chosen[:v.Accepted] {
		committed = append(committed, dr.token)
		d.noteConfidence(dr.slmProb(dr.token))
	}
	switch {
	case d.p.OneToken() && L == 1:
		// One token per round: Token is the accepted draft or its
		// replacement, never a bonus after it.
		if v.Accepted == 1 && int(v.Token) != chosen[0].token {
			return nil, fmt.Errorf("hybrid: inconsistent verdict (accepted draft %d, token %d)", chosen[0].token, v.Token)
		}
		if v.Accepted == 0 {
			committed = append(committed, int(v.Token))
			d.noteConfidence(chosen[0].slmProb(int(v.Token)))
		}
	default:
		committed = append(committed, int(v.Token))
		if v.Accepted < L { // the resampled token's SLM probability is known
			d.noteConfidence(chosen[v.Accepted].slmProb(int(v.Token)))
		}
	}
	d.seq = append(d.seq, committed...)
	if v.Accepted == L && len(committed) > L && d.ctrl != nil {
		if err := d.noteBonus(); err != nil {
			return nil, err
		}
	}
	if d.dlen != nil {
		d.dlen.Observe(L, v.Accepted)
	}
	if d.batch != nil {
		if err := d.batch.EndBatch(v.Accepted); err != nil {
			return nil, err
		}
	}
	d.pending = nil
	return committed, nil
}
