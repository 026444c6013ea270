package hybrid

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/hlmproject/hlm/codec"
	"github.com/hlmproject/hlm/importance"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/policy"
	"github.com/hlmproject/hlm/sampling"
	"github.com/hlmproject/hlm/spec"
	"github.com/hlmproject/hlm/uncertainty"
	"github.com/hlmproject/hlm/wire"
)

// Device is the SLM side of a session: it drafts, decides what to send and
// applies the server's verdicts. Not safe for concurrent use.
type Device struct {
	p      Params
	vocab  int
	slm    *cache // nil for the LLM-only method
	rng    *rand.Rand
	seq    []int // prompt + committed output
	prompt int

	uploader policy.Uploader
	dlen     policy.DraftLength
	perturb  uncertainty.Perturbation
	enc      codec.Codec // nil: nothing to encode (slm, llm)
	csqs     *codec.CSQS
	topk     *codec.TopK // online top-k: encoded with the token's β

	unsent     []int32   // tokens committed locally since the last upload
	unsentProb []float32 // their draft probabilities (diagnostics)
	unsentX    [][]float64
	round      uint32
	pending    []drafted // drafts of the upload in flight
	wantX      [][]float64

	ctrl     Controller // per-round L and ℓ (draft=ddqn)
	rate     float64    // uplink rate of the current round, set by the driver
	confSum  float64
	confN    int
	lastConf float64
	lastL    int // L and ℓ of the round in flight
	lastEll  int
}

// drafted is one draft token of the current round.
type drafted struct {
	token   int
	sample  []float64 // the distribution it was drawn from
	recon   []float64 // what the server will reconstruct (nil when not uploaded)
	payload []byte    // codec payload
	bits    int       // codec payload bits
	support int
	u       float64
	imp     int // ui-hlm, i-hlm: attention weights above θ_imp (U+I eq. 6)
}

// Step is what one device round produced.
type Step struct {
	// Upload is the message to verify, or nil when the round committed its
	// token locally (a skip) and nothing is sent.
	Upload *wire.Upload
	// Drafted counts SLM tokens produced this round (each costs τ_SLM).
	Drafted int
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
}

// NewDevice opens a device session for prompt (token ids, BOS included).
// slm may be nil only for the LLM-only method.
func NewDevice(p Params, slm model.Model, vocab int, prompt []int) (*Device, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if len(prompt) == 0 {
		return nil, fmt.Errorf("%w: empty prompt (start it with BOS)", ErrParam)
	}
	d := &Device{p: p, vocab: vocab, rng: rand.New(rand.NewPCG(p.Seed, 0x646576696365)), prompt: len(prompt),
		seq: append([]int(nil), prompt...), perturb: uncertainty.Perturbation{M: p.M, ThetaMax: p.ThetaMax}, lastConf: 1}
	if p.Method != LLM {
		if slm == nil {
			return nil, fmt.Errorf("%w: method %s needs a draft model", ErrParam, p.Method)
		}
		if slm.Config().Vocab != vocab {
			return nil, fmt.Errorf("%w: SLM vocabulary %d, LLM vocabulary %d", ErrParam, slm.Config().Vocab, vocab)
		}
		s := slm.NewSession()
		if p.Method == UIHLM || p.Method == IHLM {
			s.SetCapture(model.CaptureLastLayer)
		}
		d.slm = newCache(s)
	}
	var err error
	if d.uploader, err = uploaderOf(p); err != nil {
		return nil, err
	}
	if p.Family() == FamilyBlock {
		if p.Draft == "heuristic" {
			d.dlen = &policy.Heuristic{Initial: p.L, Min: p.LMin, Max: p.LMax}
		} else {
			d.dlen = policy.Fixed{L: p.L}
		}
	}
	if d.enc, err = codecOf(p); err != nil {
		return nil, err
	}
	if p.Draft == "ddqn" && p.DDQNModel != "" {
		if d.ctrl, err = LoadController(p.DDQNModel); err != nil {
			return nil, err
		}
	}
	switch c := d.enc.(type) {
	case *codec.CSQS:
		d.csqs = c
	case codec.TopK:
		if c.K == 0 {
			d.topk = &c
		}
	}
	return d, nil
}

// uploaderOf is the method's upload rule.
func uploaderOf(p Params) (policy.Uploader, error) {
	switch p.Method {
	case SLM:
		return policy.Never{}, nil
	case RandHLM:
		return policy.Random{P: p.RandP}, nil
	case UHLM, CUHLMOffline, CUHLMOnline:
		return policy.Threshold{UTh: p.UploadThreshold()}, nil
	case UIHLM:
		return policy.UncertaintyImportance{UTh: p.UploadThreshold(), K: p.ImpK, Gamma: p.Gamma}, nil
	case IHLM:
		return policy.ImportanceOnly{K: p.ImpK, Gamma: p.Gamma}, nil
	}
	return policy.Always{}, nil
}

