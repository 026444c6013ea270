//go:build ignore

// gen_kernels writes gemm_amd64.s and gemm_kernels_amd64.go: the matrix
// product micro-kernels for the AVX-512 and AVX2 levels. Run it with
// `go generate ./tensor` after changing it.
//
// Every kernel computes an R×T tile of outputs out[t·ldo + r] (R weight rows,
// T tokens) in exactly the order the portable Go code spells out
// (dotF32 in fma.go, dotQuant in act.go), so each output's bits do not
// depend on the tile shape or the level.
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"math/bits"
	"os"
	"strings"
)

// minPrefetch is how far ahead, in bytes, the tiles prefetch at least:
// one tile of short quantized rows is read before its successor arrives
// (110M decode, 2 threads, 0 → 8 KiB: Q4_K_M +20%, Q4_0 +11%, Q8_0 +8%,
// F32 unchanged — its tiles are longer; 12 KiB was slower).
const minPrefetch = 8192

// prefetchNext makes the tiles prefetch the next tile's rows.
var prefetchNext = true

// tile heights per level and kind: rows[T] for T = 1…4 tokens.
var (
	avx512F32   = [9]int{0, 8, 4, 4, 4}
	avx512Quant = [9]int{0, 8, 4, 4, 4}
	avx2F32     = [9]int{0, 4, 2, 2, 1}
	avx2Quant   = [9]int{0, 4, 3, 2, 2}
)

type gen struct {
	s     bytes.Buffer
	decls bytes.Buffer
	n     int // labels made so far

	// noPrefetch makes tiles without software prefetch, named with the
	// suffix NP: the stream tiles (zen4.go).
	noPrefetch bool

	// pfL2 makes prefetchLines prefetch into L2 only: each tile
	// generator sets it first, for the tiles of several tokens of every
	// type but the K-quants.
	pfL2 bool

	// kGroup > 0 makes K-quant tiles of rows packed in groups of kGroup
	// (pack.go, packKGroup), named with the suffix I and kGroup: a super-block
	// of a row is followed by the same super-block of the group's next
	// row, so the tiles step kGroup super-blocks at a time and the rows
	// of a group are ldw = one super-block apart.
	kGroup int
}

// suffix ends the names of the tiles being made.
func (g *gen) suffix() string {
	s := ""
	if g.noPrefetch {
		s = "NP"
	}
	if g.kGroup > 0 {
		s += fmt.Sprintf("I%d", g.kGroup)
	}
	return s
}

// zAcc reports whether a stream tile of R rows keeps each row's 16 float
// lanes in one ZMM register (more than four rows: packed groups).
func zAcc(R int) bool { return R > 4 }

// kStep is how far a K-quant tile's rows advance from one super-block of
// bb bytes to the next: bb, or kGroup super-blocks in packed groups.
func (g *gen) kStep(bb int) int { return bb * max(1, g.kGroup) }

func (g *gen) p(format string, args ...any) { fmt.Fprintf(&g.s, format+"\n", args...) }

// ret ends a kernel: the upper halves of the vector registers cleared (no
// AVX–SSE transition penalty in the Go code that follows), then RET.
func (g *gen) ret() {
	g.p("\tVZEROUPPER")
	g.p("\tRET")
	g.p("")
}

// regs assigns general registers: R row pointers, T token pointers and
// the remaining ones as temporaries (AX and CX are reserved by callers).
func regs(R, T int) (rows, toks, free []string) {
	pool := []string{"SI", "R8", "R9", "R10", "R11", "R12", "R13", "DX"}
	tpool := []string{"DI", "BX", "DX", "R13", "R12", "R11", "R10", "R9"}
	used := map[string]bool{}
	for _, r := range pool[:R] {
		rows = append(rows, r)
		used[r] = true
	}
	for _, r := range tpool {
		if len(toks) == T {
			break
		}
		if !used[r] {
			toks = append(toks, r)
			used[r] = true
		}
	}
	if len(toks) < T {
		panic(fmt.Sprintf("no registers for R=%d T=%d", R, T))
	}
	for _, r := range []string{"BX", "DX", "DI", "R13", "R12", "R11", "R10", "R9", "R8", "SI"} {
		if !used[r] {
			free = append(free, r)
		}
	}
	return
}

// pointers loads base (arg at off) into ptrs[0] and ptrs[i] = ptrs[i−1] + stride.
func (g *gen) pointers(ptrs []string, base, stride string, tmp string) {
	g.p("\tMOVQ %s, %s", base, ptrs[0])
	if len(ptrs) > 1 {
		g.p("\tMOVQ %s, %s", stride, tmp)
		for i := 1; i < len(ptrs); i++ {
			g.p("\tLEAQ (%s)(%s*1), %s", ptrs[i-1], tmp, ptrs[i])
		}
	}
}

const args = "w+0(FP)|ldw+8(FP)|x+16(FP)|ldx+24(FP)|n+32(FP)|out+40(FP)|ldo+48(FP)"

func arg(i int) string { return strings.Split(args, "|")[i] }

// header declares the function in Go and starts its text; n is the
// name of the count argument.
func (g *gen) header(name, wType, xType, n string) {
	fmt.Fprintf(&g.decls, "//go:noescape\nfunc %s(w *%s, ldw uintptr, x *%s, ldx uintptr, %s int, out *float32, ldo uintptr)\n\n", name, wType, xType, n)
	g.p("// func %s(w *%s, ldw uintptr, x *%s, ldx uintptr, %s int, out *float32, ldo uintptr)", name, wType, xType, n)
	g.p("TEXT ·%s(SB), NOSPLIT, $0-56", name)
}

// storeOut writes lane 0 of each accumulator's X register to
// out[t·ldo + r]; acc(r, t) names the register number.
func (g *gen) storeOut(R, T int, acc func(r, t int) int, reduce func(k int)) {
	for t := 0; t < T; t++ {
		for r := 0; r < R; r++ {
			reduce(acc(r, t))
		}
	}
	g.p("\tMOVQ out+40(FP), SI")
	g.p("\tMOVQ ldo+48(FP), R8")
	for t := 0; t < T; t++ {
		for r := 0; r < R; r++ {
			g.p("\tVMOVSS X%d, %d(SI)", acc(r, t), 4*r)
		}
		if t < T-1 {
			g.p("\tADDQ R8, SI")
		}
	}
	g.ret()
}

// reduce16Z folds Z(k) as reduce16 does, into lane 0 of X(k) (temp Z30).
func (g *gen) reduce16Z(k int) {
	g.p("\tVEXTRACTF64X4 $1, Z%d, Y30", k)
	g.p("\tVADDPS Y30, Y%d, Y%d", k, k)
	g.p("\tVEXTRACTF32X4 $1, Y%d, X30", k)
	g.p("\tVADDPS X30, X%d, X%d", k, k)
	g.p("\tVPERMILPS $0x4e, X%d, X30", k)
	g.p("\tVADDPS X30, X%d, X%d", k, k)
	g.p("\tVMOVSHDUP X%d, X30", k)
	g.p("\tVADDSS X30, X%d, X%d", k, k)
}

// reduce8Y folds Y(k) as reduce8 does, into lane 0 of X(k), with temp
// register tmp (Y30 at AVX-512, Y15 at AVX2).
func (g *gen) reduce8Y(k, tmp int, evex bool) {
	g.p("\tVMOVSHDUP Y%d, Y%d", k, tmp)
	g.p("\tVADDPS Y%d, Y%d, Y%d", tmp, k, k)
	g.p("\tVPERMILPS $0x4e, Y%d, Y%d", k, tmp)
	g.p("\tVADDPS Y%d, Y%d, Y%d", tmp, k, k)
	if evex {
		g.p("\tVEXTRACTF32X4 $1, Y%d, X%d", k, tmp)
	} else {
		g.p("\tVEXTRACTF128 $1, Y%d, X%d", k, tmp)
	}
	g.p("\tVADDSS X%d, X%d, X%d", tmp, k, k)
}

// prefetchSetup points pf at the next tile's rows (R rows on from rows[0]),
// which the loops prefetch at the pace the tile reads its own: the rows of
// a matrix are contiguous, so R rows of ldw bytes on is exactly what the
// next tile reads. It returns "" (no prefetch) when R is not a power of
// two (PREFETCHT0 (pf)(AX*R) needs a scale of 1, 2, 4 or 8) or no register
// is free.
func (g *gen) prefetchSetup(R int, rows []string, free ...string) string {
	if g.noPrefetch || !prefetchNext || R&(R-1) != 0 || len(free) == 0 || free[0] == "" {
		return ""
	}
	pf := free[0]
	g.p("\tMOVQ %s, %s", arg(1), pf)
	g.p("\tIMULQ $%d, %s", R, pf)
	// At least minPrefetch bytes ahead: a tile of short rows is read
	// before its prefetched successor arrives (any distance works with the
	// pace below: consecutive tiles prefetch consecutive bytes).
	g.n++
	g.p("\tCMPQ %s, $%d", pf, minPrefetch)
	g.p("\tJAE pfdist%d", g.n)
	g.p("\tMOVQ $%d, %s", minPrefetch, pf)
	g.p("pfdist%d:", g.n)
	g.p("\tADDQ %s, %s", rows[0], pf)
	return pf
}

// prefetchLines prefetches the n lines the tile's rows advance by in one
// step, at pf + R·AX: with PREFETCHT1 (into L2 only) where g.pfL2 is set,
// PREFETCHT0 (into L1) elsewhere. A tile of several tokens reads each
// token's inputs from L1 once per row and chunk, and the next tile's (or
// group's) rows prefetched into L1 evicted them, so they came from L2
// again. On the Zen 4 (2026-11-29, alternated rounds, `hlm bench -p 8 -n 0
// -r 5 -t 2`, avx512-zen4) PREFETCHT1 lifted pp8 of Llama-3.2-1B Q8_0
// from 106.6–118.0 to 140.7–141.7 tokens/s, Phi-3-mini Q8_0 from
// 31.9–32.6 to 39.0–42.1 and Llama-3.2-1B F16 from 46.0–48.5 to
// 57.3–60.2, and brought an 8-token F32 block at the 110M shapes to the
// time of one token (BenchmarkStreamBlock, block/step 1.56–1.87 to
// 0.99–1.26). The K-quant tiles keep PREFETCHT0: with PREFETCHT1,
// Llama-3.1-8B Q4_K_M pp8 fell to 18.1–18.6 from 18.3–19.9, the other
// Q4_K_M shapes unchanged. One-token tiles read few inputs; with
// PREFETCHT1 they measured no faster (BenchmarkStreamMatVec, F16 and F32
// at every level, four rounds), so they keep PREFETCHT0.
func (g *gen) prefetchLines(pf string, R, n int) {
	if pf == "" {
		return
	}
	ins := "PREFETCHT0"
	if g.pfL2 {
		ins = "PREFETCHT1"
	}
	for k := 0; k < n; k++ {
		g.p("\t%s %d(%s)(AX*%d)", ins, 64*k, pf, R)
	}
}

// loopHead starts a tile's loop over 64-byte chunks of its rows: chunk
// elements at a time (16 F32 or 32 F16/BF16), AX the byte offset, CX the
// chunks left; no whole chunk jumps to the tail.
func (g *gen) loopHead(name string, chunk int) {
	g.p("\tXORQ AX, AX")
	g.p("\tMOVQ cols+32(FP), CX")
	g.p("\tSHRQ $%d, CX", bits.TrailingZeros(uint(chunk)))
	g.p("\tJZ %s_tail", name)
	g.p("%s_loop:", name)
}

// loopTail closes the chunk loop and leaves CX = cols mod chunk, jumping
// to the reduction when it is 0.
func (g *gen) loopTail(name string, chunk int) {
	g.p("\tADDQ $64, AX")
	g.p("\tDECQ CX")
	g.p("\tJNZ %s_loop", name)
	g.p("%s_tail:", name)
	g.p("\tMOVQ cols+32(FP), CX")
	g.p("\tANDQ $%d, CX", chunk-1)
	g.p("\tJZ %s_reduce", name)
}

// f32AVX512 is the F32 tile with ZMM registers: 16 lanes, one FMA per
// element, a masked step for the last cols mod 16 elements.
func (g *gen) f32AVX512(R, T int) string {
	g.pfL2 = T > 1
	name := fmt.Sprintf("f32AVX512R%dT%d", R, T) + g.suffix()
	g.header(name, "float32", "float32", "cols")
	rows, toks, free := regs(R, T)
	acc := func(r, t int) int { return r*T + t }
	w := func(r int) int { return R*T + r }
	x := func(t int) int { return R*T + R + t }
	if R*T+R+T > 30 {
		panic(fmt.Sprintf("%s: too many registers", name))
	}
	tmp := free[0]
	g.pointers(rows, arg(0), arg(1), tmp)
	g.pointers(toks, arg(2), arg(3), tmp)
	pf := g.prefetchSetup(R, rows, free[1:]...)
	for r := 0; r < R; r++ {
		for t := 0; t < T; t++ {
			k := acc(r, t)
			g.p("\tVPXORD Z%d, Z%d, Z%d", k, k, k)
		}
	}
	// step loads 16 elements of every row and token and accumulates their
	// products; with mask "K1" only the lanes of the last cols mod 16
	// (zero-masked loads, merge-masked FMAs).
	step := func(mask string) {
		load, k := "VMOVUPS", ""
		if mask != "" {
			load, k = "VMOVUPS.Z", " "+mask+","
		}
		for r := 0; r < R; r++ {
			g.p("\t%s (%s)(AX*1),%s Z%d", load, rows[r], k, w(r))
		}
		for t := 0; t < T; t++ {
			g.p("\t%s (%s)(AX*1),%s Z%d", load, toks[t], k, x(t))
		}
		for r := 0; r < R; r++ {
			for t := 0; t < T; t++ {
				g.p("\tVFMADD231PS Z%d, Z%d,%s Z%d", x(t), w(r), k, acc(r, t))
			}
		}
	}
	g.loopHead(name, 16)
	g.prefetchLines(pf, R, R)
	step("")
	g.loopTail(name, 16)
	g.p("\tLEAQ masks16<>(SB), %s", tmp)
	g.p("\tKMOVW (%s)(CX*2), K1", tmp)
	step("K1")
	g.p("%s_reduce:", name)
	g.storeOut(R, T, acc, g.reduce16Z)
	return name
}

// avx512F16 are the F16 tile heights rows[T] for T = 1…4 tokens: 2RT
// accumulators, 2R converted weights, 4 temporaries and a token's inputs
// fit the 32 registers. More tokens on fewer rows measured slower: one
// row × 6 tokens ran Llama-3.2-1B F16 pp6 at 37.2–37.7 tokens/s against
// 46.0–46.4 with these (2 threads, Zen 4, 2026-11-29).
var avx512F16 = [9]int{0, 4, 4, 2, 2}

// f16AVX512 is the F16 or BF16 tile (dotF16's order, dot.go; BF16 widened
// by VPMOVZXWD and shifted into the high half): element c goes to
// lane c mod 32, held as lanes 0–15 in one register and 16–31 in a
// second; each 32-element chunk of a row is converted once (VCVTPH2PS) for
// all T tokens, then per token the product is rounded (VMULPS) and added
// (VADDPS): no fused multiply-add, as the definition says. In tiles of
// several rows and tokens each token's 32 inputs are loaded into two
// registers once for all rows rather than read by every row's VMULPS:
// pp8 at 2 threads on the Zen 4 (`hlm bench -p 8 -n 0 -r 5 -t 2`, three
// alternated rounds, 2026-11-29) Llama-3.2-1B F16 53.2–53.8 tokens/s
// against 51.8–51.9, Qwen3-0.6B 107.8–111.3 against 102.2–105.1,
// Gemma-3-1B 69.7–71.3 against 59.8–68.6. The one-token tiles keep their
// memory operands (with them avx512's four-row tile decoded Llama-3.2-1B
// F16 at 11.7–13.1 tokens/s against 12.7–13.5 on this core). The last cols
// mod 32 elements fill lanes 0… (masked loads, merge-masked adds), and the
// 32 lanes are combined as reduce32 does. x is addressed with AX·2 (4-byte
// inputs against 2-byte weights).
func (g *gen) f16AVX512(bf16 bool, R, T int) string {
	g.pfL2 = T > 1
	name := fmt.Sprintf("f16AVX512R%dT%d", R, T) + g.suffix()
	if bf16 {
		name = fmt.Sprintf("bf16AVX512R%dT%d", R, T) + g.suffix()
	}
	g.header(name, "byte", "float32", "cols")
	rows, toks, free := regs(R, T)
	acc := func(r, t, h int) int { return 2*(r*T+t) + h }
	w := func(r, h int) int { return 2*R*T + 2*r + h }
	tmp0 := 2*R*T + 2*R
	// pre: with more than one row and token, each token's 32 inputs are
	// loaded once for all rows, into xin.
	pre := R > 1 && T > 1
	xin := [2]int{tmp0 + 4, tmp0 + 5}
	if tmp0+4 > 32 || pre && tmp0+6 > 32 {
		panic(fmt.Sprintf("%s: too many registers", name))
	}
	tmp := free[0]
	g.pointers(rows, arg(0), arg(1), tmp)
	g.pointers(toks, arg(2), arg(3), tmp)
	pf := g.prefetchSetup(R, rows, free[1:]...)
	for k := 0; k < 2*R*T; k++ {
		g.p("\tVPXORD Z%d, Z%d, Z%d", k, k, k)
	}
	// step converts 32 elements of every row and accumulates their
	// products with every token; masks K1 (lanes 0–15) and K2 (16–31)
	// limit it to the last cols mod 32 elements.
	step := func(masked bool) {
		cvt, mul, m := "VCVTPH2PS", "VMULPS", [2]string{"", ""}
		if masked {
			cvt, mul, m = "VCVTPH2PS.Z", "VMULPS.Z", [2]string{" K1,", " K2,"}
		}
		if bf16 {
			cvt = strings.Replace(cvt, "VCVTPH2PS", "VPMOVZXWD", 1)
		}
		for r := 0; r < R; r++ {
			for h := 0; h < 2; h++ {
				g.p("\t%s %d(%s)(AX*1),%s Z%d", cvt, 32*h, rows[r], m[h], w(r, h))
				if bf16 { // exact: the 16 bits are the float32's high half
					g.p("\tVPSLLD $16, Z%d, Z%d", w(r, h), w(r, h))
				}
			}
		}
		i := 0
		for t := 0; t < T; t++ {
			if pre {
				for h := 0; h < 2; h++ {
					if masked {
						g.p("\tVMOVUPS.Z %d(%s)(AX*2),%s Z%d", 64*h, toks[t], m[h], xin[h])
					} else {
						g.p("\tVMOVUPS %d(%s)(AX*2), Z%d", 64*h, toks[t], xin[h])
					}
				}
			}
			for r := 0; r < R; r++ {
				for h := 0; h < 2; h++ {
					p := tmp0 + i%4
					i++
					if pre {
						g.p("\t%s Z%d, Z%d,%s Z%d", mul, xin[h], w(r, h), m[h], p)
					} else {
						g.p("\t%s %d(%s)(AX*2), Z%d,%s Z%d", mul, 64*h, toks[t], w(r, h), m[h], p)
					}
					g.p("\tVADDPS Z%d, Z%d,%s Z%d", p, acc(r, t, h), m[h], acc(r, t, h))
				}
			}
		}
	}
	g.loopHead(name, 32)
	g.prefetchLines(pf, R, R)
	step(false)
	g.loopTail(name, 32)
	// K1: the first min(rem, 16) lanes, K2: the first rem − 16 (if any).
	lo := free[len(free)-1] // not tmp, nor the prefetch pointer free[1]
	if len(free) < 3 {
		panic(fmt.Sprintf("%s: too few general registers", name))
	}
	g.p("\tLEAQ masks16<>(SB), %s", tmp)
	g.p("\tMOVQ CX, %s", lo)
	g.p("\tCMPQ %s, $16", lo)
	g.p("\tJBE %s_lo", name)
	g.p("\tMOVQ $16, %s", lo)
	g.p("%s_lo:", name)
	g.p("\tKMOVW (%s)(%s*2), K1", tmp, lo)
	g.p("\tSUBQ %s, CX", lo)
	g.p("\tKMOVW (%s)(CX*2), K2", tmp)
	step(true)
	g.p("%s_reduce:", name)
	// reduce32: v[l] = (a[l] + a[8+l]) + (a[16+l] + a[24+l]), then reduce8;
	// lanes 16–31 are in the register after lanes 0–15's.
	g.storeOut(R, T, func(r, t int) int { return acc(r, t, 0) }, func(lo int) {
		hi := lo + 1
		g.p("\tVEXTRACTF64X4 $1, Z%d, Y30", lo)
		g.p("\tVADDPS Y30, Y%d, Y%d", lo, lo)
		g.p("\tVEXTRACTF64X4 $1, Z%d, Y30", hi)
		g.p("\tVADDPS Y30, Y%d, Y%d", hi, hi)
		g.p("\tVADDPS Y%d, Y%d, Y%d", hi, lo, lo)
		g.reduce8Y(lo, 30, true)
	})
	return name
}

// avx2F16 are the AVX2 F16 and BF16 tile heights: one row × 1…3 tokens
// (4T accumulators, a converted weight register and two temporaries fit
// the 16 YMM registers).
var avx2F16 = [9]int{0, 1, 1, 1}

// f16AVX2 is the F16 or BF16 tile of one row × T tokens at the AVX2 level,
// dotF16's order as in f16AVX512: lane c mod 32 is lane c mod 8 of the
// (c mod 32)/8-th accumulator of its token; each 8-element piece of the row
// is converted once for the T tokens. It takes whole 32-element chunks only
// (cols a multiple of 32; product.prepare checks): no masked half-precision
// loads in AVX2.
func (g *gen) f16AVX2(bf16 bool, T int) string {
	g.pfL2 = T > 1
	name := fmt.Sprintf("f16AVX2T%d", T) + g.suffix()
	if bf16 {
		name = fmt.Sprintf("bf16AVX2T%d", T) + g.suffix()
	}
	g.header(name, "byte", "float32", "cols")
	rows, toks, free := regs(1, T)
	acc := func(t, h int) int { return 4*t + h }
	w, tmp0 := 4*T, 4*T+1
	if tmp0+2 > 16 {
		panic(fmt.Sprintf("%s: too many registers", name))
	}
	g.pointers(rows, arg(0), arg(1), free[0])
	g.pointers(toks, arg(2), arg(3), free[0])
	pf := g.prefetchSetup(1, rows, free[1:]...)
	for k := 0; k < 4*T; k++ {
		g.p("\tVXORPS Y%d, Y%d, Y%d", k, k, k)
	}
	g.p("\tXORQ AX, AX")
	g.p("\tMOVQ cols+32(FP), CX")
	g.p("\tSHRQ $5, CX")
	g.p("\tJZ %s_reduce", name)
	g.p("%s_loop:", name)
	g.prefetchLines(pf, 1, 1)
	i := 0
	for h := 0; h < 4; h++ {
		if bf16 {
			g.p("\tVPMOVZXWD %d(%s)(AX*1), Y%d", 16*h, rows[0], w)
			g.p("\tVPSLLD $16, Y%d, Y%d", w, w)
		} else {
			g.p("\tVCVTPH2PS %d(%s)(AX*1), Y%d", 16*h, rows[0], w)
		}
		for t := 0; t < T; t++ {
			p := tmp0 + i%2
			i++
			g.p("\tVMULPS %d(%s)(AX*2), Y%d, Y%d", 32*h, toks[t], w, p)
			g.p("\tVADDPS Y%d, Y%d, Y%d", p, acc(t, h), acc(t, h))
		}
	}
	g.p("\tADDQ $64, AX")
	g.p("\tDECQ CX")
	g.p("\tJNZ %s_loop", name)
	g.p("%s_reduce:", name)
	// reduce32: v[l] = (a[l] + a[8+l]) + (a[16+l] + a[24+l]), then reduce8.
	g.storeOut(1, T, func(r, t int) int { return acc(t, 0) }, func(a0 int) {
		g.p("\tVADDPS Y%d, Y%d, Y%d", a0+1, a0, a0)
		g.p("\tVADDPS Y%d, Y%d, Y%d", a0+3, a0+2, a0+2)
		g.p("\tVADDPS Y%d, Y%d, Y%d", a0+2, a0, a0)
		g.reduce8Y(a0, 15, false)
	})
	return name
}

