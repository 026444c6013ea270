package tensor

import (
	"encoding/binary"
	"fmt"
	"sync"
)

// Kernels of attention over a KV cache held in Q8_0 blocks (llama.cpp's
// q8_0 cache type: each 32 values one half-precision scale d and 32 int8
// codes q, 34 bytes, a little over a quarter of float32's memory). The
// scores are a Q8_0 matrix's row products (MatVec): the query quantized to
// 8 bits per block as any Q8_0 product's input, integer sums per block. The
// weighted sums widen each value to d·q, which float32 holds exactly, and
// take WeightedSum's order, so they equal WeightedSum over the widened
// rows.

// Q8_0Bytes is the bytes of n values in Q8_0 blocks (n a multiple of QK).
func Q8_0Bytes(n int) int { return n / QK * (2 + QK) }

// PutQ8_0 stores src (len a multiple of QK) into dst (Q8_0Bytes(len(src))
// bytes) as QuantizeQ8_0 encodes it.
func PutQ8_0(dst []byte, src []float32) {
	if len(src)%QK != 0 || len(dst) < Q8_0Bytes(len(src)) {
		panic(fmt.Sprintf("tensor: PutQ8_0 of %d values into %d bytes", len(src), len(dst)))
	}
	QuantizeQ8_0(dst[:0:Q8_0Bytes(len(src))], src)
}

// q8Scratch is the memory DotRowsQ8_0 quantizes the query into and
// WeightedSumAddQ8_0 widens rows into, kept between calls (the kernels are
// called through function values, so a stack array would escape to the heap
// on every call).
type q8Scratch struct {
	acts []actBlock
	rows [wsumQ8Floats]float32 // 16 KiB: rows stay in L1 between widening and summing
}

var q8Scratches = sync.Pool{New: func() any { return new(q8Scratch) }}

// DotRowsQ8_0 is DotRows over rows of Q8_0 blocks: out[i] is the product of
// x (len a multiple of QK) with the len(x)/QK blocks at m[i*stride:]
// (stride in bytes), with the bits a Q8_0 matrix's row product (MatVec)
// gives.
func DotRowsQ8_0(out []float32, m []byte, stride int, x []float32) {
	n, cols := len(out), len(x)
	if n == 0 {
		return
	}
	if cols%QK != 0 {
		panic(fmt.Sprintf("tensor: DotRowsQ8_0 over %d columns, not whole blocks of %d", cols, QK))
	}
	rb := Q8_0Bytes(cols)
	if (n-1)*stride+rb > len(m) {
		panic("tensor: DotRowsQ8_0 reads past the rows")
	}
	nb := cols / QK
	if nb == 0 {
		clear(out)
		return
	}
	sc := q8Scratches.Get().(*q8Scratch)
	defer q8Scratches.Put(sc)
	sc.acts = quantizeActs(sc.acts, x, Q8_0)
	acts := sc.acts
	ks := rowKernels()
	if ks == nil || ks.qRows[1] == 0 {
		for i := range out {
			out[i] = dotQuant(Q8_0, m[i*stride:i*stride+rb], acts)
		}
		return
	}
	R := ks.qRows[1]
	for i := 0; i < n; i += R {
		r := min(R, n-i)
		ks.q8[r][1](&m[i*stride], uintptr(stride), &acts[0], 0, nb, &out[i], 4)
	}
}

// wsumQ8Floats is the float32 values WeightedSumAddQ8_0 widens at a time.
const wsumQ8Floats = 4096

// WeightedSumQ8_0 is WeightedSum over rows of Q8_0 blocks: out[i] =
// Σ_t a[t]·v_t[i], where v_t is the len(out)/QK blocks at v[t*stride:]
// (stride in bytes) widened exactly, each product and each partial sum
// rounded to float32, in increasing t from zero.
func WeightedSumQ8_0(out, a []float32, v []byte, stride int) {
	clear(out)
	WeightedSumAddQ8_0(out, a, v, stride)
}

// WeightedSumAddQ8_0 continues a WeightedSumQ8_0 from out's values, with
// the bits of one sum over all the rows: WeightedSumAdd over the widened
// rows (in assembly at the AVX levels; elsewhere it widens a few rows at a
// time and sums them with WeightedSumAdd).
func WeightedSumAddQ8_0(out, a []float32, v []byte, stride int) {
	cols := len(out)
	if len(a) == 0 || cols == 0 {
		return
	}
	if cols%QK != 0 {
		panic(fmt.Sprintf("tensor: WeightedSumAddQ8_0 over %d columns, not whole blocks of %d", cols, QK))
	}
	rb := Q8_0Bytes(cols)
	if (len(a)-1)*stride+rb > len(v) {
		panic("tensor: WeightedSumAddQ8_0 reads past the rows")
	}
	if wsumQ8Chunks(out, a, v, stride) == cols/QK {
		return
	}
	sc := q8Scratches.Get().(*q8Scratch)
	defer q8Scratches.Put(sc)
	buf := sc.rows[:]
	if cols > len(buf) {
		buf = make([]float32, cols)
	}
	rows := len(buf) / cols
	for t := 0; t < len(a); t += rows {
		m := min(rows, len(a)-t)
		for i := range m {
			widenQ8_0(buf[i*cols:(i+1)*cols], v[(t+i)*stride:(t+i)*stride+rb])
		}
		WeightedSumAdd(out, a[t:t+m], buf[:m*cols], cols)
	}
}

// widenQ8_0 writes the values of Q8_0 blocks src into dst (len(dst)/QK
// blocks): d·q, exact in float32 (a half's 11 significant bits times a
// code's 8), DequantizeRow's bits.
func widenQ8_0(dst []float32, src []byte) {
	nb := len(dst) / QK
	src = src[:nb*(2+QK)]
	tab := f16Table
	for b := range nb {
		blk := src[b*(2+QK) : (b+1)*(2+QK) : (b+1)*(2+QK)]
		d := tab[binary.LittleEndian.Uint16(blk)]
		o := dst[b*QK : (b+1)*QK : (b+1)*QK]
		for j := range o {
			o[j] = float32(int8(blk[2+j])) * d
		}
	}
}
