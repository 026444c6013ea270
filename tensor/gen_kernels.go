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
	"os"
	"strings"
)

// tile heights per level and kind: rows[T] for T = 1…4 tokens.
var (
	avx512Rows = [5]int{0, 8, 4, 4, 4}
	avx2F32    = [5]int{0, 4, 2, 2, 1}
	avx2Quant  = [5]int{0, 4, 3, 2, 2}
)

type gen struct {
	s     bytes.Buffer
	decls bytes.Buffer
}

func (g *gen) p(format string, args ...any) { fmt.Fprintf(&g.s, format+"\n", args...) }

// regs assigns general registers: R row pointers, T token pointers and
// the remaining ones as temporaries (AX and CX are reserved by callers).
func regs(R, T int) (rows, toks, free []string) {
	pool := []string{"SI", "R8", "R9", "R10", "R11", "R12", "R13", "DX"}
	tpool := []string{"DI", "BX", "DX", "R13", "R12"}
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
	g.p("\tVZEROUPPER")
	g.p("\tRET")
	g.p("")
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

// f32AVX512 is the F32 tile with ZMM registers: 16 lanes, one FMA per
// element, a masked step for the last cols mod 16 elements.
func (g *gen) f32AVX512(R, T int) string {
	name := fmt.Sprintf("f32AVX512R%dT%d", R, T)
	g.header(name, "float32", "float32", "cols")
	rows, toks, free := regs(R, T)
	acc := func(r, t int) int { return r*T + t }
	w := func(r int) int { return 16 + r }
	x := func(t int) int { return 24 + t }
	tmp := free[0]
	g.pointers(rows, arg(0), arg(1), tmp)
	g.pointers(toks, arg(2), arg(3), tmp)
	for r := 0; r < R; r++ {
		for t := 0; t < T; t++ {
			k := acc(r, t)
			g.p("\tVPXORD Z%d, Z%d, Z%d", k, k, k)
		}
	}
	g.p("\tXORQ AX, AX")
	g.p("\tMOVQ cols+32(FP), CX")
	g.p("\tSHRQ $4, CX")
	g.p("\tJZ %s_tail", name)
	g.p("%s_loop:", name)
	for r := 0; r < R; r++ {
		g.p("\tVMOVUPS (%s)(AX*1), Z%d", rows[r], w(r))
	}
	for t := 0; t < T; t++ {
		g.p("\tVMOVUPS (%s)(AX*1), Z%d", toks[t], x(t))
	}
	for r := 0; r < R; r++ {
		for t := 0; t < T; t++ {
			g.p("\tVFMADD231PS Z%d, Z%d, Z%d", x(t), w(r), acc(r, t))
		}
	}
	g.p("\tADDQ $64, AX")
	g.p("\tDECQ CX")
	g.p("\tJNZ %s_loop", name)
	g.p("%s_tail:", name)
	g.p("\tMOVQ cols+32(FP), CX")
	g.p("\tANDQ $15, CX")
	g.p("\tJZ %s_reduce", name)
	g.p("\tMOVL $1, %s", tmp)
	g.p("\tSHLL CX, %s", tmp)
	g.p("\tDECL %s", tmp)
	g.p("\tKMOVW %s, K1", tmp)
	for r := 0; r < R; r++ {
		g.p("\tVMOVUPS.Z (%s)(AX*1), K1, Z%d", rows[r], w(r))
	}
	for t := 0; t < T; t++ {
		g.p("\tVMOVUPS.Z (%s)(AX*1), K1, Z%d", toks[t], x(t))
	}
	for r := 0; r < R; r++ {
		for t := 0; t < T; t++ {
			g.p("\tVFMADD231PS Z%d, Z%d, K1, Z%d", x(t), w(r), acc(r, t))
		}
	}
	g.p("%s_reduce:", name)
	g.storeOut(R, T, acc, g.reduce16Z)
	return name
}

// f32AVX2 is the F32 tile with YMM registers: each of the 16 lanes is
// lane l of the low (h = 0) or high (h = 1) register of a pair.
func (g *gen) f32AVX2(R, T int) string {
	name := fmt.Sprintf("f32AVX2R%dT%d", R, T)
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
	for k := 0; k < 2*R*T; k++ {
		g.p("\tVXORPS Y%d, Y%d, Y%d", k, k, k)
	}
	g.p("\tXORQ AX, AX")
	g.p("\tMOVQ cols+32(FP), CX")
	g.p("\tSHRQ $4, CX")
	g.p("\tJZ %s_tail", name)
	g.p("%s_loop:", name)
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
	g.p("\tADDQ $64, AX")
	g.p("\tDECQ CX")
	g.p("\tJNZ %s_loop", name)
	g.p("%s_tail:", name)
	g.p("\tMOVQ cols+32(FP), CX")
	g.p("\tANDQ $15, CX")
	g.p("\tJZ %s_reduce", name)
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

// quantAVX512 is the Q8_0 or Q4_0 tile with VNNI: per block, row r's codes
// (Q8_0: q+128 by flipping the sign bit; Q4_0: the nibbles in element
// order) and scale, then for each token the lanes
// p = corr + Σ u·qx (VPDPBUSD), s = dw·dx, acc += s·p.
func (g *gen) quantAVX512(q4 bool, R, T int) string {
	kind, bb := "Q8", 34
	if q4 {
		kind, bb = "Q4", 18
	}
	name := fmt.Sprintf("%sAVX512R%dT%d", strings.ToLower(kind), R, T)
	g.header(name, "byte", "actBlock", "nb")
	rows, toks := g.quantSetup(R, T)
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
	for k := 0; k < R*T; k++ {
		g.p("\tVPXORD Y%d, Y%d, Y%d", k, k, k)
	}
	g.p("\tMOVQ nb+32(FP), CX")
	g.p("\tTESTQ CX, CX")
	g.p("\tJZ %s_reduce", name)
	g.p("%s_loop:", name)
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
	i := 0
	for t := 0; t < T; t++ {
		for r := 0; r < R; r++ {
			p, s := temps[2*(i%2)], temps[2*(i%2)+1]
			i++
			g.p("\tVMOVDQU32 32(%s)(BX*1), Y%d", toks[t], p)
			g.p("\tVPDPBUSD (%s)(BX*1), Y%d, Y%d", toks[t], w(r), p)
			g.p("\tVCVTDQ2PS Y%d, Y%d", p, p)
			g.p("\tVMULPS.BCST 64(%s)(BX*1), Y%d, Y%d", toks[t], dw(r), s)
			g.p("\tVFMADD231PS Y%d, Y%d, Y%d", p, s, acc(r, t))
		}
	}
	g.p("\tADDQ $%d, AX", bb)
	g.p("\tADDQ $72, BX")
	g.p("\tDECQ CX")
	g.p("\tJNZ %s_loop", name)
	g.p("%s_reduce:", name)
	g.storeOut(R, T, acc, func(k int) { g.reduce8Y(k, 30, true) })
	return name
}

// quantAVX2 is the Q8_0 or Q4_0 tile without VNNI. Q8_0: |qw| times qx
// with qw's sign (VPSIGNB), Q4_0: the nibbles times qx plus corr; in both
// VPMADDUBSW then VPMADDWD by ones give the same exact lanes as VPDPBUSD.
func (g *gen) quantAVX2(q4 bool, R, T int) string {
	kind, bb := "q8", 34
	if q4 {
		kind, bb = "q4", 18
	}
	name := fmt.Sprintf("%sAVX2R%dT%d", kind, R, T)
	g.header(name, "byte", "actBlock", "nb")
	rows, toks := g.quantSetup(R, T)
	acc := func(r, t int) int { return r*T + t }
	w := func(r int) int { return R*T + r }
	dw := func(r int) int { return R*T + R + r }
	next := R*T + 2*R
	ones := next
	next++
	cst := -1
	if q4 {
		cst = next
		next++
	}
	xr, sr := next, next+1
	if sr > 15 {
		panic(fmt.Sprintf("%s: too many registers", name))
	}
	g.p("\tMOVL $0x00010001, CX")
	g.p("\tVMOVD CX, X%d", ones)
	g.p("\tVPBROADCASTD X%d, Y%d", ones, ones)
	if q4 {
		g.p("\tMOVL $0x0f0f0f0f, CX")
		g.p("\tVMOVD CX, X%d", cst)
		g.p("\tVPBROADCASTD X%d, Y%d", cst, cst)
	}
	for k := 0; k < R*T; k++ {
		g.p("\tVXORPS Y%d, Y%d, Y%d", k, k, k)
	}
	g.p("\tMOVQ nb+32(FP), CX")
	g.p("\tTESTQ CX, CX")
	g.p("\tJZ %s_reduce", name)
	g.p("%s_loop:", name)
	for r := 0; r < R; r++ {
		if q4 {
			g.p("\tVMOVDQU 2(%s)(AX*1), X%d", rows[r], w(r))
			g.p("\tVPSRLW $4, X%d, X%d", w(r), xr)
			g.p("\tVINSERTI128 $1, X%d, Y%d, Y%d", xr, w(r), w(r))
			g.p("\tVPAND Y%d, Y%d, Y%d", cst, w(r), w(r))
		} else {
			g.p("\tVPABSB 2(%s)(AX*1), Y%d", rows[r], w(r))
		}
		g.p("\tVPBROADCASTW (%s)(AX*1), X%d", rows[r], dw(r))
		g.p("\tVCVTPH2PS X%d, Y%d", dw(r), dw(r))
	}
	for t := 0; t < T; t++ {
		for r := 0; r < R; r++ {
			if q4 {
				g.p("\tVPMADDUBSW (%s)(BX*1), Y%d, Y%d", toks[t], w(r), xr)
				g.p("\tVPMADDWD Y%d, Y%d, Y%d", ones, xr, xr)
				g.p("\tVPADDD 32(%s)(BX*1), Y%d, Y%d", toks[t], xr, xr)
			} else {
				g.p("\tVMOVDQU (%s)(BX*1), Y%d", toks[t], xr)
				g.p("\tVPSIGNB 2(%s)(AX*1), Y%d, Y%d", rows[r], xr, xr)
				g.p("\tVPMADDUBSW Y%d, Y%d, Y%d", xr, w(r), xr)
				g.p("\tVPMADDWD Y%d, Y%d, Y%d", ones, xr, xr)
			}
			g.p("\tVCVTDQ2PS Y%d, Y%d", xr, xr)
			g.p("\tVBROADCASTSS 64(%s)(BX*1), Y%d", toks[t], sr)
			g.p("\tVMULPS Y%d, Y%d, Y%d", dw(r), sr, sr)
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

// wsum is out[i] = Σ_t a[t]·v[t·stride + i] over c registers of lanes
// (ZMM: 16 floats, YMM: 8), each product and each sum rounded to float32
// (VMULPS then VADDPS, t in increasing order, from +0), as WeightedSum's Go
// loop computes it.
func (g *gen) wsum(zmm bool, c int) string {
	reg, width, lvl := "Y", 32, "AVX2"
	if zmm {
		reg, width, lvl = "Z", 64, "AVX512"
	}
	name := fmt.Sprintf("wsum%sC%d", lvl, c)
	fmt.Fprintf(&g.decls, "//go:noescape\nfunc %s(out *float32, a *float32, v *float32, stride uintptr, n int)\n\n", name)
	g.p("// func %s(out *float32, a *float32, v *float32, stride uintptr, n int)", name)
	g.p("TEXT ·%s(SB), NOSPLIT, $0-40", name)
	g.p("\tMOVQ out+0(FP), DI")
	g.p("\tMOVQ a+8(FP), SI")
	g.p("\tMOVQ v+16(FP), DX")
	g.p("\tMOVQ stride+24(FP), R8")
	g.p("\tMOVQ n+32(FP), CX")
	for k := 0; k < c; k++ {
		g.p("\tVXORPS %s%d, %s%d, %s%d", reg, k, reg, k, reg, k)
	}
	if zmm {
		for k := 0; k < c; k++ {
			g.p("\tVPXORD Z%d, Z%d, Z%d", k, k, k)
		}
	}
	g.p("\tTESTQ CX, CX")
	g.p("\tJZ %s_store", name)
	g.p("%s_loop:", name)
	g.p("\tVBROADCASTSS (SI), %s8", reg)
	for k := 0; k < c; k++ {
		g.p("\tVMULPS %d(DX), %s8, %s%d", width*k, reg, reg, 4+k)
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
	g.p("\tVZEROUPPER")
	g.p("\tRET")
	g.p("")
	return name
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

	var init bytes.Buffer
	set := func(level string, rows [5]int, kind string, mk func(R, T int) string) {
		for T := 1; T <= 4; T++ {
			for R := 1; R <= rows[T]; R++ {
				fmt.Fprintf(&init, "\t%s.%s[%d][%d] = %s\n", level, kind, R, T, mk(R, T))
			}
		}
	}
	set("k512", avx512Rows, "f32", g.f32AVX512)
	set("k512", avx512Rows, "q8", func(R, T int) string { return g.quantAVX512(false, R, T) })
	set("k512", avx512Rows, "q4", func(R, T int) string { return g.quantAVX512(true, R, T) })
	set("k2", avx2F32, "f32", g.f32AVX2)
	set("k2", avx2Quant, "q8", func(R, T int) string { return g.quantAVX2(false, R, T) })
	set("k2", avx2Quant, "q4", func(R, T int) string { return g.quantAVX2(true, R, T) })
	for c := 1; c <= 4; c++ {
		fmt.Fprintf(&init, "\tk512.wsum[%d] = %s\n", c, g.wsum(true, c))
		fmt.Fprintf(&init, "\tk2.wsum[%d] = %s\n", c, g.wsum(false, c))
	}

	var gofile bytes.Buffer
	fmt.Fprintf(&gofile, "// Code generated by gen_kernels.go; DO NOT EDIT.\n\n//go:build amd64 && !purego\n\npackage tensor\n\n")
	gofile.Write(g.decls.Bytes())
	fmt.Fprintf(&gofile, "func init() {\n\tk512, k2 := new(kernelSet), new(kernelSet)\n")
	fmt.Fprintf(&gofile, "\tk512.f32Rows, k512.qRows = %#v, %#v\n", avx512Rows, avx512Rows)
	fmt.Fprintf(&gofile, "\tk2.f32Rows, k2.qRows = %#v, %#v\n", avx2F32, avx2Quant)
	fmt.Fprintf(&gofile, "\tk512.wsumWidth, k2.wsumWidth = 16, 8\n")
	gofile.Write(init.Bytes())
	fmt.Fprintf(&gofile, "\tkernelSets[levelAVX512], kernelSets[levelAVX2] = k512, k2\n}\n")
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