// f32AVX2 is the F32 tile with YMM registers: each of the 16 lanes is
// lane l of the low (h = 0) or high (h = 1) register of a pair.
func (g *gen) f32AVX2(R, T int) string {
	g.pfL2 = T > 1
	name := fmt.Sprintf("f32AVX2R%dT%d", R, T) + g.suffix()
	g.header(name, "float32", "float32", "cols")
	rows, toks, free := regs(R, T)
	acc := func(r, t int) int { return 2 * (r*T + t) }
	w := func(r int) int { return 2*R*T + r }
	mask, xt := 14, 15
	if 2*R*T+R > 14 {
		panic("too many registers")
	}
	tmp := free[0]
	g.pointers(rows, arg(0), arg(1), tmp)
	g.pointers(toks, arg(2), arg(3), tmp)
	pf := g.prefetchSetup(R, rows, free[1:]...)
	for k := 0; k < 2*R*T; k++ {
		g.p("\tVXORPS Y%d, Y%d, Y%d", k, k, k)
	}
	g.loopHead(name, 16)
	g.prefetchLines(pf, R, R)
	for h := 0; h < 2; h++ {
		for r := 0; r < R; r++ {
			g.p("\tVMOVUPS %d(%s)(AX*1), Y%d", 32*h, rows[r], w(r))
		}
		for r := 0; r < R; r++ {
			for t := 0; t < T; t++ {
				g.p("\tVFMADD231PS %d(%s)(AX*1), Y%d, Y%d", 32*h, toks[t], w(r), acc(r, t)+h)
			}
		}
	}
	g.loopTail(name, 16)
	// mask lanes j < cols mod 16 from tailmask<>: 16 ones then 16 zeros.
	g.p("\tSHLQ $2, CX")
	g.p("\tLEAQ tailmask<>+64(SB), %s", tmp)
	g.p("\tSUBQ CX, %s", tmp)
	for h := 0; h < 2; h++ {
		g.p("\tVMOVDQU %d(%s), Y%d", 32*h, tmp, mask)
		for r := 0; r < R; r++ {
			g.p("\tVMASKMOVPS %d(%s)(AX*1), Y%d, Y%d", 32*h, rows[r], mask, w(r))
		}
		for t := 0; t < T; t++ {
			g.p("\tVMASKMOVPS %d(%s)(AX*1), Y%d, Y%d", 32*h, toks[t], mask, xt)
			for r := 0; r < R; r++ {
				g.p("\tVFMADD231PS Y%d, Y%d, Y%d", xt, w(r), acc(r, t)+h)
			}
		}
	}
	g.p("%s_reduce:", name)
	g.storeOut(R, T, acc, func(k int) {
		g.p("\tVADDPS Y%d, Y%d, Y%d", k+1, k, k)
		g.p("\tVEXTRACTF128 $1, Y%d, X15", k)
		g.p("\tVADDPS X15, X%d, X%d", k, k)
		g.p("\tVPERMILPS $0x4e, X%d, X15", k)
		g.p("\tVADDPS X15, X%d, X%d", k, k)
		g.p("\tVMOVSHDUP X%d, X15", k)
		g.p("\tVADDSS X15, X%d, X%d", k, k)
	})
	return name
}

// quantLoopSetup loads pointers and the block count for the integer tiles.
// Weights are addressed with AX, inputs with BX; rows and tokens must not
// use BX.
func (g *gen) quantSetup(R, T int) (rows, toks []string) {
	pool := []string{"SI", "R8", "R9", "R10", "R11", "R12", "R13", "DX", "DI"}
	rows = pool[:R]
	toks = pool[R : R+T]
	g.pointers(rows, arg(0), arg(1), "CX")
	g.pointers(toks, arg(2), arg(3), "CX")
	g.p("\tXORQ AX, AX")
	g.p("\tXORQ BX, BX")
	return
}

// quantLoopHead zeroes the accumulators Y0…Y(acc−1) with zero (VXORPS, or
// VPXORD where they reach Y16 and up) and starts the loop over the nb
// blocks in CX, prefetching the next tile's rows (R·bb bytes a block).
func (g *gen) quantLoopHead(name string, acc int, zero, pf string, R, bb int) {
	for k := 0; k < acc; k++ {
		g.p("\t%s Y%d, Y%d, Y%d", zero, k, k, k)
	}
	g.p("\tMOVQ nb+32(FP), CX")
	g.p("\tTESTQ CX, CX")
	g.p("\tJZ %s_reduce", name)
	g.p("%s_loop:", name)
	g.kPrefetchLines(pf, R, bb)
}

// kPrefetchLines prefetches, at pf, the lines R rows of bb-byte blocks
// advance by in one step: pf + R·AX for the next tile's rows, or pf + AX
// for the next group's (kGroup, kGroupPrefetch).
func (g *gen) kPrefetchLines(pf string, R, bb int) {
	if g.kGroup > 0 {
		g.prefetchLines(pf, 1, R*bb/64+1)
		return
	}
	g.prefetchLines(pf, R, R*bb/64+1)
}

// kGroupPrefetch sets pf (unless noPrefetch) for a K-quant tile of packed
// groups (kGroup): the tile's rows in the next group, nb·kGroup
// super-blocks of bb bytes on, whose lines quantLoopHead prefetches at
// pf + AX as the tile reaches them in its own group.
func (g *gen) kGroupPrefetch(rows []string, pf string, bb int) string {
	if g.noPrefetch || !prefetchNext {
		return ""
	}
	g.p("\tMOVQ nb+32(FP), %s", pf)
	g.p("\tIMULQ $%d, %s", g.kGroup*bb, pf)
	g.p("\tADDQ %s, %s", rows[0], pf)
	return pf
}

// quantFree is a general register the integer tiles leave free (BX too
// when bxFree: one token's pointer advances instead of sharing BX), or "".
func quantFree(rows, toks []string, bxFree bool) string {
	used := map[string]bool{"AX": true, "CX": true, "BX": !bxFree}
	for _, r := range append(append([]string{}, rows...), toks...) {
		used[r] = true
	}
	for _, r := range []string{"BX", "DI", "DX", "R13", "R12", "R11"} {
		if !used[r] {
			return r
		}
	}
	return ""
}

// quantAVX512 is the Q8_0 or Q4_0 tile with VNNI: per block, row r's codes
// (Q8_0: q+128 by flipping the sign bit; Q4_0: the nibbles in element
// order) and scale, then for each token the lanes
// p = corr + Σ u·qx (VPDPBUSD), s = dw·dx, acc += s·p.
func (g *gen) quantAVX512(q4 bool, R, T int) string {
	g.pfL2 = T > 1
	kind, bb := "Q8", 34
	if q4 {
		kind, bb = "Q4", 18
	}
	name := fmt.Sprintf("%sAVX512R%dT%d", strings.ToLower(kind), R, T)
	g.header(name, "byte", "actBlock", "nb")
	rows, toks := g.quantSetup(R, T)
	// Token t's block is at tok(t, off): with one token its pointer
	// advances (BX is then free), else all share the offset BX.
	tok := func(t, off int) string { return fmt.Sprintf("%d(%s)(BX*1)", off, toks[t]) }
	if T == 1 {
		tok = func(t, off int) string { return fmt.Sprintf("%d(%s)", off, toks[t]) }
	}
	pf := g.prefetchSetup(R, rows, quantFree(rows, toks, T == 1))
	acc := func(r, t int) int { return r*T + t }
	w := func(r int) int { return R*T + r }
	dw := func(r int) int { return R*T + R + r }
	cst, shift := 26, 27
	temps := []int{28, 29, 30, 31}
	if R*T+2*R > 26 {
		panic("too many registers")
	}
	if q4 {
		g.p("\tMOVL $0x0f0f0f0f, CX")
		g.p("\tVPBROADCASTD CX, Y%d", cst)
		g.p("\tMOVL $0x00040004, CX")
		g.p("\tVPBROADCASTD CX, Y%d", shift)
		g.p("\tVPXORD X%d, X%d, X%d", temps[0], temps[0], temps[0])
		g.p("\tVINSERTI32X4 $0, X%d, Y%d, Y%d", temps[0], shift, shift)
	} else {
		g.p("\tMOVL $0x80808080, CX")
		g.p("\tVPBROADCASTD CX, Y%d", cst)
	}
	g.quantLoopHead(name, R*T, "VPXORD", pf, R, bb)
	for r := 0; r < R; r++ {
		if q4 {
			g.p("\tVBROADCASTI32X4 2(%s)(AX*1), Y%d", rows[r], w(r))
			g.p("\tVPSRLVW Y%d, Y%d, Y%d", shift, w(r), w(r))
			g.p("\tVPANDD Y%d, Y%d, Y%d", cst, w(r), w(r))
		} else {
			g.p("\tVPXORD 2(%s)(AX*1), Y%d, Y%d", rows[r], cst, w(r))
		}
		g.p("\tVPBROADCASTW (%s)(AX*1), X%d", rows[r], dw(r))
		g.p("\tVCVTPH2PS X%d, Y%d", dw(r), dw(r))
	}
	// With registers to spare, each token's codes, corrections and scale
	// are loaded once per block rather than once per row.
	pre := R*T+2*R+3*T <= 26
	xq := func(t int) int { return R*T + 2*R + 3*t }
	if pre {
		for t := 0; t < T; t++ {
			g.p("\tVMOVDQU32 %s, Y%d", tok(t, 0), xq(t))
			g.p("\tVMOVDQU32 %s, Y%d", tok(t, 32), xq(t)+1)
			g.p("\tVBROADCASTSS %s, Y%d", tok(t, 64), xq(t)+2)
		}
	}
	i := 0
	for t := 0; t < T; t++ {
		for r := 0; r < R; r++ {
			p, s := temps[2*(i%2)], temps[2*(i%2)+1]
			i++
			if pre {
				g.p("\tVMOVDQA32 Y%d, Y%d", xq(t)+1, p)
				g.p("\tVPDPBUSD Y%d, Y%d, Y%d", xq(t), w(r), p)
				g.p("\tVCVTDQ2PS Y%d, Y%d", p, p)
				g.p("\tVMULPS Y%d, Y%d, Y%d", xq(t)+2, dw(r), s)
			} else {
				g.p("\tVMOVDQU32 %s, Y%d", tok(t, 32), p)
				g.p("\tVPDPBUSD %s, Y%d, Y%d", tok(t, 0), w(r), p)
				g.p("\tVCVTDQ2PS Y%d, Y%d", p, p)
				g.p("\tVMULPS.BCST %s, Y%d, Y%d", tok(t, 64), dw(r), s)
			}
			g.p("\tVFMADD231PS Y%d, Y%d, Y%d", p, s, acc(r, t))
		}
	}
	g.p("\tADDQ $%d, AX", bb)
	if T == 1 {
		g.p("\tADDQ $72, %s", toks[0])
	} else {
		g.p("\tADDQ $72, BX")
	}
	g.p("\tDECQ CX")
	g.p("\tJNZ %s_loop", name)
	g.p("%s_reduce:", name)
	g.storeOut(R, T, acc, func(k int) { g.reduce8Y(k, 30, true) })
	return name
}

// Token-pair tiles (AVX-512). A ZMM register holds one row and two tokens:
// its low 256-bit half is token t's 8-lane accumulator, its high half token
// t+1's, and every instruction acts lane by lane (the row's codes and scale
// are the same in both halves), so each half performs exactly the operation
// sequence of quantAVX512's YMM accumulator for its token: the same bits,
// and one instruction does the work of two. The inputs are laid out in
// pairs (actPair in act.go: a block's codes, corrections and broadcast
// scales of both tokens, 64 bytes each); a tile of an odd T reads a last
// pair whose high half is zeros and stores only its low half.
var (
	// pairRows are the pair tiles' heights rows[T] for T = 2…pairMaxT
	// tokens; T = 1 keeps quantAVX512's one-token tiles (avx512Quant[1]).
	// The products run token groups of pairMaxT (even: groups start at a
	// pair). 4 rows × 8 tokens (16 accumulators, the pairs' codes and
	// corrections in registers, their scales as memory operands) measured
	// as fast as 2 × 8 and 8 × 4 and faster than groups of 4 tokens
	// (BenchmarkQuantBlocks, BENCHMARKS.md).
	pairRows = [9]int{0, 0, 8, 4, 4, 4, 4, 4, 4}
	pairMaxT = 8
	// pairPreload is how many of a pair's codes, corrections and scales
	// (in that order) are loaded into registers once per block, at most;
	// the rest are memory operands. Fewer are loaded when the registers
	// run out.
	pairPreload = 3
)

// quantPairAVX512 is the Q8_0, Q4_0 or Q5_0 (kind q8, q4, q5) token-pair
// tile of R rows × T tokens (P = ⌈T/2⌉ pairs; x points at pair 0 of block
// 0, ldx is the stride from one block's pairs to the next's). Per block and
// row: the row's codes in both 256-bit halves (Q8_0: VBROADCASTI64X4, then
// q+128 by flipping the sign bit; Q4_0: the 16 packed bytes in each 128-bit
// unit, shifted right by 0, 4, 0, 4 bits and masked: the nibbles in element
// order in each half; Q5_0: those nibbles plus 16 where qh's bit is set)
// and its scale dw in all 16 lanes; then per pair p = corr + Σ u·qx
// (VPDPBUSD; Q5_0 takes Q8_0's inputs, its corr shifted right by 3 once per
// block: −16·Σqx, as quantQ5AVX2 does), s = dw·dx, acc += s·p, as
// quantAVX512 per token and quantQ5AVX2 per row and token. Rows are
// the outer loop, so one row's codes and scale are live at a time (the
// register renamer overlaps consecutive rows).
func (g *gen) quantPairAVX512(kind string, R, T int) string {
	g.pfL2 = T > 1
	q4, q5 := kind == "q4", kind == "q5"
	bb := map[string]int{"q8": 34, "q4": 18, "q5": 22}[kind]
	P := (T + 1) / 2
	name := fmt.Sprintf("%sPairAVX512R%dT%d", kind, R, T)
	g.header(name, "byte", "actPair", "nb")
	rows := []string{"SI", "R8", "R9", "R10", "R11", "R12", "R13", "DX"}[:R]
	g.pointers(rows, arg(0), arg(1), "CX")
	g.p("\tMOVQ %s, DI", arg(2))
	g.p("\tXORQ AX, AX")
	pf := g.prefetchSetup(R, rows, "BX")
	next := 0
	alloc := func(n int) int { k := next; next += n; return k }
	accBase := alloc(R * P)
	acc := func(r, p int) int { return accBase + r*P + p }
	w, dw, pr, sr, cst := alloc(1), alloc(1), alloc(1), alloc(1), alloc(1)
	shift, c10 := -1, -1
	if q4 || q5 {
		shift = alloc(1)
	}
	if q5 {
		c10 = alloc(1)
	}
	pre := pairPreload
	for pre > 0 && next+pre*P > 32 {
		pre--
	}
	if next > 32 {
		panic(fmt.Sprintf("%s: too many registers", name))
	}
	xq := func(p, i int) int { return next + pre*p + i }
	const sz = 192 // unsafe.Sizeof(actPair{})
	if q4 || q5 {
		g.p("\tMOVL $0x0f0f0f0f, CX")
		g.p("\tVPBROADCASTD CX, Z%d", cst)
		g.p("\tVMOVDQU64 pairshift<>(SB), Z%d", shift)
		if q5 {
			g.p("\tMOVL $0x10101010, CX")
			g.p("\tVPBROADCASTD CX, Z%d", c10)
		}
	} else {
		g.p("\tMOVL $0x80808080, CX")
		g.p("\tVPBROADCASTD CX, Z%d", cst)
	}
	for r := 0; r < R; r++ {
		for p := 0; p < P; p++ {
			k := acc(r, p)
			g.p("\tVPXORD Z%d, Z%d, Z%d", k, k, k)
		}
	}
	g.p("\tMOVQ nb+32(FP), CX")
	g.p("\tTESTQ CX, CX")
	g.p("\tJZ %s_reduce", name)
	g.p("%s_loop:", name)
	g.prefetchLines(pf, R, R*bb/64+1)
	codes := func(p int) string { return fmt.Sprintf("%d(DI)", sz*p) }
	corr := func(p int) string { return fmt.Sprintf("%d(DI)", sz*p+64) }
	scale := func(p int) string { return fmt.Sprintf("%d(DI)", sz*p+128) }
	for p := 0; p < P; p++ {
		for i, op := range []string{"VMOVDQU64", "VMOVDQU64", "VMOVUPS"}[:pre] {
			g.p("\t%s %d(DI), Z%d", op, sz*p+64*i, xq(p, i))
		}
	}
	reg := func(i int, mem func(p int) string) func(p int) string {
		if i >= pre {
			return mem
		}
		return func(p int) string { return fmt.Sprintf("Z%d", xq(p, i)) }
	}
	codes, corr, scale = reg(0, codes), reg(1, corr), reg(2, scale)
	if q5 && pre > 1 {
		// Q5_0's corrections −16·Σqx from the Q8_0 inputs' −128·Σqx.
		for p := 0; p < P; p++ {
			g.p("\tVPSRAD $3, Z%d, Z%d", xq(p, 1), xq(p, 1))
		}
	}
	for r := 0; r < R; r++ {
		if q4 || q5 {
			off := 2
			if q5 {
				off = 6
			}
			g.p("\tVBROADCASTI32X4 %d(%s)(AX*1), Z%d", off, rows[r], w)
			g.p("\tVPSRLVW Z%d, Z%d, Z%d", shift, w, w)
			g.p("\tVPANDD Z%d, Z%d, Z%d", cst, w, w)
			if q5 {
				// Bit 4 of each code from qh: byte i of each half takes
				// qh's byte holding its bit (VPSHUFB), VPTESTMB marks the
				// bytes whose bit is set, and a masked VPADDB adds 16.
				g.p("\tVPBROADCASTD 2(%s)(AX*1), Z%d", rows[r], sr)
				g.p("\tVPSHUFB q5pair<>+0(SB), Z%d, Z%d", sr, sr)
				g.p("\tVPTESTMB q5pair<>+64(SB), Z%d, K2", sr)
				g.p("\tVPADDB Z%d, Z%d, K2, Z%d", c10, w, w)
			}
		} else {
			g.p("\tVBROADCASTI64X4 2(%s)(AX*1), Z%d", rows[r], w)
			g.p("\tVPXORD Z%d, Z%d, Z%d", cst, w, w)
		}
		g.p("\tVPBROADCASTW (%s)(AX*1), Y%d", rows[r], dw)
		g.p("\tVCVTPH2PS Y%d, Z%d", dw, dw)
		for p := 0; p < P; p++ {
			switch {
			case pre > 1:
				g.p("\tVMOVDQA64 %s, Z%d", corr(p), pr)
			case q5:
				g.p("\tVPSRAD $3, %s, Z%d", corr(p), pr)
			default:
				g.p("\tVMOVDQU64 %s, Z%d", corr(p), pr)
			}
			g.p("\tVPDPBUSD %s, Z%d, Z%d", codes(p), w, pr)
			g.p("\tVCVTDQ2PS Z%d, Z%d", pr, pr)
			g.p("\tVMULPS %s, Z%d, Z%d", scale(p), dw, sr)
			g.p("\tVFMADD231PS Z%d, Z%d, Z%d", pr, sr, acc(r, p))
		}
	}
	g.p("\tADDQ $%d, AX", bb)
	g.p("\tADDQ %s, DI", arg(3))
	g.p("\tDECQ CX")
	g.p("\tJNZ %s_loop", name)
	// Token 2p's output is the low half's reduce8Y, token 2p+1's the
	// high half's (extracted first: a YMM result clears the upper half).
	g.p("%s_reduce:", name)
	g.p("\tMOVQ out+40(FP), SI")
	g.p("\tMOVQ ldo+48(FP), R8")
	for p := 0; p < P; p++ {
		hi := 2*p+1 < T
		if hi {
			g.p("\tLEAQ (SI)(R8*1), DI")
		}
		for r := 0; r < R; r++ {
			k := acc(r, p)
			if hi {
				g.p("\tVEXTRACTF64X4 $1, Z%d, Y31", k)
			}
			g.reduce8Y(k, 30, true)
			g.p("\tVMOVSS X%d, %d(SI)", k, 4*r)
			if hi {
				g.reduce8Y(31, 30, true)
				g.p("\tVMOVSS X31, %d(DI)", 4*r)
			}
		}
		if p < P-1 {
			g.p("\tLEAQ (DI)(R8*1), SI")
		}
	}
	g.ret()
	return name
}

// Packed Q8_0, Q4_0 and Q5_0 tiles (AVX-512). Rows are packed 16 at a
// time (pack.go): per block, the 16 rows' F16 scales (32 bytes), for Q5_0
// the 16 rows' qh (64 bytes), then for each 4-byte word k of the codes (8
// for Q8_0, 4 for Q4_0 and Q5_0) word k of all 16 rows (64 bytes), so a
// ZMM register holds word k of 16 rows. Word k of Q8_0 is lane k of the
// definition (elements 4k…4k+3; made unsigned by flipping the sign bits as
// in quantAVX512); word k of Q4_0 and Q5_0 holds lane k in its low nibbles
// and lane k+4 (elements 16+4k…) in its high nibbles, and Q5_0's bits 4
// of lane l's four codes are bits 4l…4l+3 of qh for l < 4, 16+4(l−4)… for
// l ≥ 4: shifted down to bits 0–3 of each row's dword, VPERMD looks up the
// dword with 0x10 in byte j where bit j is set (q5perm<>; it reads only
// the index's low four bits), and a VPTERNLOGD merges it with the masked
// nibbles. One VPDPBUSD with the input's lane word broadcast computes p_bl
// of 16 rows,
// and the 8 lanes of the 16 rows are 8 registers with one row per 32-bit
// element; reduce8's sums then run element by element across the 8
// registers. The same operations in the same order as dotQuant for every
// row (no output's bits depend on the layout), with a third of the
// instructions of the row-major tiles (no per-row scale broadcast, no
// horizontal reduction).
const packRows = 16

