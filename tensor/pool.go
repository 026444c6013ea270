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

// A Loop is work over the items [0, n) that ParallelLoop splits into
// ranges: Run computes items [lo, hi). A caller that keeps its Loop (a
// pointer to reused state) runs it on the threads without allocating.
type Loop interface{ Run(lo, hi int) }

// LoopFunc is a function as a Loop.
type LoopFunc func(lo, hi int)

// Run calls f.
func (f LoopFunc) Run(lo, hi int) { f(lo, hi) }

// ParallelFor is ParallelLoop of fn.
func ParallelFor(n int, work int, fn func(lo, hi int)) { ParallelLoop(n, work, LoopFunc(fn)) }

// ShareChunk and ShareMin are ShareChunks's chunk and the least length it
// shares out (a vocabulary of 32,768 or more: Llama-3's, Qwen's).
const (
	ShareChunk = 1 << 12
	ShareMin   = 1 << 15
)

// ShareChunks is for a pass over n values (n ≥ ShareMin) whose result is
// worth computing in chunks only when the chunks run on several threads: it
// calls fn(lo, hi) for each chunk [lo, hi) of ShareChunk values, on the
// threads, and reports true; or, when n is shorter, there is one thread, or
// the pool is busy (a nested call), it calls nothing and reports false, and
// the caller makes its one pass. Chunk c starts at c·ShareChunk. fn
// escapes: a caller on a path that must not allocate tests n ≥ ShareMin
// before it makes the closure.
func ShareChunks(n, work int, fn func(lo, hi int)) bool {
	if n < ShareMin || Threads() < 2 {
		return false
	}
	chunks := (n + ShareChunk - 1) / ShareChunk
	shared := true
	ParallelFor(chunks, work, func(lo, hi int) {
		if lo == 0 && hi == chunks { // run alone: by the caller, in one pass
			shared = false
			return
		}
		for c := lo; c < hi; c++ {
			fn(c*ShareChunk, min((c+1)*ShareChunk, n))
		}
	})
	return shared
}

// ParallelLoop splits [0, n) into contiguous chunks and runs l on each, on
// up to Threads() threads, when work (an estimate of the total cost in
// multiply-adds) is large enough to pay for them. The calling goroutine
// takes part; the others are the persistent workers of one process-wide
// pool, so a call starts no goroutines and, once the pool is warm,
// allocates nothing. While the pool serves one caller, a concurrent caller
// (or a nested call from l) runs its loop alone.
func ParallelLoop(n int, work int, l Loop) {
	t := Threads()
	if t <= 1 || n <= 1 || work < minParallelWork || !workers.mu.TryLock() {
		l.Run(0, n)
		return
	}
	defer workers.mu.Unlock()
	workers.run(min(t, n), min(n, 4*t), n, l)
}

// workers is the pool behind ParallelLoop.
var workers pool

// pool keeps worker goroutines that spin for a while after each job, then
// sleep until the next one. A job is split into chunks that the caller and
// the workers claim with an atomic counter, so a thread slowed by other load
// on the machine takes fewer of them.
//
// Jobs are reused: a worker joins the job of the generation it woke for
// (job.entry) and leaves it when it has no chunk left; the caller closes
// its job when every chunk is done, without waiting for the workers to
// leave, and a later call reuses a closed job that every worker has left
// (a worker descheduled inside one keeps it, and the next call takes or
// makes another).
type pool struct {
	mu      sync.Mutex // held by the caller whose job is running
	started int        // worker goroutines (guarded by mu)
	jobs    []*job     // every job made (guarded by mu)

	gen  atomic.Uint64       // incremented for every job
	job  atomic.Pointer[job] // the current job
	park sync.Mutex          // guards sleeping workers' wait on wake
	wake *sync.Cond
}

