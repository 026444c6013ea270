//go:build ignore

// gen_arm64 writes cpu_arm64.s: the row kernels of the neon level (arm64).
// Run it with `go generate ./tensor` after changing it.
//
// Each kernel computes one row's dot product (or the whole chunks of it)
// in exactly the order of the portable Go code it names, so its bits are
// the portable code's. The Go assembler does not spell SDOT, SCVTF and
// MUL/SHL/SXTL/UXTL (vector), MLA and FMLA by element, FCVTL, SHLL,
// FMUL/FADD (vector) or FCVT from half precision: those are written as
// WORDs by the encoders below, each with the instruction in a comment.
package main

import (
	"bytes"
	"fmt"
	"os"
)

type gen struct{ s bytes.Buffer }

func (g *gen) p(format string, args ...any) { fmt.Fprintf(&g.s, format+"\n", args...) }

// word writes an encoded instruction with its assembly in a comment.
func (g *gen) word(v uint32, comment string, args ...any) {
	g.p("\tWORD $%#08x // %s", v, fmt.Sprintf(comment, args...))
}

// Encoders (Arm A64, Q = 1 unless the name says otherwise).
func sdot(d, n, m int) uint32  { return 0x4E809400 | u(m)<<16 | u(n)<<5 | u(d) }
func scvtf(d, n int) uint32    { return 0x4E21D800 | u(n)<<5 | u(d) }
func mul4s(d, n, m int) uint32 { return 0x4EA09C00 | u(m)<<16 | u(n)<<5 | u(d) }
func fmul4s(d, n, m int) uint32 {
	return 0x6E20DC00 | u(m)<<16 | u(n)<<5 | u(d)
}
func fadd4s(d, n, m int) uint32 { return 0x4E20D400 | u(m)<<16 | u(n)<<5 | u(d) }
func fcvtSH(d, n int) uint32    { return 0x1EE24000 | u(n)<<5 | u(d) }

// byElement sets the index i (H:L) and register m of a by-element
// instruction on 32-bit lanes.
func byElement(base uint32, d, n, m, i int) uint32 {
	return base | u(i&1)<<21 | u(m)<<16 | u(i>>1)<<11 | u(n)<<5 | u(d)
}
func fmlaEl(d, n, m, i int) uint32 { return byElement(0x4F801000, d, n, m, i) }
func mlaEl(d, n, m, i int) uint32  { return byElement(0x6F800000, d, n, m, i) }

// shl shifts left by s lanes of esize bits (8 or 32).
func shl(d, n, esize, s int) uint32 { return 0x4F005400 | u(esize+s)<<16 | u(n)<<5 | u(d) }

// widen is SXTL/UXTL (SSHLL/USHLL by 0) from esize-bit lanes; hi takes
// the upper half (SXTL2/UXTL2).
func widen(d, n, esize int, signed, hi bool) uint32 {
	v := uint32(0x2F00A400) // USHLL, lower half
	if signed {
		v = 0x0F00A400
	}
	if hi {
		v |= 1 << 30
	}
	return v | u(esize)<<16 | u(n)<<5 | u(d)
}

// fcvtl converts 4 half-precision lanes to single (hi: the upper 4);
// shll16 shifts 4 16-bit lanes left by 16 into 32-bit lanes (bfloat16).
func fcvtl(d, n int, hi bool) uint32 {
	if hi {
		return 0x4E217800 | u(n)<<5 | u(d)
	}
	return 0x0E217800 | u(n)<<5 | u(d)
}
func shll16(d, n int, hi bool) uint32 {
	if hi {
		return 0x6E613800 | u(n)<<5 | u(d)
	}
	return 0x2E613800 | u(n)<<5 | u(d)
}

func u(v int) uint32 { return uint32(v) }

func (g *gen) zero(regs ...int) {
	for _, r := range regs {
		g.p("\tVEOR V%d.B16, V%d.B16, V%d.B16", r, r, r)
	}
}

func span(lo, hi int) []int {
	var r []int
	for i := lo; i < hi; i++ {
		r = append(r, i)
	}
	return r
}

