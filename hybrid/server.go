package hybrid

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/hlmproject/hlm/codec"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/speculative"
	"github.com/hlmproject/hlm/wire"
)

// Server is the LLM side of a session: it keeps the context in sync with the
// device, reconstructs the draft distributions and verifies. Not safe for
// concurrent use; a server process runs one per device session.
type Server struct {
	p     Params
	m     *Method
	vocab int
	llm   *cache
	seq   []int // prompt + committed tokens, as the server knows them
	dec   codec.Codec
	round uint32
	slm   *cache // replica method: the server's own copy of the draft model
	// slmFP is the fingerprint of the model slm runs (Continue keeps its
	// session for the same model).
	slmFP string
	ctx   int      // context length available
	tree  *treeJob // the tree of the upload being verified (tree methods)
}

// Trace is what the server saw in one verification, for the simulator's
// oracle metrics (never sent over the network).
type Trace struct {
	CommittedY [][]float64 // target distribution at each committed token's position
	DraftY     [][]float64 // y_1 … y_{L+1}
	XHat       [][]float64 // reconstructed draft distributions
}

// NewServer opens a server session for prompt (token ids, BOS included).
// The replica method also needs the draft model: use NewReplicaServer.
func NewServer(p Params, llm model.Model, prompt []int) (*Server, error) {
	return NewReplicaServer(p, llm, nil, prompt)
}

// CheckDraft says, before any work, whether slm can be the draft of a run
// of p: a method that needs the draft's attention refuses a model whose
// sessions cannot capture it, and the replica method one whose logits
// depend on one-token vs block evaluation (llama.cpp's library, for both).
// NewDevice and NewReplicaServer check the same; a caller that runs many
// settings (eval's grid) asks first, so that no setting fails after the
// others have run.
func CheckDraft(p Params, slm model.Model) error {
	m := p.method()
	if m == nil || m.Family == FamilyLLM || slm == nil {
		return nil
	}
	if a, ok := slm.(attentionless); ok && m.Attention {
		return fmt.Errorf("method %s needs the draft's attention: %w", p.Method, a.NoAttention())
	}
	if bv, ok := slm.(blockVariant); ok && m.ServerDraft {
		return fmt.Errorf("%w: the replica method recomputes the device's draft logits bit for bit, in one block; %s", ErrParam, bv.BlockVariant())
	}
	return nil
}

// attentionless is a draft model whose sessions cannot capture attention
// probabilities; NoAttention says why (a model.ErrUnsupported).
type attentionless interface{ NoAttention() error }

// blockVariant is a model whose logits at a position may differ in their
// bits with how the position was evaluated (alone or in a block): the
// replica method, whose server recomputes the device's one-token draft
// passes in one block, cannot use it as the draft. BlockVariant says why,
// and what to use instead.
type blockVariant interface{ BlockVariant() string }

// NewReplicaServer opens a server session that also runs slm, the device's
// draft model, to compute the draft distributions itself (method replica).
func NewReplicaServer(p Params, llm, slm model.Model, prompt []int) (*Server, error) {
	return newServer(p, llm, slm, slices.Clone(prompt), nil)
}

// Continue opens a new generation on this session's models (a
// conversation's next turn): its prompt is the first keep tokens of
// Sequence followed by more, its parameters p, which may change the
// method, the sampling and the seed. The LLM's session keeps what it holds
// of the kept tokens, so that only the rest is evaluated: the tokens, and
// the randomness of each round, are those of a new session opened with the
// whole prompt (NewReplicaServer), and the logits too where the LLM's are
// the same whatever the history of its evaluation (hlm's engine; not
// llama.cpp's, whose logits may differ in their last bits: docs/deploy.md).
// Rounds count from 0 again. On success the new server owns the models'
// sessions and s must not be used again; on error s is unchanged.
func (s *Server) Continue(p Params, llm, slm model.Model, keep int, more []int) (*Server, error) {
	if keep < 1 || keep > len(s.seq) {
		return nil, fmt.Errorf("%w: keep %d tokens of a session that holds %d", ErrParam, keep, len(s.seq))
	}
	prompt := make([]int, 0, keep+len(more))
	prompt = append(append(prompt, s.seq[:keep]...), more...)
	return newServer(p, llm, slm, prompt, s)
}

