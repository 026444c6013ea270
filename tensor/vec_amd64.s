//go:build amd64 && !purego

#include "textflag.h"

// func maxF32x64(x *float32, n int, acc *[64]float32)
// Four accumulators of 16 lanes; VMAXPS acc, new, acc is
// new > acc ? new : acc, so NaN and equal values keep acc.
TEXT ·maxF32x64(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ acc+16(FP), DI
	VMOVUPS (DI), Z0
	VMOVUPS 64(DI), Z1
	VMOVUPS 128(DI), Z2
	VMOVUPS 192(DI), Z3
	XORQ AX, AX

max64:
	CMPQ AX, CX
	JGE  max64done
	VMOVUPS (SI)(AX*4), Z4
	VMOVUPS 64(SI)(AX*4), Z5
	VMOVUPS 128(SI)(AX*4), Z6
	VMOVUPS 192(SI)(AX*4), Z7
	VMAXPS Z0, Z4, Z0
	VMAXPS Z1, Z5, Z1
	VMAXPS Z2, Z6, Z2
	VMAXPS Z3, Z7, Z3
	ADDQ $64, AX
	JMP  max64

max64done:
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	VZEROUPPER
	RET

// func maxF32x32(x *float32, n int, acc *[64]float32)
TEXT ·maxF32x32(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ acc+16(FP), DI
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	XORQ AX, AX

max32:
	CMPQ AX, CX
	JGE  max32done
	VMOVUPS (SI)(AX*4), Y4
	VMOVUPS 32(SI)(AX*4), Y5
	VMOVUPS 64(SI)(AX*4), Y6
	VMOVUPS 96(SI)(AX*4), Y7
	VMAXPS Y0, Y4, Y0
	VMAXPS Y1, Y5, Y1
	VMAXPS Y2, Y6, Y2
	VMAXPS Y3, Y7, Y3
	ADDQ $32, AX
	JMP  max32

max32done:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VZEROUPPER
	RET

// func indexF32x16(x *float32, n int, v float32) int
TEXT ·indexF32x16(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS v+16(FP), Z1
	XORQ AX, AX

idx16:
	CMPQ AX, CX
	JGE  idx16done
	VCMPPS $0, (SI)(AX*4), Z1, K1 // EQ_OQ: NaN equals nothing
	KORTESTW K1, K1
	JNZ  idx16done
	ADDQ $16, AX
	JMP  idx16

idx16done:
	MOVQ AX, ret+24(FP)
	VZEROUPPER
	RET

// func indexF32x8(x *float32, n int, v float32) int
TEXT ·indexF32x8(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS v+16(FP), Y1
	XORQ AX, AX

idx8:
	CMPQ AX, CX
	JGE  idx8done
	VCMPPS $0, (SI)(AX*4), Y1, Y2
	VMOVMSKPS Y2, BX
	TESTL BX, BX
	JNZ  idx8done
	ADDQ $8, AX
	JMP  idx8

idx8done:
	MOVQ AX, ret+24(FP)
	VZEROUPPER
	RET

// func scaleF64x32(d *float64, n int, s float64)
TEXT ·scaleF64x32(SB), NOSPLIT, $0-24
	MOVQ d+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSD s+16(FP), Z0
	XORQ AX, AX

scale32:
	CMPQ AX, CX
	JGE  scale32done
	VMULPD (DI)(AX*8), Z0, Z1
	VMULPD 64(DI)(AX*8), Z0, Z2
	VMULPD 128(DI)(AX*8), Z0, Z3
	VMULPD 192(DI)(AX*8), Z0, Z4
	VMOVUPD Z1, (DI)(AX*8)
	VMOVUPD Z2, 64(DI)(AX*8)
	VMOVUPD Z3, 128(DI)(AX*8)
	VMOVUPD Z4, 192(DI)(AX*8)
	ADDQ $32, AX
	JMP  scale32

scale32done:
	VZEROUPPER
	RET

// func scaleF64x16(d *float64, n int, s float64)
TEXT ·scaleF64x16(SB), NOSPLIT, $0-24
	MOVQ d+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSD s+16(FP), Y0
	XORQ AX, AX

scale16:
	CMPQ AX, CX
	JGE  scale16done
	VMULPD (DI)(AX*8), Y0, Y1
	VMULPD 32(DI)(AX*8), Y0, Y2
	VMULPD 64(DI)(AX*8), Y0, Y3
	VMULPD 96(DI)(AX*8), Y0, Y4
	VMOVUPD Y1, (DI)(AX*8)
	VMOVUPD Y2, 32(DI)(AX*8)
	VMOVUPD Y3, 64(DI)(AX*8)
	VMOVUPD Y4, 96(DI)(AX*8)
	ADDQ $16, AX
	JMP  scale16

scale16done:
	VZEROUPPER
	RET
