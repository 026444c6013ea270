//go:build amd64

package main

// q8Pair runs, n times, 8 × one Q8_0 (row, token, block) of the tiles: VPSIGNB, VPMADDUBSW, VPMADDWD, VCVTDQ2PS, VMULPS (dw·dx), VFMADD231PS into 8 accumulators.
//
//go:noescape
func q8Pair(n int)

// k4Pair runs, n times, 8 × one Q4_K (row, token, 32 elements) of the tiles: VPMADDUBSW, VPMADDWD by the scale, VPADDD into 8 accumulators.
//
//go:noescape
func k4Pair(n int)

// maddubs runs, n times, 32 × VPMADDUBSW alone.
//
//go:noescape
func maddubs(n int)

// maddwd runs, n times, 32 × VPMADDWD alone.
//
//go:noescape
func maddwd(n int)

// mulps runs, n times, 32 × VMULPS alone.
//
//go:noescape
func mulps(n int)

// signb runs, n times, 32 × VPSIGNB alone.
//
//go:noescape
func signb(n int)

// cvtdq2ps runs, n times, 32 × VCVTDQ2PS alone.
//
//go:noescape
func cvtdq2ps(n int)

// signbMulps runs, n times, 32 × VPSIGNB and VMULPS, half each.
//
//go:noescape
func signbMulps(n int)

// maddubsMulps runs, n times, 32 × VPMADDUBSW and VMULPS, half each.
//
//go:noescape
func maddubsMulps(n int)

var mixes = []mix{
	{"q8Pair", q8Pair, 8, "pair"},
	{"k4Pair", k4Pair, 8, "pair"},
	{"maddubs", maddubs, 32, "op"},
	{"maddwd", maddwd, 32, "op"},
	{"mulps", mulps, 32, "op"},
	{"signb", signb, 32, "op"},
	{"cvtdq2ps", cvtdq2ps, 32, "op"},
	{"signbMulps", signbMulps, 32, "op"},
	{"maddubsMulps", maddubsMulps, 32, "op"},
}