// newServer is NewReplicaServer, reusing the sessions of from when it is
// not nil (Continue).
func newServer(p Params, llm, slm model.Model, prompt []int, from *Server) (*Server, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if len(prompt) == 0 {
		return nil, fmt.Errorf("%w: empty prompt", ErrParam)
	}
	dec, err := Codec(p)
	if err != nil {
		return nil, err
	}
	vocab := llm.Config().Vocab
	for _, t := range prompt {
		if t < 0 || t >= vocab {
			return nil, fmt.Errorf("%w: prompt token %d outside the vocabulary of %d", ErrParam, t, vocab)
		}
	}
	if len(prompt) >= llm.Config().SeqLen {
		return nil, fmt.Errorf("%w: prompt of %d tokens, context %d", model.ErrContextFull, len(prompt), llm.Config().SeqLen)
	}
	s := &Server{p: p, m: p.method(), vocab: vocab, dec: dec, seq: prompt, ctx: llm.Config().SeqLen}
	if s.m.ServerDraft {
		if slm == nil {
			return nil, fmt.Errorf("%w: the replica method needs the draft model on the server", ErrParam)
		}
		if slm.Config().Vocab != vocab {
			return nil, fmt.Errorf("%w: replica draft vocabulary %d, LLM %d", ErrParam, slm.Config().Vocab, vocab)
		}
		if err := CheckDraft(p, slm); err != nil {
			return nil, err
		}
		s.ctx = min(s.ctx, slm.Config().SeqLen)
	}
	if from == nil {
		s.llm = newCache(llm.NewSession())
	} else {
		s.llm = from.llm
	}
	if s.m.ServerDraft {
		s.slmFP = slm.Fingerprint()
		if from != nil && from.slm != nil && from.slmFP == s.slmFP {
			s.slm = from.slm
		} else {
			s.slm = newCache(slm.NewSession())
		}
	}
	if from != nil && from.slm != nil && from.slm != s.slm {
		if cl, ok := from.slm.s.(io.Closer); ok {
			cl.Close()
		}
	}
	return s, nil
}

// LimitContext caps the positions the session may use at n (a server's
// --max-context below the model's), refusing with model.ErrContextFull a
// sequence that already fills it.
func (s *Server) LimitContext(n int) error {
	if n <= 0 || n >= s.ctx {
		return nil
	}
	if len(s.seq) >= n {
		return fmt.Errorf("%w: prompt of %d tokens, context %d", model.ErrContextFull, len(s.seq), n)
	}
	s.ctx = n
	return nil
}

// roundRNG is the server's random stream for one round: a function of the
// session seed and the round number only, so that a server that lost a
// session (a restart) and resumes it from the committed prefix continues
// with exactly the randomness it would have used.
func roundRNG(seed uint64, round uint32) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x7365727665720000^uint64(round)))
}

// KVBytes is the memory the session's KV caches hold in this process: the
// LLM's and, for the replica method, the draft's, on an engine that says
// (hlm's: llama.Session.KVBytes); 0 for one whose cache lives elsewhere
// (llama.cpp's, sized when it loads).
func (s *Server) KVBytes() int64 {
	var n int64
	for _, c := range []*cache{s.llm, s.slm} {
		if c == nil {
			continue
		}
		if k, ok := c.s.(interface{ KVBytes() int64 }); ok {
			n += k.KVBytes()
		}
	}
	return n
}

// Close frees what the session holds in its models at once (a llama.cpp
// sequence, a slot; io.Closer sessions), instead of when the garbage
// collector finds them: a server whose slots are few must not keep a
// finished session's. Evaluating after Close is an error of the model.
func (s *Server) Close() error {
	var errs []error
	for _, c := range []*cache{s.llm, s.slm} {
		if c == nil {
			continue
		}
		if cl, ok := c.s.(io.Closer); ok {
			errs = append(errs, cl.Close())
		}
	}
	return errors.Join(errs...)
}

// SetRound sets the last verified round, for a session reopened with a
// device's committed prefix after the server lost it (the device numbers its
// rounds on).
func (s *Server) SetRound(r uint32) { s.round = r }

// Round is the last round the server verified.
func (s *Server) Round() uint32 { return s.round }

// VerdictBits is VerdictBits for this session's parameters and vocabulary.
func (s *Server) VerdictBits(n int) int { return VerdictBits(s.p, n, s.vocab) }

// Sequence is the prompt and committed tokens as the server knows them.
func (s *Server) Sequence() []int { return s.seq }

