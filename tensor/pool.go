package tensor

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

var threads atomic.Int32

// SetThreads sets how many threads the products use (n < 1: GOMAXPROCS).
// Results do not depend on it.
func SetThreads(n int) {
	if n < 1 {
		n = 0
	}
	threads.Store(int32(n))
}

// Threads is the number of threads the products use.
func Threads() int {
	if n := int(threads.Load()); n > 0 {
		return n
	}
	return runtime.GOMAXPROCS(0)
}

// minParallelWork is the number of multiply-adds below which a product runs on
// the calling goroutine: waking the workers costs more than it saves.
const minParallelWork = 1 << 14

// ParallelFor splits [0, n) into contiguous chunks and runs fn on each, on up
// to Threads() threads, when work (an estimate of the total cost in
// multiply-adds) is large enough to pay for them. The calling goroutine takes
// part; the others are the persistent workers of one process-wide pool, so a
// call starts no goroutines. While the pool serves one caller, a concurrent
// caller (or a nested call from fn) runs its loop alone.
func ParallelFor(n int, work int, fn func(lo, hi int)) {
	t := Threads()
	if t <= 1 || n <= 1 || work < minParallelWork || !workers.mu.TryLock() {
		fn(0, n)
		return
	}
	defer workers.mu.Unlock()
	workers.run(min(t, n), min(n, 4*t), n, fn)
}

// workers is the pool behind ParallelFor.
var workers pool

// pool keeps worker goroutines that spin for a while after each job, then
// sleep until the next one. A job is split into chunks that the caller and
// the workers claim with an atomic counter, so a thread slowed by other load
// on the machine takes fewer of them.
type pool struct {
	mu      sync.Mutex // held by the caller whose job is running
	started int        // worker goroutines (guarded by mu)

	gen  atomic.Uint64       // incremented for every job
	job  atomic.Pointer[job] // the current job
	park sync.Mutex          // guards sleeping workers' wait on wake
	wake *sync.Cond
}

type job struct {
	fn       func(lo, hi int)
	n        int
	chunks   int32
	helpers  int          // workers 0 … helpers-1 take part
	next     atomic.Int32 // next chunk to claim
	done     atomic.Int32 // chunks finished
	waiting  atomic.Bool  // the caller sleeps on finished
	finished chan struct{}
}

// workerSpin is how long an idle worker polls for a new job before it
// sleeps: long enough to cover the gaps between the products of one forward
// pass and between the tokens of a decode loop, short enough that an idle
// process gives its cores back at once.
const workerSpin = 500 * time.Microsecond

// run executes fn over n items in chunks on the caller and width−1 workers.
func (p *pool) run(width, chunks, n int, fn func(lo, hi int)) {
	if p.wake == nil {
		p.wake = sync.NewCond(&p.park)
	}
	for p.started < width-1 {
		go p.worker(p.started, p.gen.Load())
		p.started++
	}
	j := &job{fn: fn, n: n, chunks: int32(chunks), helpers: width - 1, finished: make(chan struct{}, 1)}
	p.job.Store(j)
	p.park.Lock()
	p.gen.Add(1)
	p.wake.Broadcast()
	p.park.Unlock()
	j.work()
	// Wait for the chunks the workers hold: spin for up to callerSpin,
	// then sleep, so that on a machine busy with other processes this
	// thread gives its core to a worker the kernel has descheduled instead
	// of spinning while it waits for one. The spin must outlast the usual
	// imbalance of the last chunks (a few to tens of microseconds): waking
	// from a sleep costs more than that, and at a decode step's small
	// products it did so often enough to cost a third of the throughput.
	var start time.Time
	for spins := 0; j.done.Load() < j.chunks; spins++ {
		if spins%64 != 63 {
			continue
		}
		if start.IsZero() {
			start = time.Now()
			continue
		}
		if time.Since(start) < callerSpin {
			continue
		}
		j.waiting.Store(true)
		if j.done.Load() < j.chunks {
			<-j.finished
		}
		return
	}
}

// callerSpin is how long the caller polls for the workers' last chunks
// before it sleeps.
const callerSpin = 100 * time.Microsecond

// work claims and runs chunks until none are left.
func (j *job) work() {
	for {
		c := j.next.Add(1) - 1
		if c >= j.chunks {
			return
		}
		lo := int(int64(c) * int64(j.n) / int64(j.chunks))
		hi := int(int64(c+1) * int64(j.n) / int64(j.chunks))
		j.fn(lo, hi)
		if j.done.Add(1) == j.chunks && j.waiting.Load() {
			j.finished <- struct{}{}
		}
	}
}

func (p *pool) worker(id int, seen uint64) {
	for {
		g := p.gen.Load()
		var start time.Time
		spinning := true
		for spins := 0; g == seen; spins++ {
			if spins%64 == 63 {
				runtime.Gosched()
				if start.IsZero() {
					start = time.Now()
				} else {
					spinning = time.Since(start) < workerSpin
				}
			}
			if spinning {
				g = p.gen.Load()
				continue
			}
			p.park.Lock()
			for g = p.gen.Load(); g == seen; g = p.gen.Load() {
				p.wake.Wait()
			}
			p.park.Unlock()
		}
		seen = g
		if j := p.job.Load(); id < j.helpers {
			j.work()
		}
	}
}
