package tensor

import (
	"runtime"
	"sync"
)

// The packing behind the products. The first product of a matrix whose
// rows a level reads from memory of their own (pack.go: Q8_0, Q4_0 and
// Q5_0 packed at the AVX-512 levels, the long Q4_K and Q6_K rows packed
// at avx512-zen4, the Q4_K and Q6_K rows of a mapped file copied as they
// are at avx512-zen5) queues it here
// (moveToOwn); one goroutine packs the queued matrices, one after
// another, a few groups at a time, into memory of their own (moveGroups),
// and the products read the groups made so far from it (forMade) and
// compute the others with the row-major tiles from Data. A model so
// starts as from its mapped file, and decodes from the packed copy once
// it is made.

// mover is the queue of matrices whose packed rows are to be made in
// memory of their own, and whether its goroutine runs.
var mover struct {
	mu      sync.Mutex
	queue   []*Matrix
	running bool
	idle    *sync.Cond // broadcast when the queue is drained (WaitPacking)
}

func init() { mover.idle = sync.NewCond(&mover.mu) }

// moveToOwn queues m for its whole groups copied into memory of its own
// in the layout it was queued with (Matrix.layout, packGroup).
func moveToOwn(m *Matrix) {
	mover.mu.Lock()
	defer mover.mu.Unlock()
	mover.queue = append(mover.queue, m)
	if !mover.running {
		mover.running = true
		go moveQueued()
	}
}

// moveQueued makes the queued matrices' packed rows, one matrix at a
// time, until the queue is empty.
func moveQueued() {
	for {
		mover.mu.Lock()
		if len(mover.queue) == 0 {
			mover.running = false
			mover.idle.Broadcast()
			mover.mu.Unlock()
			return
		}
		m := mover.queue[0]
		mover.queue[0] = nil
		mover.queue = mover.queue[1:]
		mover.mu.Unlock()
		moveGroups(m)
	}
}

// moveGroups makes m's packed rows in memory of its own (allocPacked: 2
// MiB pages) a few groups at a time (releaseBytes or more): the products
// read the groups made so far from it (forMade), and their pages of Data
// are let go, so that the matrix is not resident twice while it is
// packed. The finished copy becomes m's packed rows.
func moveGroups(m *Matrix) {
	rows, pack := m.packGroup(copyLayout(m.layout.Load()))
	gb := rows * m.rowBytes
	size := m.Rows / rows * gb
	own := allocPacked(size)
	m.own.Store(&own)
	step := max(1, releaseBytes/gb) * gb
	for lo := 0; lo < size; lo += step {
		hi := min(size, lo+step)
		for g := lo; g < hi; g += gb {
			pack(own[g:g+gb], m.Data[g:g+gb])
		}
		m.ownUpTo.Store(int64(hi))
		if m.release != nil {
			m.release(m.Data[lo:hi])
		}
		if moveStep != nil {
			moveStep()
		}
	}
	m.packed.Store(&own)
	runtime.AddCleanup(m, freePacked, own)
	m.own.Store(nil)
	// Pages read back after their groups were let go (by a product that
	// started before, or the rows past the last whole group, which the
	// row-major tiles read in place) go again.
	if m.release != nil {
		m.release(m.Data)
	}
}

// moveStep, if set (by the tests), is called after each step of
// moveGroups: the products then see the groups made so far.
var moveStep func()

// WaitPacking waits until the packed rows queued so far are made: those of
// every matrix that has had a product at a level that reads its rows
// packed. Until then their products run partly on the row-major tiles; a
// benchmark calls it after its warm-up, as llama.cpp repacks its rows
// while it loads.
func WaitPacking() {
	mover.mu.Lock()
	for mover.running {
		mover.idle.Wait()
	}
	mover.mu.Unlock()
}