func (g *gen) f32() {
	g.p(`// func dotF32x16(a, b *float32, n int, acc *[16]float32)
// The whole 16-element chunks of dotF32 (fma.go): element c into lane
// c mod 16 — V16 holds lanes 0–3, V17 4–7, V18 8–11, V19 12–15 — with one
// fused multiply-add (FMLA) per element in increasing c. n is a multiple
// of 16; acc receives the 16 lanes.
TEXT ·dotF32x16(SB), NOSPLIT, $0-32
	MOVD a+0(FP), R0
	MOVD b+8(FP), R1
	MOVD n+16(FP), R2
	MOVD acc+24(FP), R3`)
	g.zero(span(16, 20)...)
	g.p(`	LSR $4, R2
	CBZ R2, f32done
f32loop:
	VLD1.P 64(R0), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1.P 64(R1), [V4.S4, V5.S4, V6.S4, V7.S4]
	VFMLA V4.S4, V0.S4, V16.S4
	VFMLA V5.S4, V1.S4, V17.S4
	VFMLA V6.S4, V2.S4, V18.S4
	VFMLA V7.S4, V3.S4, V19.S4
	SUBS $1, R2
	BNE f32loop
f32done:
	VST1 [V16.S4, V17.S4, V18.S4, V19.S4], (R3)
	RET
`)
}

// scale sets F(reg) = float32(f16 at off(R0)) · F(dx), rounded once, and
// negates it when neg.
func (g *gen) scale(off, reg, dx int, neg bool) {
	g.p("\tMOVHU %d(R0), R5", off)
	g.p("\tFMOVS R5, F%d", reg)
	g.word(fcvtSH(reg, reg), "FCVT S%d, H%d", reg, reg)
	g.p("\tFMULS F%d, F%d, F%d", dx, reg, reg)
	if neg {
		g.p("\tFNEGS F%d, F%d", reg, reg)
	}
}

func (g *gen) quant() {
	g.p(`// func dotQuantNEON(w *byte, a *actBlock, nb int, q4 bool, acc *[8]float32)
// dotQuant's blocks (act.go) with the dot product instructions: per block,
// lane l's sum of 4 products p_bl by SDOT (signed bytes: Q8_0 codes as
// stored, Q4_0 nibbles minus 8; exact in int32), then s = dw·dx and
// acc[l] = fma(s, float32(p_bl), acc[l]) (SCVTF, FMLA by element): the
// definition's order, lane by lane. V16 holds lanes 0–3, V17 4–7.
TEXT ·dotQuantNEON(SB), NOSPLIT, $0-40
	MOVD w+0(FP), R0
	MOVD a+8(FP), R1
	MOVD nb+16(FP), R2
	MOVBU q4+24(FP), R4
	MOVD acc+32(FP), R3`)
	g.zero(16, 17)
	g.p(`	VMOVI $15, V30.B16
	VMOVI $8, V31.B16
	CBZ R2, qdone
	CBNZ R4, q4loop`)
	for _, q4 := range []bool{false, true} {
		label, bb := "q8loop", 34
		if q4 {
			label, bb = "q4loop", 18
		}
		g.p("%s:", label)
		g.p("\tFMOVS 64(R1), F21 // dx")
		g.scale(0, 20, 21, false)
		g.p("\tVLD1 (R1), [V2.B16, V3.B16] // the input's 32 codes")
		g.zero(4, 5)
		g.p("\tADD $2, R0, R6")
		a, b := 0, 1
		if q4 {
			g.p("\tVLD1 (R6), [V0.B16] // 16 bytes: codes j (low nibble) and j+16 (high)")
			g.p("\tVAND V30.B16, V0.B16, V6.B16")
			g.p("\tVUSHR $4, V0.B16, V7.B16")
			g.p("\tVSUB V31.B16, V6.B16, V6.B16")
			g.p("\tVSUB V31.B16, V7.B16, V7.B16")
			a, b = 6, 7
		} else {
			g.p("\tVLD1 (R6), [V0.B16, V1.B16] // the row's 32 codes")
		}
		g.word(sdot(4, a, 2), "SDOT V4.4S, V%d.16B, V2.16B: lanes 0–3", a)
		g.word(sdot(5, b, 3), "SDOT V5.4S, V%d.16B, V3.16B: lanes 4–7", b)
		g.word(scvtf(4, 4), "SCVTF V4.4S, V4.4S")
		g.word(scvtf(5, 5), "SCVTF V5.4S, V5.4S")
		g.word(fmlaEl(16, 4, 20, 0), "FMLA V16.4S, V4.4S, V20.S[0]: acc += s·p, fused")
		g.word(fmlaEl(17, 5, 20, 0), "FMLA V17.4S, V5.4S, V20.S[0]")
		g.p("\tADD $%d, R0", bb)
		g.p("\tADD $72, R1")
		g.p("\tSUBS $1, R2")
		g.p("\tBNE %s", label)
		if !q4 {
			g.p("\tB qdone")
		}
	}
	g.p(`qdone:
	VST1 [V16.S4, V17.S4], (R3)
	RET
`)
}