// packedAVX512 is the packed Q8_0, Q4_0 or Q5_0 (kind q8, q4, q5) tile of
// 16 rows × T tokens (T = 1, 2): w is the group's first block, ldw the
// distance to the next group (which it prefetches at the pace it reads its
// own), x token 0's blocks and ldx the stride to token 1's. Q5_0 takes
// Q8_0's inputs: per block and token, their corrections −128·Σqx shifted
// right by 3 (−16·Σqx, exact: multiples of 128) go to the frame, from
// which each lane's is broadcast, as quantQ5AVX2 does per row.
func (g *gen) packedAVX512(kind string, T int) string {
	g.pfL2 = T > 1
	q4, q5 := kind == "q4", kind == "q5"
	bb, words := map[string]int{"q8": 34, "q4": 18, "q5": 22}[kind], 8
	if q4 || q5 {
		words = 4
	}
	unit := packRows * bb
	name := fmt.Sprintf("%sPackedAVX512T%d", kind, T) + g.suffix()
	codesAt := 32 // the codes' words in a unit
	if q5 {
		codesAt = 96
		fmt.Fprintf(&g.decls, "//go:noescape\nfunc %s(w *byte, ldw uintptr, x *actBlock, ldx uintptr, nb int, out *float32, ldo uintptr)\n\n", name)
		g.p("// func %s(w *byte, ldw uintptr, x *actBlock, ldx uintptr, nb int, out *float32, ldo uintptr)", name)
		g.p("TEXT ·%s(SB), $%d-56", name, 32*T)
	} else {
		g.header(name, "byte", "actBlock", "nb")
	}
	g.p("\tMOVQ %s, SI", arg(0))
	g.p("\tMOVQ %s, DI", arg(2))
	g.p("\tMOVQ %s, R8", arg(3))
	g.p("\tADDQ DI, R8") // token 1's blocks
	g.p("\tXORQ AX, AX")
	pf := g.prefetchSetup(1, []string{"SI"}, "BX")
	acc := func(t, l int) int { return 8*t + l }
	s := func(t int) int { return 16 + t }
	dw, w, hi, cst := 18, 19, 20, 31
	temps := []int{21, 22, 23, 24, 25, 26, 27, 28}
	qh, perm, hb := 27, 28, 29 // Q5_0's high bits
	if q5 {
		temps = temps[:6]
	}
	tok := []string{"DI", "R8"}
	if q4 || q5 {
		g.p("\tMOVL $0x0f0f0f0f, CX")
	} else {
		g.p("\tMOVL $0x80808080, CX")
	}
	g.p("\tVPBROADCASTD CX, Z%d", cst)
	if q5 {
		g.p("\tVMOVDQU32 q5perm<>(SB), Z%d", perm)
	}
	for k := 0; k < 8*T; k++ {
		g.p("\tVPXORD Z%d, Z%d, Z%d", k, k, k)
	}
	g.p("\tMOVQ nb+32(FP), CX")
	g.p("\tTESTQ CX, CX")
	g.p("\tJZ %s_reduce", name)
	g.p("%s_loop:", name)
	g.prefetchLines(pf, 1, (unit+63)/64)
	g.p("\tVCVTPH2PS (SI)(AX*1), Z%d", dw)
	for t := 0; t < T; t++ {
		g.p("\tVMULPS.BCST 64(%s), Z%d, Z%d", tok[t], dw, s(t))
	}
	corrAt := func(t, l int) string { return fmt.Sprintf("%d(%s)", 32+4*l, tok[t]) }
	if q5 {
		for t := 0; t < T; t++ {
			g.p("\tVPSRAD $3, 32(%s), Y%d", tok[t], hb)
			g.p("\tVMOVDQU32 Y%d, %d(SP)", hb, 32*t)
		}
		corrAt = func(t, l int) string { return fmt.Sprintf("%d(SP)", 32*t+4*l) }
		g.p("\tVMOVDQU32 32(SI)(AX*1), Z%d", qh)
	}
	// highBits merges bits 4 of lane l's codes into the nibbles in u.
	highBits := func(l, u int) {
		sh := 4 * l
		if l >= 4 {
			sh = 16 + 4*(l-4)
		}
		src := qh
		if sh > 0 {
			g.p("\tVPSRLD $%d, Z%d, Z%d", sh, qh, hb)
			src = hb
		}
		g.p("\tVPERMD Z%d, Z%d, Z%d", perm, src, hb)
		g.p("\tVPTERNLOGD $0xec, Z%d, Z%d, Z%d", cst, hb, u) // (u & 0x0f) | hb
	}
	i := 0
	for k := 0; k < words; k++ {
		lanes := [][2]int{{k, w}} // lane, register of its codes
		switch {
		case q5:
			g.p("\tVMOVDQU32 %d(SI)(AX*1), Z%d", codesAt+64*k, w)
			g.p("\tVPSRLD $4, Z%d, Z%d", w, hi)
			highBits(k, w)
			highBits(k+4, hi)
			lanes = append(lanes, [2]int{k + 4, hi})
		case q4:
			g.p("\tVMOVDQU32 %d(SI)(AX*1), Z%d", codesAt+64*k, w)
			g.p("\tVPSRLD $4, Z%d, Z%d", w, hi)
			g.p("\tVPANDD Z%d, Z%d, Z%d", cst, w, w)
			g.p("\tVPANDD Z%d, Z%d, Z%d", cst, hi, hi)
			lanes = append(lanes, [2]int{k + 4, hi})
		default:
			g.p("\tVPXORD %d(SI)(AX*1), Z%d, Z%d", codesAt+64*k, cst, w)
		}
		for t := 0; t < T; t++ {
			for _, lw := range lanes {
				l, u := lw[0], lw[1]
				p := temps[i%len(temps)]
				i++
				g.p("\tVPBROADCASTD %s, Z%d", corrAt(t, l), p)
				g.p("\tVPDPBUSD.BCST %d(%s), Z%d, Z%d", 4*l, tok[t], u, p)
				g.p("\tVCVTDQ2PS Z%d, Z%d", p, p)
				g.p("\tVFMADD231PS Z%d, Z%d, Z%d", p, s(t), acc(t, l))
			}
		}
	}
	g.p("\tADDQ $%d, AX", unit)
	for t := 0; t < T; t++ {
		g.p("\tADDQ $72, %s", tok[t])
	}
	g.p("\tDECQ CX")
	g.p("\tJNZ %s_loop", name)
	// reduce8, element by element: ((a0+a1)+(a2+a3))+((a4+a5)+(a6+a7)).
	g.p("%s_reduce:", name)
	g.p("\tMOVQ out+40(FP), SI")
	g.p("\tMOVQ ldo+48(FP), R8")
	for t := 0; t < T; t++ {
		a := func(l int) int { return acc(t, l) }
		for _, j := range []int{0, 2, 4, 6} {
			g.p("\tVADDPS Z%d, Z%d, Z%d", a(j+1), a(j), a(j))
		}
		g.p("\tVADDPS Z%d, Z%d, Z%d", a(2), a(0), a(0))
		g.p("\tVADDPS Z%d, Z%d, Z%d", a(6), a(4), a(4))
		g.p("\tVADDPS Z%d, Z%d, Z%d", a(4), a(0), a(0))
		g.p("\tVMOVUPS Z%d, (SI)", a(0))
		if t < T-1 {
			g.p("\tADDQ R8, SI")
		}
	}
	g.ret()
	return name
}

// kquantRows are the K-quant tile heights rows[T] (AVX-512) for T = 1…8
// tokens, run in groups of kquantMaxT: an int32 and a float accumulator
// per (row, token), a scale table per row and the constants fit in the 32
// registers (2RT + R + 11 for Q6_K) up to 2 × 4; the 2-row tiles of 5…8
// tokens keep the float accumulators in the frame ("wide").
var kquantRows = [9]int{0, 4, 4, 3, 2, 2, 2, 2, 2}

// kquantRowsNarrow are the tile heights when the inputs fit in L1
// (kNarrowBytes in gemm.go): one row × 5…8 tokens, whose accumulators all
// fit in registers, is faster there; the 2-row tiles read each input once
// for both rows, which pays when the inputs come from L2.
var kquantRowsNarrow = [9]int{0, 4, 4, 3, 2, 1, 1, 1, 1}

const kquantMaxT = 8

// actKSize is unsafe.Sizeof(actBlockK{}): 6 cache lines.
const actKSize = 384

// kquantAVX512 is the Q4_K or Q6_K tile (kquant_int.go spells out the
// order). The integer sums are exact, so only the float steps are fixed;
// the integer work is arranged to take few instructions per (row, token):
//
//   - per super-block and row: the sub-block scales as a table of 16-bit
//     lanes (Q4_K: unpacked from their 6-bit packing, and the mins with
//     them, by two VPSHUFB, shifts and a VPTERNLOGD; Q6_K: VPMOVSXBW); Q6_K
//     starts each token's int32 lanes at −32·sc·S16 (VPMADDWD of the words
//     −32·sc, zero-extended, with the input's 16-element sums);
//   - per 64-element chunk and row: the codes in element order (Q6_K: low
//     nibbles, and the high bits shifted into place and merged by
//     VPTERNLOGD) and the scales of the lanes' sub-blocks (VPERMW);
//   - per chunk, row and token: VPMADDUBSW (u8·s8 pair sums, exact for
//     6-bit codes) and VPDPWSSD by the scales into the int32 lanes: two
//     instructions;
//   - per super-block, row and token: the float steps of the definition
//     (Q4_K: the mins term m·S32 by VPMADDWD, exact, and an FMA on lanes
//     0–7 only), the scale products d·dx from the frame (3 or more tokens:
//     one VMULPS per row and super-block) or by VMULPS.BCST.
//
// Tokens are addressed from one base and the stride ldx (×1, 2, 4 and
// 3ldx), so eight tokens need four general registers. The one-token Q4_K
// tile unpacks the scales in general registers (its vector pipes are the
// busier). The outputs are reduced by storeOutK.
func (g *gen) kquantAVX512(q6 bool, R, T int) string {
	g.pfL2 = false
	kind, bb := "k4", 144
	if q6 {
		kind, bb = "k6", 210
	}
	name := fmt.Sprintf("%sAVX512R%dT%d", kind, R, T) + g.suffix()
	fmt.Fprintf(&g.decls, "//go:noescape\nfunc %s(w *byte, ldw uintptr, x *actBlockK, ldx uintptr, nb int, out *float32, ldo uintptr)\n\n", name)
	g.p("// func %s(w *byte, ldw uintptr, x *actBlockK, ldx uintptr, nb int, out *float32, ldo uintptr)", name)
	// With three or more tokens the scale products of a super-block are
	// computed for all tokens of a row at once: the group leader's block
	// (token 0 of the tile) holds the d of its tile's tokens (dx, then
	// dn), so one VMULPS per row gives every d·dx (Q4_K: in even lanes,
	// dmin·dx in odd lanes, from dx spread to pairs by VPMOVZXDQ and
	// VMOVSLDUP), stored to the frame, where the FMAs take them as
	// broadcast memory operands; with fewer tokens, VMULPS.BCST per (row,
	// token). The frame also holds the Q4_K unpacked scales and mins (16
	// bytes a row). With a frame, the function is not NOSPLIT: the
	// assembler adds the stack check.
	group := T >= 3
	prodSize := 0
	if group {
		prodSize = 32
		if !q6 {
			prodSize = 64
		}
	}
	// Wide tiles (2RT + R + the constants > 32 registers: 2 rows × 5…8
	// tokens) keep the float accumulators in the frame, updated once per
	// super-block, and load each token's codes once for both rows.
	consts := 9 // the gather indices, masks, shift counts and temporaries
	if q6 {
		consts = 11
	}
	wide := 2*R*T+R+consts > 32
	if wide && (!group || R != 2) {
		panic(name + ": wide tiles are 2 rows of 3 or more tokens")
	}
	unpOff, frameSize := prodSize*R, prodSize*R
	if !q6 {
		frameSize += 16 * R
	}
	faccOff := frameSize
	if wide {
		frameSize += 64 * R * T
	}
	if frameSize == 0 {
		g.p("TEXT ·%s(SB), NOSPLIT, $0-56", name)
	} else {
		g.p("TEXT ·%s(SB), $%d-56", name, frameSize)
	}
	if R > 4 || T > 8 {
		panic(name + ": too many rows or tokens")
	}
	rows := []string{"SI", "R8", "R9", "R10"}[:R]
	const P, L, L3, P4, pfReg, tmp = "DI", "BX", "DX", "R13", "R11", "R12"
	g.pointers(rows, arg(0), arg(1), tmp)
	g.p("\tMOVQ %s, %s", arg(2), P)
	if T > 1 {
		g.p("\tMOVQ %s, %s", arg(3), L)
	}
	if T > 3 {
		g.p("\tLEAQ (%s)(%s*2), %s", L, L, L3)
	}
	if T > 5 {
		g.p("\tLEAQ (%s)(%s*4), %s", P, L, P4)
	}
	// tok(t, off) addresses byte off of token t's current super-block.
	tok := func(t, off int) string {
		return fmt.Sprintf("%d%s", off, [8]string{
			"(" + P + ")", "(" + P + ")(" + L + "*1)", "(" + P + ")(" + L + "*2)", "(" + P + ")(" + L3 + "*1)",
			"(" + P + ")(" + L + "*4)", "(" + P4 + ")(" + L + "*1)", "(" + P + ")(" + L3 + "*2)", "(" + P4 + ")(" + L3 + "*1)"}[t])
	}
	pf := ""
	if g.kGroup > 0 {
		pf = g.kGroupPrefetch(rows, pfReg, bb)
	} else {
		pf = g.prefetchSetup(R, rows, pfReg)
	}
	// Vector registers: the float accumulators first (reduce16Z's temp is
	// Z30), then the int32 ones, the tables and the constants.
	next := 0
	alloc := func(n int) int { k := next; next += n; return k }
	fBase := 0
	if !wide {
		fBase = alloc(R * T)
	}
	iBase, tBase := alloc(R*T), alloc(R)
	facc := func(r, t int) int { return fBase + r*T + t }
	iacc := func(r, t int) int { return iBase + r*T + t }
	faccMem := func(r, t int) string { return fmt.Sprintf("%d(SP)", faccOff+64*(r*T+t)) }
	tab := func(r int) int { return tBase + r }
	idxBase := alloc(4)
	idx := func(k int) int { return idxBase + k }
	mask0F, shift := alloc(1), alloc(1)
	// Codes and scales of the current chunk: one pair, or one per row in
	// wide tiles, which load each token's codes (zq) once.
	nc := 1
	if wide {
		nc = R
	}
	zcBase, zsBase := alloc(nc), alloc(nc)
	zcr := func(r int) int { return zcBase + r%nc }
	zsr := func(r int) int { return zsBase + r%nc }
	zc, zs, zq, zt := zcr(0), zsr(0), -1, alloc(1)
	if wide {
		zq = alloc(1)
	}
	shOdd, mask30 := -1, -1
	if q6 {
		shOdd, mask30 = alloc(1), alloc(1)
	}
	if next > 32 || fBase+R*T > 30 {
		panic(fmt.Sprintf("%s: %d vector registers", name, next))
	}
	idxSym := "k4idx"
	if q6 {
		idxSym = "k6idx"
	}
	g.p("\tLEAQ %s<>(SB), %s", idxSym, tmp)
	for k := 0; k < 4; k++ {
		g.p("\tVMOVDQU64 %d(%s), Z%d", 64*k, tmp, idx(k))
	}
	// kconst<>: the masks 0x0f and 0x30 (bytes), then 16-bit shift counts
	// for the low and high 256 bits: 0 and 4 (Q4_K), 4 and 2 (Q6_K even
	// chunks, left), 0 and 2 (odd chunks, right).
	g.p("\tVPBROADCASTD kconst<>+0(SB), Z%d", mask0F)
	if q6 {
		g.p("\tVPBROADCASTD kconst<>+4(SB), Z%d", mask30)
		g.p("\tVMOVDQU64 kconst<>+128(SB), Z%d", shift)
		g.p("\tVMOVDQU64 kconst<>+192(SB), Z%d", shOdd)
	} else {
		g.p("\tVMOVDQU64 kconst<>+64(SB), Z%d", shift)
		g.p("\tMOVL $0xff, %s", tmp)
		g.p("\tKMOVW %s, K1", tmp) // lanes 0–7: the mins
	}
	if wide {
		g.p("\tVPXORD Z%d, Z%d, Z%d", zt, zt, zt)
	}
	for r := 0; r < R; r++ {
		for t := 0; t < T; t++ {
			if wide {
				g.p("\tVMOVUPS Z%d, %s", zt, faccMem(r, t))
			} else {
				g.p("\tVPXORD Z%d, Z%d, Z%d", facc(r, t), facc(r, t), facc(r, t))
			}
		}
	}
	g.p("\tXORQ AX, AX")
	g.p("\tMOVQ nb+32(FP), CX")
	g.p("\tTESTQ CX, CX")
	g.p("\tJZ %s_reduce", name)
	g.p("%s_loop:", name)
	g.kPrefetchLines(pf, R, bb)
	if group {
		if q6 {
			g.p("\tVMOVUPS %s, Y%d", tok(0, 352), zc)
		} else {
			g.p("\tVPMOVZXDQ %s, Z%d", tok(0, 352), zc)
			g.p("\tVMOVSLDUP Z%d, Z%d", zc, zc)
		}
	}
	for r, row := range rows {
		if group {
			if q6 {
				g.p("\tVPBROADCASTW 208(%s)(AX*1), X%d", row, zt)
				g.p("\tVCVTPH2PS X%d, Y%d", zt, zt)
				g.p("\tVMULPS Y%d, Y%d, Y%d", zc, zt, zt)
				g.p("\tVMOVUPS Y%d, %d(SP)", zt, prodSize*r)
			} else {
				g.p("\tVPBROADCASTD (%s)(AX*1), Y%d", row, zt) // d, dmin
				g.p("\tVCVTPH2PS Y%d, Z%d", zt, zt)
				g.p("\tVMULPS Z%d, Z%d, Z%d", zc, zt, zt)
				g.p("\tVMOVUPS Z%d, %d(SP)", zt, prodSize*r)
			}
		}
		if q6 {
			g.p("\tVPMOVSXBW 192(%s)(AX*1), Y%d", row, tab(r))
			continue
		}
		if T == 1 {
			// One token: the vector pipes are the busier, so the 6-bit
			// scales are unpacked in general registers (getScaleMinK4
			// for the eight sub-blocks at once, u0…u2 as 32-bit words).
			a, b, c, d := tmp, "BX", "DX", "R13"
			g.p("\tMOVL 4(%s)(AX*1), %s", row, a)  // u0
			g.p("\tMOVL 12(%s)(AX*1), %s", row, c) // u2
			g.p("\tMOVL %s, %s", c, d)
			g.p("\tANDL $0x0f0f0f0f, %s", d)
			g.join6(d, a, b) // scales 0…7
			g.p("\tVMOVQ %s, X%d", d, tab(r))
			g.p("\tVPMOVZXBW X%d, Y%d", tab(r), tab(r))
			g.p("\tMOVL 8(%s)(AX*1), %s", row, b) // u1
			g.p("\tSHRL $4, %s", c)
			g.p("\tANDL $0x0f0f0f0f, %s", c)
			g.join6(c, b, a) // mins 0…7
			g.p("\tMOVQ %s, %d(SP)", c, unpOff+16*r+8)
			continue
		}
		// getScaleMinK4 for the eight sub-blocks at once: bytes 0–7 the
		// scales, 8–15 the mins (k4unpack<> in main).
		g.p("\tVMOVDQU64 4(%s)(AX*1), X%d", row, zt)
		g.p("\tVPSHUFB k4unpack<>+0(SB), X%d, X%d", zt, zs)
		g.p("\tVPSHUFB k4unpack<>+16(SB), X%d, X%d", zt, zt)
		g.p("\tVPSRLVW k4unpack<>+32(SB), X%d, X%d", zs, zs)
		g.p("\tVPSRLW $2, X%d, X%d", zt, zt)
		g.p("\tVPANDD k4unpack<>+64(SB), X%d, X%d", zt, zt)
		g.p("\tVPTERNLOGD $0xec, k4unpack<>+48(SB), X%d, X%d", zt, zs) // (zs & low) | zt
		g.p("\tVMOVDQU64 X%d, %d(SP)", zs, unpOff+16*r)
		g.p("\tVPMOVZXBW X%d, Y%d", zs, tab(r))
	}
	for k := 0; k < 4; k++ {
		for r, row := range rows {
			zc, zs := zcr(r), zsr(r)
			if q6 {
				n, odd := k/2, k%2 == 1
				if k == 0 {
					// U = T − 32·sc·S16: the int32 lanes start at
					// VPMADDWD((−32·sc, 0), S16) = −32·sc·S16.
					g.p("\tVPMULLW k6m32<>(SB), Y%d, Y%d", tab(r), zs)
					g.p("\tVPMOVZXWD Y%d, Z%d", zs, zs)
					for t := 0; t < T; t++ {
						g.p("\tVPMADDWD %s, Z%d, Z%d", tok(t, 256), zs, iacc(r, t))
					}
				}
				g.p("\tVMOVDQU64 %d(%s)(AX*1), Z%d", 64*n, row, zc)
				if odd {
					g.p("\tVPSRLW $4, Z%d, Z%d", zc, zc)
				}
				g.p("\tVBROADCASTI64X4 %d(%s)(AX*1), Z%d", 128+32*n, row, zt)
				if odd {
					g.p("\tVPSRLVW Z%d, Z%d, Z%d", shOdd, zt, zt)
				} else {
					g.p("\tVPSLLVW Z%d, Z%d, Z%d", shift, zt, zt)
				}
				g.p("\tVPANDD Z%d, Z%d, Z%d", mask30, zt, zt)
				g.p("\tVPTERNLOGD $0xec, Z%d, Z%d, Z%d", mask0F, zt, zc) // (zc & 0x0f) | zt
			} else {
				g.p("\tVBROADCASTI64X4 %d(%s)(AX*1), Z%d", 16+32*k, row, zc)
				g.p("\tVPSRLVW Z%d, Z%d, Z%d", shift, zc, zc)
				g.p("\tVPANDD Z%d, Z%d, Z%d", mask0F, zc, zc)
			}
			g.p("\tVPERMW Z%d, Z%d, Z%d", tab(r), idx(k), zs)
			if wide && r < R-1 {
				continue
			}
			r0 := r
			if wide {
				r0 = 0
			}
			for t := 0; t < T; t++ {
				q := tok(t, 64*k)
				if wide {
					g.p("\tVMOVDQU64 %s, Z%d", q, zq)
					q = fmt.Sprintf("Z%d", zq)
				}
				for rr := r0; rr <= r; rr++ {
					g.p("\tVPMADDUBSW %s, Z%d, Z%d", q, zcr(rr), zt)
					if k == 0 && !q6 {
						g.p("\tVPMADDWD Z%d, Z%d, Z%d", zsr(rr), zt, iacc(rr, t))
					} else {
						g.p("\tVPDPWSSD Z%d, Z%d, Z%d", zsr(rr), zt, iacc(rr, t))
					}
				}
			}
		}
	}
	// The float steps; the int32 lanes are dead after their first FMA,
	// and the Q4_K mins term is computed in them.
	for r, row := range rows {
		zd, zm, ym := zc, zs, tab(r)
		off := 0
		if q6 {
			off = 208
		}
		if !group {
			g.p("\tVPBROADCASTW %d(%s)(AX*1), Y%d", off, row, zd)
			g.p("\tVCVTPH2PS Y%d, Z%d", zd, zd)
			if !q6 {
				g.p("\tVPBROADCASTW 2(%s)(AX*1), Y%d", row, zm)
				g.p("\tVCVTPH2PS Y%d, Z%d", zm, zm)
			}
		}
		if !q6 {
			g.p("\tVPMOVZXBD %d(SP), Y%d", unpOff+16*r+8, ym)
		}
		// prod(t, i): token t's d·dx (i = 0) or dmin·dx (i = 1).
		prod := func(t, i int) string {
			if q6 {
				return fmt.Sprintf("%d(SP)", prodSize*r+4*t)
			}
			return fmt.Sprintf("%d(SP)", prodSize*r+8*t+4*i)
		}
		for t := 0; t < T; t++ {
			ia, fa := iacc(r, t), facc(r, t)
			if wide {
				fa = []int{zq, zt}[t%2]
				g.p("\tVMOVUPS %s, Z%d", faccMem(r, t), fa)
			}
			g.p("\tVCVTDQ2PS Z%d, Z%d", ia, ia)
			if group {
				g.p("\tVFMADD231PS.BCST %s, Z%d, Z%d", prod(t, 0), ia, fa)
			} else {
				g.p("\tVMULPS.BCST %s, Z%d, Z%d", tok(t, 352), zd, zt)
				g.p("\tVFMADD231PS Z%d, Z%d, Z%d", ia, zt, fa)
			}
			if !q6 {
				// m·S32 < 2^15·2^6: VPMADDWD of (m, 0) with S32 is exact.
				g.p("\tVPMADDWD %s, Y%d, Y%d", tok(t, 320), ym, ia)
				g.p("\tVCVTDQ2PS Y%d, Y%d", ia, ia)
				if group {
					g.p("\tVFNMADD231PS.BCST %s, Z%d, K1, Z%d", prod(t, 1), ia, fa)
				} else {
					g.p("\tVMULPS.BCST %s, Z%d, Z%d", tok(t, 352), zm, zt)
					g.p("\tVFNMADD231PS Z%d, Z%d, K1, Z%d", ia, zt, fa)
				}
			}
			if wide {
				g.p("\tVMOVUPS Z%d, %s", fa, faccMem(r, t))
			}
		}
	}
	g.p("\tADDQ $%d, AX", g.kStep(bb))
	g.p("\tADDQ $%d, %s", actKSize, P)
	if T > 5 {
		g.p("\tADDQ $%d, %s", actKSize, P4)
	}
	g.p("\tDECQ CX")
	g.p("\tJNZ %s_loop", name)
	g.p("%s_reduce:", name)
	if wide {
		for r := 0; r < R; r++ {
			for t := 0; t < T; t++ {
				g.p("\tVMOVUPS %s, Z%d", faccMem(r, t), r*T+t)
			}
		}
	}
	g.storeOutK(R, T, func(r, t int) int { return r*T + t }, R*T) // the accumulators in Z0…Z(RT−1)
	return name
}

// streamKRows is the most rows k4Stream's tiles take at once (zen4.go
// says which widths take which).
const streamKRows = 4