// codecOf is the method's codec; the server builds the same one to decode.
func codecOf(p Params) (codec.Codec, error) {
	var c codec.Codec
	switch p.Method {
	case LLM, SLM, Coupled, Replica, CoupledList:
		return nil, nil
	case HLM, RandHLM, UHLM, UIHLM, IHLM:
		c = codec.Full{ProbBits: p.ProbBits, IndexBits: p.IndexBits}
	case CUHLMOffline:
		c = codec.TopK{K: p.K, ProbBits: p.ProbBits}
	case CUHLMOnline:
		c = codec.TopK{K: 0, ProbBits: p.ProbBits, Theta: p.Theta, Eta: p.Eta}
	case KSQS:
		c = codec.KSQS{K: p.SQSK, L: p.Ell}
	case CSQS:
		cs := codec.NewCSQS()
		cs.L = p.Ell
		cs.Alpha, cs.Eta, cs.Beta = p.ConfAlpha, p.ConfEta, p.ConfBeta
		c = cs
	case SQ, QS:
		if p.Draft == "ddqn" {
			c = codec.VarLattice{L: p.Ell} // ℓ chosen per round, carried in the payload
		} else {
			c = codec.Lattice{L: p.Ell}
		}
	default:
		return nil, fmt.Errorf("%w: no codec for method %q", ErrParam, p.Method)
	}
	if v, ok := c.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrParam, err)
		}
	}
	return c, nil
}

// Output is the committed output so far (without the prompt).
func (d *Device) Output() []int { return d.seq[d.prompt:] }

// Sequence is the prompt and the committed output.
func (d *Device) Sequence() []int { return d.seq }

// Step runs one round up to the point where the device either has committed
// a token locally or has an upload to send. room is the number of tokens
// that may still be committed (max tokens and context length), ≥ 1.
func (d *Device) Step(room int) (Step, error) {
	if d.pending != nil {
		return Step{}, fmt.Errorf("hybrid: Step with a verdict outstanding")
	}
	var st Step
	var err error
	switch d.p.Family() {
	case FamilyLLM:
		st = d.send(nil)
	case FamilyBlock:
		st, err = d.stepBlock(room)
	default:
		st, err = d.stepSkip()
	}
	if err == nil && st.Upload != nil {
		st.UplinkBits = UplinkBits(st.Upload, d.vocab)
	}
	return st, err
}

// stepSkip drafts one token and uploads or commits it (HLM family).
func (d *Device) stepSkip() (Step, error) {
	logits, err := d.slm.last(d.seq)
	if err != nil {
		return Step{}, err
	}
	x := d.p.distOf(nil, logits)
	dr := drafted{sample: x, u: math.NaN()}
	var enc codec.Encoded
	if d.enc != nil && d.p.SamplesRecon() {
		if enc, err = d.enc.Encode(x, -1); err != nil {
			return Step{}, err
		}
		dr.sample = enc.Recon
	}
	dr.token = sampling.Sample(dr.sample, d.rng)
	if dr.token < 0 {
		return Step{}, fmt.Errorf("hybrid: the draft distribution has no mass")
	}
	tok := policy.Token{Pos: len(d.seq), Draft: dr.token, XDraft: dr.sample[dr.token], U: math.NaN()}
	if needsUncertainty(d.p.Method) {
		tok.U = d.perturb.Measure(logits, dr.token, d.rng)
		dr.u = tok.U
	}
	if d.p.Method == UIHLM || d.p.Method == IHLM {
		// The draft's own attention row (U+I eq. 5): evaluate it now; its
		// logits serve the next round.
		if _, err := d.slm.last(append(d.seq, dr.token)); err != nil {
			return Step{}, err
		}
		if a := d.slm.s.Attention(); a != nil {
			row := a.Last()
			tok.Attention = row[:len(row)-1] // attention to the preceding tokens
			dr.imp = importance.CountAbove(tok.Attention, importance.Threshold(tok.Attention, d.p.Gamma))
		}
	}
	if !d.uploader.Upload(tok, d.rng) {
		d.seq = append(d.seq, dr.token)
		d.unsent = append(d.unsent, int32(dr.token))
		d.unsentProb = append(d.unsentProb, float32(tok.XDraft))
		d.unsentX = append(d.unsentX, dr.sample)
		return Step{Drafted: 1, Local: dr.token, U: tok.U, Imp: dr.imp}, nil
	}
	if !d.p.SamplesRecon() {
		switch {
		case d.topk != nil:
			enc, err = d.topk.EncodeWithBeta(x, dr.token, d.p.predictedBeta(tok.U))
		default:
			enc, err = d.enc.Encode(x, dr.token)
		}
		if err != nil {
			return Step{}, err
		}
	}
	dr.recon, dr.payload, dr.bits, dr.support = enc.Recon, enc.Payload, enc.Bits, enc.Support
	st := d.send([]drafted{dr})
	st.Drafted = 1
	return st, nil
}

