//go:build arm64 && !purego

#include "textflag.h"

// func dotF32x16(a, b *float32, n int, acc *[16]float32)
// The whole 16-element chunks of dotF32 (fma.go): element c into lane
// c mod 16 — V16 holds lanes 0–3, V17 4–7, V18 8–11, V19 12–15 — with one
// fused multiply-add (FMLA) per element in increasing c. n is a multiple
// of 16; acc receives the 16 lanes.
TEXT ·dotF32x16(SB), NOSPLIT, $0-32
	MOVD a+0(FP), R0
	MOVD b+8(FP), R1
	MOVD n+16(FP), R2
	MOVD acc+24(FP), R3
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	LSR $4, R2
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

// func dotQuantNEON(w *byte, a *actBlock, nb int, q4 bool, acc *[8]float32)
// dotQuant's blocks (act.go) with the dot product instructions: per block,
// lane l's sum of 4 products p_bl by SDOT (signed bytes: Q8_0 codes as
// stored, Q4_0 nibbles minus 8; exact in int32), then s = dw·dx and
// acc[l] = fma(s, float32(p_bl), acc[l]) (SCVTF, FMLA by element): the
// definition's order, lane by lane. V16 holds lanes 0–3, V17 4–7.
// (SDOT, SCVTF (vector), FMLA (by element) and FCVT from half precision
// are written as WORDs: the Go assembler does not spell them.)
TEXT ·dotQuantNEON(SB), NOSPLIT, $0-40
	MOVD w+0(FP), R0
	MOVD a+8(FP), R1
	MOVD nb+16(FP), R2
	MOVBU q4+24(FP), R4
	MOVD acc+32(FP), R3
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VMOVI $15, V30.B16
	VMOVI $8, V31.B16
	CBZ R2, qdone
	CBNZ R4, q4loop
q8loop:
	MOVHU (R0), R5
	FMOVS R5, F20
	WORD $0x1ee24294 // FCVT S20, H20: dw
	FMOVS 64(R1), F21
	FMULS F21, F20, F20 // s = dw·dx, rounded once
	VLD1 (R1), [V2.B16, V3.B16] // the input's 32 codes
	VEOR V4.B16, V4.B16, V4.B16
	VEOR V5.B16, V5.B16, V5.B16
	ADD $2, R0, R6
	VLD1 (R6), [V0.B16, V1.B16] // the row's 32 codes
	WORD $0x4e829404 // SDOT V4.4S, V0.16B, V2.16B: lanes 0–3
	WORD $0x4e839425 // SDOT V5.4S, V1.16B, V3.16B: lanes 4–7
	WORD $0x4e21d884 // SCVTF V4.4S, V4.4S
	WORD $0x4e21d8a5 // SCVTF V5.4S, V5.4S
	WORD $0x4f941090 // FMLA V16.4S, V4.4S, V20.S[0]: acc += s·p, fused
	WORD $0x4f9410b1 // FMLA V17.4S, V5.4S, V20.S[0]
	ADD $34, R0
	ADD $72, R1
	SUBS $1, R2
	BNE q8loop
	B qdone
q4loop:
	MOVHU (R0), R5
	FMOVS R5, F20
	WORD $0x1ee24294 // FCVT S20, H20: dw
	FMOVS 64(R1), F21
	FMULS F21, F20, F20 // s = dw·dx, rounded once
	VLD1 (R1), [V2.B16, V3.B16] // the input's 32 codes
	VEOR V4.B16, V4.B16, V4.B16
	VEOR V5.B16, V5.B16, V5.B16
	ADD $2, R0, R6
	VLD1 (R6), [V0.B16] // 16 bytes: codes j (low nibble) and j+16 (high)
	VAND V30.B16, V0.B16, V6.B16
	VUSHR $4, V0.B16, V7.B16
	VSUB V31.B16, V6.B16, V6.B16
	VSUB V31.B16, V7.B16, V7.B16
	WORD $0x4e8294c4 // SDOT V4.4S, V6.16B, V2.16B: lanes 0–3
	WORD $0x4e8394e5 // SDOT V5.4S, V7.16B, V3.16B: lanes 4–7
	WORD $0x4e21d884 // SCVTF V4.4S, V4.4S
	WORD $0x4e21d8a5 // SCVTF V5.4S, V5.4S
	WORD $0x4f941090 // FMLA V16.4S, V4.4S, V20.S[0]: acc += s·p, fused
	WORD $0x4f9410b1 // FMLA V17.4S, V5.4S, V20.S[0]
	ADD $18, R0
	ADD $72, R1
	SUBS $1, R2
	BNE q4loop