func (g *gen) half(bf16 bool) {
	name, def, conv := "dotF16x32", "dotF16", "FCVTL/FCVTL2 from half precision"
	if bf16 {
		name, def, conv = "dotBF16x32", "dotBF16", "SHLL/SHLL2 by 16: the bfloat16 bits are the float32 high half"
	}
	g.p(`// func %s(w *uint16, x *float32, n int, acc *[32]float32)
// The whole 32-element chunks of %s (dot.go): element c into lane c mod
// 32 — V20…V27 hold lanes 0–3, …, 28–31 — the weight converted exactly
// (%s), the product rounded (FMUL), then added (FADD): no fused
// multiply-add, as the definition says. n is a multiple of 32; acc
// receives the 32 lanes.
TEXT ·%s(SB), NOSPLIT, $0-32
	MOVD w+0(FP), R0
	MOVD x+8(FP), R1
	MOVD n+16(FP), R2
	MOVD acc+24(FP), R3`, name, def, conv, name)
	g.zero(span(20, 28)...)
	g.p("\tLSR $5, R2")
	g.p("\tCBZ R2, %sdone", name)
	g.p("%sloop:", name)
	g.p("\tVLD1.P 64(R0), [V0.H8, V1.H8, V2.H8, V3.H8]")
	g.p("\tVLD1.P 64(R1), [V4.S4, V5.S4, V6.S4, V7.S4]")
	g.p("\tVLD1.P 64(R1), [V8.S4, V9.S4, V10.S4, V11.S4]")
	for k := 0; k < 8; k++ {
		src, hi, suffix, arr := k/2, k%2 == 1, "", "4H"
		if hi {
			suffix, arr = "2", "8H"
		}
		if bf16 {
			g.word(shll16(12+k, src, hi), "SHLL%s V%d.4S, V%d.%s, #16: lanes %d–%d", suffix, 12+k, src, arr, 4*k, 4*k+3)
		} else {
			g.word(fcvtl(12+k, src, hi), "FCVTL%s V%d.4S, V%d.%s: lanes %d–%d", suffix, 12+k, src, arr, 4*k, 4*k+3)
		}
	}
	for k := 0; k < 8; k++ {
		g.word(fmul4s(12+k, 12+k, 4+k), "FMUL V%d.4S, V%d.4S, V%d.4S", 12+k, 12+k, 4+k)
		g.word(fadd4s(20+k, 20+k, 12+k), "FADD V%d.4S, V%d.4S, V%d.4S", 20+k, 20+k, 12+k)
	}
	g.p("\tSUBS $1, R2")
	g.p("\tBNE %sloop", name)
	g.p("%sdone:", name)
	g.p("\tVST1.P [V20.S4, V21.S4, V22.S4, V23.S4], 64(R3)")
	g.p("\tVST1 [V24.S4, V25.S4, V26.S4, V27.S4], (R3)")
	g.p("\tRET")
	g.p("")
}