// outputDist is the exact distribution of the token a verified draft
// position commits, averaged over the draft (CU-HLM eq. 3, 17), for the
// simulator's deviation: spec.OutputDist when the server's x̂ does not depend
// on which token was drafted (every codec but top-k, and top-k when the
// draft is sampled from what is sent), and TopK.OutputDist when it does
// (the draft's entry is appended to the top k).
func (d *Device) outputDist(dr drafted, xhat, y []float64) ([]float64, error) {
	if c, ok := d.enc.(codec.TopK); ok && !d.p.SamplesRecon() {
		return c.OutputDist(dr.sample, y, d.p.predictedBeta(dr.u))
	}
	return spec.OutputDist(dr.sample, xhat, y), nil
}

// predictedBeta is the online top-k's rejection probability a·u + b,
// clipped to [0, 1] (CU-HLM eq. 7, 24).
func (p Params) predictedBeta(u float64) float64 {
	return min(1, max(0, p.CalibA*u+p.CalibB))
}

func needsUncertainty(m string) bool {
	return m == UHLM || m == CUHLMOffline || m == CUHLMOnline || m == UIHLM
}

// stepBlock drafts a block (Q-S, S-Q, K-SQS, C-SQS).
func (d *Device) stepBlock(room int) (Step, error) {
	L := room
	budget := d.p.Method == KSQS || d.p.Method == CSQS
	switch {
	case d.p.Draft == "ddqn" && d.ctrl == nil && (d.p.Method == QS || d.p.Method == SQ):
		return Step{}, fmt.Errorf("%w: draft=ddqn needs a trained policy (ddqn_model=FILE, see hlm train-ddqn)", ErrParam)
	case d.ctrl != nil && (d.p.Method == QS || d.p.Method == SQ):
		l, ell := d.ctrl.Choose(d.controlState())
		if l < 1 || ell < 1 || ell > codec.MaxL {
			return Step{}, fmt.Errorf("hybrid: controller chose L=%d, ℓ=%d", l, ell)
		}
		L = min(L, l)
		d.enc = codec.VarLattice{L: ell}
		d.lastEll = ell
	case !budget:
		L = min(L, d.dlen.Next())
	case d.p.LMax > 0:
		L = min(L, d.p.LMax)
	}
	if d.csqs != nil {
		d.csqs.BeginBatch()
	}
	check := checkSeed // replica: running hash of the block's draft logits
	if d.p.Method == CoupledList {
		drafts, err := d.draftList(L)
		if err != nil {
			return Step{}, err
		}
		d.lastL = L
		st := d.send(drafts)
		st.Drafted = len(drafts)
		return st, nil
	}
	var drafts []drafted
	used := 0
	ctx := append([]int(nil), d.seq...)
	for len(drafts) < L {
		logits, err := d.slm.last(ctx)
		if err != nil {
			return Step{}, err
		}
		x := d.p.distOf(nil, logits)
		if d.enc == nil { // coupled and replica send token ids only
			dr := drafted{sample: x, u: math.NaN()}
			if d.p.Method == Coupled {
				dr.token = spec.CoupledSample(x, d.p.Seed, len(ctx))
			} else {
				dr.token = sampling.Sample(x, d.rng)
				check = checkLogits(check, logits)
			}
			if dr.token < 0 {
				return Step{}, fmt.Errorf("hybrid: the draft distribution has no mass")
			}
			drafts = append(drafts, dr)
			ctx = append(ctx, dr.token)
			continue
		}
		if budget {
			bits, err := d.bitsFor(x)
			if err != nil {
				return Step{}, err
			}
			if len(drafts) > 0 && used+bits > d.p.Budget {
				break
			}
			used += bits
		}
		enc, err := d.enc.Encode(x, -1)
		if err != nil {
			return Step{}, err
		}
		dr := drafted{sample: x, recon: enc.Recon, payload: enc.Payload, bits: enc.Bits, support: enc.Support, u: math.NaN()}
		if d.p.SamplesRecon() {
			dr.sample = enc.Recon
		}
		dr.token = sampling.Sample(dr.sample, d.rng)
		if dr.token < 0 {
			return Step{}, fmt.Errorf("hybrid: the draft distribution has no mass")
		}
		drafts = append(drafts, dr)
		ctx = append(ctx, dr.token)
	}
	d.lastL = len(drafts)
	st := d.send(drafts)
	st.Drafted = len(drafts)
	if d.p.Method == Replica {
		st.Upload.Check, st.Upload.HasCheck = check, true
	}
	return st, nil
}

