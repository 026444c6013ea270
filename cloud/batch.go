package cloud

import (
	"time"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/tensor"
	"github.com/hlmproject/hlm/wire"
)

// job is one verification waiting for the batcher.
type job struct {
	ss   *session
	up   *wire.Upload
	done chan result
}

type result struct {
	v   *wire.Verdict
	err error
}

// verify hands an upload to the batcher and waits for its verdict.
func (s *Server) verify(ss *session, up *wire.Upload) (*wire.Verdict, error) {
	j := &job{ss: ss, up: up, done: make(chan result, 1)}
	// Shutdown closes jobs only after every connection goroutine returned.
	s.jobs <- j
	r := <-j.done
	return r.v, r.err
}

// runBatcher owns the LLM: it takes the verifications that are waiting
// (up to MaxBatch, optionally waiting BatchWindow for more), evaluates all
// their blocks in one pass and finishes each.
func (s *Server) runBatcher() {
	defer s.batcher.Done()
	for first := range s.jobs {
		batch := []*job{first}
		var timer <-chan time.Time
		if s.cfg.BatchWindow > 0 {
			timer = time.After(s.cfg.BatchWindow)
		}
	collect:
		for len(batch) < s.cfg.MaxBatch {
			select {
			case j, ok := <-s.jobs:
				if !ok {
					break collect
				}
				batch = append(batch, j)
			case <-timer:
				break collect
			default:
				if timer == nil {
					break collect
				}
				select {
				case j, ok := <-s.jobs:
					if !ok {
						break collect
					}
					batch = append(batch, j)
				case <-timer:
					break collect
				}
			}
		}
		s.runBatch(batch)
	}
}

func (s *Server) runBatch(batch []*job) {
	s.cfg.Metrics.Batch(len(batch))
	type prepared struct {
		j  *job
		hj *hybrid.Job
	}
	var ready []prepared
	var sessions []model.Session
	var tokens [][]int
	for _, j := range batch {
		hj, err := j.ss.hs.Prepare(j.up)
		if err != nil {
			j.done <- result{err: err}
			continue
		}
		ready = append(ready, prepared{j, hj})
		if t := hj.Tokens(); len(t) > 0 {
			sessions = append(sessions, hj.Session())
			tokens = append(tokens, t)
		}
	}
	rows := make(map[model.Session][][]float32, len(sessions))
	if len(sessions) > 0 {
		var out [][][]float32
		var err error
		if b, ok := s.cfg.LLM.(model.Batcher); ok && len(sessions) > 1 {
			out, err = b.EvalBatch(sessions, tokens)
		} else {
			for i, ses := range sessions {
				var r [][]float32
				if r, err = ses.Eval(tokens[i]); err != nil {
					break
				}
				out = append(out, r)
			}
		}
		if err != nil {
			for _, p := range ready {
				p.j.done <- result{err: err}
			}
			return
		}
		for i, ses := range sessions {
			rows[ses] = out[i]
		}
	}
	// Each session's verification (distributions over the vocabulary, the
	// accept/resample decisions) depends only on its own rows and state:
	// the threads share them out.
	tensor.ParallelFor(len(ready), len(ready)*finishWork, func(lo, hi int) {
		for _, p := range ready[lo:hi] {
			v, _, err := p.hj.Finish(rows[p.hj.Session()])
			p.j.done <- result{v, err}
		}
	})
}

// finishWork is the cost of one Finish in ParallelFor's multiply-add units:
// enough that two or more sessions are shared out.
const finishWork = 1 << 14