// Verify evaluates the committed tokens and the drafts of an upload in one
// LLM pass and verifies the drafts (Q-S eq. 1–3). On error the session is
// unchanged and may be resynchronised.
func (s *Server) Verify(up *wire.Upload) (*wire.Verdict, *Trace, error) {
	j, err := s.Prepare(up)
	if err != nil {
		return nil, nil, err
	}
	var rows [][]float32
	if toks := j.Tokens(); len(toks) > 0 {
		if rows, err = model.EvalSkip(j.Session(), toks, j.Skip()); err != nil {
			return nil, nil, EngineError(err)
		}
	}
	return j.Finish(rows)
}

// Job is a verification split in two halves around the LLM evaluation, so
// that a server can evaluate the blocks of many sessions in one batched pass
// (model.Batcher): Prepare, evaluate Tokens() on Session(), Finish.
type Job struct {
	s      *Server
	up     *wire.Upload
	target []int
	lists  [][]int // the upload's drafts: one list, or list_k of equal length (a tree: its accepted path, once verified)
	xhats  [][]float64
	plan   evalPlan
	node   int // a tree's deepest accepted node + 1 (0: none)
}

// Session is the LLM session the job's tokens are evaluated in.
func (j *Job) Session() model.Session { return j.s.llm.s }

// Tokens are the tokens to evaluate (may be empty).
func (j *Job) Tokens() []int { return j.plan.eval }

// Skip is how many leading tokens of Tokens() have logits that Finish
// does not read (a first round's prompt): an evaluator that can skip them
// (model.SkipBatcher) hands Finish nil rows in their place.
func (j *Job) Skip() int { return j.plan.skip }

// Prefilled records that the first n tokens of Tokens(), n ≤ Skip(), were
// evaluated on Session() in a pass of their own (their logits unread), and
// plans the rest. A server spreads a long prompt over several batches so
// that the other sessions' rounds do not wait for all of it (cloud's
// Config.PrefillChunk).
func (j *Job) Prefilled(n int) error {
	if n < 0 || n > j.plan.skip {
		return fmt.Errorf("hybrid: %d tokens prefilled of the %d the job may skip", n, j.plan.skip)
	}
	j.s.llm.took(j.plan.eval[:n])
	return j.Plan()
}

// Prepare checks and decodes an upload and plans its LLM evaluation:
// Decode, then Job.Plan.
func (s *Server) Prepare(up *wire.Upload) (*Job, error) {
	j, err := s.Decode(up)
	if err != nil {
		return nil, err
	}
	return j, j.Plan()
}

// Decode checks an upload and decodes its distributions — the part of
// Prepare that does not touch the LLM, and whose cost the upload decides
// (a batch of hundreds of drafts with wide supports): a server runs it on
// the session's own goroutine, so that one device's payloads do not delay
// the others' batch. Job.Plan completes it.
func (s *Server) Decode(up *wire.Upload) (*Job, error) {
	if up.Round != s.round+1 {
		return nil, fmt.Errorf("hybrid: upload for round %d, expected %d", up.Round, s.round+1)
	}
	m, L := len(up.Committed), len(up.Drafts)
	if s.m.Tree {
		return s.prepareTree(up)
	}
	if up.Parents != nil {
		return nil, fmt.Errorf("%w: method %s sends a chain of drafts, not a tree", ErrParam, s.p.Method)
	}
	// list matching sends K drafts of L/K tokens; one pass along draft 0
	K := s.p.listK()
	if K > 1 && (L == 0 || L%K != 0) {
		return nil, fmt.Errorf("%w: %d draft tokens is not %d drafts of equal length", ErrParam, L, K)
	}
	target := make([]int, 0, len(s.seq)+m+L)
	target = append(target, s.seq...)
	for _, t := range up.Committed {
		if t < 0 || int(t) >= s.vocab {
			return nil, fmt.Errorf("%w: committed token %d outside the vocabulary", ErrParam, t)
		}
		target = append(target, int(t))
	}
	drafts := make([]int, L)
	for i, d := range up.Drafts {
		if d.Token < 0 || int(d.Token) >= s.vocab {
			return nil, fmt.Errorf("%w: draft token %d outside the vocabulary", ErrParam, d.Token)
		}
		drafts[i] = int(d.Token)
	}
	lists := make([][]int, K)
	for k := range lists {
		lists[k] = drafts[k*L/K : (k+1)*L/K]
	}
	target = append(target, lists[0]...)
	if len(target) > s.ctx {
		return nil, fmt.Errorf("%w: %d positions, context %d", model.ErrContextFull, len(target), s.ctx)
	}
	xhats, err := s.m.verifier.recon(s, up, target, m)
	if err != nil {
		return nil, err
	}
	return &Job{s: s, up: up, target: target, lists: lists, xhats: xhats}, nil
}

