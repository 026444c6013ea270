package cloud

import (
	"errors"
	"reflect"
	"slices"
	"time"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/tensor"
	"github.com/hlmproject/hlm/wire"
)

// job is one verification waiting for the batcher: its upload, decoded
// (hybrid.Server.Decode), to be planned and evaluated.
type job struct {
	ss   *session
	hj   *hybrid.Job
	done chan result
}

type result struct {
	v   *wire.Verdict
	err error
}

// verify hands an upload to the batcher and waits for its verdict.
func (s *Server) verify(ss *session, hj *hybrid.Job) (*wire.Verdict, error) {
	j := &job{ss: ss, hj: hj, done: make(chan result, 1)}
	// Shutdown closes jobs only after every connection goroutine returned.
	s.jobs <- j
	r := <-j.done
	return r.v, r.err
}

// runBatcher owns the LLM: it takes the verifications that are waiting (up
// to MaxBatch), waits up to BatchWindow for the other connected devices'
// to join them, evaluates all their blocks in one pass and finishes each.
//
// The wait matters: devices answer each verdict with their next upload, so
// without it the batches fragment — a pass over one early session leaves
// the others queueing behind it, the next pass catches a few, and so on
// (32 devices, L = 1: 74 of 140 passes held one session). It is bounded by
// the window and skipped when every connected device has joined, so a lone
// device never waits.
//
// A job whose prompt is longer than PrefillChunk evaluates a chunk of it in
// a batch and is carried into the next, until the rest fits.
func (s *Server) runBatcher() {
	defer s.batcher.Done()
	var carried []*job
	queuedLast := false
	for {
		first, rest, queued, ok := s.next(carried, queuedLast)
		if !ok {
			return
		}
		carried = append(rest, s.runBatch(s.collect(first))...)
		queuedLast = queued
	}
}

// next is how the next batch begins: the next queued job when nothing is
// carried; else the carried jobs (the longest waiting first), but for a
// place kept for the queued ones — at most MaxBatch−1 carried jobs, so
// that prompts being evaluated a chunk at a time never fill a batch; with
// MaxBatch 1, a queued job and a carried one by turns (queuedLast: the
// last batch began with a queued job). rest are the carried jobs left for
// later; ok is false when the batcher is done.
func (s *Server) next(carried []*job, queuedLast bool) (first, rest []*job, queued, ok bool) {
	if len(carried) == 0 {
		j, ok := <-s.jobs
		return []*job{j}, nil, true, ok
	}
	if s.cfg.MaxBatch == 1 && !queuedLast {
		select {
		case j, ok := <-s.jobs:
			if ok {
				return []*job{j}, carried, true, true
			}
		default:
		}
	}
	k := min(len(carried), max(s.cfg.MaxBatch-1, 1))
	return carried[:k:k], carried[k:], false, true
}

// collect gathers a batch from first (one or more jobs): the uploads
// already queued, then, for up to BatchWindow, those of the other
// connected devices.
func (s *Server) collect(first []*job) []*job {
	batch := first
	var expire <-chan time.Time
	for len(batch) < s.cfg.MaxBatch {
		select {
		case j, ok := <-s.jobs:
			if !ok {
				return batch
			}
			batch = append(batch, j)
			continue
		default:
		}
		if s.cfg.BatchWindow <= 0 || len(batch) >= s.connected() {
			return batch
		}
		if expire == nil {
			timer := time.NewTimer(s.cfg.BatchWindow)
			defer timer.Stop()
			expire = timer.C
		}
		select {
		case j, ok := <-s.jobs:
			if !ok {
				return batch
			}
			batch = append(batch, j)
		case <-s.connGone: // look again at how many are connected
		case <-expire:
			return batch
		}
	}
	return batch
}