qdone:
	VST1 [V16.S4, V17.S4], (R3)
	RET

// func dotF16x32(w *uint16, x *float32, n int, acc *[32]float32)
// The whole 32-element chunks of dotF16 (dot.go): element c into lane c mod 32 —
// V20…V27 hold lanes 0–3, …, 28–31 — the weight converted exactly
// (FCVTL/FCVTL2 from half precision), the product rounded (FMUL),
// then added (FADD): no fused multiply-add, as the definition says. n is a
// multiple of 32; acc receives the 32 lanes.
TEXT ·dotF16x32(SB), NOSPLIT, $0-32
	MOVD w+0(FP), R0
	MOVD x+8(FP), R1
	MOVD n+16(FP), R2
	MOVD acc+24(FP), R3
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	VEOR V26.B16, V26.B16, V26.B16
	VEOR V27.B16, V27.B16, V27.B16
	LSR $5, R2
	CBZ R2, dotf16x32done
dotf16x32loop:
	VLD1.P 64(R0), [V0.H8, V1.H8, V2.H8, V3.H8]
	VLD1.P 64(R1), [V4.S4, V5.S4, V6.S4, V7.S4]
	VLD1.P 64(R1), [V8.S4, V9.S4, V10.S4, V11.S4]
	WORD $0x0e21780c // FCVTL V12.4S, V0.4H: lanes 0–3
	WORD $0x4e21780d // FCVTL2 V13.4S, V0.8H: lanes 4–7
	WORD $0x0e21782e // FCVTL V14.4S, V1.4H: lanes 8–11
	WORD $0x4e21782f // FCVTL2 V15.4S, V1.8H: lanes 12–15
	WORD $0x0e217850 // FCVTL V16.4S, V2.4H: lanes 16–19
	WORD $0x4e217851 // FCVTL2 V17.4S, V2.8H: lanes 20–23
	WORD $0x0e217872 // FCVTL V18.4S, V3.4H: lanes 24–27
	WORD $0x4e217873 // FCVTL2 V19.4S, V3.8H: lanes 28–31
	WORD $0x6e24dd8c // FMUL V12.4S, V12.4S, V4.4S
	WORD $0x4e2cd694 // FADD V20.4S, V20.4S, V12.4S
	WORD $0x6e25ddad // FMUL V13.4S, V13.4S, V5.4S
	WORD $0x4e2dd6b5 // FADD V21.4S, V21.4S, V13.4S
	WORD $0x6e26ddce // FMUL V14.4S, V14.4S, V6.4S
	WORD $0x4e2ed6d6 // FADD V22.4S, V22.4S, V14.4S
	WORD $0x6e27ddef // FMUL V15.4S, V15.4S, V7.4S
	WORD $0x4e2fd6f7 // FADD V23.4S, V23.4S, V15.4S
	WORD $0x6e28de10 // FMUL V16.4S, V16.4S, V8.4S
	WORD $0x4e30d718 // FADD V24.4S, V24.4S, V16.4S
	WORD $0x6e29de31 // FMUL V17.4S, V17.4S, V9.4S
	WORD $0x4e31d739 // FADD V25.4S, V25.4S, V17.4S
	WORD $0x6e2ade52 // FMUL V18.4S, V18.4S, V10.4S
	WORD $0x4e32d75a // FADD V26.4S, V26.4S, V18.4S
	WORD $0x6e2bde73 // FMUL V19.4S, V19.4S, V11.4S
	WORD $0x4e33d77b // FADD V27.4S, V27.4S, V19.4S
	SUBS $1, R2
	BNE dotf16x32loop