// kPackRows is how many rows a packed K-quant group holds (pack.go,
// packKGroup): the rows the one-token stream tiles of packed rows take at once.
const kPackRows = 8

// streamTile writes a one-token K-quant stream tile of avx512-zen4
// (zen4.go): R rows at once (seq = 0), or seq rows one after another, each
// read whole as one stream, with the constants loaded once (R = 1). Row r
// of a super-block (bb bytes; byte off of it at at(off)) is written by
// body into the float accumulators Y(2r) (lanes 0–7) and Y(2r+1) (lanes
// 8–15), or with more than four rows (packed groups, kGroup) into Z(r)
// (lanes 0–15; zAcc); consts loads the constants once; the inputs are at
// DI; frame is the frame's size; vector registers from free on are free at
// the end. With seq, R11 keeps the inputs' start, R12 the row stride, R13
// the output and BX the rows left. The rows of a packed group are
// addressed from SI alone (row r bb·r bytes on).
func (g *gen) streamTile(kind string, R, seq, bb, frame, free int, consts func(), body func(r int, at func(off int) string)) string {
	g.pfL2 = false
	name := fmt.Sprintf("%sZen4R%dT1", kind, R) + g.suffix()
	if seq > 0 {
		name = fmt.Sprintf("%sZen4S%dT1", kind, seq) + g.suffix()
	}
	fmt.Fprintf(&g.decls, "//go:noescape\nfunc %s(w *byte, ldw uintptr, x *actBlockK, ldx uintptr, nb int, out *float32, ldo uintptr)\n\n", name)
	g.p("// func %s(w *byte, ldw uintptr, x *actBlockK, ldx uintptr, nb int, out *float32, ldo uintptr)", name)
	if frame == 0 {
		g.p("TEXT ·%s(SB), NOSPLIT, $0-56", name)
	} else {
		g.p("TEXT ·%s(SB), $%d-56", name, frame)
	}
	if R > 4 && g.kGroup == 0 {
		panic(fmt.Sprintf("streamTile: %d rows need a packed group's single pointer", R))
	}
	rows := []string{"SI", "R8", "R9", "R10"}[:min(R, 4)]
	if g.kGroup > 0 {
		rows = rows[:1]
	}
	g.pointers(rows, arg(0), arg(1), "R12")
	g.p("\tMOVQ %s, DI", arg(2))
	if seq > 0 {
		g.p("\tMOVQ %s, R11", arg(2))
		g.p("\tMOVQ %s, R12", arg(1))
		g.p("\tMOVQ out+40(FP), R13")
		g.p("\tMOVQ $%d, BX", seq)
	}
	consts()
	if seq > 0 {
		g.p("%s_row:", name)
		g.p("\tMOVQ R11, DI")
	}
	g.p("\tXORQ AX, AX")
	g.quantLoopHead(name, 2*R, "VPXORD", "", R, bb)
	for r := 0; r < R; r++ {
		row, disp := "SI", r*bb
		if g.kGroup == 0 {
			row, disp = rows[r], 0
		}
		body(r, func(off int) string { return fmt.Sprintf("%d(%s)(AX*1)", off+disp, row) })
	}
	g.p("\tADDQ $%d, AX", g.kStep(bb))
	g.p("\tADDQ $%d, DI", actKSize)
	g.p("\tDECQ CX")
	g.p("\tJNZ %s_loop", name)
	g.p("%s_reduce:", name)
	if seq == 0 && zAcc(R) {
		g.storeOutK(R, 1, func(r, t int) int { return r }, free)
		return name
	}
	if seq == 0 {
		for r := 0; r < R; r++ {
			g.p("\tVINSERTF64X4 $1, Y%d, Z%d, Z%d", 2*r+1, 2*r, 2*r)
		}
		g.storeOutK(R, 1, func(r, t int) int { return 2 * r }, free)
		return name
	}
	// The row's lanes reduced as storeOutK reduces one accumulator (lanes
	// i and i+8 added first, then i+4, i+2, i+1: reduce16), the sum
	// stored, and the next row started.
	g.p("\tVADDPS Y1, Y0, Y0")
	g.p("\tVEXTRACTF32X4 $1, Y0, X31")
	g.p("\tVADDPS X31, X0, X0")
	g.p("\tVPERMILPS $0x4e, X0, X31")
	g.p("\tVADDPS X31, X0, X0")
	g.p("\tVMOVSHDUP X0, X31")
	g.p("\tVADDSS X31, X0, X0")
	g.p("\tVMOVSS X0, (R13)")
	g.p("\tADDQ R12, SI")
	g.p("\tADDQ $4, R13")
	g.p("\tDECQ BX")
	g.p("\tJNZ %s_row", name)
	g.ret()
	return name
}

// k4Stream is the one-token Q4_K stream tile of avx512-zen4 (streamTile),
// with kquantAVX512's operations on the same values in the same order
// (the same bits), arranged for a CPU whose 512-bit instructions take two
// passes through 256-bit units and which issues at most six instructions a
// cycle: the fewest instructions, in YMM registers, one 32-element
// sub-block per register so that each register's codes have one scale.
//
//   - per super-block: the 12 scale bytes unpacked as kquantAVX512 does,
//     in both halves of a YMM register (VBROADCASTI32X4), then by
//     VPSHUFB the word pairs (sc_j, sc_j) of sub-blocks 0–3 (sa) and 4–7
//     (sb) in each half and the mins zero-extended to 32 bits;
//   - per 64-element chunk k: the codes (one 32-byte load), their low and
//     high nibbles (sub-blocks 2k and 2k+1: the definition's lanes 0–7 and
//     8–15), and for each a VPMADDUBSW and a VPDPWSSD by its scale, spread
//     by VPSHUFD, into the int32 lanes 0–7 (tlo) or 8–15 (thi);
//   - the float steps with d·dx and dmin·dx computed once as scalars and
//     broadcast from the frame, lanes 0–7 and 8–15 in two accumulators
//     (with more than four rows, a packed group's eight, all 16 in one
//     ZMM register: zAcc, the mins' FMA masked to lanes 0–7).
//
// Measured on the Zen 4 against kquantAVX512's one-row tile (the same
// bits): docs/BENCHMARKS.md, "Single-token products per kernel level".
func (g *gen) k4Stream(R, seq int) string {
	const P = "DI"
	// Registers 0 … 2R−1 (Z0 … Z(R−1) with zAcc) are the rows' float
	// accumulators; from tlo on, registers are reused row after row.
	const (
		tlo, thi, zu, zt, sa, sb, zm, zd = 8, 9, 10, 11, 12, 13, 14, 15
		zc, zl, zh, p0, p1, zsc          = 16, 17, 18, 19, 20, 21
		mask, shA, shB, cnt, lo, hi      = 22, 23, 24, 25, 26, 27 // constants
		dupA, dupB, dupM                 = 28, 29, 30
	)
	consts := func() {
		g.p("\tVPBROADCASTD kconst<>+0(SB), Y%d", mask)
		for i, r := range []int{shA, shB, cnt, lo, hi} {
			g.p("\tVBROADCASTI32X4 k4unpack<>+%d(SB), Y%d", 16*i, r)
		}
		for i, r := range []int{dupA, dupB, dupM} {
			g.p("\tVMOVDQU64 k4dup<>+%d(SB), Y%d", 32*i, r)
		}
		if zAcc(R) {
			g.p("\tMOVL $0xff, R12")
			g.p("\tKMOVW R12, K1")
		}
	}
	body := func(r int, at func(int) string) {
		// getScaleMinK4 for the eight sub-blocks (kquantAVX512's
		// unpacking): bytes 0–7 of zu the scales, 8–15 the mins, in both
		// halves.
		g.p("\tVBROADCASTI32X4 %s, Y%d", at(4), zt)
		g.p("\tVPSHUFB Y%d, Y%d, Y%d", shA, zt, zu)
		g.p("\tVPSHUFB Y%d, Y%d, Y%d", shB, zt, zt)
		g.p("\tVPSRLVW Y%d, Y%d, Y%d", cnt, zu, zu)
		g.p("\tVPSRLW $2, Y%d, Y%d", zt, zt)
		g.p("\tVPANDD Y%d, Y%d, Y%d", hi, zt, zt)
		g.p("\tVPTERNLOGD $0xec, Y%d, Y%d, Y%d", lo, zt, zu) // (zu & low) | zt
		g.p("\tVPSHUFB Y%d, Y%d, Y%d", dupA, zu, sa)
		g.p("\tVPSHUFB Y%d, Y%d, Y%d", dupB, zu, sb)
		g.p("\tVPSHUFB Y%d, Y%d, Y%d", dupM, zu, zm)
		for k := 0; k < 4; k++ {
			g.p("\tVMOVDQU64 %s, Y%d", at(16+32*k), zc)
			g.p("\tVPANDD Y%d, Y%d, Y%d", mask, zc, zl)
			g.p("\tVPSRLW $4, Y%d, Y%d", zc, zh)
			g.p("\tVPANDD Y%d, Y%d, Y%d", mask, zh, zh)
			g.p("\tVPMADDUBSW %d(%s), Y%d, Y%d", 64*k, P, zl, p0)
			g.p("\tVPMADDUBSW %d(%s), Y%d, Y%d", 64*k+32, P, zh, p1)
			for i, acc := range []int{tlo, thi} {
				j := 2*k + i // the sub-block
				src := sa
				if j >= 4 {
					src = sb
				}
				g.p("\tVPSHUFD $%d, Y%d, Y%d", 0x55*(j%4), src, zsc)
				if k == 0 {
					g.p("\tVPMADDWD Y%d, Y%d, Y%d", zsc, []int{p0, p1}[i], acc)
				} else {
					g.p("\tVPDPWSSD Y%d, Y%d, Y%d", zsc, []int{p0, p1}[i], acc)
				}
			}
		}
		g.p("\tVPBROADCASTD %s, X%d", at(0), zd) // d, dmin
		g.p("\tVCVTPH2PS X%d, X%d", zd, zd)
		g.p("\tVMULPS.BCST 352(%s), X%d, X%d", P, zd, zd)
		g.p("\tVMOVQ X%d, %d(SP)", zd, 8*r) // d·dx, dmin·dx
		if zAcc(R) {
			// Lanes 0–15 in Z(r); the mins only in lanes 0–7 (K1).
			g.p("\tVINSERTI64X4 $1, Y%d, Z%d, Z%d", thi, tlo, tlo)
			g.p("\tVCVTDQ2PS Z%d, Z%d", tlo, tlo)
			g.p("\tVFMADD231PS.BCST %d(SP), Z%d, Z%d", 8*r, tlo, r)
			g.p("\tVPMADDWD 320(%s), Y%d, Y%d", P, zm, thi)
			g.p("\tVCVTDQ2PS Y%d, Y%d", thi, thi)
			g.p("\tVFNMADD231PS.BCST %d(SP), Z%d, K1, Z%d", 8*r+4, thi, r)
			return
		}
		g.p("\tVCVTDQ2PS Y%d, Y%d", tlo, tlo)
		g.p("\tVCVTDQ2PS Y%d, Y%d", thi, thi)
		g.p("\tVFMADD231PS.BCST %d(SP), Y%d, Y%d", 8*r, tlo, 2*r)
		g.p("\tVFMADD231PS.BCST %d(SP), Y%d, Y%d", 8*r, thi, 2*r+1)
		// m·S32 < 2^15·2^6: VPMADDWD of (m, 0) with S32 is exact.
		g.p("\tVPMADDWD 320(%s), Y%d, Y%d", P, zm, thi)
		g.p("\tVCVTDQ2PS Y%d, Y%d", thi, thi)
		g.p("\tVFNMADD231PS.BCST %d(SP), Y%d, Y%d", 8*r+4, thi, 2*r)
	}
	return g.streamTile("k4", R, seq, 144, 8*R, tlo, consts, body)
}

// k6Stream is k4Stream for Q6_K, of seq rows one after another or R rows
// at once (a packed group's: streamTile): kquantAVX512's
// operations on the same values in the same order, in YMM registers. A
// 32-element register of the chunk holds two 16-element sub-blocks, one
// per 128-bit half, so the word pairs (sc, sc) of the scales are laid out
// two sub-blocks per 32-bit word's position (sa: sub-blocks 0–7, sb:
// 8–15; sub-block 2v in the low half, 2v+1 in the high) and VPSHUFD
// spreads register v's. Per 128-element half n of the super-block: ql's
// two 32-byte rows and qh's 32 bytes are loaded once for the half's two
// chunks; each chunk's codes are their nibbles merged with qh's bits by
// VPTERNLOGD; the int32 lanes start at −32·sc·S16 (kquantAVX512's VPMULLW,
// VPMOVZXWD and VPMADDWD, once for the 16 lanes).
func (g *gen) k6Stream(R, seq int) string {
	const P = "DI"
	const (
		tlo, thi, zs, zd, sa, sb = 8, 9, 10, 11, 12, 13
		za, zb, zh, cl, ch, t1   = 14, 15, 16, 17, 18, 19
		p0, p1, zsc              = 20, 21, 22
		m0F, m30, tabA, tabB     = 23, 24, 25, 26 // constants
	)
	consts := func() {
		g.p("\tVPBROADCASTD kconst<>+0(SB), Y%d", m0F)
		g.p("\tVPBROADCASTD kconst<>+4(SB), Y%d", m30)
		g.p("\tVMOVDQU64 k6dup<>+0(SB), Y%d", tabA)
		g.p("\tVMOVDQU64 k6dup<>+32(SB), Y%d", tabB)
	}
	body := func(r int, at func(int) string) {
		// The scales as word pairs, sign-extended by VPSRAW from the high
		// bytes.
		g.p("\tVBROADCASTI32X4 %s, Y%d", at(192), zs)
		g.p("\tVPSHUFB Y%d, Y%d, Y%d", tabA, zs, sa)
		g.p("\tVPSRAW $8, Y%d, Y%d", sa, sa)
		g.p("\tVPSHUFB Y%d, Y%d, Y%d", tabB, zs, sb)
		g.p("\tVPSRAW $8, Y%d, Y%d", sb, sb)
		// U = T − 32·sc·S16: the 16 int32 lanes start at
		// VPMADDWD((−32·sc, 0), S16), lanes 0–7 in tlo and 8–15 in thi.
		g.p("\tVPMOVSXBW %s, Y%d", at(192), tlo)
		g.p("\tVPMULLW k6m32<>(SB), Y%d, Y%d", tlo, tlo)
		g.p("\tVPMOVZXWD Y%d, Z%d", tlo, tlo)
		g.p("\tVPMADDWD 256(%s), Z%d, Z%d", P, tlo, tlo)
		g.p("\tVEXTRACTI64X4 $1, Z%d, Y%d", tlo, thi)
		for n := 0; n < 2; n++ {
			g.p("\tVMOVDQU64 %s, Y%d", at(64*n), za)
			g.p("\tVMOVDQU64 %s, Y%d", at(64*n+32), zb)
			g.p("\tVMOVDQU64 %s, Y%d", at(128+32*n), zh)
			for odd := 0; odd < 2; odd++ {
				k := 2*n + odd
				// Lanes 0–7: ql's first 32 bytes, qh's bits 0–1 (even
				// chunk) or 4–5 (odd); lanes 8–15: the second 32, bits
				// 2–3 or 6–7. Each: (nibble & 0x0f) | (qh's bits moved to
				// 4–5 & 0x30).
				for i, src := range []int{za, zb} {
					c := []int{cl, ch}[i]
					if odd == 0 {
						g.p("\tVPANDD Y%d, Y%d, Y%d", m0F, src, c)
					} else {
						g.p("\tVPSRLW $4, Y%d, Y%d", src, c)
						g.p("\tVPANDD Y%d, Y%d, Y%d", m0F, c, c)
					}
					hb := zh
					switch sh := 4 - 2*i - 4*odd; { // qh's bits 2i+4·odd to 4
					case sh > 0:
						g.p("\tVPSLLW $%d, Y%d, Y%d", sh, zh, t1)
						hb = t1
					case sh < 0:
						g.p("\tVPSRLW $%d, Y%d, Y%d", -sh, zh, t1)
						hb = t1
					}
					g.p("\tVPTERNLOGD $0xf8, Y%d, Y%d, Y%d", m30, hb, c) // c | (hb & 0x30)
				}
				g.p("\tVPMADDUBSW %d(%s), Y%d, Y%d", 64*k, P, cl, p0)
				g.p("\tVPMADDUBSW %d(%s), Y%d, Y%d", 64*k+32, P, ch, p1)
				for i, acc := range []int{tlo, thi} {
					v := 2*k + i // sub-blocks 2v, 2v+1
					src := sa
					if v >= 4 {
						src = sb
					}
					g.p("\tVPSHUFD $%d, Y%d, Y%d", 0x55*(v%4), src, zsc)
					g.p("\tVPDPWSSD Y%d, Y%d, Y%d", zsc, []int{p0, p1}[i], acc)
				}
			}
		}
		g.p("\tVPBROADCASTW %s, X%d", at(208), zd)
		g.p("\tVCVTPH2PS X%d, X%d", zd, zd)
		g.p("\tVMULPS.BCST 352(%s), X%d, X%d", P, zd, zd)
		if zAcc(R) {
			g.p("\tVBROADCASTSS X%d, Z%d", zd, zd) // d·dx
			g.p("\tVINSERTI64X4 $1, Y%d, Z%d, Z%d", thi, tlo, tlo)
			g.p("\tVCVTDQ2PS Z%d, Z%d", tlo, tlo)
			g.p("\tVFMADD231PS Z%d, Z%d, Z%d", tlo, zd, r)
			return
		}
		g.p("\tVBROADCASTSS X%d, Y%d", zd, zd) // d·dx
		g.p("\tVCVTDQ2PS Y%d, Y%d", tlo, tlo)
		g.p("\tVCVTDQ2PS Y%d, Y%d", thi, thi)
		g.p("\tVFMADD231PS Y%d, Y%d, Y%d", tlo, zd, 2*r)
		g.p("\tVFMADD231PS Y%d, Y%d, Y%d", thi, zd, 2*r+1)
	}
	return g.streamTile("k6", R, seq, 210, 0, tlo, consts, body)
}

// storeOutK is storeOut for the K-quant tiles: each row's accumulators are
// reduced as reduce16 does, four or eight tokens at a time with the lanes
// of several accumulators in one register (every addition the one
// reduce16Z makes, with the same operands in the same order), the rest by
// reduce16Z; seven registers from free up are temporaries.
func (g *gen) storeOutK(R, T int, acc func(r, t int) int, free int) {
	tmp := func(i int) int {
		if free+i >= 32 {
			panic("storeOutK: too few registers")
		}
		return free + i
	}
	g.p("\tMOVQ out+40(FP), SI")
	g.p("\tMOVQ ldo+48(FP), R8")
	g.p("\tLEAQ (R8)(R8*2), R9") // 3·ldo
	// outAt(t, r) addresses out[t·ldo + r] with SI = out (SI + 4ldo for t ≥ 4).
	outAt := func(t, r int) string {
		base := "SI"
		if t >= 4 {
			base, t = "R10", t-4
		}
		return fmt.Sprintf("%d(%s)%s", 4*r, base, [4]string{"", "(R8*1)", "(R8*2)", "(R9*1)"}[t])
	}
	g.p("\tLEAQ (SI)(R8*4), R10")
	for r := 0; r < R; r++ {
		t0 := 0
		for ; t0+4 <= T; t0 += 4 {
			n := 4
			if t0+8 <= T {
				n = 8
			}
			// Step 1: 16 → 8 lanes, two accumulators a register.
			v := make([]int, n/2)
			for i := range v {
				a, b := acc(r, t0+2*i), acc(r, t0+2*i+1)
				x, y := tmp(2*i), tmp(2*i+1)
				g.p("\tVSHUFF64X2 $0x44, Z%d, Z%d, Z%d", b, a, x) // [a lo | b lo]
				g.p("\tVSHUFF64X2 $0xee, Z%d, Z%d, Z%d", b, a, y) // [a hi | b hi]
				g.p("\tVADDPS Z%d, Z%d, Z%d", y, x, x)
				v[i] = x
			}
			// Step 2: 8 → 4 lanes, four accumulators a register.
			w := make([]int, n/4)
			for j := range w {
				p, q := v[2*j], v[2*j+1]
				y := tmp(2*j + 1)
				g.p("\tVSHUFF64X2 $0xdd, Z%d, Z%d, Z%d", q, p, y) // the v4…7
				g.p("\tVSHUFF64X2 $0x88, Z%d, Z%d, Z%d", q, p, p) // the v0…3
				g.p("\tVADDPS Z%d, Z%d, Z%d", y, p, p)
				w[j] = p
			}
			// Steps 3 and 4: (w0 + w2) + (w1 + w3); token t0+i ends in
			// element 0 of 128-bit unit i, t0+4+i in element 2.
			z := w[0]
			if n == 8 {
				x, y := tmp(1), tmp(3)
				g.p("\tVSHUFPS $0x44, Z%d, Z%d, Z%d", w[1], w[0], x)
				g.p("\tVSHUFPS $0xee, Z%d, Z%d, Z%d", w[1], w[0], y)
				g.p("\tVADDPS Z%d, Z%d, Z%d", y, x, x)
				z = x
			} else {
				y := tmp(1)
				g.p("\tVPERMILPS $0x4e, Z%d, Z%d", z, y)
				g.p("\tVADDPS Z%d, Z%d, Z%d", y, z, z)
			}
			y := tmp(5)
			g.p("\tVMOVSHDUP Z%d, Z%d", z, y)
			g.p("\tVADDPS Z%d, Z%d, Z%d", y, z, z)
			for i := 0; i < 4; i++ {
				x := z
				if i > 0 {
					x = tmp(6)
					g.p("\tVEXTRACTF32X4 $%d, Z%d, X%d", i, z, x)
				}
				g.p("\tVMOVSS X%d, %s", x, outAt(t0+i, r))
				if n == 8 {
					g.p("\tVEXTRACTPS $2, X%d, %s", x, outAt(t0+4+i, r))
				}
			}
			if n == 8 {
				t0 += 4
			}
		}
		for ; t0 < T; t0++ {
			k := acc(r, t0)
			g.reduce16Z(k)
			g.p("\tVMOVSS X%d, %s", k, outAt(t0, r))
		}
	}
	g.ret()
}

// kquantRowsAVX2 are the AVX2 K-quant tile heights: one row, one to four
// tokens (16 YMM registers; from three tokens on the float accumulators
// live in the stack frame). Four tokens rather than two decode a block's
// weights half as often: pp8 at 2 threads on a shared 2-core EPYC (hlm
// bench -p 8 -n 0 -t 2 -r 5, medians of 3 alternated runs) Llama-3.2-1B
// Q4_K_M 20.9 → 26.7 tokens/s, Qwen3-0.6B 32.0 → 36.4; Gemma-3-1B (most
// of its matrices Q5_0) unchanged within the noise.
var kquantRowsAVX2 = [9]int{0, 1, 1, 1, 1}

// kPairMinT is the fewest tokens of an avx2-zen1 K-quant tile (Q4_K,
// Q6_K) that takes its chunks in pairs (kPairAVX2); with fewer it is
// avx2's. On the Zen 1 (`go test -run='^$' -bench=KQuantBlocks ./tensor`,
// medians of 8 alternated runs) pairs gave Q4_K 1.00–1.04× at 2 tokens
// and 1.08–1.11× at 4 and 8; Q6_K 0.96× at 2 (its 0x0F mask then read from
// memory: no register is free), 1.06× at 4; one token the same either
// way (1.00–1.02×), so decode keeps avx2's tiles.
var kPairMinT = [2]int{2, 3}

// kquantMaxTAVX2 is the most tokens of an AVX2 K-quant tile.
const kquantMaxTAVX2 = 4

// reduce16Y folds the 16 lanes of Y(lo) (lanes 0–7) and Y(hi) (8–15) as
// reduce16 does into lane 0 of X(lo) (temp Y15).
func (g *gen) reduce16Y(lo, hi int) {
	g.p("\tVADDPS Y%d, Y%d, Y%d", hi, lo, lo)
	g.p("\tVEXTRACTF128 $1, Y%d, X15", lo)
	g.p("\tVADDPS X15, X%d, X%d", lo, lo)
	g.p("\tVPERMILPS $0x4e, X%d, X15", lo)
	g.p("\tVADDPS X15, X%d, X%d", lo, lo)
	g.p("\tVMOVSHDUP X%d, X15", lo)
	g.p("\tVADDSS X15, X%d, X%d", lo, lo)
}