// connected is the number of open device connections: the most sessions
// that can send an upload.
func (s *Server) connected() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// runBatch evaluates a batch and finishes its jobs, but for those whose
// prompt it evaluated a chunk of (PrefillChunk): it returns them, to be
// carried into the next batch.
func (s *Server) runBatch(batch []*job) (carried []*job) {
	s.cfg.Metrics.Batch(len(batch))
	ready, chunked, ps := s.plan(batch)
	rows, failed, release := s.evaluateAll(ps, ready)
	defer release() // after the verifications below
	for _, p := range chunked {
		err := failed[p.hj.Session()]
		if err == nil {
			err = p.hj.Prefilled(s.cfg.PrefillChunk)
		}
		if err != nil {
			p.j.done <- result{err: err}
			continue
		}
		carried = append(carried, p.j)
	}
	ok := ready[:0]
	for _, p := range ready {
		if err := failed[p.hj.Session()]; err != nil && len(p.hj.Tokens()) > 0 {
			p.j.done <- result{err: err}
			continue
		}
		ok = append(ok, p)
	}
	ready = ok
	// Each session's verification (distributions over the vocabulary, the
	// accept/resample decisions) depends only on its own rows and state:
	// the threads share them out.
	tensor.ParallelFor(len(ready), len(ready)*finishWork, func(lo, hi int) {
		for _, p := range ready[lo:hi] {
			v, err := p.hj.FinishVerdict(rows[p.hj.Session()])
			p.j.done <- result{v, err}
		}
	})
	return carried
}

// prepared is a planned job of a batch.
type prepared struct {
	j  *job
	hj *hybrid.Job
}

// passBlocks are the blocks of a batch's pass: per session, its tokens
// and the leading ones whose logits nobody reads.
type passBlocks struct {
	sessions []model.Session
	tokens   [][]int
	skip     []int
}

func (ps *passBlocks) add(s model.Session, tokens []int, skip int) {
	ps.sessions, ps.tokens, ps.skip = append(ps.sessions, s), append(ps.tokens, tokens), append(ps.skip, skip)
}

// plan plans the batch's jobs (a job that cannot be planned fails here)
// and lays out the pass: the jobs whose round it verifies (ready), and
// those whose prompt is longer than PrefillChunk, of which it evaluates a
// chunk without logits (chunked; none once Shutdown's context ended).
func (s *Server) plan(batch []*job) (ready, chunked []prepared, ps passBlocks) {
	for _, j := range batch {
		hj := j.hj
		if err := hj.Plan(); err != nil {
			j.done <- result{err: err}
			continue
		}
		t := hj.Tokens()
		if c := s.cfg.PrefillChunk; c > 0 && hj.Skip() > c {
			if s.aborted() {
				j.done <- result{err: errStopped}
				continue
			}
			chunked = append(chunked, prepared{j, hj})
			ps.add(hj.Session(), t[:c], c)
			continue
		}
		ready = append(ready, prepared{j, hj})
		if len(t) > 0 {
			ps.add(hj.Session(), t, hj.Skip())
		}
	}
	return ready, chunked, ps
}

// evaluateAll evaluates the pass, in one batch where the LLM can, and
// returns each session's rows or its failure. When the batch fails (it
// left every session as it was), or the LLM does not batch, each session
// is evaluated alone, so that one session's failure (a full context, an
// engine error) fails its round only. release ends a view's hold once
// the verifications have read the rows (evaluate).
func (s *Server) evaluateAll(ps passBlocks, ready []prepared) (rows map[model.Session][][]float32, failed map[model.Session]error, release func()) {
	rows = make(map[model.Session][][]float32, len(ps.sessions))
	failed = map[model.Session]error{}
	if len(ps.sessions) == 0 {
		return rows, failed, func() {}
	}
	view := s.view != nil
	for _, p := range ready {
		view = view && !p.hj.EvaluatesInFinish()
	}
	out, release, err := s.evaluate(ps.sessions, ps.tokens, ps.skip, view)
	if err == nil {
		for i, ses := range ps.sessions {
			rows[ses] = out[i]
		}
		return rows, failed, release
	}
	for i, ses := range ps.sessions {
		r, err := model.EvalSkip(ses, ps.tokens[i], ps.skip[i])
		if err != nil {
			failed[ses] = hybrid.EngineError(err)
			continue
		}
		rows[ses] = r
	}
	return rows, failed, release
}