type job struct {
	// Set by the caller before the job is published (entry, gen), read
	// by the workers that join it.
	loop    Loop
	n       int
	chunks  int32
	helpers int // workers 0 … helpers-1 take part

	next atomic.Int32 // next chunk to claim
	// state holds the chunks finished (the low 32 bits) and waitBit, which
	// the caller sets when it goes to sleep on finished before the last
	// chunk is done. One word, so that the worker finishing the last chunk
	// and the caller going to sleep are ordered by their read-modify-writes
	// on it alone: whichever comes second sees the other, on any memory
	// model. As two variables (a count and a flag, each side storing one
	// and then loading the other) it needs a full fence between each
	// side's store and load. Go's atomics promise one, but under QEMU's
	// emulation of a Cortex-A72 (arm64 without LSE; presumably its STLR
	// then LDAR, translated for an x86 host whose stores may pass later
	// loads) a caller slept for good on a wake-up the worker had not sent:
	// with the caller's spin set to 0, TestParallelLoopReuse -count=40
	// hung in 3 of 3 emulated runs. A millisecond timer bounded it until
	// this word replaced the two.
	state    atomic.Uint64
	finished chan struct{} // the last chunk's wake-up, sent only when waitBit was set

	// entry is the job's generation (shifted by entryBits) and the number
	// of workers that joined it (the low bits: entryClosed once closed,
	// when no more may join); left counts the workers that have left.
	entry  atomic.Uint64
	left   atomic.Int32
	joined int32 // workers that joined, counted when it closed (guarded by pool.mu)
}

const (
	entryBits   = 16
	entryClosed = 1<<entryBits - 1

	waitBit = 1 << 32 // in job.state: the caller sleeps on finished
)

// finishedChunks is the number of chunks done in a job.state value.
func finishedChunks(s uint64) int32 { return int32(uint32(s)) }

// join enters the worker into j if j is still open for generation g.
func (j *job) join(g uint64) bool {
	for {
		e := j.entry.Load()
		if e>>entryBits != g<<entryBits>>entryBits || e&entryClosed == entryClosed {
			return false
		}
		if j.entry.CompareAndSwap(e, e+1) {
			return true
		}
	}
}

// free returns a job that no worker is inside, to be reused, or a new one.
// Its finished channel is empty: a wake-up is sent only to a caller that
// set waitBit, and that caller receives it before its call returns.
func (p *pool) free() *job {
	for _, j := range p.jobs {
		if j.left.Load() == j.joined {
			return j
		}
	}
	j := &job{finished: make(chan struct{}, 1)}
	p.jobs = append(p.jobs, j)
	return j
}

// workerSpin is how long an idle worker polls for a new job before it
// sleeps: long enough to cover the gaps between the products of one forward
// pass and between the tokens of a decode loop, short enough that an idle
// process gives its cores back at once.
const workerSpin = 500 * time.Microsecond

// run executes l over n items in chunks on the caller and width−1 workers.
func (p *pool) run(width, chunks, n int, l Loop) {
	if p.wake == nil {
		p.wake = sync.NewCond(&p.park)
	}
	for p.started < width-1 {
		go p.worker(p.started, p.gen.Load())
		p.started++
	}
	j := p.free()
	j.loop, j.n, j.chunks, j.helpers = l, n, int32(chunks), width-1
	j.next.Store(0)
	j.state.Store(0)
	j.left.Store(0)
	g := p.gen.Load() + 1
	j.entry.Store(g << entryBits)
	p.job.Store(j)
	p.park.Lock()
	p.gen.Store(g)
	p.wake.Broadcast()
	p.park.Unlock()
	j.work()
	j.wait()
	// Every chunk is done: no worker reads loop again, and none may join.
	j.joined = int32(j.entry.Swap(g<<entryBits|entryClosed) & entryClosed)
	j.loop = nil
}

// wait returns when every chunk of j is done. It spins for up to
// callerSpin, then sleeps, so that on a machine busy with other processes
// this thread gives its core to a worker the kernel has descheduled instead
// of spinning while it waits for one. The spin must outlast the usual
// imbalance of the last chunks (a few to tens of microseconds): waking from
// a sleep costs more than that, and at a decode step's small products it
// did so often enough to cost a third of the throughput.
func (j *job) wait() {
	var start time.Time
	for spins := 0; finishedChunks(j.state.Load()) < j.chunks; spins++ {
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
		// Sleep: set waitBit unless the last chunk finished meanwhile. Once
		// it is set with chunks outstanding, the worker whose addition
		// finishes the last one sees it in the sum and sends the wake-up.
		for {
			s := j.state.Load()
			if finishedChunks(s) >= j.chunks {
				return
			}
			if j.state.CompareAndSwap(s, s|waitBit) {
				break
			}
		}
		<-j.finished
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
		j.loop.Run(lo, hi)
		if s := j.state.Add(1); finishedChunks(s) == j.chunks && s&waitBit != 0 {
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
		if j := p.job.Load(); j.join(g) {
			if id < j.helpers {
				j.work()
			}
			j.left.Add(1)
		}
	}
}