// kHeader starts a K-quant kernel and its loop over super-blocks (label
// "loop" of kTail): R0 the row, R1 the inputs (actBlockK, 384 bytes: codes
// at 0, S16 at 256, S32 at 320, d at 352), R2 the super-blocks, R3 the 16
// lanes out; V20…V23 the float lanes, V30 the bytes 0x0F, and more byte
// constants (VMOVI lines) before the loop; V16…V19 (T) zeroed per
// super-block.
func (g *gen) kHeader(name, label string, consts ...string) {
	g.p(`TEXT ·%s(SB), NOSPLIT, $0-32
	MOVD w+0(FP), R0
	MOVD a+8(FP), R1
	MOVD nb+16(FP), R2
	MOVD acc+24(FP), R3`, name)
	g.zero(span(20, 24)...)
	g.p("\tVMOVI $15, V30.B16")
	for _, c := range consts {
		g.p("\t%s", c)
	}
	g.p("\tCBZ R2, %sdone", label)
	g.p("%sloop:", label)
	g.zero(span(16, 20)...)
}

// kTail closes a K-quant kernel's loop over super-blocks of bb bytes.
func (g *gen) kTail(label string, bb int) {
	g.p("\tADD $%d, R0", bb)
	g.p("\tADD $384, R1")
	g.p("\tSUBS $1, R2")
	g.p("\tBNE %sloop", label)
	g.p("%sdone:", label)
	g.p("\tVST1.P [V20.S4, V21.S4, V22.S4, V23.S4], 64(R3)")
	g.p("\tRET")
	g.p("")
}

// sixBit sets R11 to eight 6-bit values as bytes (the 64-bit form of
// getScaleMinK4): lo holds values 0–3 in its bytes' low 6 bits and the high
// 2 bits of values 4–7 in their top 2; the low 4 bits of values 4–7 are in
// the bytes of hi (nibble shifted down by shift).
func (g *gen) sixBit(lo, hi string, shift int) {
	g.p("\tLSRW $6, %s, R9", lo)
	g.p("\tANDW $0x03030303, R9, R9")
	g.p("\tLSLW $4, R9, R9")
	if shift > 0 {
		g.p("\tLSRW $%d, %s, R10", shift, hi)
		g.p("\tANDW $0x0f0f0f0f, R10, R10")
	} else {
		g.p("\tANDW $0x0f0f0f0f, %s, R10", hi)
	}
	g.p("\tORRW R9, R10, R10 // values 4–7")
	g.p("\tANDW $0x3f3f3f3f, %s, R11 // values 0–3", lo)
	g.p("\tORR R10<<32, R11, R11")
}