dotf16x32done:
	VST1.P [V20.S4, V21.S4, V22.S4, V23.S4], 64(R3)
	VST1 [V24.S4, V25.S4, V26.S4, V27.S4], (R3)
	RET

// func dotBF16x32(w *uint16, x *float32, n int, acc *[32]float32)
// The whole 32-element chunks of dotBF16 (dot.go): element c into lane c mod 32 —
// V20…V27 hold lanes 0–3, …, 28–31 — the weight converted exactly
// (SHLL/SHLL2 by 16: the bfloat16 bits are the float32 high half), the product rounded (FMUL),
// then added (FADD): no fused multiply-add, as the definition says. n is a
// multiple of 32; acc receives the 32 lanes.
TEXT ·dotBF16x32(SB), NOSPLIT, $0-32
	MOVD w+0(FP), R0
	MOVD x+8(FP), R1
	MOVD n+16(FP), R2
	MOVD acc+24(FP), R3
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	VEOR V26.B16, V26.B16, V26.B16
	VEOR V27.B16, V27.B16, V27.B16
	LSR $5, R2
	CBZ R2, dotbf16x32done
dotbf16x32loop:
	VLD1.P 64(R0), [V0.H8, V1.H8, V2.H8, V3.H8]
	VLD1.P 64(R1), [V4.S4, V5.S4, V6.S4, V7.S4]
	VLD1.P 64(R1), [V8.S4, V9.S4, V10.S4, V11.S4]
	WORD $0x2e61380c // SHLL V12.4S, V0.4H: lanes 0–3
	WORD $0x6e61380d // SHLL2 V13.4S, V0.8H: lanes 4–7
	WORD $0x2e61382e // SHLL V14.4S, V1.4H: lanes 8–11
	WORD $0x6e61382f // SHLL2 V15.4S, V1.8H: lanes 12–15
	WORD $0x2e613850 // SHLL V16.4S, V2.4H: lanes 16–19
	WORD $0x6e613851 // SHLL2 V17.4S, V2.8H: lanes 20–23
	WORD $0x2e613872 // SHLL V18.4S, V3.4H: lanes 24–27
	WORD $0x6e613873 // SHLL2 V19.4S, V3.8H: lanes 28–31
	WORD $0x6e24dd8c // FMUL V12.4S, V12.4S, V4.4S
	WORD $0x4e2cd694 // FADD V20.4S, V20.4S, V12.4S
	WORD $0x6e25ddad // FMUL V13.4S, V13.4S, V5.4S
	WORD $0x4e2dd6b5 // FADD V21.4S, V21.4S, V13.4S
	WORD $0x6e26ddce // FMUL V14.4S, V14.4S, V6.4S
	WORD $0x4e2ed6d6 // FADD V22.4S, V22.4S, V14.4S
	WORD $0x6e27ddef // FMUL V15.4S, V15.4S, V7.4S
	WORD $0x4e2fd6f7 // FADD V23.4S, V23.4S, V15.4S
	WORD $0x6e28de10 // FMUL V16.4S, V16.4S, V8.4S
	WORD $0x4e30d718 // FADD V24.4S, V24.4S, V16.4S
	WORD $0x6e29de31 // FMUL V17.4S, V17.4S, V9.4S
	WORD $0x4e31d739 // FADD V25.4S, V25.4S, V17.4S
	WORD $0x6e2ade52 // FMUL V18.4S, V18.4S, V10.4S
	WORD $0x4e32d75a // FADD V26.4S, V26.4S, V18.4S
	WORD $0x6e2bde73 // FMUL V19.4S, V19.4S, V11.4S
	WORD $0x4e33d77b // FADD V27.4S, V27.4S, V19.4S
	SUBS $1, R2
	BNE dotbf16x32loop
dotbf16x32done:
	VST1.P [V20.S4, V21.S4, V22.S4, V23.S4], 64(R3)
	VST1 [V24.S4, V25.S4, V26.S4, V27.S4], (R3)
	RET