// Plan plans a decoded job's LLM evaluation (what the LLM's cache of the
// session keeps, what is evaluated): the part of Prepare that touches the
// LLM's session, which a server runs where it evaluates the LLM.
func (j *Job) Plan() error {
	s := j.s
	// Logits after seq[-1], each committed token and each draft: m+L+1
	// rows; for a tree, after seq[-1] and each committed token.
	pl, err := s.llm.plan(j.target, len(s.seq))
	if err != nil {
		s.tree = nil
		return err
	}
	j.plan = pl
	return nil
}

// prepareTree is Decode for a tree upload: the committed tokens are
// evaluated in the job's pass (the logits after the last one are the
// root's), the tree in Finish.
func (s *Server) prepareTree(up *wire.Upload) (*Job, error) {
	target := make([]int, 0, len(s.seq)+len(up.Committed))
	target = append(target, s.seq...)
	for _, t := range up.Committed {
		if t < 0 || int(t) >= s.vocab {
			return nil, fmt.Errorf("%w: committed token %d outside the vocabulary", ErrParam, t)
		}
		target = append(target, int(t))
	}
	if _, err := s.m.verifier.recon(s, up, target, len(up.Committed)); err != nil {
		s.tree = nil
		return nil, err
	}
	if depth := s.tree.depth; len(target)+depth > s.ctx {
		s.tree = nil
		return nil, fmt.Errorf("%w: %d positions with the tree's %d levels, context %d", model.ErrContextFull, len(target)+depth, depth, s.ctx)
	}
	return &Job{s: s, up: up, target: target, lists: [][]int{nil}}, nil
}

// EvaluatesInFinish reports whether Finish may evaluate the LLM beyond the
// job's one pass: a tree's nodes, or list matching's drafts where the
// committed path leaves the first. A server that hands Finish rows which
// the LLM's next evaluation overwrites (model/llamacpp's EvalBatchView)
// must not do so for a batch holding such a job.
func (j *Job) EvaluatesInFinish() bool { return j.s.m.Tree || len(j.lists) > 1 }

// Finish verifies with the evaluated rows (one per token of Tokens()) and
// commits the outcome.
func (j *Job) Finish(evaluated [][]float32) (*wire.Verdict, *Trace, error) {
	return j.finish(evaluated, true)
}

// FinishVerdict is Finish without the trace, for a server: with a method
// whose verification stops at the first rejection (lazyVerifier), the LLM's
// distributions after it are never computed — each is a pass over the
// vocabulary on the CPU, which on a GPU costs more than the LLM pass. The
// verdict and the committed tokens are Finish's: hlm serve finishes with
// it and the simulator with Finish; TestFinishVerdictIsFinish compares
// their verdicts round by round for every method, and cloud's
// TestSimMatchesNetwork, TestSimMatchesNetworkRandomParams and
// TestLlamaCppSimMatchesNetwork the tokens, bits and acceptances of the
// two programs.
func (j *Job) FinishVerdict(evaluated [][]float32) (*wire.Verdict, error) {
	v, _, err := j.finish(evaluated, false)
	return v, err
}

// distPool holds FinishVerdict's distribution buffers (a vocabulary of
// float64 each: 1.2 MB at 151,936 tokens, which the runtime would
// otherwise zero on every allocation and collect after every round).
var distPool sync.Pool

