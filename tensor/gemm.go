package tensor

import (
	"sync"
	"unsafe"
)

// Matrix products are computed in tiles: a micro-kernel loads each weight
// once for up to maxT tokens and several rows at a time (block verification
// and cross-session batching are matrix–matrix products). Every output
// element is still one dot product in the fixed order of its type, so a tile
// of any shape, a thread count or a batch gives the bits a single dot
// product gives.

const (
	maxR = 8 // rows in a tile, at most
	maxT = 4 // tokens in a tile, at most
)

// f32TileFn computes out[t·ldo + r] = dotF32(row r of w, token t of x) for
// r < R and t < T; strides ldw, ldx and ldo are in bytes and cols is the
// row length.
type f32TileFn func(w *float32, ldw uintptr, x *float32, ldx uintptr, cols int, out *float32, ldo uintptr)

// qTileFn computes out[t·ldo + r] = dotQuant(row r of w, token t of x) for
// r < R and t < T over nb blocks; strides in bytes.
type qTileFn func(w *byte, ldw uintptr, x *actBlock, ldx uintptr, nb int, out *float32, ldo uintptr)

// kernelSet is one level's micro-kernels, indexed [R][T]; rows[T] is the
// tile height used for T tokens (kernels of every smaller R exist too).
type kernelSet struct {
	f32            [maxR + 1][maxT + 1]f32TileFn
	q8, q4         [maxR + 1][maxT + 1]qTileFn
	f32Rows, qRows [maxT + 1]int
}

// kernelSets holds the assembly kernels per level (nil: portable Go).
var kernelSets [levelAVX512 + 1]*kernelSet

func kernels() *kernelSet { return kernelSets[level] }

// f32Tile returns the R×T F32 kernel of the level in use, or nil.
func f32Tile(r, t int) f32TileFn {
	if ks := kernels(); ks != nil {
		return ks.f32[r][t]
	}
	return nil
}

// MatVec computes out[r] = Σ_c W[r,c]·x[c] for every row r.
func MatVec(out []float32, w *Matrix, x []float32) { MatMul(out, w, x, 1) }

// MatMul computes, for each of n inputs x_t = x[t*Cols:(t+1)*Cols], the
// product out[t*Rows+r] = Σ_c W[r,c]·x_t[c]. Every output element is computed
// exactly as MatVec (and RowDot) would compute it, so evaluating a block of
// tokens gives the same numbers as evaluating them one at a time.
func MatMul(out []float32, w *Matrix, x []float32, n int) {
	rows, cols := w.Rows, w.Cols
	if len(out) < n*rows || len(x) < n*cols {
		panic("tensor: MatMul buffer too small")
	}
	if n <= 0 || rows == 0 {
		return
	}
	switch w.Type {
	case F32:
		matMulF32(out, w, x, n)
	case Q8_0, Q4_0:
		matMulQuant(out, w, x, n)
	default:
		ParallelFor(rows, rows*cols*n, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				for t := 0; t < n; t++ {
					out[t*rows+r] = w.RowDot(r, x[t*cols:(t+1)*cols])
				}
			}
		})
	}
}

// l2Rows is how many rows of rowBytes bytes a thread works through for one
// token group before the next: a block that stays in its L2 cache while the
// groups take turns.
func l2Rows(rowBytes int) int { return max(4, (256<<10)/max(1, rowBytes)) }

// forTiles calls kernel(r, R, t, T) over the tiles that cover rows [lo, hi)
// and tokens [0, n): blocks of rows that fit in L2, token groups of up to
// maxT, tiles of rows[T] rows and one smaller tile for the rest.
func forTiles(lo, hi, n, rowBytes int, rows *[maxT + 1]int, kernel func(r, R, t, T int)) {
	blk := l2Rows(rowBytes)
	for b := lo; b < hi; b += blk {
		be := min(hi, b+blk)
		for t := 0; t < n; t += maxT {
			T := min(maxT, n-t)
			R := rows[T]
			r := b
			for ; r+R <= be; r += R {
				kernel(r, R, t, T)
			}
			if r < be {
				kernel(r, be-r, t, T)
			}
		}
	}
}

// parallelRows runs fn over row ranges aligned to 4 rows.
func parallelRows(rows, work int, fn func(lo, hi int)) {
	units := (rows + 3) / 4
	ParallelFor(units, work, func(lo, hi int) { fn(4*lo, min(rows, 4*hi)) })
}

func matMulF32(out []float32, w *Matrix, x []float32, n int) {
	rows, cols := w.Rows, w.Cols
	ks := kernels()
	if ks == nil || cols == 0 {
		ParallelFor(rows, rows*cols*n, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				wr := w.F32[r*cols : (r+1)*cols]
				for t := 0; t < n; t++ {
					out[t*rows+r] = dotF32(wr, x[t*cols:(t+1)*cols])
				}
			}
		})
		return
	}
	ldw, ldo := uintptr(4*cols), uintptr(4*rows)
	parallelRows(rows, rows*cols*n, func(lo, hi int) {
		forTiles(lo, hi, n, 4*cols, &ks.f32Rows, func(r, R, t, T int) {
			ks.f32[R][T](&w.F32[r*cols], ldw, &x[t*cols], ldw, cols, &out[t*rows+r], ldo)
		})
	})
}

// actPool recycles the quantized inputs of the products.
var actPool = sync.Pool{New: func() any { return new([]actBlock) }}

func matMulQuant(out []float32, w *Matrix, x []float32, n int) {
	rows, cols := w.Rows, w.Cols
	nb := cols / QK
	buf := actPool.Get().(*[]actBlock)
	defer actPool.Put(buf)
	acts := quantizeActs(*buf, x[:n*cols], w.Type)
	*buf = acts
	rb := w.rowBytes
	ks := kernels()
	if ks == nil {
		ParallelFor(rows, rows*cols*n, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				wr := w.Data[r*rb : (r+1)*rb]
				for t := 0; t < n; t++ {
					out[t*rows+r] = dotQuant(w.Type, wr, acts[t*nb:(t+1)*nb])
				}
			}
		})
		return
	}
	tiles := &ks.q8
	if w.Type == Q4_0 {
		tiles = &ks.q4
	}
	ldw, ldx, ldo := uintptr(rb), uintptr(nb)*unsafe.Sizeof(actBlock{}), uintptr(4*rows)
	parallelRows(rows, rows*cols*n, func(lo, hi int) {
		forTiles(lo, hi, n, rb, &ks.qRows, func(r, R, t, T int) {
			tiles[R][T](&w.Data[r*rb], ldw, &acts[t*nb], ldx, nb, &out[t*rows+r], ldo)
		})
	})
}

//go:generate go run gen_kernels.go
