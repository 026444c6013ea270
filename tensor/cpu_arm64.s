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