// evaluate runs the sessions' blocks in one pass where the LLM can: left
// in the LLM's own buffer (s.view, when view), written into the server's
// (intoBatcher) or by EvalBatchSkip or EvalBatch; errUnbatched when none
// applies. Session i has a row per token, of which the first skip[i] are
// nil where the LLM can skip them (an intoBatcher, a model.SkipBatcher:
// the rows of a first round's prompt, read by nobody, were 600 KB a token
// at a vocabulary of 151,936). release ends a view's hold once the rows
// are read (a no-op otherwise).
func (s *Server) evaluate(sessions []model.Session, tokens [][]int, skip []int, view bool) (out [][][]float32, release func(), err error) {
	release = func() {}
	b, into := s.cfg.LLM.(intoBatcher)
	switch sb, skips := s.cfg.LLM.(model.SkipBatcher); {
	case into:
		n := 0
		for i, t := range tokens {
			n += len(t) - skip[i]
		}
		if n *= s.cfg.LLM.Config().Vocab; len(s.logits) < n {
			s.logits = make([]float32, n)
		}
		if !view {
			out, err = b.EvalBatchInto(s.logits, sessions, tokens, skip)
		} else if out, err = s.view.EvalBatchView(s.logits, sessions, tokens, skip); err == nil {
			release = s.view.ReleaseView
		}
	case len(sessions) <= 1:
		return nil, release, errUnbatched
	case skips:
		out, err = sb.EvalBatchSkip(sessions, tokens, skip)
	default:
		if b, ok := s.cfg.LLM.(model.Batcher); ok {
			out, err = b.EvalBatch(sessions, tokens) // every row
			return out, release, err
		}
		return nil, release, errUnbatched
	}
	if err != nil {
		return nil, release, err
	}
	for i := range out {
		out[i] = model.Unskip(out[i], skip[i])
	}
	return out, release, nil
}

// intoBatcher is an LLM that evaluates a batch into a buffer the caller
// reuses (model/llamacpp): the server keeps one, Server.logits, written by
// each batch and read by its verifications before the next batch, so that
// no batch allocates its rows — on a GPU, allocating and copying a
// round's 97 MB of logits (32 sessions × 5 positions × 151,936) one row at
// a time took three times the decode.
type intoBatcher interface {
	EvalBatchInto(buf []float32, sessions []model.Session, tokens [][]int, skip []int) ([][][]float32, error)
}

// viewBatcher is an intoBatcher that can leave the rows of a batch in the
// LLM's own buffer (model/llamacpp's EvalBatchView: llama.cpp's output
// buffer, every other evaluation of the LLM held back until ReleaseView).
// The batcher uses it (Server.view) when no replica is the LLM itself and
// no job of the batch evaluates the LLM in its Finish (hybrid's
// Job.EvaluatesInFinish) — such an evaluation would wait for the release
// — and releases once the batch's verifications are done.
type viewBatcher interface {
	intoBatcher
	EvalBatchView(buf []float32, sessions []model.Session, tokens [][]int, skip []int) ([][][]float32, error)
	ReleaseView()
}

// viewOf is the LLM as a viewBatcher, or nil when it is not one or a
// replica is the LLM itself.
func viewOf(cfg Config) viewBatcher {
	vb, ok := cfg.LLM.(viewBatcher)
	if !ok || slices.ContainsFunc(cfg.Replicas, func(r model.Model) bool { return sameModel(r, cfg.LLM) }) {
		return nil
	}
	return vb
}

// sameModel reports whether a and b are one model (== on comparable
// types only: == on interfaces holding, say, a struct with a slice panics).
func sameModel(a, b model.Model) bool {
	t := reflect.TypeOf(a)
	return t != nil && t == reflect.TypeOf(b) && t.Comparable() && a == b
}

// aborted reports whether Shutdown's context has ended (Server.abort).
func (s *Server) aborted() bool {
	select {
	case <-s.abort:
		return true
	default:
		return false
	}
}

// errStopped fails a round whose prompt was being evaluated a chunk at a
// time when Shutdown's context ended.
var errStopped = errors.New("server shutting down: the prompt's evaluation was stopped")

// errUnbatched marks a batch that was not evaluated in one pass.
var errUnbatched = errors.New("not batched")

// finishWork is the cost of one Finish in ParallelFor's multiply-add units:
// enough that two or more sessions are shared out.
const finishWork = 1 << 14
