package llama

import (
	"fmt"

	"github.com/hlmproject/hlm/tensor"
)

// cacheType is how a KV cache holds its keys or values: float32 (hlm's
// default), half precision (ctk=f16, ctv=f16: llama.cpp's default type,
// half the memory) or Q8_0 blocks (ctk=q8_0, ctv=q8_0: 34 bytes per 32
// values, 27% of float32's). Attention widens each half to float32 exactly
// (tensor.DotRowsF16, tensor.WeightedSumF16); it scores Q8_0 keys as a
// Q8_0 matrix's rows (tensor.DotRowsQ8_0: the query quantized as any Q8_0
// product's input) and widens Q8_0 values exactly (tensor.WeightedSumQ8_0).
// Every type keeps a float32 cache's guarantees: batched equals alone, a
// tree's path equals its sequence, and the bits depend neither on the
// thread count nor on the kernel level.
type cacheType uint8

const (
	cacheF32 cacheType = iota
	cacheF16
	cacheQ8_0
)

// parseCacheType reads a spec's ctk or ctv ("" is float32).
func parseCacheType(s string) (cacheType, error) {
	switch s {
	case "", "f32":
		return cacheF32, nil
	case "f16":
		return cacheF16, nil
	case "q8_0":
		return cacheQ8_0, nil
	}
	return 0, fmt.Errorf("KV cache type %q: hlm's engine keeps its cache in f32, f16 or q8_0", s)
}

func (t cacheType) String() string {
	switch t {
	case cacheF16:
		return "f16"
	case cacheQ8_0:
		return "q8_0"
	}
	return "f32"
}

// rowBytes is the bytes of one cached row of kvDim values.
func (t cacheType) rowBytes(kvDim int) int64 {
	switch t {
	case cacheF16:
		return 2 * int64(kvDim)
	case cacheQ8_0:
		return int64(tensor.Q8_0Bytes(kvDim))
	}
	return 4 * int64(kvDim)
}

// check refuses a type the model's heads cannot be cached in: Q8_0 blocks
// of 32 values must not straddle two heads.
func (t cacheType) check(headSize int) error {
	if t == cacheQ8_0 && headSize%tensor.QK != 0 {
		return fmt.Errorf("a q8_0 KV cache needs a head size that is a multiple of %d, and this model's is %d: use f16", tensor.QK, headSize)
	}
	return nil
}

// kvPage is the positions of one page of a session's cache. A cache grows
// a page at a time and its pages never move: growing copies nothing, and a
// session holds at most one page it does not use (a cache that doubled
// held up to twice its length, and twice its size while it moved).
const kvPage = 64

// pagesFor is the pages that hold n positions.
func pagesFor(n int) int { return (n + kvPage - 1) / kvPage }

// kvRows is one layer's cached keys or values: rows of kvDim values, one a
// slot, in pages of kvPage slots, float32 (f32), halves (f16) or Q8_0
// blocks (q8).
type kvRows struct {
	kvDim int
	f32   [][]float32
	f16   [][]uint16
	q8    [][]byte
}

// slots is how many rows the pages hold.
func (c *kvRows) slots() int { return kvPage * max(len(c.f32), len(c.f16), len(c.q8)) }

// bytes is the memory the rows hold.
func (c *kvRows) bytes() int64 {
	return (int64(len(c.f32))*cacheF32.rowBytes(c.kvDim) + int64(len(c.f16))*cacheF16.rowBytes(c.kvDim) +
		int64(len(c.q8))*cacheQ8_0.rowBytes(c.kvDim)) * kvPage
}

// ensure adds pages of type t until there are n slots.
func (c *kvRows) ensure(t cacheType, kvDim, n int) {
	c.kvDim = kvDim
	for c.slots() < n {
		switch t {
		case cacheF16:
			c.f16 = append(c.f16, make([]uint16, kvPage*kvDim))
		case cacheQ8_0:
			c.q8 = append(c.q8, make([]byte, kvPage*tensor.Q8_0Bytes(kvDim)))
		default:
			c.f32 = append(c.f32, make([]float32, kvPage*kvDim))
		}
	}
}

// put stores row (kvDim values) in slot.
func (c *kvRows) put(slot int, row []float32) {
	p, at := slot/kvPage, (slot%kvPage)*c.kvDim
	switch {
	case c.f16 != nil:
		tensor.PutF16(c.f16[p][at:at+c.kvDim], row)
	case c.q8 != nil:
		rb := tensor.Q8_0Bytes(c.kvDim)
		at = (slot % kvPage) * rb
		tensor.PutQ8_0(c.q8[p][at:at+rb], row)
	default:
		copy(c.f32[p][at:at+c.kvDim], row)
	}
}

// move copies the row in slot from to slot to.
func (c *kvRows) move(to, from int) {
	pt, at := to/kvPage, (to%kvPage)*c.kvDim
	pf, af := from/kvPage, (from%kvPage)*c.kvDim
	switch {
	case c.f16 != nil:
		copy(c.f16[pt][at:at+c.kvDim], c.f16[pf][af:af+c.kvDim])
	case c.q8 != nil:
		rb := tensor.Q8_0Bytes(c.kvDim)
		at, af = (to%kvPage)*rb, (from%kvPage)*rb
		copy(c.q8[pt][at:at+rb], c.q8[pf][af:af+rb])
	default:
		copy(c.f32[pt][at:at+c.kvDim], c.f32[pf][af:af+c.kvDim])
	}
}

// pages calls f for the runs of the slots first…first+n−1 that lie in one
// page: i is the run's index among the n, p its page, slot the slot of its
// first row in the page, m its length.
func (c *kvRows) pages(first, n int, f func(i, p, slot, m int)) {
	for i := 0; i < n; {
		slot := first + i
		m := min(n-i, kvPage-slot%kvPage)
		f(i, slot/kvPage, slot%kvPage, m)
		i += m
	}
}

// dotRows writes out[i] = tensor.DotRows' score of x against columns
// off…off+len(x)−1 of slot first+i (for Q8_0 rows, tensor.DotRowsQ8_0's).
func (c *kvRows) dotRows(out []float32, first, off int, x []float32) {
	kv := c.kvDim
	c.pages(first, len(out), func(i, p, slot, m int) {
		switch {
		case c.f16 != nil:
			tensor.DotRowsF16(out[i:i+m], c.f16[p][slot*kv+off:], kv, x)
		case c.q8 != nil:
			rb := tensor.Q8_0Bytes(kv)
			tensor.DotRowsQ8_0(out[i:i+m], c.q8[p][slot*rb+tensor.Q8_0Bytes(off):], rb, x)
		default:
			tensor.DotRows(out[i:i+m], c.f32[p][slot*kv+off:], kv, x)
		}
	})
}

// weightedSumAdd adds Σ_i a[i]·(columns off… of slot first+i) to out,
// page by page, each continuing the sum (tensor.WeightedSumAdd): on a
// cleared out, tensor.WeightedSum's bits.
func (c *kvRows) weightedSumAdd(out, a []float32, first, off int) {
	kv := c.kvDim
	c.pages(first, len(a), func(i, p, slot, m int) {
		switch {
		case c.f16 != nil:
			tensor.WeightedSumAddF16(out, a[i:i+m], c.f16[p][slot*kv+off:], kv)
		case c.q8 != nil:
			rb := tensor.Q8_0Bytes(kv)
			tensor.WeightedSumAddQ8_0(out, a[i:i+m], c.q8[p][slot*rb+tensor.Q8_0Bytes(off):], rb)
		default:
			tensor.WeightedSumAdd(out, a[i:i+m], c.f32[p][slot*kv+off:], kv)
		}
	})
}