// kquantAVX2 is kquantAVX512 with YMM registers: lanes 0–7 and 8–15 of
// the integer and float accumulators are two registers each (the first and
// second 32 elements of a chunk); the scales of a chunk half are broadcast
// by VPSHUFB from the scales in registers (k4Consts: Q4_K's unpacked
// from their 6-bit fields, Q6_K's sign-extended to 16 bits). One row, T ≤ 4 tokens: from
// T = 3 on, the float accumulators (touched once a super-block) are kept
// in the stack frame and loaded into Y14 and Y15 for their FMAs, the same
// instructions on the same values as in registers, so each output's bits
// do not depend on T.
//
// With pairs (the avx2-zen1 level's tiles, named …P), the chunks are taken
// two at a time (kPairAVX2).
func (g *gen) kquantAVX2(q6 bool, T int, pairs bool) string {
	g.pfL2 = false
	kind, bb := "k4", 144
	if q6 {
		kind, bb = "k6", 210
	}
	name := fmt.Sprintf("%sAVX2R1T%d", kind, T) + g.suffix()
	if pairs {
		name += "P"
	}
	fmt.Fprintf(&g.decls, "//go:noescape\nfunc %s(w *byte, ldw uintptr, x *actBlockK, ldx uintptr, nb int, out *float32, ldo uintptr)\n\n", name)
	g.p("// func %s(w *byte, ldw uintptr, x *actBlockK, ldx uintptr, nb int, out *float32, ldo uintptr)", name)
	// Frame: from T = 3 on, token t's float accumulators at 64t (lanes
	// 0–7) and 32 + 64t (lanes 8–15).
	inMem := T > 2
	frame := 0
	if inMem {
		frame += 64 * T
	}
	g.p("TEXT ·%s(SB), $%d-56", name, frame)
	rows, toks, free := regs(1, T)
	row := rows[0]
	a := free[0]
	g.p("\tMOVQ %s, %s", arg(0), row)
	g.pointers(toks, arg(2), arg(3), a)
	pf := g.prefetchSetup(1, rows, free[4:]...)
	// Y registers: float lo/hi (T ≤ 2), int lo/hi per token, codes lo/hi,
	// scales, temp, the 0x0F mask and 0x30 for Q6_K or the eight mins
	// (int32) for Q4_K; Y15 is reduce16Y's temp. From T = 3 on, Y14 and
	// Y15 hold a token's float accumulators for its FMAs (fmem their place
	// in the frame).
	per := 4
	if inMem {
		per = 2
	}
	flo := func(t int) int { return 4 * t }
	fhi := func(t int) int { return 4*t + 1 }
	ilo := func(t int) int { return per*t + per - 2 }
	ihi := func(t int) int { return per*t + per - 1 }
	if inMem {
		flo = func(int) int { return 14 }
		fhi = func(int) int { return 15 }
	}
	fmem := func(t, h int) string { return fmt.Sprintf("%d(SP)", 64*t+32*h) }
	clo, chi, ys, yt, m0F, m30 := per*T, per*T+1, per*T+2, per*T+3, per*T+4, per*T+5
	mins := m30
	if m30 > 13 || (!inMem && m30 > 14) {
		panic(name + ": too many registers")
	}
	// The second temp of the chunk pairs (kPairAVX2): a free register
	// (Q4_K: Y14 and Y15 are free until the float steps; Q6_K: they hold
	// the scales), else Y(m0F), the 0x0F mask then read from memory.
	pairTmp, last := m0F, 15
	if q6 {
		last = 13
	}
	if m30+1 <= last {
		pairTmp = m30 + 1
	}
	maskInMem := pairs && pairTmp == m0F
	if !maskInMem {
		g.p("\tMOVL $0x0f0f0f0f, %s", a)
		g.p("\tVMOVD %s, X%d", a, m0F)
		g.p("\tVPBROADCASTD X%d, Y%d", m0F, m0F)
	}
	if q6 {
		g.p("\tMOVL $0x30303030, %s", a)
		g.p("\tVMOVD %s, X%d", a, m30)
		g.p("\tVPBROADCASTD X%d, Y%d", m30, m30)
	}
	for t := 0; t < T; t++ {
		if !inMem || t == 0 {
			g.p("\tVXORPS Y%d, Y%d, Y%d", flo(t), flo(t), flo(t))
			g.p("\tVXORPS Y%d, Y%d, Y%d", fhi(t), fhi(t), fhi(t))
		}
		if inMem {
			g.p("\tVMOVUPS Y%d, %s", flo(t), fmem(t, 0))
			g.p("\tVMOVUPS Y%d, %s", fhi(t), fmem(t, 1))
		}
	}
	g.p("\tXORQ AX, AX")
	g.p("\tMOVQ nb+32(FP), CX")
	g.p("\tTESTQ CX, CX")
	g.p("\tJZ %s_reduce", name)
	g.p("%s_loop:", name)
	g.prefetchLines(pf, 1, bb/64+1)
	if q6 {
		// The sixteen scales as int16, words 0–7 in both halves of Y14,
		// 8–15 in both halves of Y15 (free until the float steps).
		g.p("\tVPMOVSXBW 192(%s)(AX*1), Y15", row)
		g.p("\tVPERMQ $0x44, Y15, Y14")
		g.p("\tVPERMQ $0xee, Y15, Y15")
	} else {
		// The 6-bit scales into bytes 0–7 of X(mins), the mins into
		// bytes 8–15 (dwords [a, a, b, b] and [c, c, c, c] of the block's
		// bytes 4–15 shifted and masked as k4Consts says), in both 128-bit
		// halves of Y(mins).
		g.p("\tVPSHUFD $0xa5, (%s)(AX*1), X%d", row, mins)
		g.p("\tVPSRLVD k4sc<>+0(SB), X%d, X%d", mins, mins)
		g.p("\tVPAND k4sc<>+16(SB), X%d, X%d", mins, mins)
		g.p("\tVPSHUFD $0xff, (%s)(AX*1), X%d", row, yt)
		g.p("\tVPSRLVD k4sc<>+32(SB), X%d, X%d", yt, yt)
		g.p("\tVPAND k4sc<>+48(SB), X%d, X%d", yt, yt)
		g.p("\tVPOR X%d, X%d, X%d", yt, mins, mins)
		g.p("\tVINSERTI128 $1, X%d, Y%d, Y%d", mins, mins, mins)
	}
	// The codes of half h (first or second 32 elements) of chunk k into
	// Y(reg), with Y(yt) as temp. Q6_K: code = (ql nibble) | (qh field
	// sh)<<4 with the field moved to bits 4–5 by one shift (left 4−sh or
	// right sh−4; none for sh = 4) and masked by 0x30; the masks read ql
	// and qh from memory where no shift comes first. The 0x0F mask is in
	// Y(m0F), or at k4pr<>+160 where that register is the pair's second
	// temp (no other is free).
	nib := func(src string, reg int) {
		if maskInMem {
			if src != "" {
				g.p("\tVMOVDQU %s, Y%d", src, reg)
			}
			g.p("\tVPAND k4pr<>+160(SB), Y%d, Y%d", reg, reg)
		} else if src != "" {
			g.p("\tVPAND %s, Y%d, Y%d", src, m0F, reg)
		} else {
			g.p("\tVPAND Y%d, Y%d, Y%d", m0F, reg, reg)
		}
	}
	codes := func(k, h, reg int) {
		if !q6 {
			at := fmt.Sprintf("%d(%s)(AX*1)", 16+32*k, row)
			if h == 0 {
				nib(at, reg)
				return
			}
			g.p("\tVMOVDQU %s, Y%d", at, reg)
			g.p("\tVPSRLW $4, Y%d, Y%d", reg, reg)
			nib("", reg)
			return
		}
		n, odd := k/2, k%2
		ql := fmt.Sprintf("%d(%s)(AX*1)", 64*n+32*h, row)
		if odd == 1 {
			g.p("\tVMOVDQU %s, Y%d", ql, reg)
			g.p("\tVPSRLW $4, Y%d, Y%d", reg, reg)
			nib("", reg)
		} else {
			nib(ql, reg)
		}
		qh := fmt.Sprintf("%d(%s)(AX*1)", 128+32*n, row)
		switch sh := 4*odd + 2*h; {
		case sh < 4:
			g.p("\tVMOVDQU %s, Y%d", qh, yt)
			g.p("\tVPSLLW $%d, Y%d, Y%d", 4-sh, yt, yt)
			g.p("\tVPAND Y%d, Y%d, Y%d", m30, yt, yt)
		case sh > 4:
			g.p("\tVMOVDQU %s, Y%d", qh, yt)
			g.p("\tVPSRLW $%d, Y%d, Y%d", sh-4, yt, yt)
			g.p("\tVPAND Y%d, Y%d, Y%d", m30, yt, yt)
		default:
			g.p("\tVPAND %s, Y%d, Y%d", qh, m30, yt)
		}
		g.p("\tVPOR Y%d, Y%d, Y%d", yt, reg, reg)
	}
	// The scales of half h of chunks k and k+1 into Y(ys): per lane, the
	// first chunk's in the even word, the second's in the odd one.
	scales := func(k, h int) {
		if q6 {
			g.p("\tVPSHUFB k6pr<>+%d(SB), Y%d, Y%d", 32*h, 14+k/2, ys)
		} else {
			g.p("\tVPSHUFB k4pr<>+%d(SB), Y%d, Y%d", 32*(k+h), mins, ys)
		}
	}
	// scaleAdd multiplies the words in Y(yt) by the scales in Y(ys) into
	// token t's int32 lanes of half h: the first chunk's product is the
	// lanes, each later one is added.
	scaleAdd := func(t, h int, first bool) {
		acc := ilo(t)
		if h == 1 {
			acc = ihi(t)
		}
		if first {
			g.p("\tVPMADDWD Y%d, Y%d, Y%d", ys, yt, acc)
			return
		}
		g.p("\tVPMADDWD Y%d, Y%d, Y%d", ys, yt, yt)
		g.p("\tVPADDD Y%d, Y%d, Y%d", yt, acc, acc)
	}
	if pairs {
		for k := 0; k < 4; k += 2 {
			g.kPairAVX2(k, toks, clo, chi, yt, pairTmp, codes, scales, scaleAdd)
		}
	} else {
		// One chunk at a time: per half and token, VPMADDUBSW and a
		// VPMADDWD by the half's scales (Q4_K: one sub-block; Q6_K:
		// two of 16 elements).
		for k := 0; k < 4; k++ {
			if q6 {
				codes(k, 0, clo)
				codes(k, 1, chi)
			} else { // both halves from one load
				g.p("\tVMOVDQU %d(%s)(AX*1), Y%d", 16+32*k, row, clo)
				g.p("\tVPSRLW $4, Y%d, Y%d", clo, chi)
				g.p("\tVPAND Y%d, Y%d, Y%d", m0F, clo, clo)
				g.p("\tVPAND Y%d, Y%d, Y%d", m0F, chi, chi)
			}
			for h, reg := range []int{clo, chi} {
				if q6 {
					j := 4*k + 2*h
					g.p("\tVPSHUFB k6sc<>+%d(SB), Y%d, Y%d", 16*(j%8), 14+j/8, ys)
				} else {
					g.p("\tVPSHUFB k4sc<>+%d(SB), Y%d, Y%d", 64+32*(2*k+h), mins, ys)
				}
				for t, tok := range toks {
					g.p("\tVPMADDUBSW %d(%s), Y%d, Y%d", 64*k+32*h, tok, reg, yt)
					scaleAdd(t, h, k == 0)
				}
			}
		}
	}
	// The float steps. The codes are dead: Y(clo) holds d (and Y(chi)
	// dmin) in eight lanes, d·dx is one VMULPS of it by dx broadcast (the
	// bits of the scalar product). Q6_K: the int32 lanes less 32·sc·S16,
	// with 32·sc (sub-blocks 0–7, 8–15) in Y(chi) and Y(ys).
	off := 0
	if q6 {
		off = 208
	}
	g.p("\tVPBROADCASTW %d(%s)(AX*1), X%d", off, row, clo)
	g.p("\tVCVTPH2PS X%d, Y%d", clo, clo)
	if q6 {
		for h, reg := range []int{chi, ys} {
			g.p("\tVPMOVSXBD %d(%s)(AX*1), Y%d", 192+8*h, row, reg)
			g.p("\tVPSLLD $5, Y%d, Y%d", reg, reg)
			g.p("\tVPAND k4pr<>+192(SB), Y%d, Y%d", reg, reg) // high words 0, for VPMADDWD
		}
	} else {
		g.p("\tVPBROADCASTW 2(%s)(AX*1), X%d", row, chi)
		g.p("\tVCVTPH2PS X%d, Y%d", chi, chi)
		g.p("\tVPSHUFB k4sc<>+320(SB), Y%d, Y%d", mins, mins) // the mins, int32
	}
	for t, tok := range toks {
		if q6 {
			for h, acc := range []int{ilo(t), ihi(t)} {
				// 32·sc·S16 by VPMADDWD: both fit 16 bits (|32·sc| ≤
				// 4096, |S16| ≤ 16·128) and 32·sc's high words are 0.
				g.p("\tVPMADDWD %d(%s), Y%d, Y%d", 256+32*h, tok, []int{chi, ys}[h], yt)
				g.p("\tVPSUBD Y%d, Y%d, Y%d", yt, acc, acc)
			}
		}
		g.p("\tVCVTDQ2PS Y%d, Y%d", ilo(t), ilo(t))
		g.p("\tVCVTDQ2PS Y%d, Y%d", ihi(t), ihi(t))
		if inMem {
			g.p("\tVMOVUPS %s, Y%d", fmem(t, 0), flo(t))
			g.p("\tVMOVUPS %s, Y%d", fmem(t, 1), fhi(t))
		}
		dx, prod := yt, yt // dx broadcast, d·dx
		if !q6 {
			prod = ys
		}
		g.p("\tVBROADCASTSS 352(%s), Y%d", tok, dx)
		g.p("\tVMULPS Y%d, Y%d, Y%d", clo, dx, prod)
		g.p("\tVFMADD231PS Y%d, Y%d, Y%d", ilo(t), prod, flo(t))
		g.p("\tVFMADD231PS Y%d, Y%d, Y%d", ihi(t), prod, fhi(t))
		if !q6 {
			// Lanes 8–15 would add (−s2)·0: the accumulators are never
			// −0, so that changes nothing and is skipped.
			g.p("\tVMULPS Y%d, Y%d, Y%d", chi, dx, yt) // dmin·dx
			// mn·bs32 by VPMADDWD: both fit 16 bits (mn ≤ 63,
			// |bs32| ≤ 32·128) and the mins' high words are 0, so it
			// is VPMULLD's product with half its cost (one multiply
			// per 128 bits on Zen 1, where VPMULLD takes two).
			g.p("\tVPMADDWD 320(%s), Y%d, Y%d", tok, mins, ys)
			g.p("\tVCVTDQ2PS Y%d, Y%d", ys, ys)
			g.p("\tVFNMADD231PS Y%d, Y%d, Y%d", ys, yt, flo(t))
		}
		if inMem {
			g.p("\tVMOVUPS Y%d, %s", flo(t), fmem(t, 0))
			g.p("\tVMOVUPS Y%d, %s", fhi(t), fmem(t, 1))
		}
	}
	g.p("\tADDQ $%d, AX", bb)
	for _, tok := range toks {
		g.p("\tADDQ $%d, %s", actKSize, tok)
	}
	g.p("\tDECQ CX")
	g.p("\tJNZ %s_loop", name)
	g.p("%s_reduce:", name)
	if inMem {
		// Token t's accumulators into Y(2t) and Y(2t+1).
		flo = func(t int) int { return 2 * t }
		fhi = func(t int) int { return 2*t + 1 }
		for t := 0; t < T; t++ {
			g.p("\tVMOVUPS %s, Y%d", fmem(t, 0), flo(t))
			g.p("\tVMOVUPS %s, Y%d", fmem(t, 1), fhi(t))
		}
	}
	for t := 0; t < T; t++ {
		g.reduce16Y(flo(t), fhi(t))
	}
	g.p("\tMOVQ out+40(FP), SI")
	g.p("\tMOVQ ldo+48(FP), R8")
	for t := 0; t < T; t++ {
		g.p("\tVMOVSS X%d, (SI)", flo(t))
		if t < T-1 {
			g.p("\tADDQ R8, SI")
		}
	}
	g.ret()
	return name
}

// kPairAVX2 writes the integer part of K-quant chunks k and k+1 (k even):
// per half h (Q4_K: low nibbles, sub-blocks 2k and 2k+2, or high ones,
// 2k+1 and 2k+3; Q6_K: elements 0–31 or 32–63 of the chunks) and token,
// VPMADDUBSW of each chunk's codes by the token's inputs gives words of
// two products; VPHADDW adds them into each lane's 4-element sums of both
// chunks (at most 4·63·128 = 32256 for Q6_K's codes, 7680 for Q4_K's: exact
// in 16 bits), VPSHUFB interleaves the two chunks' sums of a lane, and one
// VPMADDWD by the two sub-blocks' scales gives each lane a·s + b·s′, the
// two terms the portable code (dotQ4KInt, dotQ6KInt) adds to the lane.
// The integer sums are the same, so the bits are. It takes 3 multiplies
// per 64 codes where a VPMADDWD per chunk took 4: the vector multiplier, a
// single pipe on Zen 1, is busy a quarter less (docs/BENCHMARKS.md, "The
// K-quant tiles on the Zen 1"). codes(k, h, reg) puts codes in Y(reg),
// scales(k, h) the pair's scales in Y(ys), scaleAdd(t, h, first) adds the
// words in Y(yt) times them to token t's lanes; Y(yt) and Y(tmp) are
// temps.
func (g *gen) kPairAVX2(k int, toks []string, c0, c1, yt, tmp int, codes func(k, h, reg int), scales func(k, h int), scaleAdd func(t, h int, first bool)) {
	for h := 0; h < 2; h++ {
		codes(k, h, c0)
		codes(k+1, h, c1)
		scales(k, h)
		for t, tok := range toks {
			g.p("\tVPMADDUBSW %d(%s), Y%d, Y%d", 64*k+32*h, tok, c0, yt)
			g.p("\tVPMADDUBSW %d(%s), Y%d, Y%d", 64*(k+1)+32*h, tok, c1, tmp)
			g.p("\tVPHADDW Y%d, Y%d, Y%d", tmp, yt, yt)
			g.p("\tVPSHUFB k4pr<>+128(SB), Y%d, Y%d", yt, yt)
			scaleAdd(t, h, k == 0)
		}
	}
}

// quantAVX2 is the Q8_0 or Q4_0 tile without VNNI. Q8_0: |qw| times qx
// with qw's sign (VPSIGNB), Q4_0: the nibbles times qx plus corr; in both
// VPMADDUBSW then VPMADDWD by ones give the same exact lanes as VPDPBUSD.
// Per block and token the codes (Q8_0) and dx broadcast are loaded once
// for all R rows; each (row, token) then takes dw·dx (VMULPS of dw and dx
// in eight lanes: the scalar product's bits) and one FMA, the same float
// operations on the same values for any R and T.
func (g *gen) quantAVX2(q4 bool, R, T int) string {
	g.pfL2 = T > 1
	kind, bb := "q8", 34
	if q4 {
		kind, bb = "q4", 18
	}
	name := fmt.Sprintf("%sAVX2R%dT%d", kind, R, T)
	g.header(name, "byte", "actBlock", "nb")
	rows, toks := g.quantSetup(R, T)
	pf := g.prefetchSetup(R, rows, quantFree(rows, toks, false))
	// Y registers: the accumulators, the row codes w and scales dw, the
	// token's codes qx (Q8_0) and dx broadcast, two temporaries. The
	// 16-bit ones and Q4_0's nibble mask are read from avx2q<>.
	acc := func(r, t int) int { return r*T + t }
	w := func(r int) int { return R*T + r }
	dw := func(r int) int { return R*T + R + r }
	next := R*T + 2*R
	qx := -1
	if !q4 {
		qx = next
		next++
	}
	dx, xr, sr := next, next+1, next+2
	if sr > 15 {
		panic(fmt.Sprintf("%s: too many registers", name))
	}
	g.quantLoopHead(name, R*T, "VXORPS", pf, R, bb)
	for r := 0; r < R; r++ {
		if q4 {
			g.p("\tVMOVDQU 2(%s)(AX*1), X%d", rows[r], w(r))
			g.p("\tVPSRLW $4, X%d, X%d", w(r), xr)
			g.p("\tVINSERTI128 $1, X%d, Y%d, Y%d", xr, w(r), w(r))
			g.p("\tVPAND avx2q<>+32(SB), Y%d, Y%d", w(r), w(r))
		} else {
			g.p("\tVPABSB 2(%s)(AX*1), Y%d", rows[r], w(r))
		}
		g.p("\tVPBROADCASTW (%s)(AX*1), X%d", rows[r], dw(r))
		g.p("\tVCVTPH2PS X%d, Y%d", dw(r), dw(r))
	}
	for t := 0; t < T; t++ {
		if !q4 {
			g.p("\tVMOVDQU (%s)(BX*1), Y%d", toks[t], qx)
		}
		g.p("\tVBROADCASTSS 64(%s)(BX*1), Y%d", toks[t], dx)
		for r := 0; r < R; r++ {
			if q4 {
				g.p("\tVPMADDUBSW (%s)(BX*1), Y%d, Y%d", toks[t], w(r), xr)
				g.p("\tVPMADDWD avx2q<>+0(SB), Y%d, Y%d", xr, xr)
				g.p("\tVPADDD 32(%s)(BX*1), Y%d, Y%d", toks[t], xr, xr)
			} else {
				g.p("\tVPSIGNB 2(%s)(AX*1), Y%d, Y%d", rows[r], qx, xr)
				g.p("\tVPMADDUBSW Y%d, Y%d, Y%d", xr, w(r), xr)
				g.p("\tVPMADDWD avx2q<>+0(SB), Y%d, Y%d", xr, xr)
			}
			g.p("\tVCVTDQ2PS Y%d, Y%d", xr, xr)
			g.p("\tVMULPS Y%d, Y%d, Y%d", dw(r), dx, sr)
			g.p("\tVFMADD231PS Y%d, Y%d, Y%d", xr, sr, acc(r, t))
		}
	}
	g.p("\tADDQ $%d, AX", bb)
	g.p("\tADDQ $72, BX")
	g.p("\tDECQ CX")
	g.p("\tJNZ %s_loop", name)
	g.p("%s_reduce:", name)
	g.storeOut(R, T, acc, func(k int) { g.reduce8Y(k, 15, false) })
	return name
}

// avx2qConsts writes the constants of the AVX2 integer tiles (avx2q<>): at
// 0 the 16-bit ones (VPMADDWD), at 32 the nibble mask 0x0f in every byte.
func (g *gen) avx2qConsts() {
	for i := 0; i < 4; i++ {
		g.p("DATA avx2q<>+%d(SB)/8, $0x0001000100010001", 8*i)
	}
	for i := 0; i < 4; i++ {
		g.p("DATA avx2q<>+%d(SB)/8, $0x0f0f0f0f0f0f0f0f", 32+8*i)
	}
	g.p("GLOBL avx2q<>(SB), RODATA|NOPTR, $64")
	g.p("")
}