func (g *gen) q4k() {
	g.p(`// func dotQ4KNEON(w *byte, a *actBlockK, nb int, acc *[16]float32)
// dotQ4KInt's super-blocks (kquant_int.go): per 64-element chunk k, the
// 4-product sums of the 16 lanes by SDOT (codes 0…15 as signed bytes),
// times the sub-block scales (MLA by element, exact in int32) into T; per
// super-block acc[l] = fma(d·dx, float32(T[l]), acc[l]) for the 16 lanes,
// then acc[l] = fma(−dmin·dx, float32(m_l·S32_l), acc[l]) for lanes 0…7 —
// the definition's order, lane by lane. The 6-bit scales and mins are
// unpacked in general registers and widened to int32 lanes: V24/V25
// scales 0–3/4–7, V26/V27 mins.`)
	g.kHeader("dotQ4KNEON", "q4k")
	g.p("\tMOVWU 4(R0), R6 // scales 0–3 (low 6 bits), high bits of 4–7")
	g.p("\tMOVWU 8(R0), R7 // mins 0–3, high bits of mins 4–7")
	g.p("\tMOVWU 12(R0), R8 // low 4 bits of scales (low nibbles) and mins (high) 4–7")
	g.sixBit("R6", "R8", 0)
	g.p("\tFMOVD R11, F24")
	g.sixBit("R7", "R8", 4)
	g.p("\tFMOVD R11, F26")
	for _, v := range []int{24, 26} {
		g.word(widen(v, v, 8, false, false), "UXTL V%d.8H, V%d.8B", v, v)
		g.word(widen(v+1, v, 16, false, true), "UXTL2 V%d.4S, V%d.8H: values 4–7", v+1, v)
		g.word(widen(v, v, 16, false, false), "UXTL V%d.4S, V%d.4H: values 0–3", v, v)
	}
	for k := 0; k < 4; k++ {
		g.p("\tADD $%d, R0, R6", 16+32*k)
		g.p("\tVLD1 (R6), [V0.B16, V1.B16]")
		g.p("\tADD $%d, R1, R7", 64*k)
		g.p("\tVLD1 (R7), [V2.B16, V3.B16, V4.B16, V5.B16] // inputs 64k…: 0–31 (low nibbles), 32–63 (high)")
		g.p("\tVAND V30.B16, V0.B16, V6.B16")
		g.p("\tVAND V30.B16, V1.B16, V7.B16")
		g.p("\tVUSHR $4, V0.B16, V8.B16")
		g.p("\tVUSHR $4, V1.B16, V9.B16")
		g.zero(span(10, 14)...)
		for i, lanes := range []string{"0–3", "4–7", "8–11", "12–15"} {
			g.word(sdot(10+i, 6+i, 2+i), "SDOT V%d.4S, V%d.16B, V%d.16B: lanes %s", 10+i, 6+i, 2+i, lanes)
		}
		sreg, i0 := 24+2*k/4, 2*k%4
		for i := 0; i < 4; i++ {
			idx := i0 + i/2 // lanes 0–7: scale 2k, 8–15: scale 2k+1
			g.word(mlaEl(16+i, 10+i, sreg, idx), "MLA V%d.4S, V%d.4S, V%d.S[%d]: × scale %d", 16+i, 10+i, sreg, idx, 2*k+i/2)
		}
	}
	g.p("\tFMOVS 352(R1), F14 // dx")
	g.scale(0, 28, 14, false)
	g.scale(2, 29, 14, true)
	for r := 16; r < 20; r++ {
		g.word(scvtf(r, r), "SCVTF V%d.4S, V%d.4S", r, r)
	}
	for r := 0; r < 4; r++ {
		g.word(fmlaEl(20+r, 16+r, 28, 0), "FMLA V%d.4S, V%d.4S, V28.S[0]: acc += d·dx·T", 20+r, 16+r)
	}
	g.p("\tADD $320, R1, R7")
	g.p("\tVLD1 (R7), [V10.S4, V11.S4] // S32")
	g.word(mul4s(10, 26, 10), "MUL V10.4S, V26.4S, V10.4S: m·S32, lanes 0–3")
	g.word(mul4s(11, 27, 11), "MUL V11.4S, V27.4S, V11.4S: lanes 4–7")
	g.word(scvtf(10, 10), "SCVTF V10.4S, V10.4S")
	g.word(scvtf(11, 11), "SCVTF V11.4S, V11.4S")
	g.word(fmlaEl(20, 10, 29, 0), "FMLA V20.4S, V10.4S, V29.S[0]: acc += −dmin·dx·m·S32")
	g.word(fmlaEl(21, 11, 29, 0), "FMLA V21.4S, V11.4S, V29.S[0]")
	g.kTail("q4k", 144)
}

