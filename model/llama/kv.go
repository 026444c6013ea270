package llama

import (
	"fmt"

	"github.com/hlmproject/hlm/tensor"
)

// cacheType is how a KV cache holds its keys or values: float32 (hlm's
// default), or half precision (ctk=f16, ctv=f16: llama.cpp's default
// type, half the memory). Attention widens each half to float32 exactly
// (tensor.DotRowsF16, tensor.WeightedSumF16), with a float32 cache's
// guarantees: batched equals alone, a tree's path equals its sequence, and
// the bits depend neither on the thread count nor on the kernel level.
type cacheType uint8

const (
	cacheF32 cacheType = iota
	cacheF16
)

// parseCacheType reads a spec's ctk or ctv ("" is float32).
func parseCacheType(s string) (cacheType, error) {
	switch s {
	case "", "f32":
		return cacheF32, nil
	case "f16":
		return cacheF16, nil
	}
	return 0, fmt.Errorf("KV cache type %q: hlm's engine keeps its cache in f32 or f16", s)
}

func (t cacheType) String() string {
	if t == cacheF16 {
		return "f16"
	}
	return "f32"
}

// size is the bytes of one cached value.
func (t cacheType) size() int64 {
	if t == cacheF16 {
		return 2
	}
	return 4
}

// kvPage is the positions of one page of a session's cache. A cache grows
// a page at a time and its pages never move: growing copies nothing, and a
// session holds at most one page it does not use (a cache that doubled
// held up to twice its length, and twice its size while it moved).
const kvPage = 64

// pagesFor is the pages that hold n positions.
func pagesFor(n int) int { return (n + kvPage - 1) / kvPage }

// kvRows is one layer's cached keys or values: rows of kvDim values, one a
// slot, in pages of kvPage slots, float32 (f32) or halves (f16).
type kvRows struct {
	kvDim int
	f32   [][]float32
	f16   [][]uint16
}

// slots is how many rows the pages hold.
func (c *kvRows) slots() int { return kvPage * max(len(c.f32), len(c.f16)) }

// bytes is the memory the rows hold.
func (c *kvRows) bytes() int64 {
	return int64(len(c.f32)*4+len(c.f16)*2) * kvPage * int64(c.kvDim)
}

// ensure adds pages of type t until there are n slots.
func (c *kvRows) ensure(t cacheType, kvDim, n int) {
	c.kvDim = kvDim
	for c.slots() < n {
		if t == cacheF16 {
			c.f16 = append(c.f16, make([]uint16, kvPage*kvDim))
		} else {
			c.f32 = append(c.f32, make([]float32, kvPage*kvDim))
		}
	}
}

// put stores row (kvDim values) in slot.
func (c *kvRows) put(slot int, row []float32) {
	p, at := slot/kvPage, (slot%kvPage)*c.kvDim
	if c.f16 != nil {
		tensor.PutF16(c.f16[p][at:at+c.kvDim], row)
		return
	}
	copy(c.f32[p][at:at+c.kvDim], row)
}

// move copies the row in slot from to slot to.
func (c *kvRows) move(to, from int) {
	pt, at := to/kvPage, (to%kvPage)*c.kvDim
	pf, af := from/kvPage, (from%kvPage)*c.kvDim
	if c.f16 != nil {
		copy(c.f16[pt][at:at+c.kvDim], c.f16[pf][af:af+c.kvDim])
		return
	}
	copy(c.f32[pt][at:at+c.kvDim], c.f32[pf][af:af+c.kvDim])
}

// pages calls f for the runs of the slots first…first+n−1 that lie in one
// page: i is the run's index among the n, p its page, at the value offset
// of its first row in the page, m its length.
func (c *kvRows) pages(first, n int, f func(i, p, at, m int)) {
	for i := 0; i < n; {
		slot := first + i
		m := min(n-i, kvPage-slot%kvPage)
		f(i, slot/kvPage, (slot%kvPage)*c.kvDim, m)
		i += m
	}
}

// dotRows writes out[i] = tensor.DotRows' score of x against columns
// off…off+len(x)−1 of slot first+i.
func (c *kvRows) dotRows(out []float32, first, off int, x []float32) {
	c.pages(first, len(out), func(i, p, at, m int) {
		if c.f16 != nil {
			tensor.DotRowsF16(out[i:i+m], c.f16[p][at+off:], c.kvDim, x)
		} else {
			tensor.DotRows(out[i:i+m], c.f32[p][at+off:], c.kvDim, x)
		}
	})
}

// weightedSum writes out = Σ_i a[i]·(columns off… of slot first+i), with
// tensor.WeightedSum's bits (zero when a is empty): page by page, each
// continuing the sum (tensor.WeightedSumAdd).
func (c *kvRows) weightedSum(out, a []float32, first, off int) {
	clear(out)
	c.weightedSumAdd(out, a, first, off)
}

// weightedSumAdd continues a weightedSum over more slots.
func (c *kvRows) weightedSumAdd(out, a []float32, first, off int) {
	c.pages(first, len(a), func(i, p, at, m int) {
		if c.f16 != nil {
			tensor.WeightedSumAddF16(out, a[i:i+m], c.f16[p][at+off:], c.kvDim)
		} else {
			tensor.WeightedSumAdd(out, a[i:i+m], c.f32[p][at+off:], c.kvDim)
		}
	})
}