// k4Consts writes the constants of the AVX2 Q4_K tiles (k4sc<>): at 0
// and 16 the VPSRLVD counts and VPAND masks that take dwords [a, a, b, b]
// of a block's scale bytes 4–15 to [a&0x3f…, (a>>2)&0x30…, b&0x3f…,
// (b>>2)&0x30…], at 32 and 48 those that take [c, c, c, c] to [0,
// c&0x0f…, 0, (c>>4)&0x0f…]: their OR is the eight scales and the eight
// mins, as q4KScales unpacks them. At 64+32j the VPSHUFB indices that
// broadcast byte j (scale j) zero-extended into every word, at 320 those
// that zero-extend bytes 8–15 (the mins) into the eight dwords.
func (g *gen) k4Consts() {
	for i, v := range []uint32{0, 2, 0, 2, 0x3f3f3f3f, 0x30303030, 0x3f3f3f3f, 0x30303030,
		0, 0, 0, 4, 0, 0x0f0f0f0f, 0, 0x0f0f0f0f} {
		g.p("DATA k4sc<>+%d(SB)/4, $%#x", 4*i, v)
	}
	for j := 0; j < 8; j++ {
		for i := 0; i < 16; i++ {
			g.p("DATA k4sc<>+%d(SB)/2, $%#x", 64+32*j+2*i, 0x8000|j)
		}
	}
	for i := 0; i < 8; i++ {
		g.p("DATA k4sc<>+%d(SB)/4, $%#x", 320+4*i, 0x80808000|uint32(8+i))
	}
	g.p("GLOBL k4sc<>(SB), RODATA|NOPTR, $352")
	g.p("")
	// k4pr<>: at 32p the VPSHUFB indices that put scale j = 2k+h (pair
	// p = k+h, k = 0 or 2, h = 0 or 1) zero-extended into the even words
	// and scale j+2 into the odd ones (k4PairAVX2); at 128 those that
	// interleave the words [a0…a3, b0…b3] of each 128-bit half into
	// [a0, b0, …, a3, b3]; at 160 the 0x0F mask, at 192 the mask of the
	// low word of each dword.
	for p := 0; p < 4; p++ {
		j := p + 2*(p/2)
		for i := 0; i < 16; i++ {
			g.p("DATA k4pr<>+%d(SB)/2, $%#x", 32*p+2*i, 0x8000|(j+2*(i%2)))
		}
	}
	for i := 0; i < 32; i++ {
		w := (i % 16) / 2 // destination word: a(w/2) if w even, b(w/2) if odd
		src := w/2 + 4*(w%2)
		g.p("DATA k4pr<>+%d(SB)/1, $%d", 128+i, 2*src+i%2)
	}
	for i := 0; i < 8; i++ {
		g.p("DATA k4pr<>+%d(SB)/4, $0x0f0f0f0f", 160+4*i)
	}
	for i := 0; i < 8; i++ {
		g.p("DATA k4pr<>+%d(SB)/4, $0x0000ffff", 192+4*i)
	}
	g.p("GLOBL k4pr<>(SB), RODATA|NOPTR, $224")
	g.p("")
	// k6pr<>: at 32h the VPSHUFB indices that put Q6_K's scale word 2h
	// (low 128-bit half; 2h+1 in the high half) into the even words and
	// word 4+2h (5+2h) into the odd ones: the scales of half h of chunks
	// k and k+1 from the scales of chunks k and k+1 as words (k = 0: Y14,
	// k = 2: Y15, kquantAVX2).
	for h := 0; h < 2; h++ {
		for q := 0; q < 2; q++ {
			for w := 0; w < 8; w++ {
				src := 2*h + q + 4*(w%2)
				g.p("DATA k6pr<>+%d(SB)/2, $%#x", 32*h+16*q+2*w, (2*src+1)<<8|2*src)
			}
		}
	}
	g.p("GLOBL k6pr<>(SB), RODATA|NOPTR, $64")
	g.p("")
	// k6sc<>: at 16i (i even) the VPSHUFB indices that broadcast word i
	// into every word of the low 128-bit half and word i+1 into the high.
	for i := 0; i < 8; i += 2 {
		for h := 0; h < 2; h++ {
			for w := 0; w < 8; w++ {
				g.p("DATA k6sc<>+%d(SB)/2, $%#x", 16*i+16*h+2*w, (2*(i+h)+1)<<8|2*(i+h))
			}
		}
	}
	g.p("GLOBL k6sc<>(SB), RODATA|NOPTR, $128")
	g.p("")
}

// q5Consts writes the constants of the Q5_0 tiles (q5bits<>): at 0 the
// VPSHUFB indices that give byte i of a block's codes byte i/8 of its qh
// (broadcast to every dword: the high 128-bit half's indices 2 and 3 read
// its own copy), at 32 the bit 1<<(i mod 8) that is code i's
// high bit in that byte, at 64 the value 0x10 of that bit in the code.
func (g *gen) q5Consts() {
	for i := 0; i < 32; i++ {
		g.p("DATA q5bits<>+%d(SB)/1, $%d", i, i/8)
	}
	for i := 0; i < 32; i++ {
		g.p("DATA q5bits<>+%d(SB)/1, $%d", 32+i, 1<<(i%8))
	}
	for i := 0; i < 32; i++ {
		g.p("DATA q5bits<>+%d(SB)/1, $16", 64+i)
	}
	g.p("GLOBL q5bits<>(SB), RODATA|NOPTR, $96")
	g.p("")
	// q5perm<>: the VPERMD table of the packed Q5_0 tiles, entry i the
	// dword with 0x10 in byte j where bit j of i is set.
	for i := 0; i < 16; i++ {
		v := 0
		for j := 0; j < 4; j++ {
			if i>>j&1 != 0 {
				v |= 0x10 << (8 * j)
			}
		}
		g.p("DATA q5perm<>+%d(SB)/4, $0x%08x", 4*i, v)
	}
	g.p("GLOBL q5perm<>(SB), RODATA|NOPTR, $64")
	g.p("")
}

// quantQ5AVX2 is the Q5_0 tile (q5.go, dotQ5) with AVX2: per block, row
// r's codes u = nibble | bit<<4 in element order (the 16 bytes of qs and
// the same shifted right by 4 in the two 128-bit halves, masked; qh
// broadcast, VPSHUFB'd so that byte i holds bit i, compared with its bit:
// 0x10 where it is set), then per token as quantAVX2's Q4_0 tile,
// VPMADDUBSW of u (at most 31) and qx, VPMADDWD by ones, plus the Q8_0
// inputs' corrections −128·Σqx shifted right by 3: −16·Σqx, so the lanes
// are Σ (u − 16)·qx exactly (|u·qx| pairs stay under 2^15). The
// corrections and dx broadcast are loaded once a block and token for all
// R rows.
func (g *gen) quantQ5AVX2(R, T int) string {
	g.pfL2 = T > 1
	const bb = 2 + 4 + 16
	name := fmt.Sprintf("q5AVX2R%dT%d", R, T)
	g.header(name, "byte", "actBlock", "nb")
	rows, toks := g.quantSetup(R, T)
	pf := g.prefetchSetup(R, rows, quantFree(rows, toks, false))
	acc := func(r, t int) int { return r*T + t }
	w := func(r int) int { return R*T + r }
	dw := func(r int) int { return R*T + R + r }
	corr, dx := R*T+2*R, R*T+2*R+1
	xr, sr := dx+1, dx+2
	if sr > 15 {
		panic(fmt.Sprintf("%s: too many registers", name))
	}
	g.quantLoopHead(name, R*T, "VXORPS", pf, R, bb)
	for r := 0; r < R; r++ {
		g.p("\tVMOVDQU 6(%s)(AX*1), X%d", rows[r], w(r))
		g.p("\tVPSRLW $4, X%d, X%d", w(r), xr)
		g.p("\tVINSERTI128 $1, X%d, Y%d, Y%d", xr, w(r), w(r))
		g.p("\tVPAND avx2q<>+32(SB), Y%d, Y%d", w(r), w(r))
		g.p("\tVPBROADCASTD 2(%s)(AX*1), Y%d", rows[r], xr)
		g.p("\tVPSHUFB q5bits<>+0(SB), Y%d, Y%d", xr, xr)
		g.p("\tVPAND q5bits<>+32(SB), Y%d, Y%d", xr, xr)
		g.p("\tVPCMPEQB q5bits<>+32(SB), Y%d, Y%d", xr, xr)
		g.p("\tVPAND q5bits<>+64(SB), Y%d, Y%d", xr, xr)
		g.p("\tVPOR Y%d, Y%d, Y%d", xr, w(r), w(r))
		g.p("\tVPBROADCASTW (%s)(AX*1), X%d", rows[r], dw(r))
		g.p("\tVCVTPH2PS X%d, Y%d", dw(r), dw(r))
	}
	for t := 0; t < T; t++ {
		g.p("\tVMOVDQU 32(%s)(BX*1), Y%d", toks[t], corr)
		g.p("\tVPSRAD $3, Y%d, Y%d", corr, corr)
		g.p("\tVBROADCASTSS 64(%s)(BX*1), Y%d", toks[t], dx)
		for r := 0; r < R; r++ {
			g.p("\tVPMADDUBSW (%s)(BX*1), Y%d, Y%d", toks[t], w(r), xr)
			g.p("\tVPMADDWD avx2q<>+0(SB), Y%d, Y%d", xr, xr)
			g.p("\tVPADDD Y%d, Y%d, Y%d", corr, xr, xr)
			g.p("\tVCVTDQ2PS Y%d, Y%d", xr, xr)
			g.p("\tVMULPS Y%d, Y%d, Y%d", dw(r), dx, sr)
			g.p("\tVFMADD231PS Y%d, Y%d, Y%d", xr, sr, acc(r, t))
		}
	}
	g.p("\tADDQ $%d, AX", bb)
	g.p("\tADDQ $72, BX")
	g.p("\tDECQ CX")
	g.p("\tJNZ %s_loop", name)
	g.p("%s_reduce:", name)
	g.storeOut(R, T, acc, func(k int) { g.reduce8Y(k, 15, false) })
	return name
}

// wsum is out[i] += Σ_t a[t]·v[t·stride + i] over c registers of lanes
// (ZMM: 16 floats, YMM: 8), each product and each sum rounded to float32
// (VMULPS then VADDPS, t in increasing order, from out's values), as
// WeightedSumAdd's Go loop computes it (WeightedSum clears out first).
//
// With half, the values are halves (WeightedSumF16), each widened exactly
// by VCVTPH2PS before its product.
func (g *gen) wsum(zmm, half bool, c int) string {
	reg, width, lvl := "Y", 32, "AVX2"
	if zmm {
		reg, width, lvl = "Z", 64, "AVX512"
	}
	name, vt, vwidth := fmt.Sprintf("wsum%sC%d", lvl, c), "float32", width
	if half {
		name, vt, vwidth = fmt.Sprintf("wsumF16%sC%d", lvl, c), "uint16", width/2
	}
	fmt.Fprintf(&g.decls, "//go:noescape\nfunc %s(out *float32, a *float32, v *%s, stride uintptr, n int)\n\n", name, vt)
	g.p("// func %s(out *float32, a *float32, v *%s, stride uintptr, n int)", name, vt)
	g.p("TEXT ·%s(SB), NOSPLIT, $0-40", name)
	g.p("\tMOVQ out+0(FP), DI")
	g.p("\tMOVQ a+8(FP), SI")
	g.p("\tMOVQ v+16(FP), DX")
	g.p("\tMOVQ stride+24(FP), R8")
	g.p("\tMOVQ n+32(FP), CX")
	for k := 0; k < c; k++ {
		g.p("\tVMOVUPS %d(DI), %s%d", width*k, reg, k)
	}
	g.p("\tTESTQ CX, CX")
	g.p("\tJZ %s_store", name)
	g.p("%s_loop:", name)
	g.p("\tVBROADCASTSS (SI), %s8", reg)
	for k := 0; k < c; k++ {
		if half {
			g.p("\tVCVTPH2PS %d(DX), %s%d", vwidth*k, reg, 4+k)
			g.p("\tVMULPS %s%d, %s8, %s%d", reg, 4+k, reg, reg, 4+k)
		} else {
			g.p("\tVMULPS %d(DX), %s8, %s%d", vwidth*k, reg, reg, 4+k)
		}
		g.p("\tVADDPS %s%d, %s%d, %s%d", reg, 4+k, reg, k, reg, k)
	}
	g.p("\tADDQ $4, SI")
	g.p("\tADDQ R8, DX")
	g.p("\tDECQ CX")
	g.p("\tJNZ %s_loop", name)
	g.p("%s_store:", name)
	for k := 0; k < c; k++ {
		g.p("\tVMOVUPS %s%d, %d(DI)", reg, k, width*k)
	}
	g.ret()
	return name
}

// actsHead declares and opens the input quantizer name(dst *dstType, x
// *float32, nb int), with a last argument off int32 when off: DI = dst,
// SI = x, CX = nb.
func (g *gen) actsHead(name, dstType string, off bool) {
	sig, frame := fmt.Sprintf("dst *%s, x *float32, nb int", dstType), 24
	if off {
		sig, frame = sig+", off int32", 28
	}
	fmt.Fprintf(&g.decls, "//go:noescape\nfunc %s(%s)\n\n", name, sig)
	g.p("// func %s(%s)", name, sig)
	g.p("TEXT ·%s(SB), NOSPLIT, $0-%d", name, frame)
	g.p("\tMOVQ dst+0(FP), DI")
	g.p("\tMOVQ x+8(FP), SI")
	g.p("\tMOVQ nb+16(FP), CX")
}

// actsTail ends an input quantizer's loop over blocks, in bytes of inputs
// and out bytes of quantized blocks each, and the function; it returns
// name.
func (g *gen) actsTail(name string, in, out int) string {
	g.p("\tADDQ $%d, SI", in)
	g.p("\tADDQ $%d, DI", out)
	g.p("\tDECQ CX")
	g.p("\tJNZ %s_loop", name)
	g.p("%s_done:", name)
	g.ret()
	return name
}

// quantAVX512 is quantizeActs for AVX-512: per block of 32 inputs, the
// largest magnitude (NaN ignored: VMAXPS keeps its second operand when the
// first is NaN), d = amax/127 and id = 1/d (0 when d = 0) as scalar IEEE
// divisions, codes VCVTPS2DQ(x·id) (round half to even; NaN and overflow
// give −2³¹) clamped to ±127, corrections −off·Σ of each 4-code group
// (VPDPBUSD against ones), and d.
func (g *gen) quantActs() string {
	name := "quantActsAVX512"
	g.actsHead(name, "actBlock", true)
	g.p("\tMOVL off+24(FP), AX")
	g.p("\tNEGL AX")
	g.p("\tVPBROADCASTD AX, Y20") // −off
	g.clampConsts()
	g.p("\tMOVL $0x01010101, AX")
	g.p("\tVPBROADCASTD AX, Y24") // ones (bytes)
	g.scaleConsts(25, 26)
	g.p("\tTESTQ CX, CX")
	g.p("\tJZ %s_done", name)
	g.p("%s_loop:", name)
	g.p("\tVMOVUPS (SI), Z0")
	g.p("\tVMOVUPS 64(SI), Z1")
	g.p("\tVANDPS Z21, Z0, Z2")
	g.p("\tVANDPS Z21, Z1, Z3")
	g.p("\tVPXORD Z4, Z4, Z4")
	g.p("\tVMAXPS Z4, Z2, Z4")
	g.p("\tVMAXPS Z4, Z3, Z4")
	g.quantizeByMax(name, 4, 5, 6, 8, 25, 26, 2)
	g.p("\tVINSERTI128 $1, X1, Y0, Y0")
	g.p("\tVMOVDQU Y0, (DI)")
	g.p("\tVPXORD Y9, Y9, Y9")
	g.p("\tVPDPBUSD Y0, Y24, Y9")
	g.p("\tVPMULLD Y20, Y9, Y9")
	g.p("\tVMOVDQU32 Y9, 32(DI)")
	g.p("\tVMOVSS X6, 64(DI)")
	return g.actsTail(name, 128, 72)
}

// quantActsK is quantizeActsK for AVX-512: per super-block of 256 inputs,
// the largest magnitude (NaN ignored, as quantActs: four running VMAXPS
// whose second operand is the maximum so far), d = amax/127 and id = 1/d
// (0 when d = 0) as scalar IEEE divisions, codes VCVTPS2DQ(x·id) clamped to
// ±127; the sums of each 16 codes by VPSADBW of q+128 (sums of 8, biased
// by 1024) packed to 16-bit lanes and added in pairs by VPMADDWD, less
// 2048; the sums of each 32 as pairs of those; and d.
func (g *gen) quantActsK() string {
	name := "quantActsKAVX512"
	g.actsHead(name, "actBlockK", false)
	g.clampConsts()
	g.p("\tMOVL $0x80808080, AX")
	g.p("\tVPBROADCASTD AX, Z24") // the bias of q+128
	g.p("\tMOVL $0x00010001, AX")
	g.p("\tVPBROADCASTD AX, Z25") // 16-bit ones
	g.p("\tMOVL $2048, AX")
	g.p("\tVPBROADCASTD AX, Z26") // the bias of a sum of 16
	g.scaleConsts(27, 28)
	g.p("\tTESTQ CX, CX")
	g.p("\tJZ %s_done", name)
	g.p("%s_loop:", name)
	for i := 0; i < 4; i++ {
		g.p("\tVPXORD Z%d, Z%d, Z%d", 16+i, 16+i, 16+i)
	}
	for i := 0; i < 16; i++ {
		g.p("\tVMOVUPS %d(SI), Z%d", 64*i, i)
		g.p("\tVANDPS Z21, Z%d, Z20", i)
		g.p("\tVMAXPS Z%d, Z20, Z%d", 16+i%4, 16+i%4)
	}
	g.p("\tVMAXPS Z17, Z16, Z16")
	g.p("\tVMAXPS Z19, Z18, Z18")
	g.p("\tVMAXPS Z18, Z16, Z16")
	g.quantizeByMax(name, 16, 17, 18, 19, 27, 28, 16)
	for c := 0; c < 4; c++ {
		z := 4 * c
		for j := 1; j < 4; j++ {
			g.p("\tVINSERTI32X4 $%d, X%d, Z%d, Z%d", j, z+j, z, z)
		}
		g.p("\tVMOVDQU64 Z%d, %d(DI)", z, 64*c)
		g.p("\tVPXORD Z24, Z%d, Z%d", z, z)
		g.p("\tVPXORD Z20, Z20, Z20")
		g.p("\tVPSADBW Z20, Z%d, Z%d", z, z)
		g.p("\tVPMOVQW Z%d, X%d", z, z)
	}
	for j := 1; j < 4; j++ {
		g.p("\tVINSERTI32X4 $%d, X%d, Z0, Z0", j, 4*j)
	}
	g.p("\tVPMADDWD Z25, Z0, Z0")
	g.p("\tVPSUBD Z26, Z0, Z0")
	g.p("\tVMOVDQU32 Z0, 256(DI)") // sums of 16
	g.p("\tVPSRLQ $32, Z0, Z1")
	g.p("\tVPADDD Z1, Z0, Z0")
	g.p("\tVPMOVQD Z0, 320(DI)") // sums of 32
	g.p("\tVMOVSS X18, 352(DI)")
	return g.actsTail(name, 1024, actKSize)
}

// quantc<> holds the AVX2 input quantizers' constants: at 0 the VPERMD
// indices 0, 4, 1, 5, 2, 6, 3, 7 (packY's dword order back to element
// order), then as 32-bit words the magnitude mask (32), +127 (36), −127
// (40), bytes of ones (44), 16-bit ones (48), 127.0 (52) and 1.0 (56).
func (g *gen) quantConstsAVX2() {
	for i, v := range []int{0, 4, 1, 5, 2, 6, 3, 7} {
		g.p("DATA quantc<>+%d(SB)/4, $%d", 4*i, v)
	}
	for i, c := range []string{"$0x7fffffff", "$127", "$-127", "$0x01010101", "$0x00010001", "$0x42fe0000", "$0x3f800000"} {
		g.p("DATA quantc<>+%d(SB)/4, %s", 32+4*i, c)
	}
	g.p("GLOBL quantc<>(SB), RODATA|NOPTR, $60")
	g.p("")
}

// scaleByMaxY folds the 8 lane maxima of |x| in Y(mx) (temp Y(tmp)) to
// amax, sets X(d) = amax/127 and the inverse id = 1/d in all lanes of
// Y(id) (0 when d = 0), the divisions scalar IEEE float32 ones as in the
// Go code. The lanes hold no NaN, so the order of the VMAXPS does not
// matter. Jumps to label name_zero.
func (g *gen) scaleByMaxY(name string, mx, tmp, d, id int) {
	g.p("\tVEXTRACTF128 $1, Y%d, X%d", mx, tmp)
	g.p("\tVMAXPS X%d, X%d, X%d", tmp, mx, mx)
	g.p("\tVPERMILPS $0x4e, X%d, X%d", mx, tmp)
	g.p("\tVMAXPS X%d, X%d, X%d", tmp, mx, mx)
	g.p("\tVMOVSHDUP X%d, X%d", mx, tmp)
	g.p("\tVMAXSS X%d, X%d, X%d", tmp, mx, mx)
	g.p("\tVDIVSS quantc<>+52(SB), X%d, X%d", mx, d) // d = amax/127
	g.p("\tVXORPS X%d, X%d, X%d", id, id, id)
	g.p("\tVUCOMISS X%d, X%d", id, d)
	g.p("\tJEQ %s_zero", name)
	g.p("\tVMOVSS quantc<>+56(SB), X%d", tmp)
	g.p("\tVDIVSS X%d, X%d, X%d", d, tmp, id) // id = 1/d
	g.p("%s_zero:", name)
	g.p("\tVBROADCASTSS X%d, Y%d", id, id)
}

// codesY sets Y(k) to the codes of the 8 inputs at src (a memory operand):
// VCVTPS2DQ(x·id) (round half to even; NaN and overflow give −2³¹, as
// cvtRound) clamped to ±127 (Y(lo), Y(hi)), in int32 lanes.
func (g *gen) codesY(k int, src string, id, lo, hi int) {
	g.p("\tVMULPS %s, Y%d, Y%d", src, id, k)
	g.p("\tVCVTPS2DQ Y%d, Y%d", k, k)
	g.p("\tVPMAXSD Y%d, Y%d, Y%d", lo, k, k)
	g.p("\tVPMINSD Y%d, Y%d, Y%d", hi, k, k)
}

// packY packs the int32 codes of Y(a) … Y(a+3) (inputs 0…31, each within
// ±127, so the saturating packs are exact) to the 32 bytes of Y(a) in
// input order: VPACKSSDW and VPACKSSWB work within 128-bit halves and
// leave the 4-byte groups in the order 0, 2, 4, 6, 1, 3, 5, 7, which
// VPERMD by Y(perm) undoes.
func (g *gen) packY(a, perm int) {
	g.p("\tVPACKSSDW Y%d, Y%d, Y%d", a+1, a, a)
	g.p("\tVPACKSSDW Y%d, Y%d, Y%d", a+3, a+2, a+2)
	g.p("\tVPACKSSWB Y%d, Y%d, Y%d", a+2, a, a)
	g.p("\tVPERMD Y%d, Y%d, Y%d", a, perm, a)
}

// sum4Y sets Y(s) to the 8 sums of each 4 codes in Y(q) (32 bytes, in
// order): VPMADDUBSW of bytes of ones (Y(ones), unsigned) and the codes
// (signed) gives the sums of pairs in 16 bits, VPMADDWD by 16-bit ones
// (Y(ones16)) adds those pairs in 32 bits; exact.
func (g *gen) sum4Y(s, q, ones, ones16 int) {
	g.p("\tVPMADDUBSW Y%d, Y%d, Y%d", q, ones, s)
	g.p("\tVPMADDWD Y%d, Y%d, Y%d", ones16, s, s)
}

// quantActsAVX2 is quantizeActs for AVX2: per block of 32 inputs, the
// largest magnitude (|x| by VANDPS with 0x7fffffff; NaN ignored: VMAXPS
// keeps its second operand, the maximum so far, when the first is NaN),
// d = amax/127 and id = 1/d (0 when d = 0) as scalar IEEE divisions, codes
// VCVTPS2DQ(x·id) (round half to even; NaN and overflow give −2³¹) clamped
// to ±127, packed to bytes (packY), corrections −off·Σ of each 4-code group
// (sum4Y, VPMULLD), and d. The same operations as quantizeBlock, so the
// same bits.
func (g *gen) quantActsAVX2() string {
	name := "quantActsAVX2"
	g.actsHead(name, "actBlock", true)
	g.p("\tMOVL off+24(FP), AX")
	g.p("\tNEGL AX")
	g.p("\tVMOVD AX, X15")
	g.p("\tVPBROADCASTD X15, Y15") // −off
	g.p("\tVMOVDQU quantc<>+0(SB), Y14")
	g.p("\tVPBROADCASTD quantc<>+32(SB), Y13") // |·| mask
	g.p("\tVPBROADCASTD quantc<>+36(SB), Y12") // +127
	g.p("\tVPBROADCASTD quantc<>+40(SB), Y11") // −127
	g.p("\tVPBROADCASTD quantc<>+44(SB), Y10") // bytes of ones
	g.p("\tVPBROADCASTD quantc<>+48(SB), Y9")  // 16-bit ones
	g.p("\tTESTQ CX, CX")
	g.p("\tJZ %s_done", name)
	g.p("%s_loop:", name)
	g.p("\tVXORPS Y4, Y4, Y4")
	for k := 0; k < 4; k++ {
		g.p("\tVANDPS %d(SI), Y13, Y5", 32*k)
		g.p("\tVMAXPS Y4, Y5, Y4")
	}
	g.scaleByMaxY(name, 4, 5, 6, 7)
	for k := 0; k < 4; k++ {
		g.codesY(k, fmt.Sprintf("%d(SI)", 32*k), 7, 11, 12)
	}
	g.packY(0, 14)
	g.p("\tVMOVDQU Y0, (DI)")
	g.sum4Y(1, 0, 10, 9)
	g.p("\tVPMULLD Y15, Y1, Y1")
	g.p("\tVMOVDQU Y1, 32(DI)")
	g.p("\tVMOVSS X6, 64(DI)")
	return g.actsTail(name, 128, 72)
}