func (g *gen) q6k() {
	g.p(`// func dotQ6KNEON(w *byte, a *actBlockK, nb int, acc *[16]float32)
// dotQ6KInt's super-blocks: per chunk k, the 6-bit codes (low 4 bits from
// ql, high 2 from qh, shifted by 4·(k mod 2) and 4·(k mod 2)+2) as signed
// bytes, SDOT with the inputs, times the lanes' sub-block scales (int8,
// widened: V24…V27 hold scales 0–3, …, 12–15, so chunk k's four registers
// of lanes take V(24+k).S[0…3]) into T; then U = T − 32·sc⊙S16 and
// acc[l] = fma(d·dx, float32(U[l]), acc[l]), lane by lane.`)
	g.kHeader("dotQ6KNEON", "q6k", "VMOVI $3, V31.B16")
	g.p("\tADD $192, R0, R6")
	g.p("\tVLD1 (R6), [V24.B16] // the 16 int8 scales")
	g.word(widen(25, 24, 8, true, false), "SXTL V25.8H, V24.8B")
	g.word(widen(26, 24, 8, true, true), "SXTL2 V26.8H, V24.16B")
	g.word(widen(24, 25, 16, true, false), "SXTL V24.4S, V25.4H: scales 0–3")
	g.word(widen(25, 25, 16, true, true), "SXTL2 V25.4S, V25.8H: 4–7")
	g.word(widen(27, 26, 16, true, true), "SXTL2 V27.4S, V26.8H: 12–15")
	g.word(widen(26, 26, 16, true, false), "SXTL V26.4S, V26.4H: 8–11")
	for k := 0; k < 4; k++ {
		n, sl := k/2, 4*(k%2)
		g.p("\tADD $%d, R0, R6", 64*n)
		g.p("\tVLD1 (R6), [V0.B16, V1.B16, V2.B16, V3.B16] // ql of half %d: lanes 0–7 (V0, V1), 8–15 (V2, V3)", n)
		g.p("\tADD $%d, R0, R6", 128+32*n)
		g.p("\tVLD1 (R6), [V4.B16, V5.B16] // qh of half %d", n)
		for i := 0; i < 4; i++ { // low 4 bits
			if sl > 0 {
				g.p("\tVUSHR $%d, V%d.B16, V%d.B16", sl, i, 10+i)
			} else {
				g.p("\tVAND V30.B16, V%d.B16, V%d.B16", i, 10+i)
			}
		}
		for i := 0; i < 4; i++ { // high 2 bits: lanes 0–7 from qh >> sl, 8–15 from qh >> (sl+2)
			src, dst, sh := 4+i%2, 6+i, sl+2*(i/2)
			if sh > 0 {
				g.p("\tVUSHR $%d, V%d.B16, V%d.B16", sh, src, dst)
				g.p("\tVAND V31.B16, V%d.B16, V%d.B16", dst, dst)
			} else {
				g.p("\tVAND V31.B16, V%d.B16, V%d.B16", src, dst)
			}
			g.word(shl(dst, dst, 8, 4), "SHL V%d.16B, V%d.16B, #4", dst, dst)
		}
		for i := 0; i < 4; i++ {
			g.p("\tVORR V%d.B16, V%d.B16, V%d.B16", 6+i, 10+i, 10+i)
		}
		g.p("\tADD $%d, R1, R7", 64*k)
		g.p("\tVLD1 (R7), [V0.B16, V1.B16, V2.B16, V3.B16] // inputs 64k…64k+63")
		g.zero(span(4, 8)...)
		for i, lanes := range []string{"0–3", "4–7", "8–11", "12–15"} {
			g.word(sdot(4+i, 10+i, i), "SDOT V%d.4S, V%d.16B, V%d.16B: lanes %s", 4+i, 10+i, i, lanes)
		}
		for i := 0; i < 4; i++ {
			g.word(mlaEl(16+i, 4+i, 24+k, i), "MLA V%d.4S, V%d.4S, V%d.S[%d]", 16+i, 4+i, 24+k, i)
		}
	}
	g.p("\tADD $256, R1, R7")
	g.p("\tVLD1 (R7), [V0.S4, V1.S4, V2.S4, V3.S4] // S16")
	for r := 0; r < 4; r++ {
		g.word(mul4s(r, 24+r, r), "MUL V%d.4S, V%d.4S, V%d.4S: sc·S16", r, 24+r, r)
		g.word(shl(r, r, 32, 5), "SHL V%d.4S, V%d.4S, #5", r, r)
		g.p("\tVSUB V%d.S4, V%d.S4, V%d.S4", r, 16+r, 16+r)
	}
	g.p("\tFMOVS 352(R1), F14 // dx")
	g.scale(208, 28, 14, false)
	for r := 0; r < 4; r++ {
		g.word(scvtf(16+r, 16+r), "SCVTF V%d.4S, V%d.4S", 16+r, 16+r)
		g.word(fmlaEl(20+r, 16+r, 28, 0), "FMLA V%d.4S, V%d.4S, V28.S[0]", 20+r, 16+r)
	}
	g.kTail("q6k", 210)
}

func main() {
	var g gen
	g.p("// Code generated by gen_arm64.go; DO NOT EDIT.")
	g.p("")
	g.p("//go:build arm64 && !purego")
	g.p("")
	g.p("#include \"textflag.h\"")
	g.p("")
	g.f32()
	g.quant()
	g.half(false)
	g.half(true)
	g.q4k()
	g.q6k()
	if err := os.WriteFile("cpu_arm64.s", g.s.Bytes(), 0o644); err != nil {
		panic(err)
	}
}
