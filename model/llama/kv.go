package llama

import (
	"fmt"

	"github.com/hlmproject/hlm/tensor"
)

// cacheType is how a KV cache holds its keys or values: float32 (hlm's
// default), or half precision (ctk=f16, ctv=f16: llama.cpp's default
// type, half the memory). Attention widens each half to float32 exactly,
// so a half cache computes what a float32 cache holding the same rounded
// values would, with the same guarantees: batched equals alone, a tree's
// path equals its sequence, and the bits do not depend on the thread count
// or the kernel level.
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

// kvRows is one layer's cached keys or values, KVDim values per slot:
// f32, or f16 for a half cache. Offsets and strides count values.
type kvRows struct {
	f32 []float32
	f16 []uint16
}

// values is how many values the rows have room for.
func (c *kvRows) values() int { return max(len(c.f32), len(c.f16)) }

// bytes is the memory the rows hold.
func (c *kvRows) bytes() int64 { return 4*int64(cap(c.f32)) + 2*int64(cap(c.f16)) }

// resize makes room for n values of type t, keeping the first keep.
func (c *kvRows) resize(t cacheType, n, keep int) {
	if t == cacheF16 {
		h := make([]uint16, n)
		copy(h, c.f16[:keep])
		c.f16 = h
		return
	}
	f := make([]float32, n)
	copy(f, c.f32[:keep])
	c.f32 = f
}

// put stores row at value offset at.
func (c *kvRows) put(at int, row []float32) {
	if c.f16 != nil {
		tensor.PutF16(c.f16[at:at+len(row)], row)
		return
	}
	copy(c.f32[at:at+len(row)], row)
}

// move copies the n values at from to to.
func (c *kvRows) move(to, from, n int) {
	if c.f16 != nil {
		copy(c.f16[to:to+n], c.f16[from:from+n])
		return
	}
	copy(c.f32[to:to+n], c.f32[from:from+n])
}

// dotRows is tensor.DotRows over the rows that start at value from.
func (c *kvRows) dotRows(out []float32, from, stride int, x []float32) {
	if c.f16 != nil {
		tensor.DotRowsF16(out, c.f16[from:], stride, x)
		return
	}
	tensor.DotRows(out, c.f32[from:], stride, x)
}

// weightedSum is tensor.WeightedSum over the rows that start at value
// from (none when a is empty: out is zeroed).
func (c *kvRows) weightedSum(out, a []float32, from, stride int) {
	if len(a) == 0 {
		clear(out)
		return
	}
	if c.f16 != nil {
		tensor.WeightedSumF16(out, a, c.f16[from:], stride)
		return
	}
	tensor.WeightedSum(out, a, c.f32[from:], stride)
}

// weightedSumAdd is tensor.WeightedSumAdd over the rows that start at
// value from.
func (c *kvRows) weightedSumAdd(out, a []float32, from, stride int) {
	if len(a) == 0 {
		return
	}
	if c.f16 != nil {
		tensor.WeightedSumAddF16(out, a, c.f16[from:], stride)
		return
	}
	tensor.WeightedSumAdd(out, a, c.f32[from:], stride)
}