// quantActsKAVX2 is quantizeActsK for AVX2: per super-block of 256
// inputs, the largest magnitude (NaN ignored, as quantActsAVX2: four
// running VMAXPS whose second operand is the maximum so far), d = amax/127
// and id = 1/d (0 when d = 0) as scalar IEEE divisions; then, reading the
// inputs again, per 32 of them codes VCVTPS2DQ(x·id) clamped to ±127 and
// packed to bytes (packY), and their sums of 4 (sum4Y). VPHADDD of two
// such chunks' sums, and of two of those, gives the sums of 16 of four
// chunks, which VPERMD puts in order; VPHADDD of the two halves and
// VPERMQ, the sums of 32; then d. All sums are exact in int32, so the
// same bits as the Go code.
func (g *gen) quantActsKAVX2() string {
	name := "quantActsKAVX2"
	g.actsHead(name, "actBlockK", false)
	g.p("\tVPBROADCASTD quantc<>+32(SB), Y15") // |·| mask
	g.p("\tVMOVDQU quantc<>+0(SB), Y14")
	g.p("\tVPBROADCASTD quantc<>+36(SB), Y13") // +127
	g.p("\tVPBROADCASTD quantc<>+40(SB), Y12") // −127
	g.p("\tVPBROADCASTD quantc<>+44(SB), Y11") // bytes of ones
	g.p("\tVPBROADCASTD quantc<>+48(SB), Y10") // 16-bit ones
	g.p("\tTESTQ CX, CX")
	g.p("\tJZ %s_done", name)
	g.p("%s_loop:", name)
	for i := 0; i < 4; i++ {
		g.p("\tVXORPS Y%d, Y%d, Y%d", i, i, i)
	}
	for i := 0; i < 32; i++ {
		g.p("\tVANDPS %d(SI), Y15, Y4", 32*i)
		g.p("\tVMAXPS Y%d, Y4, Y%d", i%4, i%4)
	}
	g.p("\tVMAXPS Y1, Y0, Y0")
	g.p("\tVMAXPS Y3, Y2, Y2")
	g.p("\tVMAXPS Y2, Y0, Y0")
	g.scaleByMaxY(name, 0, 4, 5, 9)
	g.p("\tVMOVSS X5, 352(DI)")
	// Chunk c's sums of 4 go to Y5 (c even) or Y6 (odd); the pairs of
	// chunks 0–1, 2–3, 4–5 and 6–7 to Y7, Y8, Y8 and Y4.
	pairs := [4]int{7, 8, 8, 4}
	for c := 0; c < 8; c++ {
		for k := 0; k < 4; k++ {
			g.codesY(k, fmt.Sprintf("%d(SI)", 128*c+32*k), 9, 12, 13)
		}
		g.packY(0, 14)
		g.p("\tVMOVDQU Y0, %d(DI)", 32*c)
		g.sum4Y(5+c%2, 0, 11, 10)
		if c%2 == 1 {
			g.p("\tVPHADDD Y6, Y5, Y%d", pairs[c/2])
		}
		if c%4 == 3 {
			lo, hi := pairs[c/2-1], pairs[c/2]
			g.p("\tVPHADDD Y%d, Y%d, Y%d", hi, lo, lo)
			g.p("\tVPERMD Y%d, Y14, Y%d", lo, lo)
			g.p("\tVMOVDQU Y%d, %d(DI)", lo, 256+32*(c/4)) // sums of 16
		}
	}
	g.p("\tVPHADDD Y8, Y7, Y7")
	g.p("\tVPERMQ $0xd8, Y7, Y7")
	g.p("\tVMOVDQU Y7, 320(DI)") // sums of 32
	return g.actsTail(name, 1024, actKSize)
}

// The exponential's kernels read expTable (exp.go) through a pointer in
// R8: the constants at these offsets, then the Horner coefficients.
const (
	expLog2e = 0  // log2(e)
	expLn2Hi = 8  // ln 2, high bits
	expLn2Lo = 16 // ln 2, low bits
	expMin   = 24 // −708
	expBias  = 32 // 1023 (int64)
	expCoef  = 40 // coef[0…11]
)

// expConsts loads the constants of expNeg into registers 12 (log2e), 11
// and 10 (ln 2, high and low), 9 (−708) and 8 (the exponent bias) of class
// r ("Y" or "Z").
func (g *gen) expConsts(r string) {
	g.p("\tVBROADCASTSD %d(R8), %s12", expLog2e, r)
	g.p("\tVBROADCASTSD %d(R8), %s11", expLn2Hi, r)
	g.p("\tVBROADCASTSD %d(R8), %s10", expLn2Lo, r)
	g.p("\tVBROADCASTSD %d(R8), %s9", expMin, r)
	g.p("\tVPBROADCASTQ %d(R8), %s8", expBias, r)
}

// expNeg is the one vector exponential: e^a for the lanes of register a
// (class r; a ≤ 0, already raised to −708 at least), exactly as expNeg in
// exp.go computes it, one IEEE operation per step in the same order:
// Cody–Waite reduction k = round-to-even(a·log2e), ρ = (a − k·ln2hi) −
// k·ln2lo, the degree-11 Horner polynomial p of ρ (p = coef[0], then
// p = p·ρ + coef[i]), and e = p·2^k with 2^k built in the exponent bits.
// The constants are in registers 8–12 (expConsts). The result is in
// register 3; k, ρ and 2^k in registers 1, 2 and pow2. The coefficients
// are broadcast from expTable step by step through register 4, or, with
// coefRegs > 0, preloaded in registers coefRegs … coefRegs+11 (then
// p = coef[0]·ρ + coef[1] starts the chain: the same product).
func (g *gen) expNeg(r string, a, pow2, coefRegs int) {
	g.expNegIn(r, expRegs{a: a, k: 1, rho: 2, p: 3, pow2: pow2}, coefRegs)
}

// expRegs are the registers of one expNeg: the argument, k, ρ, the
// polynomial (the result) and 2^k.
type expRegs struct{ a, k, rho, p, pow2 int }

// expNegIn is expNeg in the registers of x (register 4 broadcasts the
// coefficients when coefRegs is 0).
func (g *gen) expNegIn(r string, x expRegs, coefRegs int) {
	a, k1, rho, p, pow2 := x.a, x.k, x.rho, x.p, x.pow2
	g.p("\tVMULPD %s12, %s%d, %s%d", r, r, a, r, k1) // a·log2e
	if r == "Z" {
		g.p("\tVRNDSCALEPD $0, Z%d, Z%d", k1, k1) // k, nearest even
	} else {
		g.p("\tVROUNDPD $0, Y%d, Y%d", k1, k1)
	}
	g.p("\tVMULPD %s11, %s%d, %s%d", r, r, k1, r, rho)     // k·ln2hi
	g.p("\tVSUBPD %s%d, %s%d, %s%d", r, rho, r, a, r, rho) // ρ = a − k·ln2hi
	g.p("\tVMULPD %s10, %s%d, %s%d", r, r, k1, r, p)       // k·ln2lo
	g.p("\tVSUBPD %s%d, %s%d, %s%d", r, p, r, rho, r, rho) // ρ −= k·ln2lo
	if coefRegs > 0 {
		g.p("\tVMULPD %s%d, %s%d, %s%d", r, rho, r, coefRegs, r, p)
		g.p("\tVADDPD %s%d, %s%d, %s%d", r, coefRegs+1, r, p, r, p)
		for k := 2; k < 12; k++ {
			g.p("\tVMULPD %s%d, %s%d, %s%d", r, rho, r, p, r, p)
			g.p("\tVADDPD %s%d, %s%d, %s%d", r, coefRegs+k, r, p, r, p)
		}
	} else {
		g.p("\tVBROADCASTSD %d(R8), %s%d", expCoef, r, p)
		for k := 1; k < 12; k++ {
			g.p("\tVBROADCASTSD %d(R8), %s4", expCoef+8*k, r)
			g.p("\tVMULPD %s%d, %s%d, %s%d", r, rho, r, p, r, p)
			g.p("\tVADDPD %s4, %s%d, %s%d", r, r, p, r, p)
		}
	}
	// 2^k: int64(k) + 1023 shifted into the exponent field.
	if r == "Z" {
		g.p("\tVCVTPD2DQ Z%d, Y%d", k1, pow2)
		g.p("\tVPMOVSXDQ Y%d, Z%d", pow2, pow2)
	} else {
		g.p("\tVCVTPD2DQY Y%d, X%d", k1, pow2)
		g.p("\tVPMOVSXDQ X%d, Y%d", pow2, pow2)
	}
	g.p("\tVPADDQ %s8, %s%d, %s%d", r, r, pow2, r, pow2)
	g.p("\tVPSLLQ $52, %s%d, %s%d", r, pow2, r, pow2)
	g.p("\tVMULPD %s%d, %s%d, %s%d", r, pow2, r, p, r, p) // e = p·2^k
}

// interleave emits the lines of the two emitters alternately (one then
// the other), so that two independent chains — two vectors' exponentials
// — are in the scheduler together: each one's Horner polynomial is a
// chain of 22 dependent operations.
func (g *gen) interleave(a, b func()) {
	saved := g.s
	g.s = bytes.Buffer{}
	a()
	la := strings.SplitAfter(g.s.String(), "\n")
	g.s = bytes.Buffer{}
	b()
	lb := strings.SplitAfter(g.s.String(), "\n")
	g.s = saved
	for i := 0; i < len(la) || i < len(lb); i++ {
		if i < len(la) {
			g.s.WriteString(la[i])
		}
		if i < len(lb) {
			g.s.WriteString(lb[i])
		}
	}
}

// expShifted is ExpShifted's vector loop (exp.go, expChunks) over n
// elements, 4 at a time (YMM, AVX2) or 8 (ZMM, AVX-512F; n a multiple of
// the lanes): v = (float64(x[i]) − shift)·scale, dst[i] = e^v (expNeg; 0
// where !(v ≥ −708), NaN included), acc[i%4] += dst[i]. With ZMM the
// elements i…i+3 are added to the four partial sums, then i+4…i+7: the
// order of the YMM loop and of the Go code.
func (g *gen) expShifted(zmm bool) string {
	name, r, lanes := "expShifted4", "Y", 4
	if zmm {
		name, r, lanes = "expShifted8", "Z", 8
	}
	fmt.Fprintf(&g.decls, "//go:noescape\nfunc %s(dst *float64, x *float32, n int, shift, scale float64, acc *[4]float64, tab *expTable)\n\n", name)
	g.p("// func %s(dst *float64, x *float32, n int, shift, scale float64, acc *[4]float64, tab *expTable)", name)
	g.p("TEXT ·%s(SB), NOSPLIT, $0-56", name)
	g.p("\tMOVQ dst+0(FP), DI")
	g.p("\tMOVQ x+8(FP), SI")
	g.p("\tMOVQ n+16(FP), CX")
	g.p("\tVBROADCASTSD shift+24(FP), %s14", r)
	g.p("\tVBROADCASTSD scale+32(FP), %s15", r)
	g.p("\tMOVQ acc+40(FP), DX")
	g.p("\tMOVQ tab+48(FP), R8")
	g.p("\tVMOVUPD (DX), Y13") // the running sums
	g.expConsts(r)
	coefRegs := 0
	if zmm {
		coefRegs = 16
		for k := 0; k < 12; k++ {
			g.p("\tVBROADCASTSD %d(R8), Z%d", expCoef+8*k, coefRegs+k)
		}
	}
	g.p("\tSHRQ $%d, CX", map[int]int{4: 2, 8: 3}[lanes])
	g.p("\tJZ %s_done", name)
	if zmm {
		// Two vectors a time while two remain, their exponentials
		// interleaved (the second in Z28–Z31 and Z7, its mask in K2),
		// their sums added in element order: the same bits.
		g.p("%s_pair:", name)
		g.p("\tCMPQ CX, $2")
		g.p("\tJLT %s_loop", name)
		g.p("\tVCVTPS2PD (SI), Z0")
		g.p("\tVCVTPS2PD 32(SI), Z28")
		g.p("\tVSUBPD Z14, Z0, Z0")
		g.p("\tVSUBPD Z14, Z28, Z28")
		g.p("\tVMULPD Z15, Z0, Z0")
		g.p("\tVMULPD Z15, Z28, Z28")
		g.p("\tVCMPPD $0x1D, Z9, Z0, K1")
		g.p("\tVCMPPD $0x1D, Z9, Z28, K2")
		g.p("\tVMAXPD Z9, Z0, Z0")
		g.p("\tVMAXPD Z9, Z28, Z28")
		g.interleave(func() { g.expNegIn("Z", expRegs{a: 0, k: 1, rho: 2, p: 3, pow2: 5}, coefRegs) },
			func() { g.expNegIn("Z", expRegs{a: 28, k: 29, rho: 30, p: 31, pow2: 7}, coefRegs) })
		g.p("\tVMOVAPD.Z Z3, K1, Z3")
		g.p("\tVMOVAPD.Z Z31, K2, Z31")
		g.p("\tVMOVUPD Z3, (DI)")
		g.p("\tVMOVUPD Z31, 64(DI)")
		g.p("\tVEXTRACTF64X4 $1, Z3, Y6")
		g.p("\tVEXTRACTF64X4 $1, Z31, Y4")
		g.p("\tVADDPD Y3, Y13, Y13")
		g.p("\tVADDPD Y6, Y13, Y13")
		g.p("\tVADDPD Y31, Y13, Y13")
		g.p("\tVADDPD Y4, Y13, Y13")
		g.p("\tADDQ $64, SI")
		g.p("\tADDQ $128, DI")
		g.p("\tSUBQ $2, CX")
		g.p("\tJNZ %s_pair", name)
		g.p("\tJMP %s_done", name)
	}
	g.p("%s_loop:", name)
	g.p("\tVCVTPS2PD (SI), %s0", r)         // v = float64(x)
	g.p("\tVSUBPD %s14, %s0, %s0", r, r, r) // v − shift
	g.p("\tVMULPD %s15, %s0, %s0", r, r, r) // ·scale
	if zmm {
		g.p("\tVCMPPD $0x1D, Z9, Z0, K1") // v ≥ −708 (GE_OQ: false for NaN)
	} else {
		g.p("\tVCMPPD $0x1D, Y9, Y0, Y7")
	}
	g.p("\tVMAXPD %s9, %s0, %s0", r, r, r) // finite for the polynomial (lanes masked below)
	g.expNeg(r, 0, 5, coefRegs)
	if zmm {
		g.p("\tVMOVAPD.Z Z3, K1, Z3") // 0 where !(v ≥ −708)
		g.p("\tVMOVUPD Z3, (DI)")
		g.p("\tVEXTRACTF64X4 $1, Z3, Y6")
		g.p("\tVADDPD Y3, Y13, Y13") // elements i…i+3
		g.p("\tVADDPD Y6, Y13, Y13") // then i+4…i+7
	} else {
		g.p("\tVANDPD Y7, Y3, Y3")
		g.p("\tVMOVUPD Y3, (DI)")
		g.p("\tVADDPD Y3, Y13, Y13")
	}
	g.p("\tADDQ $%d, SI", 4*lanes)
	g.p("\tADDQ $%d, DI", 8*lanes)
	g.p("\tDECQ CX")
	g.p("\tJNZ %s_loop", name)
	g.p("%s_done:", name)
	g.p("\tVMOVUPD Y13, (DX)")
	g.ret()
	return name
}

// swiglu is SwiGLU over n elements (a multiple of the lanes: 8 for ZMM, 4
// for YMM), in float64 as swiglu1 spells out: e = e^−|g| (expNeg),
// σ = (g ≥ 0 ? 1 : e)/(1 + e), then gate = (g·float32(σ))·up in float32.
func (g *gen) swiglu(zmm bool) string {
	name, r, lanes := "swigluAVX2", "Y", 4
	if zmm {
		name, r, lanes = "swigluAVX512", "Z", 8
	}
	half := "X" // float32 register holding `lanes` values
	if zmm {
		half = "Y"
	}
	g.gateHead(name, r, lanes)
	g.p("\tVCVTPS2PD (DI), %s0", r)        // v = float64(g)
	g.p("\tVORPD %s13, %s0, %s6", r, r, r) // a = −|v|
	if zmm {
		g.p("\tVCMPPD $0x1d, Z9, Z6, K1")  // a ≥ −708 (false for NaN)
		g.p("\tVCMPPD $0x1d, Z15, Z0, K2") // v ≥ 0 (false for NaN)
	} else {
		g.p("\tVCMPPD $0x1d, Y9, Y6, Y7")
		g.p("\tVCMPPD $0x1d, Y15, Y0, Y5")
	}
	g.p("\tVMAXPD %s9, %s6, %s6", r, r, r)
	g.expNeg(r, 6, 4, 0) // e
	if zmm {
		g.p("\tVMOVAPD.Z Z3, K1, Z3")      // 0 where !(a ≥ −708)
		g.p("\tVADDPD Z3, Z14, Z4")        // 1 + e
		g.p("\tVBLENDMPD Z14, Z3, K2, Z5") // v ≥ 0 ? 1 : e
	} else {
		g.p("\tVANDPD Y7, Y3, Y3")
		g.p("\tVADDPD Y3, Y14, Y4")
		g.p("\tVBLENDVPD Y5, Y14, Y3, Y5")
	}
	g.p("\tVDIVPD %s4, %s5, %s5", r, r, r) // σ
	if zmm {
		g.p("\tVCVTPD2PS Z5, Y5")
	} else {
		g.p("\tVCVTPD2PSY Y5, X5")
	}
	g.p("\tVMOVUPS (DI), %s0", half)
	g.p("\tVMULPS %s5, %s0, %s0", half, half, half)
	g.p("\tVMULPS (SI), %s0, %s0", half, half)
	g.p("\tVMOVUPS %s0, (DI)", half)
	g.p("\tADDQ $%d, DI", 4*lanes)
	g.p("\tADDQ $%d, SI", 4*lanes)
	g.gateTail(name)
	return name
}

// gelu is GeGLU (gated: gate = gelu(gate)·up) or GELU (gate = gelu(gate))
// over n elements (a multiple of 4), AVX2 in float64 as gelu1 spells out:
// u = √(2/π)·(v + ((0.044715·v)·v)·v), e = e^(−2|u|) (expNeg, 0 where
// !(−2|u| ≥ −708)), t = (1 − e)/(1 + e) negated where u < 0, then
// float32((0.5·v)·(1 + t)), times up in float32. One IEEE operation per
// step in gelu1's order, so the bits are the portable code's. Both levels
// run it (the AVX-512 level takes the same four lanes).
func (g *gen) gelu(gated bool) string {
	name := "geluAVX2"
	if gated {
		name = "gegluAVX2"
	}
	g.gateHead(name, "Y", 4)
	g.p("\tVCVTPS2PD (DI), Y0")                // v = float64(x)
	g.p("\tVMULPD geluconst<>+0(SB), Y0, Y5")  // 0.044715·v
	g.p("\tVMULPD Y0, Y5, Y5")                 // ·v
	g.p("\tVMULPD Y0, Y5, Y5")                 // ·v
	g.p("\tVADDPD Y5, Y0, Y5")                 // v + …
	g.p("\tVMULPD geluconst<>+32(SB), Y5, Y5") // u = √(2/π)·(…)
	g.p("\tVANDNPD Y5, Y13, Y6")               // |u|
	g.p("\tVMULPD geluconst<>+64(SB), Y6, Y6") // a = −2·|u|
	g.p("\tVCMPPD $0x1d, Y9, Y6, Y7")          // a ≥ −708 (false for NaN)
	g.p("\tVMAXPD Y9, Y6, Y6")                 // finite for the polynomial
	g.expNeg("Y", 6, 4, 0)                     // e in Y3
	g.p("\tVANDPD Y7, Y3, Y3")                 // 0 where !(a ≥ −708)
	g.p("\tVSUBPD Y3, Y14, Y4")                // 1 − e
	g.p("\tVADDPD Y3, Y14, Y2")                // 1 + e
	g.p("\tVDIVPD Y2, Y4, Y4")                 // t = (1 − e)/(1 + e)
	g.p("\tVCMPPD $0x11, Y15, Y5, Y1")         // u < 0 (false for NaN)
	g.p("\tVANDPD Y13, Y1, Y1")
	g.p("\tVXORPD Y1, Y4, Y4")                 // −t where u < 0
	g.p("\tVADDPD Y14, Y4, Y4")                // 1 + t
	g.p("\tVMULPD geluconst<>+96(SB), Y0, Y0") // 0.5·v
	g.p("\tVMULPD Y4, Y0, Y0")                 // ·(1 + t)
	g.p("\tVCVTPD2PSY Y0, X0")                 // float32
	if gated {
		g.p("\tVMULPS (SI), X0, X0") // ·up
		g.p("\tADDQ $16, SI")
	}
	g.p("\tVMOVUPS X0, (DI)")
	g.p("\tADDQ $16, DI")
	g.gateTail(name)
	return name
}

// gateHead starts an element-wise kernel of gate and up (SwiGLU, GeGLU,
// GELU: func(gate, up *float32, n int, tab *expTable)) and its loop over
// n/lanes groups of values: DI gate, SI up, CX the groups, R8 the
// exponential's table, its constants in registers 8–12 (expConsts) and in
// 13, 14, 15 the sign bit, 1.0 and 0.0 (class r).
func (g *gen) gateHead(name, r string, lanes int) {
	fmt.Fprintf(&g.decls, "//go:noescape\nfunc %s(gate, up *float32, n int, tab *expTable)\n\n", name)
	g.p("// func %s(gate, up *float32, n int, tab *expTable)", name)
	g.p("TEXT ·%s(SB), NOSPLIT, $0-32", name)
	g.p("\tMOVQ gate+0(FP), DI")
	g.p("\tMOVQ up+8(FP), SI")
	g.p("\tMOVQ n+16(FP), CX")
	g.p("\tMOVQ tab+24(FP), R8")
	g.expConsts(r)
	g.p("\tVBROADCASTSD siluconst<>+0(SB), %s13", r) // sign bit
	g.p("\tVBROADCASTSD siluconst<>+8(SB), %s14", r) // 1.0
	g.p("\tVXORPD %s15, %s15, %s15", r, r, r)        // 0.0
	g.p("\tSHRQ $%d, CX", map[int]int{4: 2, 8: 3}[lanes])
	g.p("\tJZ %s_done", name)
	g.p("%s_loop:", name)
}

// gateTail ends gateHead's loop and the kernel.
func (g *gen) gateTail(name string) {
	g.p("\tDECQ CX")
	g.p("\tJNZ %s_loop", name)
	g.p("%s_done:", name)
	g.ret()
}

