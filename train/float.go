package train

import (
	"unsafe"

	"github.com/hlmproject/hlm/tensor"
)

// Float is the element type of parameters, activations and gradients:
// float32 for training, float64 for gradient checks.
type Float interface{ ~float32 | ~float64 }

// is32 reports whether F is a 4-byte float (so its slices are []float32).
func is32[F Float]() bool { var f F; return unsafe.Sizeof(f) == 4 }

// as32 reinterprets a slice of a 4-byte Float as []float32.
func as32[F Float](a []F) []float32 {
	if len(a) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&a[0])), len(a))
}

// dot is Σ a[i]·b[i] over len(a). For float32 it is tensor.Dot (vectorised,
// fixed summation order); for float64 a plain loop with four partial sums.
func dot[F Float](a, b []F) F {
	if is32[F]() {
		return F(tensor.Dot(as32(a), as32(b)))
	}
	b = b[:len(a)]
	var s0, s1, s2, s3 F
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += F(a[i] * b[i])
		s1 += F(a[i+1] * b[i+1])
		s2 += F(a[i+2] * b[i+2])
		s3 += F(a[i+3] * b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += F(a[i] * b[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// dotShort is dot for short vectors (an attention head), inlined without
// the call overhead of the vectorised kernel.
func dotShort[F Float](a, b []F) F {
	b = b[:len(a)]
	var s0, s1 F
	i := 0
	for ; i+2 <= len(a); i += 2 {
		s0 += F(a[i] * b[i])
		s1 += F(a[i+1] * b[i+1])
	}
	if i < len(a) {
		s0 += F(a[i] * b[i])
	}
	return s0 + s1
}

// axpy adds s·x to y.
func axpy[F Float](y []F, s F, x []F) {
	x = x[:len(y)]
	for i := range y {
		y[i] += F(s * x[i])
	}
}

// transpose writes the cols×rows transpose of the rows×cols matrix a into
// dst (reallocated when too small) and returns it.
//
// It moves 8×8 tiles through registers, a strip of 8 columns (8 rows of
// dst) at a time: with power-of-two widths (a batch of 4,096 rows, a
// vocabulary of 2,048) the rows of a larger square block all fall into the
// same L1 set and evict each other, which made the 32×32 blocks six times
// slower. A transpose only moves values, so the results do not change.
func transpose[F Float](dst, a []F, rows, cols int) []F {
	if cap(dst) < rows*cols {
		dst = make([]F, rows*cols)
	}
	dst = dst[:rows*cols]
	const blk = 8
	tensor.ParallelFor((cols+blk-1)/blk, rows*cols, func(lo, hi int) {
		for cb := lo * blk; cb < min(hi*blk, cols); cb += blk {
			r := 0
			if cb+blk <= cols {
				for ; r+blk <= rows; r += blk {
					transpose8(dst, a, rows, cols, r, cb)
				}
			}
			// The edges, one element at a time.
			for ; r < rows; r++ {
				row := a[r*cols:]
				for c := cb; c < min(cb+blk, cols); c++ {
					dst[c*rows+r] = row[c]
				}
			}
		}
	})
	return dst
}

// transpose8 moves the 8×8 tile of a at row r, column c to dst.
func transpose8[F Float](dst, a []F, rows, cols, r, c int) {
	var t [8][8]F
	for i := range 8 {
		s := a[(r+i)*cols+c : (r+i)*cols+c+8]
		t[0][i], t[1][i], t[2][i], t[3][i] = s[0], s[1], s[2], s[3]
		t[4][i], t[5][i], t[6][i], t[7][i] = s[4], s[5], s[6], s[7]
	}
	for j := range 8 {
		copy(dst[(c+j)*rows+r:(c+j)*rows+r+8], t[j][:])
	}
}
