package tensor

import (
	"runtime"
	"sync"
	"sync/atomic"
)

var threads atomic.Int32

// SetThreads sets how many goroutines the products use (n < 1: GOMAXPROCS).
// Results do not depend on it.
func SetThreads(n int) {
	if n < 1 {
		n = 0
	}
	threads.Store(int32(n))
}

// Threads is the number of goroutines the products use.
func Threads() int {
	if n := int(threads.Load()); n > 0 {
		return n
	}
	return runtime.GOMAXPROCS(0)
}

// minParallelWork is the number of multiply-adds below which a product runs on
// the calling goroutine: starting goroutines costs more than it saves.
const minParallelWork = 1 << 15

// ParallelFor splits [0, n) into contiguous chunks and runs fn on each, on up
// to Threads() goroutines, when work (an estimate of the total cost in
// multiply-adds) is large enough to pay for them.
func ParallelFor(n int, work int, fn func(lo, hi int)) {
	t := Threads()
	if t <= 1 || n <= 1 || work < minParallelWork {
		fn(0, n)
		return
	}
	chunks := min(n, 4*t) // a few chunks per thread balance uneven speeds
	var next atomic.Int32
	var wg sync.WaitGroup
	for g := 0; g < min(t, chunks); g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c := int(next.Add(1)) - 1
				if c >= chunks {
					return
				}
				fn(c*n/chunks, (c+1)*n/chunks)
			}
		}()
	}
	wg.Wait()
}

// MatVec computes out[r] = Σ_c W[r,c]·x[c] for every row r.
func MatVec(out []float32, w *Matrix, x []float32) { MatMul(out, w, x, 1) }

// MatMul computes, for each of n inputs x_t = x[t*Cols:(t+1)*Cols], the
// product out[t*Rows+r] = Σ_c W[r,c]·x_t[c]. Every output element is computed
// exactly as MatVec would compute it, so evaluating a block of tokens gives
// the same numbers as evaluating them one at a time.
func MatMul(out []float32, w *Matrix, x []float32, n int) {
	rows, cols := w.Rows, w.Cols
	if len(out) < n*rows || len(x) < n*cols {
		panic("tensor: MatMul buffer too small")
	}
	ParallelFor(rows, rows*cols*n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			for t := 0; t < n; t++ {
				out[t*rows+r] = w.RowDot(r, x[t*cols:(t+1)*cols])
			}
		}
	})
}
