package tensor

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// countLoop counts how often each item is run; every yield-th range
// yields its thread first, so that workers fall behind and jobs are
// reused while late workers still hold them.
type countLoop struct {
	hits  []atomic.Int32
	yield int
	calls atomic.Int32
}

func (c *countLoop) Run(lo, hi int) {
	if c.yield > 0 && int(c.calls.Add(1))%c.yield == 0 {
		runtime.Gosched()
	}
	for i := lo; i < hi; i++ {
		c.hits[i].Add(1)
	}
}

// TestParallelLoopReuse: thousands of short jobs in a row (the pool's jobs
// reused, with workers made late by yields) each run every item exactly
// once. Run with -race, it also checks the reuse's synchronisation.
func TestParallelLoopReuse(t *testing.T) {
	defer SetThreads(0)
	for _, tc := range []struct{ threads, yield, jobs int }{
		{2, 0, 3000}, {2, 3, 3000}, {3, 0, 3000}, {3, 2, 3000}, {8, 5, 1000},
	} {
		t.Run(fmt.Sprintf("threads=%d,yield=%d", tc.threads, tc.yield), func(t *testing.T) {
			SetThreads(tc.threads)
			for it := 0; it < tc.jobs; it++ {
				n := 2 + it%37
				c := &countLoop{hits: make([]atomic.Int32, n), yield: tc.yield}
				ParallelLoop(n, 1<<20, c)
				for i := range c.hits {
					if h := c.hits[i].Load(); h != 1 {
						t.Fatalf("job %d (n=%d): item %d run %d times", it, n, i, h)
					}
				}
			}
		})
	}
}

// slowLastLoop counts how often each item is run, and the range holding
// the last item busy-waits for longer than the caller polls before it
// sleeps (callerSpin): when a worker claims that range, the caller goes to
// sleep and the worker must wake it.
type slowLastLoop struct{ hits []atomic.Int32 }

func (c *slowLastLoop) Run(lo, hi int) {
	if hi == len(c.hits) {
		for start := time.Now(); time.Since(start) < 3*callerSpin/2; {
		}
	}
	for i := lo; i < hi; i++ {
		c.hits[i].Add(1)
	}
}

// TestParallelLoopCallerSleeps: jobs in a row where the caller often goes
// to sleep on its job (about half of them: those whose slow last range a
// worker claimed) each return with every item run once. A lost wake-up
// hangs it; internal/crossarch runs it under QEMU's arm64 emulation, where
// the pool once lost one.
func TestParallelLoopCallerSleeps(t *testing.T) {
	defer SetThreads(0)
	SetThreads(2)
	jobs := 2000
	if testing.Short() {
		jobs = 500
	}
	for it := 0; it < jobs; it++ {
		c := &slowLastLoop{hits: make([]atomic.Int32, 8)}
		ParallelLoop(len(c.hits), 1<<20, c)
		for i := range c.hits {
			if h := c.hits[i].Load(); h != 1 {
				t.Fatalf("job %d: item %d run %d times", it, i, h)
			}
		}
	}
}

// TestParallelLoopAllocs: once the pool is warm, a loop on the threads
// allocates nothing.
func TestParallelLoopAllocs(t *testing.T) {
	defer SetThreads(0)
	SetThreads(2)
	c := &countLoop{hits: make([]atomic.Int32, 64)}
	ParallelLoop(len(c.hits), 1<<20, c)
	if got := testing.AllocsPerRun(1000, func() { ParallelLoop(len(c.hits), 1<<20, c) }); got != 0 {
		t.Errorf("ParallelLoop allocates %.1f objects per call, want 0", got)
	}
}
