package hybrid

import (
	"fmt"
	"math/rand/v2"

	"github.com/hlmproject/hlm/codec"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/spec"
	"github.com/hlmproject/hlm/wire"
)

// Server is the LLM side of a session: it keeps the context in sync with the
// device, reconstructs the draft distributions and verifies. Not safe for
// concurrent use; a server process runs one per device session.
type Server struct {
	p     Params
	vocab int
	llm   *cache
	rng   *rand.Rand
	seq   []int // prompt + committed tokens, as the server knows them
	dec   codec.Codec
	round uint32
	slm   *cache // replica method: the server's own copy of the draft model
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

// NewReplicaServer opens a server session that also runs slm, the device's
// draft model, to compute the draft distributions itself (method replica).
func NewReplicaServer(p Params, llm, slm model.Model, prompt []int) (*Server, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if len(prompt) == 0 {
		return nil, fmt.Errorf("%w: empty prompt", ErrParam)
	}
	dec, err := codecOf(p)
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
	s := &Server{p: p, vocab: vocab, llm: newCache(llm.NewSession()), dec: dec,
		rng: rand.New(rand.NewPCG(p.Seed, 0x736572766572)), seq: append([]int(nil), prompt...)}
	if p.Method == Replica {
		if slm == nil {
			return nil, fmt.Errorf("%w: the replica method needs the draft model on the server", ErrParam)
		}
		if slm.Config().Vocab != vocab {
			return nil, fmt.Errorf("%w: replica draft vocabulary %d, LLM %d", ErrParam, slm.Config().Vocab, vocab)
		}
		s.slm = newCache(slm.NewSession())
	}
	return s, nil
}

// Sequence is the prompt and committed tokens as the server knows them.
func (s *Server) Sequence() []int { return s.seq }

// Verify evaluates the committed tokens and the drafts of an upload in one
// LLM pass and verifies the drafts (Q-S eq. 1–3). On error the session is
// unchanged and may be resynchronised.
func (s *Server) Verify(up *wire.Upload) (*wire.Verdict, *Trace, error) {
	if up.Round != s.round+1 {
		return nil, nil, fmt.Errorf("hybrid: upload for round %d, expected %d", up.Round, s.round+1)
	}
	m, L := len(up.Committed), len(up.Drafts)
	target := make([]int, 0, len(s.seq)+m+L)
	target = append(target, s.seq...)
	for _, t := range up.Committed {
		target = append(target, int(t))
	}
	drafts := make([]int, L)
	for i, d := range up.Drafts {
		drafts[i] = int(d.Token)
		target = append(target, drafts[i])
	}
	xhats := make([][]float64, L)
	switch {
	case s.p.Method == Coupled:
		// Nothing to reconstruct: verification uses only the keyed noise.
	case s.slm != nil:
		// Replica: compute the draft distributions with the server's own
		// copy of the SLM and check they are the device's, bit for bit.
		if L > 0 {
			rows, err := s.slm.rows(target[:len(target)-1], len(s.seq)+m)
			if err != nil {
				return nil, nil, err
			}
			h := checkSeed
			for l := 0; l < L; l++ {
				h = checkLogits(h, rows[l])
				xhats[l] = s.p.distOf(nil, rows[l])
			}
			if !up.HasCheck || up.Check != h {
				return nil, nil, fmt.Errorf("round %d: %w (device hash %#x, server %#x)", up.Round, ErrReplicaMismatch, up.Check, h)
			}
		}
	default:
		for i, d := range up.Drafts {
			if s.dec == nil {
				return nil, nil, fmt.Errorf("%w: method %s sends no drafts", ErrParam, s.p.Method)
			}
			x, err := s.dec.Decode(d.Payload, s.vocab)
			if err != nil {
				return nil, nil, fmt.Errorf("draft %d: %w", i, err)
			}
			xhats[i] = x
		}
	}
	// Logits after seq[-1], each committed token and each draft: m+L+1 rows.
	rows, err := s.llm.rows(target, len(s.seq))
	if err != nil {
		return nil, nil, err
	}
	tr := &Trace{XHat: xhats}
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
	var res spec.BlockResult
	switch {
	case s.p.Method == Coupled || (s.p.Method == LLM && s.p.Sampler == "gumbel"):
		res = spec.VerifyCoupled(ys, drafts, s.p.Seed, len(s.seq)+m)
	default:
		res = spec.VerifyBlock(xhats, ys, drafts, s.rng)
	}
	v := &wire.Verdict{Round: up.Round, Accepted: res.Accepted, Token: int32(res.Token), Resampled: res.Resampled}
	if up.CommittedProb != nil {
		v.CommittedTarget = make([]float32, m)
		for j, t := range up.Committed {
			v.CommittedTarget[j] = float32(tr.CommittedY[j][t])
		}
	}
	// Commit: the skipped tokens, the accepted drafts and the new token
	// (not yet evaluated: the next round's pass starts with it).
	s.seq = append(s.seq, target[len(s.seq):len(s.seq)+m+res.Accepted]...)
	s.seq = append(s.seq, res.Token)
	if err := s.llm.truncate(len(s.seq) - 1); err != nil {
		return nil, nil, err
	}
	s.round = up.Round
	return v, tr, nil
}