// draftList drafts list_k coupled sequences of L tokens (list matching),
// each along its own prefix, flattened draft by draft. ListDrafts asks for
// one distribution per drafted token in that same order, so the i-th
// distribution asked for is the one draft token i was drawn from; drafts
// sharing a prefix share its SLM evaluation through memo.
func (d *Device) draftList(L int) ([]drafted, error) {
	base := d.seq
	memo := map[string][]float64{}
	var samples [][]float64
	x := func(prefix []int) ([]float64, error) {
		key := fmt.Sprint(prefix)
		p, ok := memo[key]
		if !ok {
			logits, err := d.slm.last(append(slices.Clone(base), prefix...))
			if err != nil {
				return nil, err
			}
			p = d.p.distOf(nil, logits)
			memo[key] = p
		}
		samples = append(samples, p)
		return p, nil
	}
	lists, err := spec.ListDrafts(x, d.p.ListK, L, d.p.Seed, len(base))
	if err != nil {
		return nil, fmt.Errorf("hybrid: %w", err)
	}
	drafts := make([]drafted, 0, len(samples))
	for _, toks := range lists {
		for _, t := range toks {
			drafts = append(drafts, drafted{token: t, sample: samples[len(drafts)], u: math.NaN()})
		}
	}
	return drafts, nil
}

// listK is the number of drafts per position of the method (1 unless
// coupled-list).
func (p Params) listK() int {
	if p.Method == CoupledList {
		return p.ListK
	}
	return 1
}

// bitsFor is the codec payload size a budget-filled batch will spend on x.
func (d *Device) bitsFor(x []float64) (int, error) {
	switch c := d.enc.(type) {
	case *codec.CSQS:
		support, _ := c.Conformal.Support(x)
		return c.Bits(len(x), len(support))
	case codec.KSQS:
		return c.Bits(len(x))
	}
	return 0, fmt.Errorf("hybrid: no bit budget for codec %s", d.enc.Name())
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
	d.wantX = d.unsentX
	d.unsent, d.unsentProb, d.unsentX = nil, nil, nil
	d.pending = drafts
	if d.pending == nil {
		d.pending = []drafted{}
	}
	return st
}

// Apply commits the server's verdict on the upload in flight and returns the
// tokens committed by it.
func (d *Device) Apply(v *wire.Verdict) ([]int, error) {
	if d.pending == nil {
		return nil, fmt.Errorf("hybrid: verdict without an upload")
	}
	if v.Round != d.round {
		return nil, fmt.Errorf("hybrid: verdict for round %d, expected %d", v.Round, d.round)
	}
	K := d.p.listK()
	L := len(d.pending) / K
	if v.Draft < 0 || v.Draft >= K {
		return nil, fmt.Errorf("hybrid: inconsistent verdict (draft %d of %d)", v.Draft, K)
	}
	if v.Accepted < 0 || v.Accepted > L || v.Token < 0 || int(v.Token) >= d.vocab || v.Resampled != (v.Accepted < L) {
		return nil, fmt.Errorf("hybrid: inconsistent verdict (accepted %d of %d, token %d, resampled %v)", v.Accepted, L, v.Token, v.Resampled)
	}
	chosen := d.pending[v.Draft*L : (v.Draft+1)*L]
	var committed []int
	for _, dr := range chosen[:v.Accepted] {
		committed = append(committed, dr.token)
		d.noteConfidence(dr.sample[dr.token])
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
			d.noteConfidence(chosen[0].sample[v.Token])
		}
	default:
		committed = append(committed, int(v.Token))
		if v.Accepted < L { // the resampled token's SLM probability is known
			d.noteConfidence(chosen[v.Accepted].sample[v.Token])
		}
	}
	d.seq = append(d.seq, committed...)
	if d.dlen != nil {
		d.dlen.Observe(L, v.Accepted)
	}
	if d.csqs != nil {
		if err := d.csqs.EndBatch(v.Accepted); err != nil {
			return nil, err
		}
	}
	d.pending = nil
	return committed, nil
}
