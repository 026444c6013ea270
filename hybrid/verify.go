package hybrid

import (
	"fmt"

	"github.com/hlmproject/hlm/codec"
	"github.com/hlmproject/hlm/speculative"
	"github.com/hlmproject/hlm/wire"
)

// A verifier is a method's server side beyond the LLM pass every method
// shares: how the draft distributions x̂ of an upload are obtained, and how
// its drafts are verified against the LLM's distributions.
type verifier interface {
	// recon returns x̂ for each of the upload's drafts (nil entries where
	// the method verifies without them). target is the committed sequence,
	// the upload's m committed tokens and its first draft list.
	recon(s *Server, up *wire.Upload, target []int, m int) ([][]float64, error)
	// verify verifies the job's drafts; ys are the LLM's distributions
	// after the last committed token and after each draft of the first
	// list. It returns the outcome, the draft list it followed and the
	// LLM's distributions along the committed path.
	verify(j *Job, ys [][]float64) (res speculative.BlockResult, draft int, path [][]float64, err error)
}

// decoded is the x̂ of codec methods: each draft's payload decoded (a
// Chained codec's drafts after the first with its RestOf the first).
func decoded(s *Server, up *wire.Upload) ([][]float64, error) {
	xhats := make([][]float64, len(up.Drafts))
	dec := s.dec
	for i, d := range up.Drafts {
		if dec == nil {
			return nil, fmt.Errorf("%w: method %s sends no drafts", ErrParam, s.p.Method)
		}
		x, err := dec.Decode(d.Payload, s.vocab)
		if err != nil {
			return nil, fmt.Errorf("draft %d: %w", i, err)
		}
		xhats[i] = x
		if ch, ok := dec.(codec.Chained); ok {
			if dec, err = ch.RestOf(d.Payload); err != nil {
				return nil, fmt.Errorf("draft %d: %w", i, err)
			}
		}
	}
	return xhats, nil
}

// standard is speculative verification against the decoded x̂ (Q-S eq.
// 1–3): one token for the skip family's rounds (U-HLM eq. 4, CU-HLM eq. 6), a block
// with the bonus token otherwise.
type standard struct{}

func (standard) recon(s *Server, up *wire.Upload, _ []int, _ int) ([][]float64, error) {
	return decoded(s, up)
}

func (v standard) verify(j *Job, ys [][]float64) (speculative.BlockResult, int, [][]float64, error) {
	return v.verifyAt(j, at(ys)), 0, ys, nil
}

// verifyAt is verify with the distributions on demand (lazyVerifier).
func (standard) verifyAt(j *Job, t targets) speculative.BlockResult {
	y := t.y
	rng := roundRNG(j.s.p.Seed, j.up.Round)
	if j.oneToken() {
		tok, ok := speculative.Verify(j.xhats[0], y(0), j.lists[0][0], rng)
		res := speculative.BlockResult{Token: tok, Resampled: !ok}
		if ok {
			res.Accepted = 1
		}
		return res
	}
	return speculative.VerifyBlockAt(j.xhats, y, j.lists[0], rng)
}

// targets are the LLM's next-token distributions at a round's verified
// positions, y(i) computed on demand, and where the server has them the
// rows of logits they come from.
type targets struct {
	y    func(i int) []float64
	rows [][]float32 // nil: y only
}

// at is ys as targets.
func at(ys [][]float64) targets { return targets{y: func(i int) []float64 { return ys[i] }} }

// A lazyVerifier verifies with the LLM's distributions computed on demand
// — y(i) in order, up to the first rejection — so that a server that needs
// no trace skips the distributions after it (Job.FinishVerdict). Those of
// standard, llmVerifier, coupledVerifier and replicaVerifier, each verify
// being verifyAt of the precomputed distributions; list matching and token
// trees need every distribution and are not lazy. Given the rows too,
// coupled verification computes no distribution at all where the
// softmax alone makes them (coupledVerifier.verifyAt).
type lazyVerifier interface {
	verifyAt(j *Job, t targets) speculative.BlockResult
}

// llmVerifier is the LLM-only method: no drafts; the server samples from
// its own stream, or with the keyed noise of coupled verification when
// sampler=gumbel (so that llm gives exactly coupled's tokens).
type llmVerifier struct{ standard }

func (v llmVerifier) verify(j *Job, ys [][]float64) (speculative.BlockResult, int, [][]float64, error) {
	return v.verifyAt(j, at(ys)), 0, ys, nil
}

func (v llmVerifier) verifyAt(j *Job, t targets) speculative.BlockResult {
	if j.s.p.Sampler == SamplerGumbel {
		return coupledVerifier{}.verifyAt(j, t)
	}
	return v.standard.verifyAt(j, t)
}

// coupledVerifier repeats the device's keyed-noise races on the LLM's
// distributions: no x̂ is needed.
type coupledVerifier struct{}

func (coupledVerifier) recon(_ *Server, up *wire.Upload, _ []int, _ int) ([][]float64, error) {
	return make([][]float64, len(up.Drafts)), nil
}

func (v coupledVerifier) verify(j *Job, ys [][]float64) (speculative.BlockResult, int, [][]float64, error) {
	if len(ys) != len(j.lists[0])+1 {
		panic("hybrid: coupled verification wants one distribution more than drafts")
	}
	return v.verifyAt(j, at(ys)), 0, ys, nil
}

// verifyAt races over the rows of logits where the server has them and
// the distribution is the softmax alone: speculative.VerifyCoupledLogits,
// the same tokens as over the distributions without computing them.
func (coupledVerifier) verifyAt(j *Job, t targets) speculative.BlockResult {
	p, start := j.s.p, len(j.s.seq)+len(j.up.Committed)
	if t.rows != nil && p.softmaxOnly() {
		return speculative.VerifyCoupledLogits(func(l int) []float32 { return t.rows[l] }, p.Temperature, j.lists[0], p.Seed, start)
	}
	return speculative.VerifyCoupledAt(t.y, j.lists[0], p.Seed, start)
}

// replicaVerifier computes x̂ with the server's own copy of the SLM and
// checks that the device's draft logits were the same, bit for bit, before
// verifying as standard does.
type replicaVerifier struct{ standard }

func (replicaVerifier) recon(s *Server, up *wire.Upload, target []int, m int) ([][]float64, error) {
	L := len(up.Drafts)
	xhats := make([][]float64, L)
	if L == 0 {
		return xhats, nil
	}
	rows, err := s.slm.rows(target[:len(target)-1], len(s.seq)+m)
	if err != nil {
		return nil, err
	}
	h := checkSeed
	for l := 0; l < L; l++ {
		h = checkLogits(h, rows[l])
		xhats[l] = s.p.distOf(nil, rows[l])
	}
	if !up.HasCheck || up.Check != h {
		return nil, fmt.Errorf("%w (device hash %#x, server %#x)", ErrReplicaMismatch, up.Check, h)
	}
	return xhats, nil
}

// listVerifier is list matching over the upload's list_k drafts.
type listVerifier struct{}

// recon is coupled verification's: no x̂. (listVerifier does not embed
// coupledVerifier, whose verifyAt would make it a lazyVerifier.)
func (listVerifier) recon(s *Server, up *wire.Upload, target []int, m int) ([][]float64, error) {
	return coupledVerifier{}.recon(s, up, target, m)
}

func (listVerifier) verify(j *Job, ys [][]float64) (speculative.BlockResult, int, [][]float64, error) {
	lr, path, err := j.s.verifyList(j, ys)
	if err != nil {
		return speculative.BlockResult{}, 0, nil, err
	}
	return lr.BlockResult, lr.Draft, path, nil
}
