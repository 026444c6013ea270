//go:build amd64 && !purego

#include "textflag.h"

// func cpuid(eax, ecx uint32) (a, b, c, d uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL eax+0(FP), AX
	MOVL ecx+4(FP), CX
	CPUID
	MOVL AX, a+8(FP)
	MOVL BX, b+12(FP)
	MOVL CX, c+16(FP)
	MOVL DX, d+20(FP)
	RET

// func xgetbv0() (eax uint32)
TEXT ·xgetbv0(SB), NOSPLIT, $0-4
	MOVL $0, CX
	XGETBV
	MOVL AX, eax+0(FP)
	RET

// func dotF16x32(w *uint16, x *float32, n int, acc *[32]float32)
// acc[l] += float32(w[i+l]) · x[i+l] over whole chunks of 32, product
// rounded to float32 before the add (no FMA), w converted from float16 with
// VCVTPH2PS (exact): the order of dotF16.
TEXT ·dotF16x32(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ acc+24(FP), DX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	SHRQ $5, CX
	JZ   f16done
f16loop:
	VCVTPH2PS 0(SI), Y4
	VMULPS    0(DI), Y4, Y4
	VADDPS    Y4, Y0, Y0
	VCVTPH2PS 16(SI), Y5
	VMULPS    32(DI), Y5, Y5
	VADDPS    Y5, Y1, Y1
	VCVTPH2PS 32(SI), Y6
	VMULPS    64(DI), Y6, Y6
	VADDPS    Y6, Y2, Y2
	VCVTPH2PS 48(SI), Y7
	VMULPS    96(DI), Y7, Y7
	VADDPS    Y7, Y3, Y3
	ADDQ $64, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  f16loop
f16done:
	VMOVUPS Y0, 0(DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, 64(DX)
	VMOVUPS Y3, 96(DX)
	VZEROUPPER
	RET

// func dotBF16x32(w *uint16, x *float32, n int, acc *[32]float32)
// dotF16x32 with bfloat16 weights, converted exactly by widening each to
// 32 bits and shifting it into the high half: the order of dotBF16.
TEXT ·dotBF16x32(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ acc+24(FP), DX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	SHRQ $5, CX
	JZ   bf16done
bf16loop:
	VPMOVZXWD 0(SI), Y4
	VPSLLD    $16, Y4, Y4
	VMULPS    0(DI), Y4, Y4
	VADDPS    Y4, Y0, Y0
	VPMOVZXWD 16(SI), Y5
	VPSLLD    $16, Y5, Y5
	VMULPS    32(DI), Y5, Y5
	VADDPS    Y5, Y1, Y1
	VPMOVZXWD 32(SI), Y6
	VPSLLD    $16, Y6, Y6
	VMULPS    64(DI), Y6, Y6
	VADDPS    Y6, Y2, Y2
	VPMOVZXWD 48(SI), Y7
	VPSLLD    $16, Y7, Y7
	VMULPS    96(DI), Y7, Y7
	VADDPS    Y7, Y3, Y3
	ADDQ $64, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  bf16loop
bf16done:
	VMOVUPS Y0, 0(DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, 64(DX)
	VMOVUPS Y3, 96(DX)
	VZEROUPPER
	RET

// func putF16x8(dst *uint16, src *float32, n int)
// n > 0, a multiple of 8. VCVTPS2PH with imm8 0 rounds to nearest even
// whatever MXCSR says, gives ±Inf past the largest half, subnormal halves
// below the smallest normal, and a NaN quieted with the payload's top bits:
// F32ToF16's results.
TEXT ·putF16x8(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
putF16x8_loop:
	VMOVUPS (SI), Y0
	VCVTPS2PH $0, Y0, (DI)
	ADDQ $32, SI
	ADDQ $16, DI
	DECQ CX
	JNZ putF16x8_loop
	VZEROUPPER
	RET
