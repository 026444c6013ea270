package tensor

import (
	"fmt"
	"io"
	"runtime"
	"sync"
)

// Prepacked matrices. A Q8_0, Q4_0 or Q5_0 matrix can be stored with its
// whole groups of 16 rows already in the packed layout of the AVX-512
// tiles (pack.go) and the rows past the last whole group row-major after
// them, at the offsets they have in the row-major layout: the same bytes,
// in another order (`hlm convert --packed` writes files of them). Where
// this CPU's level reads such rows packed, the mapped bytes are the packed
// copy itself: nothing is packed, allocated or zeroed when the model
// starts, and the file's pages are the only copy in memory. A level that
// reads rows row-major (an AVX2 CPU, HLM_KERNELS=avx2, the portable code)
// unpacks the whole matrix once, on its first product; Row and RowDot
// unpack the one row they read.
//
// The mapped rows start the model at once, but the page cache maps a
// file in 4 KiB pages, and the products read them 10–22% slower than a
// packed copy in 2 MiB pages (docs/BENCHMARKS.md, "Prepacked files"). So
// the first product of a prepacked matrix also queues it for a copy of
// its packed rows into memory of its own (allocPacked: 2 MiB pages), made
// by the goroutine that packs row-major matrices behind the products
// (moveGroups), a few groups at a time: the products read each group from
// the copy once it is there (runPacked), its mapped pages leave the
// resident set (SetDataRelease), and the copy finally replaces the mapped
// rows (an atomic swap; the mapped ones stay valid for a product under
// way). A model starts as from the mapped file and decodes, once the
// copies are made, as from a packed copy, for a memory copy of the
// matrices instead of their packing.

// PrepackedGroup is how many rows the prepacked layout interleaves: the
// layout of a matrix's rows lo…lo+PrepackedGroup-1 (lo a multiple of it)
// is that of a matrix of those rows alone.
const PrepackedGroup = packRows

// Packable reports whether matrices of type t can be stored prepacked.
func Packable(t DType) bool { return t == Q8_0 || t == Q4_0 || t == Q5_0 }

// ReadsPacked reports whether products at the current kernel level read
// matrices of type t (of 16 rows or more) packed, that is, whether a
// prepacked matrix of type t is computed from as it is stored rather
// than unpacked first.
func ReadsPacked(t DType) bool {
	ks := kernels()
	return packing && ks != nil && Packable(t) && ks.packedFor(t)[1] != nil && (t != Q5_0 || q5Sets[level] != nil)
}

// NewPrepacked wraps data, a rows × cols matrix of type t (Q8_0, Q4_0 or
// Q5_0) in the prepacked layout (WritePacked's), without copying.
func NewPrepacked(t DType, rows, cols int, data []byte) (*Matrix, error) {
	if !Packable(t) {
		return nil, fmt.Errorf("tensor: %v matrices cannot be prepacked (only Q8_0, Q4_0 and Q5_0)", t)
	}
	m, err := NewRaw(t, rows, cols, data)
	if err != nil {
		return nil, err
	}
	if rows >= packRows {
		m.prepacked = true
		p := data[:rows/packRows*packRows*m.rowBytes]
		m.packed.Store(&p)
	}
	return m, nil
}

// Prepacked reports whether m's Data is in the prepacked layout
// (NewPrepacked) rather than row-major.
func (m *Matrix) Prepacked() bool { return m.prepacked }

// rowMajor returns m's storage in the row-major layout: Data, or for a
// prepacked matrix a copy unpacked on first use and kept (for the levels
// that read rows row-major). Like a packed copy, the unpacked one replaces
// the mapped pages in memory (SetDataRelease) instead of doubling them.
func (m *Matrix) rowMajor() []byte {
	if !m.prepacked {
		return m.Data
	}
	if p := m.unpacked.Load(); p != nil {
		return *p
	}
	out := allocPacked(len(m.Data))
	nb, rb := m.Cols/QK, m.rowBytes
	whole := m.Rows / packRows
	copy(out[whole*packRows*rb:], m.Data[whole*packRows*rb:])
	packGroupsInto(out, m.Data, whole, packRows*rb, m.release, func(dst, src []byte) {
		unpackBlockGroup(dst, src, m.Type, nb)
	})
	if !m.unpacked.CompareAndSwap(nil, &out) {
		freePacked(out)
		return *m.unpacked.Load()
	}
	runtime.AddCleanup(m, freePacked, out)
	return out
}