func main() {
	var g gen
	g.p("// Code generated by gen_kernels.go; DO NOT EDIT.")
	g.p("")
	g.p("//go:build amd64 && !purego")
	g.p("")
	g.p("#include \"textflag.h\"")
	g.p("")
	for i := 0; i < 16; i++ {
		g.p("DATA tailmask<>+%d(SB)/4, $0xffffffff", 4*i)
	}
	for i := 16; i < 32; i++ {
		g.p("DATA tailmask<>+%d(SB)/4, $0", 4*i)
	}
	g.p("GLOBL tailmask<>(SB), RODATA|NOPTR, $128")
	g.p("")
	for i := 0; i <= 16; i++ {
		g.p("DATA masks16<>+%d(SB)/2, $%d", 2*i, 1<<i-1)
	}
	g.p("GLOBL masks16<>(SB), RODATA|NOPTR, $34")
	g.p("")
	for i, c := range []string{"$0x8000000000000000", "$1.0"} { // sign bit, 1 (swiglu)
		g.p("DATA siluconst<>+%d(SB)/8, %s", 8*i, c)
	}
	g.p("GLOBL siluconst<>(SB), RODATA|NOPTR, $16")
	g.p("")
	// 0.044715, √(2/π), −2 and 0.5, four lanes each (gelu's memory operands).
	for i, c := range []string{"$0.044715", "$0.7978845608028654", "$-2.0", "$0.5"} {
		for l := 0; l < 4; l++ {
			g.p("DATA geluconst<>+%d(SB)/8, %s", 32*i+8*l, c)
		}
	}
	g.p("GLOBL geluconst<>(SB), RODATA|NOPTR, $128")
	g.p("")
	// VPERMW indices of the K-quant tiles: 16-bit lane i of chunk k takes
	// the scale of sub-block 2k + i/16 (Q4_K, 32 elements) or 4k + i/8
	// (Q6_K, 16 elements).
	for k := 0; k < 4; k++ {
		for i := 0; i < 32; i++ {
			g.p("DATA k4idx<>+%d(SB)/2, $%d", 64*k+2*i, 2*k+i/16)
		}
	}
	g.p("GLOBL k4idx<>(SB), RODATA|NOPTR, $256")
	for k := 0; k < 4; k++ {
		for i := 0; i < 32; i++ {
			g.p("DATA k6idx<>+%d(SB)/2, $%d", 64*k+2*i, 4*k+i/8)
		}
	}
	g.p("GLOBL k6idx<>(SB), RODATA|NOPTR, $256")
	// Q4_K scale unpacking (kquantAVX512) of the 12 bytes s: VPSHUFB A puts
	// s0–3, s8–11, s4–7, s8–11 in bytes 0–15 (the low bits of scales 0–3,
	// 4–7, mins 0–3, 4–7), B s0–3 in bytes 4–7 and s4–7 in 12–15 (the high
	// bits of scales and mins 4–7); A is shifted right by 4 in bytes 12–15
	// (16-bit lanes 6 and 7) and masked by "low", B shifted right by 2 and
	// masked by "high" (bits 6–7 to 4–5).
	k4shufA := [16]int{0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11}
	k4shufB := [16]int{0x80, 0x80, 0x80, 0x80, 0, 1, 2, 3, 0x80, 0x80, 0x80, 0x80, 4, 5, 6, 7}
	var k4unpack [80]byte
	for i := 0; i < 16; i++ {
		low, high := 0x3f, 0
		if i/4%2 == 1 {
			low, high = 0x0f, 0x30
		}
		k4unpack[i], k4unpack[16+i] = byte(k4shufA[i]), byte(k4shufB[i])
		k4unpack[32+i] = byte(4 * (i / 12) * (1 - i%2)) // 16-bit counts
		k4unpack[48+i], k4unpack[64+i] = byte(low), byte(high)
	}
	for i, c := range k4unpack {
		g.p("DATA k4unpack<>+%d(SB)/1, $%d", i, c)
	}
	g.p("GLOBL k4unpack<>(SB), RODATA|NOPTR, $80")
	// quantPairAVX512's Q5_0 high bits: in each 256-bit half, byte i < 16
	// (the low nibbles: codes 0–15) takes qh byte i/8, byte 16 + i (codes
	// 16–31) qh byte 2 + i/8 (VPSHUFB of qh in every 32-bit word); the
	// test mask of byte i is bit i%8.
	for i := 0; i < 64; i++ {
		g.p("DATA q5pair<>+%d(SB)/1, $%d", i, 2*(i/16%2)+i%16/8)
	}
	for i := 0; i < 64; i++ {
		g.p("DATA q5pair<>+%d(SB)/1, $%d", 64+i, 1<<(i%8))
	}
	g.p("GLOBL q5pair<>(SB), RODATA|NOPTR, $128")
	// k4Stream's VPSHUFB of the unpacked scales and mins (bytes 0–7 and
	// 8–15 of each 128-bit half): 32-bit word i of each half of A is the
	// 16-bit pair (scale i, scale i), of B (scale 4+i, scale 4+i); word i of
	// the low half of M is min i, of the high half min 4+i, zero-extended.
	for h, base := range []int{0, 4} {
		for half := 0; half < 2; half++ {
			for i := 0; i < 4; i++ {
				for e := 0; e < 4; e++ {
					v := base + i
					if e%2 == 1 {
						v = 0x80
					}
					g.p("DATA k4dup<>+%d(SB)/1, $%d", 32*h+16*half+4*i+e, v)
				}
			}
		}
	}
	for half := 0; half < 2; half++ {
		for i := 0; i < 4; i++ {
			for e := 0; e < 4; e++ {
				v := 8 + 4*half + i
				if e > 0 {
					v = 0x80
				}
				g.p("DATA k4dup<>+%d(SB)/1, $%d", 64+16*half+4*i+e, v)
			}
		}
	}
	g.p("GLOBL k4dup<>(SB), RODATA|NOPTR, $96")
	// k6Stream's VPSHUFB of the 16 scale bytes (in each 128-bit half):
	// 32-bit word i of the low half of A holds scale 2i twice, of the high
	// half scale 2i+1, each in the high byte of a 16-bit word (VPSRAW 8
	// sign-extends it); B the same for scales 8 + ….
	for h := 0; h < 2; h++ {
		for half := 0; half < 2; half++ {
			for i := 0; i < 4; i++ {
				for e := 0; e < 4; e++ {
					v := 8*h + 2*i + half
					if e%2 == 0 {
						v = 0x80
					}
					g.p("DATA k6dup<>+%d(SB)/1, $%d", 32*h+16*half+4*i+e, v)
				}
			}
		}
	}
	g.p("GLOBL k6dup<>(SB), RODATA|NOPTR, $64")
	g.p("DATA kconst<>+0(SB)/4, $0x0f0f0f0f")
	g.p("DATA kconst<>+4(SB)/4, $0x30303030")
	for i, c := range [][2]int{{0, 4}, {4, 2}, {0, 2}} {
		for j := 0; j < 32; j++ {
			g.p("DATA kconst<>+%d(SB)/2, $%d", 64+64*i+2*j, c[j/16])
		}
	}
	g.p("GLOBL kconst<>(SB), RODATA|NOPTR, $256")
	// −32 in 16 16-bit lanes (the Q6_K offset).
	for i := 0; i < 16; i++ {
		g.p("DATA k6m32<>+%d(SB)/2, $0xffe0", 2*i)
	}
	g.p("GLOBL k6m32<>(SB), RODATA|NOPTR, $32")
	// VPSRLVW counts of the Q4_0 pair tiles: 0 in 128-bit units 0 and 2
	// (the low nibbles), 4 in units 1 and 3 (the high nibbles).
	for u := 0; u < 4; u++ {
		g.p("DATA pairshift<>+%d(SB)/8, $0x%016x", 16*u, 0x0004000400040004*(u%2))
		g.p("DATA pairshift<>+%d(SB)/8, $0x%016x", 16*u+8, 0x0004000400040004*(u%2))
	}
	g.p("GLOBL pairshift<>(SB), RODATA|NOPTR, $64")
	g.p("")

	var init bytes.Buffer
	set := func(level string, rows [9]int, kind string, mk func(R, T int) string) {
		for T := 1; T <= 8 && rows[T] > 0; T++ {
			for R := 1; R <= rows[T]; R++ {
				fmt.Fprintf(&init, "\t%s.%s[%d][%d] = %s\n", level, kind, R, T, mk(R, T))
			}
		}
	}
	set("k512", avx512F32, "f32", g.f32AVX512)
	set("k512", avx512F16, "f16", func(R, T int) string { return g.f16AVX512(false, R, T) })
	set("k512", avx512F16, "bf16", func(R, T int) string { return g.f16AVX512(true, R, T) })
	// The one-token F16 tile reads its row as one stream, without software
	// prefetch (NP), which the hardware prefetcher follows: on the Zen 4
	// at the avx2 level (standing in for an AVX2 CPU) it decoded
	// Llama-3.2-1B F16 at 12.2–16.8 tokens/s against 11.5–13.2 with
	// PREFETCHT0 (docs/BENCHMARKS.md, "AVX2 on the Zen 4"). BF16 keeps its
	// prefetch: not measured.
	set("k2", avx2F16, "f16", func(R, T int) string {
		if T == 1 {
			g.noPrefetch = true
			defer func() { g.noPrefetch = false }()
		}
		return g.f16AVX2(false, T)
	})
	set("k2", avx2F16, "bf16", func(R, T int) string { return g.f16AVX2(true, T) })
	set("k512", avx512Quant, "q8", func(R, T int) string { return g.quantAVX512(false, R, T) })
	set("k512", avx512Quant, "q4", func(R, T int) string { return g.quantAVX512(true, R, T) })
	for _, kind := range []string{"q8", "q4"} {
		for T := 2; T <= pairMaxT; T++ {
			for R := 1; R <= pairRows[T]; R++ {
				fmt.Fprintf(&init, "\tk512.%sp[%d][%d] = %s\n", kind, R, T, g.quantPairAVX512(kind, R, T))
			}
		}
	}
	for T := 1; T <= 2; T++ {
		fmt.Fprintf(&init, "\tk512.q8packed[%d] = %s\n", T, g.packedAVX512("q8", T))
		fmt.Fprintf(&init, "\tk512.q4packed[%d] = %s\n", T, g.packedAVX512("q4", T))
		fmt.Fprintf(&init, "\tk512.q5packed[%d] = %s\n", T, g.packedAVX512("q5", T))
	}
	set("k2", avx2F32, "f32", g.f32AVX2)
	set("k512", kquantRows, "k4", func(R, T int) string { return g.kquantAVX512(false, R, T) })
	set("k512", kquantRows, "k6", func(R, T int) string { return g.kquantAVX512(true, R, T) })
	set("k2", kquantRowsAVX2, "k4", func(R, T int) string { return g.kquantAVX2(false, T, false) })
	set("k2", kquantRowsAVX2, "k6", func(R, T int) string { return g.kquantAVX2(true, T, false) })
	set("k2", avx2Quant, "q8", func(R, T int) string { return g.quantAVX2(false, R, T) })
	set("k2", avx2Quant, "q4", func(R, T int) string { return g.quantAVX2(true, R, T) })
	fmt.Fprintf(&init, "\tk512.quant = %s\n", g.quantActs())
	fmt.Fprintf(&init, "\tk512.quantK = %s\n", g.quantActsK())
	g.quantConstsAVX2()
	fmt.Fprintf(&init, "\tk2.quant = %s\n", g.quantActsAVX2())
	fmt.Fprintf(&init, "\tk2.quantK = %s\n", g.quantActsKAVX2())
	fmt.Fprintf(&init, "\tk512.swiglu, k512.swigluLanes = %s, 8\n", g.swiglu(true))
	fmt.Fprintf(&init, "\tk2.swiglu, k2.swigluLanes = %s, 4\n", g.swiglu(false))
	geglu, gelu := g.gelu(true), g.gelu(false)
	fmt.Fprintf(&init, "\tk512.geglu, k512.gelu, k2.geglu, k2.gelu = %s, %s, %s, %s\n", geglu, gelu, geglu, gelu)
	g.expShifted(false) // called by name (exp_amd64.go)
	g.expShifted(true)
	for c := 1; c <= 4; c++ {
		fmt.Fprintf(&init, "\tk512.wsum[%d] = %s\n", c, g.wsum(true, false, c))
		fmt.Fprintf(&init, "\tk2.wsum[%d] = %s\n", c, g.wsum(false, false, c))
		fmt.Fprintf(&init, "\tk512.wsumF16[%d] = %s\n", c, g.wsum(true, true, c))
		fmt.Fprintf(&init, "\tk2.wsumF16[%d] = %s\n", c, g.wsum(false, true, c))
	}
	// Q5_0: the AVX2 tiles at every level for one token (the same bits;
	// q5.go), the AVX-512 levels' token-pair tiles for more.
	g.avx2qConsts()
	g.q5Consts()
	g.k4Consts()
	fmt.Fprintf(&init, "\tq5 := &q5Set{rows: %#v, maxT: 4}\n", avx2Quant)
	set("q5", avx2Quant, "tiles", g.quantQ5AVX2)
	// The AVX-512 levels: the same one-token tiles, and token-pair tiles
	// for blocks of several tokens.
	q5p := pairRows
	q5p[1] = avx2Quant[1]
	fmt.Fprintf(&init, "\tq5z := &q5Set{tiles: q5.tiles, rows: q5.rows, maxT: q5.maxT, pRows: %#v, pMaxT: %d}\n", q5p, pairMaxT)
	for T := 2; T <= pairMaxT; T++ {
		for R := 1; R <= pairRows[T]; R++ {
			fmt.Fprintf(&init, "\tq5z.pairs[%d][%d] = %s\n", R, T, g.quantPairAVX512("q5", R, T))
		}
	}
	fmt.Fprintf(&init, "\tq5Sets[levelAVX512], q5Sets[levelAVX2] = q5z, q5\n")

	// The stream tiles of avx512-zen4: one row, one token, no software
	// prefetch (zen4.go).
	var zen4 bytes.Buffer
	fmt.Fprintf(&g.decls, "// streamKRows is the most rows of avx512-zen4's one-token K-quant tiles\n// (gen_kernels.go, k4Stream and k6Stream).\nconst streamKRows = %d\n\n", streamKRows)
	g.noPrefetch = true
	fmt.Fprintf(&zen4, "\tkernelSets[levelAVX512Zen4] = zen4Kernels(k512, &streamTiles{\n")
	fmt.Fprintf(&zen4, "\t\tf32: %s, f16: %s, bf16: %s,\n", g.f32AVX512(1, 1), g.f16AVX512(false, 1, 1), g.f16AVX512(true, 1, 1))
	fmt.Fprintf(&zen4, "\t\tk4: [streamKRows + 1]kTileFn{nil, nil")
	for R := 2; R <= streamKRows; R++ {
		fmt.Fprintf(&zen4, ", %s", g.k4Stream(R, 0))
	}
	for _, kind := range []string{"k4", "k6"} {
		fmt.Fprintf(&zen4, "},\n\t\t%sseq: [maxR + 1]kTileFn{nil", kind)
		for R := 1; R <= 8; R++ {
			if kind == "k4" {
				fmt.Fprintf(&zen4, ", %s", g.k4Stream(1, R))
			} else {
				fmt.Fprintf(&zen4, ", %s", g.k6Stream(1, R))
			}
		}
	}
	fmt.Fprintf(&zen4, "},\n")
	fmt.Fprintf(&zen4, "\t\tq8packed: %s, q4packed: %s, q5packed: %s,\n", g.packedAVX512("q8", 1), g.packedAVX512("q4", 1), g.packedAVX512("q5", 1))
	// The tiles of K-quant rows packed in groups of kPackRows (pack.go):
	// one token the stream tiles of a whole group, more tokens avx512's
	// tiles at their heights (kquantRows), every height up to them.
	g.kGroup = kPackRows
	packedRows := kquantRows
	packedRows[1] = kPackRows
	fmt.Fprintf(&zen4, "\t\tkPacked: packedKTiles{rows: %#v,\n", packedRows)
	for _, kind := range []string{"k4", "k6"} {
		fmt.Fprintf(&zen4, "\t\t\t%s: [kPackRows + 1][maxT + 1]kTileFn{", kind)
		for R := 1; R <= kPackRows; R++ {
			fmt.Fprintf(&zen4, "\n\t\t\t\t%d: {", R)
			for T := 1; T <= kquantMaxT; T++ {
				switch {
				case T == 1 && R == kPackRows && kind == "k4":
					fmt.Fprintf(&zen4, "%d: %s, ", T, g.k4Stream(R, 0))
				case T == 1 && R == kPackRows:
					fmt.Fprintf(&zen4, "%d: %s, ", T, g.k6Stream(R, 0))
				case T > 1 && R <= kquantRows[T]:
					// These prefetch the next group (kGroupPrefetch).
					g.noPrefetch = false
					fmt.Fprintf(&zen4, "%d: %s, ", T, g.kquantAVX512(kind == "k6", R, T))
					g.noPrefetch = true
				}
			}
			fmt.Fprintf(&zen4, "},")
		}
		fmt.Fprintf(&zen4, "\n\t\t\t},\n")
	}
	fmt.Fprintf(&zen4, "\t\t},\n\t})\n")
	g.kGroup = 0
	fmt.Fprintf(&zen4, "\tq5Sets[levelAVX512Zen4] = q5z\n")
	// avx512-zen5: avx512's tiles, one row per tile for one token (zen5.go).
	fmt.Fprintf(&zen4, "\tkernelSets[levelAVX512Zen5] = zen5Kernels(k512)\n")
	fmt.Fprintf(&zen4, "\tq5Sets[levelAVX512Zen5] = q5z\n")
	g.noPrefetch = false
	// avx2-zen1: avx2's tiles, the K-quant tiles of kPairMinT tokens or
	// more taking their chunks in pairs.
	fmt.Fprintf(&zen4, "\tz1 := *k2\n")
	for i, kind := range []string{"k4", "k6"} {
		for T := kPairMinT[i]; T <= kquantMaxTAVX2; T++ {
			fmt.Fprintf(&zen4, "\tz1.%s[1][%d] = %s\n", kind, T, g.kquantAVX2(i == 1, T, true))
		}
	}
	fmt.Fprintf(&zen4, "\tkernelSets[levelAVX2Zen1], q5Sets[levelAVX2Zen1] = &z1, q5\n")

	var gofile bytes.Buffer
	fmt.Fprintf(&gofile, "// Code generated by gen_kernels.go; DO NOT EDIT.\n\n//go:build amd64 && !purego\n\npackage tensor\n\n")
	gofile.Write(g.decls.Bytes())
	fmt.Fprintf(&gofile, "func init() {\n\tk512, k2 := new(kernelSet), new(kernelSet)\n")
	fmt.Fprintf(&gofile, "\tk512.f32Rows, k512.qRows, k512.maxT = %#v, %#v, 4\n", avx512F32, avx512Quant)
	fmt.Fprintf(&gofile, "\tk2.f32Rows, k2.qRows, k2.maxT = %#v, %#v, 4\n", avx2F32, avx2Quant)
	fmt.Fprintf(&gofile, "\tk512.f16Rows, k512.f16MaxT = %#v, 4\n", avx512F16)
	fmt.Fprintf(&gofile, "\tk2.f16Rows, k2.f16MaxT, k2.f16Whole = %#v, 3, true\n", avx2F16)
	fmt.Fprintf(&gofile, "\tk512.kRows, k512.kMaxT, k512.kGroupScales = %#v, %d, true\n", kquantRows, kquantMaxT)
	fmt.Fprintf(&gofile, "\tk512.kRowsNarrow = %#v\n", kquantRowsNarrow)
	if pairMaxT%2 != 0 || pairMaxT > 8 {
		panic("pairMaxT must be even and at most maxT")
	}
	pr := pairRows
	pr[1] = avx512Quant[1]
	fmt.Fprintf(&gofile, "\tk512.pRows, k512.pMaxT = %#v, %d\n", pr, pairMaxT)
	fmt.Fprintf(&gofile, "\tk2.kRows, k2.kMaxT = %#v, %d\n", kquantRowsAVX2, kquantMaxTAVX2)
	fmt.Fprintf(&gofile, "\tk512.wsumWidth, k2.wsumWidth = 16, 8\n")
	gofile.Write(init.Bytes())
	fmt.Fprintf(&gofile, "\tkernelSets[levelAVX512], kernelSets[levelAVX2] = k512, k2\n")
	gofile.Write(zen4.Bytes())
	fmt.Fprintf(&gofile, "}\n")

	src, err := format.Source(gofile.Bytes())
	if err != nil {
		fmt.Fprintln(os.Stderr, gofile.String())
		panic(err)
	}
	if err := os.WriteFile("gemm_kernels_amd64.go", src, 0o644); err != nil {
		panic(err)
	}
	if err := os.WriteFile("gemm_amd64.s", g.s.Bytes(), 0o644); err != nil {
		panic(err)
	}
}

// clampConsts sets the input quantizers' constants: Z21 the magnitude
// mask, Z22 and Z23 the codes' bounds +127 and −127 (int32 lanes).
func (g *gen) clampConsts() {
	g.p("\tMOVL $0x7fffffff, AX")
	g.p("\tVPBROADCASTD AX, Z21") // |·| mask
	g.p("\tMOVL $127, AX")
	g.p("\tVPBROADCASTD AX, Z22") // +127
	g.p("\tNEGL AX")
	g.p("\tVPBROADCASTD AX, Z23") // −127
}

// scaleConsts sets X(c127) = 127.0 and X(one) = 1.0, quantizeByMax's
// divisors.
func (g *gen) scaleConsts(c127, one int) {
	g.p("\tMOVL $0x42fe0000, AX") // 127.0
	g.p("\tVMOVD AX, X%d", c127)
	g.p("\tMOVL $0x3f800000, AX") // 1.0
	g.p("\tVMOVD AX, X%d", one)
}

// quantizeByMax folds the 16 lane maxima of |x| in Z(mx) (temp Z(tmp))
// to amax, sets X(d) = amax/127 (X(c127) holds 127.0) and the inverse
// id = 1/d in all lanes of Z(id) (0 when d = 0; X(one) holds 1.0), then
// quantizes Z0…Z(n−1) in place: round(x·id) clamped to ±127 (Z23, Z22),
// packed to bytes in X0…X(n−1). Jumps to label name_zero.
func (g *gen) quantizeByMax(name string, mx, tmp, d, id, c127, one, n int) {
	g.p("\tVEXTRACTF64X4 $1, Z%d, Y%d", mx, tmp)
	g.p("\tVMAXPS Y%d, Y%d, Y%d", tmp, mx, mx)
	g.p("\tVEXTRACTF32X4 $1, Y%d, X%d", mx, tmp)
	g.p("\tVMAXPS X%d, X%d, X%d", tmp, mx, mx)
	g.p("\tVPERMILPS $0x4e, X%d, X%d", mx, tmp)
	g.p("\tVMAXPS X%d, X%d, X%d", tmp, mx, mx)
	g.p("\tVMOVSHDUP X%d, X%d", mx, tmp)
	g.p("\tVMAXSS X%d, X%d, X%d", tmp, mx, mx)
	g.p("\tVDIVSS X%d, X%d, X%d", c127, mx, d) // d = amax/127
	g.p("\tVPXORD X%d, X%d, X%d", id, id, id)
	g.p("\tVUCOMISS X%d, X%d", id, d)
	g.p("\tJEQ %s_zero", name)
	g.p("\tVDIVSS X%d, X%d, X%d", d, one, id) // id = 1/d
	g.p("%s_zero:", name)
	g.p("\tVBROADCASTSS X%d, Z%d", id, id)
	for k := 0; k < n; k++ {
		g.p("\tVMULPS Z%d, Z%d, Z%d", id, k, k)
		g.p("\tVCVTPS2DQ Z%d, Z%d", k, k)
		g.p("\tVPMAXSD Z23, Z%d, Z%d", k, k)
		g.p("\tVPMINSD Z22, Z%d, Z%d", k, k)
		g.p("\tVPMOVDB Z%d, X%d", k, k)
	}
}

// join6 completes eight 6-bit K-quant scales (or mins) as bytes of hi:
// hi holds the low 4 bits of values 4…7 (one per byte), lo the word whose
// bytes hold values 0…3 in their low 6 bits and the high 2 bits of values
// 4…7 in their top 2. Afterwards hi's low 32 bits are values 0…3 and its
// high 32 bits values 4…7; lo and tmp are clobbered.
func (g *gen) join6(hi, lo, tmp string) {
	g.p("\tMOVL %s, %s", lo, tmp)
	g.p("\tSHRL $6, %s", tmp)
	g.p("\tANDL $0x03030303, %s", tmp)
	g.p("\tSHLL $4, %s", tmp)
	g.p("\tORL %s, %s", tmp, hi) // values 4…7
	g.p("\tSHLQ $32, %s", hi)
	g.p("\tANDL $0x3f3f3f3f, %s", lo)
	g.p("\tORQ %s, %s", lo, hi) // values 0…7
}