func (j *Job) finish(evaluated [][]float32, trace bool) (*wire.Verdict, *Trace, error) {
	s, up := j.s, j.up
	if len(evaluated) != len(j.plan.eval) {
		return nil, nil, fmt.Errorf("hybrid: %d rows for %d evaluated tokens", len(evaluated), len(j.plan.eval))
	}
	rows := s.llm.absorb(j.plan, evaluated)
	defer s.llm.keep() // after the commit, which usually drops next
	m, L := len(up.Committed), len(up.Drafts)
	var (
		tr    *Trace
		res   speculative.BlockResult
		draft int
	)
	// committed is the target probability of the k-th committed token.
	var committed func(k int) float64
	if lv, ok := s.m.verifier.(lazyVerifier); ok && !trace {
		// Without a trace no distribution outlives the call: their
		// buffers come from distPool and go back to it.
		ys := make([][]float64, len(rows)-m)
		var held []*[]float64
		dist := func(r []float32) []float64 {
			b, _ := distPool.Get().(*[]float64)
			if b == nil {
				b = new([]float64)
			}
			*b = s.p.distOf(*b, r)
			held = append(held, b)
			return *b
		}
		defer func() {
			for _, b := range held {
				distPool.Put(b)
			}
		}()
		res = lv.verifyAt(j, targets{y: func(i int) []float64 {
			if ys[i] == nil {
				ys[i] = dist(rows[m+i])
			}
			return ys[i]
		}, rows: rows[m:]})
		committed = func(k int) float64 { return dist(rows[k])[up.Committed[k]] }
	} else {
		tr = &Trace{}
		ys := make([][]float64, 0, L+1)
		for i, r := range rows {
			y := s.p.distOf(nil, r)
			if i < m {
				tr.CommittedY = append(tr.CommittedY, y)
			} else {
				ys = append(ys, y)
			}
		}
		tr.DraftY = ys
		var path [][]float64
		var err error
		if res, draft, path, err = s.m.verifier.verify(j, ys); err != nil {
			return nil, nil, err
		}
		tr.DraftY, tr.XHat = path, j.xhats
		committed = func(k int) float64 { return tr.CommittedY[k][up.Committed[k]] }
	}
	v := &wire.Verdict{Round: up.Round, Accepted: res.Accepted, Token: int32(res.Token), Resampled: res.Resampled, Draft: draft}
	if s.m.Tree {
		v.Node, v.HasNode = j.node, true
	}
	if up.CommittedProb != nil {
		v.CommittedTarget = make([]float32, m)
		for k := range up.Committed {
			v.CommittedTarget[k] = float32(committed(k))
		}
	}
	// Commit: the skipped tokens, the accepted drafts and the new token
	// (not yet evaluated: the next round's pass starts with it).
	n0 := len(s.seq)
	s.seq = append(s.seq, j.target[n0:n0+m]...)
	if j.oneToken() {
		s.seq = append(s.seq, res.Token) // the draft itself when accepted
	} else {
		s.seq = res.Committed(s.seq, j.lists[draft])
	}
	if err := s.llm.truncate(len(s.seq) - 1); err != nil {
		return nil, nil, err
	}
	s.round = up.Round
	return v, tr, nil
}

// oneToken reports the papers' round of the skip family (U-HLM eq. 4, CU-HLM eq. 6,
// CU-HLM Algorithm 1): the accepted draft or the resampled token, nothing
// after it; the verdict's Token is then the round's one token
// (Device.Apply reads it so).
func (j *Job) oneToken() bool { return j.s.p.OneToken() && len(j.lists[0]) == 1 }

// verifyList runs list matching over the job's K drafts. ys are the target
// distributions along draft 0 (one pass); where the committed path leaves
// draft 0 the LLM evaluates it token by token (an engine with tree
// attention would evaluate every draft in the one pass instead). It also
// returns the target distributions along the committed path.
func (s *Server) verifyList(j *Job, ys [][]float64) (speculative.ListResult, [][]float64, error) {
	lists := j.lists
	base := j.target[:len(j.target)-len(lists[0])] // committed sequence and the upload's committed tokens
	var path [][]float64
	y := func(prefix []int) ([]float64, error) {
		if slices.Equal(prefix, lists[0][:len(prefix)]) {
			path = append(path, ys[len(prefix)])
			return ys[len(prefix)], nil
		}
		row, err := s.llm.last(append(slices.Clone(base), prefix...))
		if err != nil {
			return nil, err
		}
		p := s.p.distOf(nil, row)
		path = append(path, p)
		return p, nil
	}
	lr, err := speculative.VerifyCoupledList(y, lists, s.p.Seed, len(base))
	return lr, path, err
}

// Targets returns the LLM's distributions at the positions of tokens
// appended to the committed sequence, without committing anything (the
// simulator's oracle uses it for tokens committed on the device that never
// reached the server).
func (s *Server) Targets(tokens []int) ([][]float64, error) {
	if len(tokens) == 0 {
		return nil, nil
	}
	target := append(append([]int(nil), s.seq...), tokens...)
	if len(target) > s.ctx {
		target = target[:s.ctx]
		tokens = tokens[:s.ctx-len(s.seq)]
	}
	rows, err := s.llm.rows(target[:len(target)-1], len(s.seq))
	if err != nil {
		return nil, err
	}
	out := make([][]float64, len(tokens))
	for i := range tokens {
		out[i] = s.p.distOf(nil, rows[i])
	}
	return out, s.llm.truncate(len(s.seq) - 1)
}