// WriteRowMajor writes m's storage in the row-major layout (Bytes's) to
// w; a prepacked matrix is unpacked a group at a time, so nothing the
// size of the matrix is allocated.
func (m *Matrix) WriteRowMajor(w io.Writer) error {
	if !m.prepacked {
		_, err := w.Write(m.Bytes())
		return err
	}
	gb := packRows * m.rowBytes
	whole := m.Rows / packRows
	buf := make([]byte, gb)
	for g := 0; g < whole; g++ {
		unpackBlockGroup(buf, m.Data[g*gb:(g+1)*gb], m.Type, m.Cols/QK)
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	_, err := w.Write(m.Data[whole*gb:])
	return err
}

// WritePacked writes m's storage in the prepacked layout to w: its whole
// groups of 16 rows packed (pack.go), the remaining rows row-major. m must
// be Q8_0, Q4_0 or Q5_0 (Packable).
func (m *Matrix) WritePacked(w io.Writer) error {
	if !Packable(m.Type) {
		return fmt.Errorf("tensor: %v matrices cannot be prepacked (only Q8_0, Q4_0 and Q5_0)", m.Type)
	}
	if m.prepacked {
		_, err := w.Write(m.Data)
		return err
	}
	gb := packRows * m.rowBytes
	whole := m.Rows / packRows
	buf := make([]byte, gb)
	for g := 0; g < whole; g++ {
		packBlockGroup(buf, m.Data[g*gb:(g+1)*gb], m.Type, m.Cols/QK)
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	_, err := w.Write(m.Data[whole*gb:])
	return err
}

// mover is the queue of matrices whose packed rows are to be made in
// memory of their own (a row-major matrix's packed, a prepacked one's
// copied), and whether its goroutine runs.
var mover struct {
	mu      sync.Mutex
	queue   []*Matrix
	running bool
	idle    *sync.Cond // broadcast when the queue is drained (WaitPacking)
}

func init() { mover.idle = sync.NewCond(&mover.mu) }

// moveToOwn queues m (Q8_0, Q4_0 or Q5_0 of 16 rows or more, or Q4_K or
// Q6_K of 8 or more) for its packed rows in memory of its own: a
// row-major matrix's whole groups packed (packBlockGroup, packKGroup), a
// prepacked one's copied from the mapped bytes.
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
// read the groups made so far from it (runPacked), and their pages of
// Data are let go, so that the matrix is not resident twice while it
// moves. The finished copy becomes m's packed rows.
func moveGroups(m *Matrix) {
	rows, pack := m.packGroup()
	gb := rows * m.rowBytes
	size := m.Rows / rows * gb
	own := allocPacked(size)
	m.own.Store(&own)
	step := max(1, releaseBytes/gb) * gb
	for lo := 0; lo < size; lo += step {
		hi := min(size, lo+step)
		if m.prepacked {
			copy(own[lo:hi], m.Data[lo:hi])
		} else {
			for g := lo; g < hi; g += gb {
				pack(own[g:g+gb], m.Data[g:g+gb])
			}
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
	// started before) go again: the moved ones of a prepacked matrix
	// (its rows past the last group are read in place), all of a
	// row-major one's.
	switch {
	case m.release == nil:
	case m.prepacked:
		m.release(m.Data[:size])
	default:
		m.release(m.Data)
	}
}

// moveStep, if set (by the tests), is called after each step of
// moveGroups: the products then see the groups made so far.
var moveStep func()

// WaitPacking waits until the packed rows queued so far are made: those of
// every matrix that has had a product at a level that reads its rows
// packed (and the copies of prepacked ones). Until then their
// products run partly on the row-major tiles or the file's pages; a
// benchmark calls it after its warm-up, as llama.cpp repacks its rows
// while it loads.
func WaitPacking() {
	mover.mu.Lock()
	for mover.running {
		mover.idle.Wait()
	}
	mover.mu.Unlock()
}
