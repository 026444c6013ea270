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

// func wsumQ8x2(out *float32, a *float32, v *byte, stride uintptr, n int)
// out[0…63] += Σ_t a[t]·(the 2 Q8_0 blocks at v+t·stride, widened
// exactly) for n > 0 rows: each product rounded (VMULPS) before its add
// (VADDPS), in increasing t, as WeightedSumAdd over the widened rows.
TEXT ·wsumQ8x2(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ a+8(FP), BX
	MOVQ v+16(FP), SI
	MOVQ stride+24(FP), DX
	MOVQ n+32(FP), CX
	VMOVUPS 0(DI), Y8
	VMOVUPS 32(DI), Y9
	VMOVUPS 64(DI), Y10
	VMOVUPS 96(DI), Y11
	VMOVUPS 128(DI), Y12
	VMOVUPS 160(DI), Y13
	VMOVUPS 192(DI), Y14
	VMOVUPS 224(DI), Y15
wsumQ8x2_loop:
	VBROADCASTSS (BX), Y7
	MOVWLZX 0(SI), AX
	VMOVD AX, X6
	VCVTPH2PS X6, X6
	VBROADCASTSS X6, Y6
	VPMOVSXBD 2(SI), Y0
	VCVTDQ2PS Y0, Y0
	VMULPS Y6, Y0, Y0
	VMULPS Y7, Y0, Y0
	VADDPS Y0, Y8, Y8
	VPMOVSXBD 10(SI), Y1
	VCVTDQ2PS Y1, Y1
	VMULPS Y6, Y1, Y1
	VMULPS Y7, Y1, Y1
	VADDPS Y1, Y9, Y9
	VPMOVSXBD 18(SI), Y2
	VCVTDQ2PS Y2, Y2
	VMULPS Y6, Y2, Y2
	VMULPS Y7, Y2, Y2
	VADDPS Y2, Y10, Y10
	VPMOVSXBD 26(SI), Y3
	VCVTDQ2PS Y3, Y3
	VMULPS Y6, Y3, Y3
	VMULPS Y7, Y3, Y3
	VADDPS Y3, Y11, Y11
	MOVWLZX 34(SI), AX
	VMOVD AX, X6
	VCVTPH2PS X6, X6
	VBROADCASTSS X6, Y6
	VPMOVSXBD 36(SI), Y0
	VCVTDQ2PS Y0, Y0
	VMULPS Y6, Y0, Y0
	VMULPS Y7, Y0, Y0
	VADDPS Y0, Y12, Y12
	VPMOVSXBD 44(SI), Y1
	VCVTDQ2PS Y1, Y1
	VMULPS Y6, Y1, Y1
	VMULPS Y7, Y1, Y1
	VADDPS Y1, Y13, Y13
	VPMOVSXBD 52(SI), Y2
	VCVTDQ2PS Y2, Y2
	VMULPS Y6, Y2, Y2
	VMULPS Y7, Y2, Y2
	VADDPS Y2, Y14, Y14
	VPMOVSXBD 60(SI), Y3
	VCVTDQ2PS Y3, Y3
	VMULPS Y6, Y3, Y3
	VMULPS Y7, Y3, Y3
	VADDPS Y3, Y15, Y15
	ADDQ $4, BX
	ADDQ DX, SI
	DECQ CX
	JNZ wsumQ8x2_loop
	VMOVUPS Y8, 0(DI)
	VMOVUPS Y9, 32(DI)
	VMOVUPS Y10, 64(DI)
	VMOVUPS Y11, 96(DI)
	VMOVUPS Y12, 128(DI)
	VMOVUPS Y13, 160(DI)
	VMOVUPS Y14, 192(DI)
	VMOVUPS Y15, 224(DI)
	VZEROUPPER
	RET

// func wsumQ8x1(out *float32, a *float32, v *byte, stride uintptr, n int)
// out[0…31] += Σ_t a[t]·(the 1 Q8_0 block at v+t·stride, widened
// exactly) for n > 0 rows: each product rounded (VMULPS) before its add
// (VADDPS), in increasing t, as WeightedSumAdd over the widened rows.
TEXT ·wsumQ8x1(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ a+8(FP), BX
	MOVQ v+16(FP), SI
	MOVQ stride+24(FP), DX
	MOVQ n+32(FP), CX
	VMOVUPS 0(DI), Y8
	VMOVUPS 32(DI), Y9
	VMOVUPS 64(DI), Y10
	VMOVUPS 96(DI), Y11
wsumQ8x1_loop:
	VBROADCASTSS (BX), Y7
	MOVWLZX 0(SI), AX
	VMOVD AX, X6
	VCVTPH2PS X6, X6
	VBROADCASTSS X6, Y6
	VPMOVSXBD 2(SI), Y0
	VCVTDQ2PS Y0, Y0
	VMULPS Y6, Y0, Y0
	VMULPS Y7, Y0, Y0
	VADDPS Y0, Y8, Y8
	VPMOVSXBD 10(SI), Y1
	VCVTDQ2PS Y1, Y1
	VMULPS Y6, Y1, Y1
	VMULPS Y7, Y1, Y1
	VADDPS Y1, Y9, Y9
	VPMOVSXBD 18(SI), Y2
	VCVTDQ2PS Y2, Y2
	VMULPS Y6, Y2, Y2
	VMULPS Y7, Y2, Y2
	VADDPS Y2, Y10, Y10
	VPMOVSXBD 26(SI), Y3
	VCVTDQ2PS Y3, Y3
	VMULPS Y6, Y3, Y3
	VMULPS Y7, Y3, Y3
	VADDPS Y3, Y11, Y11
	ADDQ $4, BX
	ADDQ DX, SI
	DECQ CX
	JNZ wsumQ8x1_loop
	VMOVUPS Y8, 0(DI)
	VMOVUPS Y9, 32(DI)
	VMOVUPS Y10, 64(DI)
	VMOVUPS Y11, 96(DI)
	VZEROUPPER
	RET

// func wsumQ8x4AVX512(out *float32, a *float32, v *byte, stride uintptr, n int)
// wsumQ8x2's sums over 4 blocks in ZMM registers, 16 values an
// instruction: the same operations per value, so the same bits.
TEXT ·wsumQ8x4AVX512(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ a+8(FP), BX
	MOVQ v+16(FP), SI
	MOVQ stride+24(FP), DX
	MOVQ n+32(FP), CX
	VMOVUPS 0(DI), Z8
	VMOVUPS 64(DI), Z9
	VMOVUPS 128(DI), Z10
	VMOVUPS 192(DI), Z11
	VMOVUPS 256(DI), Z12
	VMOVUPS 320(DI), Z13
	VMOVUPS 384(DI), Z14
	VMOVUPS 448(DI), Z15
wsumQ8x4AVX512_loop:
	VBROADCASTSS (BX), Z7
	MOVWLZX 0(SI), AX
	VMOVD AX, X6
	VCVTPH2PS X6, X6
	VBROADCASTSS X6, Z6
	VPMOVSXBD 2(SI), Z0
	VCVTDQ2PS Z0, Z0
	VMULPS Z6, Z0, Z0
	VMULPS Z7, Z0, Z0
	VADDPS Z0, Z8, Z8
	VPMOVSXBD 18(SI), Z1
	VCVTDQ2PS Z1, Z1
	VMULPS Z6, Z1, Z1
	VMULPS Z7, Z1, Z1
	VADDPS Z1, Z9, Z9
	MOVWLZX 34(SI), AX
	VMOVD AX, X6
	VCVTPH2PS X6, X6
	VBROADCASTSS X6, Z6
	VPMOVSXBD 36(SI), Z2
	VCVTDQ2PS Z2, Z2
	VMULPS Z6, Z2, Z2
	VMULPS Z7, Z2, Z2
	VADDPS Z2, Z10, Z10
	VPMOVSXBD 52(SI), Z3
	VCVTDQ2PS Z3, Z3
	VMULPS Z6, Z3, Z3
	VMULPS Z7, Z3, Z3
	VADDPS Z3, Z11, Z11
	MOVWLZX 68(SI), AX
	VMOVD AX, X6
	VCVTPH2PS X6, X6
	VBROADCASTSS X6, Z6
	VPMOVSXBD 70(SI), Z4
	VCVTDQ2PS Z4, Z4
	VMULPS Z6, Z4, Z4
	VMULPS Z7, Z4, Z4
	VADDPS Z4, Z12, Z12
	VPMOVSXBD 86(SI), Z5
	VCVTDQ2PS Z5, Z5
	VMULPS Z6, Z5, Z5
	VMULPS Z7, Z5, Z5
	VADDPS Z5, Z13, Z13
	MOVWLZX 102(SI), AX
	VMOVD AX, X6
	VCVTPH2PS X6, X6
	VBROADCASTSS X6, Z6
	VPMOVSXBD 104(SI), Z0
	VCVTDQ2PS Z0, Z0
	VMULPS Z6, Z0, Z0
	VMULPS Z7, Z0, Z0
	VADDPS Z0, Z14, Z14
	VPMOVSXBD 120(SI), Z1
	VCVTDQ2PS Z1, Z1
	VMULPS Z6, Z1, Z1
	VMULPS Z7, Z1, Z1
	VADDPS Z1, Z15, Z15
	ADDQ $4, BX
	ADDQ DX, SI
	DECQ CX
	JNZ wsumQ8x4AVX512_loop
	VMOVUPS Z8, 0(DI)
	VMOVUPS Z9, 64(DI)
	VMOVUPS Z10, 128(DI)
	VMOVUPS Z11, 192(DI)
	VMOVUPS Z12, 256(DI)
	VMOVUPS Z13, 320(DI)
	VMOVUPS Z14, 384(DI)
	VMOVUPS Z15, 448(DI)
	VZEROUPPER
	RET

// func wsumQ8x2AVX512(out *float32, a *float32, v *byte, stride uintptr, n int)
// wsumQ8x2's sums over 2 blocks in ZMM registers, 16 values an
// instruction: the same operations per value, so the same bits.
TEXT ·wsumQ8x2AVX512(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ a+8(FP), BX
	MOVQ v+16(FP), SI
	MOVQ stride+24(FP), DX
	MOVQ n+32(FP), CX
	VMOVUPS 0(DI), Z8
	VMOVUPS 64(DI), Z9
	VMOVUPS 128(DI), Z10
	VMOVUPS 192(DI), Z11
wsumQ8x2AVX512_loop:
	VBROADCASTSS (BX), Z7
	MOVWLZX 0(SI), AX
	VMOVD AX, X6
	VCVTPH2PS X6, X6
	VBROADCASTSS X6, Z6
	VPMOVSXBD 2(SI), Z0
	VCVTDQ2PS Z0, Z0
	VMULPS Z6, Z0, Z0
	VMULPS Z7, Z0, Z0
	VADDPS Z0, Z8, Z8
	VPMOVSXBD 18(SI), Z1
	VCVTDQ2PS Z1, Z1
	VMULPS Z6, Z1, Z1
	VMULPS Z7, Z1, Z1
	VADDPS Z1, Z9, Z9
	MOVWLZX 34(SI), AX
	VMOVD AX, X6
	VCVTPH2PS X6, X6
	VBROADCASTSS X6, Z6
	VPMOVSXBD 36(SI), Z2
	VCVTDQ2PS Z2, Z2
	VMULPS Z6, Z2, Z2
	VMULPS Z7, Z2, Z2
	VADDPS Z2, Z10, Z10
	VPMOVSXBD 52(SI), Z3
	VCVTDQ2PS Z3, Z3
	VMULPS Z6, Z3, Z3
	VMULPS Z7, Z3, Z3
	VADDPS Z3, Z11, Z11
	ADDQ $4, BX
	ADDQ DX, SI
	DECQ CX
	JNZ wsumQ8x2AVX512_loop
	VMOVUPS Z8, 0(DI)
	VMOVUPS Z9, 64(DI)
	VMOVUPS Z10, 128(DI)
	VMOVUPS Z11, 192(DI)
	VZEROUPPER
	RET

// func wsumQ8x1AVX512(out *float32, a *float32, v *byte, stride uintptr, n int)
// wsumQ8x1's sums over 1 block in ZMM registers, 16 values an
// instruction: the same operations per value, so the same bits.
TEXT ·wsumQ8x1AVX512(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ a+8(FP), BX
	MOVQ v+16(FP), SI
	MOVQ stride+24(FP), DX
	MOVQ n+32(FP), CX
	VMOVUPS 0(DI), Z8
	VMOVUPS 64(DI), Z9
wsumQ8x1AVX512_loop:
	VBROADCASTSS (BX), Z7
	MOVWLZX 0(SI), AX
	VMOVD AX, X6
	VCVTPH2PS X6, X6
	VBROADCASTSS X6, Z6
	VPMOVSXBD 2(SI), Z0
	VCVTDQ2PS Z0, Z0
	VMULPS Z6, Z0, Z0
	VMULPS Z7, Z0, Z0
	VADDPS Z0, Z8, Z8
	VPMOVSXBD 18(SI), Z1
	VCVTDQ2PS Z1, Z1
	VMULPS Z6, Z1, Z1
	VMULPS Z7, Z1, Z1
	VADDPS Z1, Z9, Z9
	ADDQ $4, BX
	ADDQ DX, SI
	DECQ CX
	JNZ wsumQ8x1AVX512_loop
	VMOVUPS Z8, 0(DI)
	VMOVUPS Z9, 64(DI)
	VZEROUPPER
	RET

// func quantizeQ8x32AVX512(dst *byte, src *float32, nb int)
// nb > 0 blocks of 32 values into Q8_0 blocks of 34 bytes, with
// QuantizeQ8_0's bytes: amax the largest |v| (NaNs passed over: each
// VMAXPS keeps its second source when the first is NaN), d = amax/127
// stored by VCVTPS2PH, id = 1/d (0 when d is 0), and each code
// int8(round half away from zero of v·id): the truncation (VRNDSCALEPS),
// plus the sign of v·id where the fraction it dropped, exact in float32,
// is a half or more; VCVTTPS2DQ and VPMOVDB's truncation to 8 bits give
// Go's conversion of float32 to int8 on amd64 for every value, infinities
// and NaNs included.
TEXT ·quantizeQ8x32AVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ nb+16(FP), CX
	MOVL $0x7fffffff, AX
	VPBROADCASTD AX, Z20 // |·| mask
	MOVL $0x80000000, AX
	VPBROADCASTD AX, Z21 // sign mask
	MOVL $0x3f800000, AX
	VPBROADCASTD AX, Z22 // 1
	MOVL $0x3f000000, AX
	VPBROADCASTD AX, Z23 // 0.5
	MOVL $0x42fe0000, AX
	VMOVD AX, X24        // 127
quantizeQ8x32_loop:
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VANDPS Z20, Z0, Z2
	VANDPS Z20, Z1, Z3
	VXORPS Z4, Z4, Z4
	VMAXPS Z4, Z2, Z4
	VMAXPS Z4, Z3, Z4
	VEXTRACTF32X8 $1, Z4, Y5
	VMAXPS Y5, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VMAXPS X5, X4, X4
	VPERMILPS $0x4e, X4, X5
	VMAXPS X5, X4, X4
	VPERMILPS $0xb1, X4, X5
	VMAXPS X5, X4, X4    // amax in lane 0
	VDIVSS X24, X4, X6   // d = amax/127
	VCVTPS2PH $0, X6, X7
	VMOVD X7, AX
	MOVW AX, (DI)
	VDIVSS X6, X22, X8   // 1/d
	VXORPS X9, X9, X9
	VCMPSS $4, X9, X6, X9 // d != 0 (NaN too)
	VANDPS X9, X8, X8    // id
	VBROADCASTSS X8, Z8
	VMULPS Z8, Z0, Z0    // r = v·id
	VMULPS Z8, Z1, Z1
	VRNDSCALEPS $11, Z0, Z10 // t = trunc(r)
	VRNDSCALEPS $11, Z1, Z11
	VSUBPS Z10, Z0, Z12  // the fraction dropped
	VSUBPS Z11, Z1, Z13
	VANDPS Z20, Z12, Z12
	VANDPS Z20, Z13, Z13
	VCMPPS $13, Z23, Z12, K1 // |fraction| ≥ 0.5
	VCMPPS $13, Z23, Z13, K2
	VANDPS Z21, Z0, Z14  // sign(r)·1
	VANDPS Z21, Z1, Z15
	VORPS Z22, Z14, Z14
	VORPS Z22, Z15, Z15
	VADDPS Z14, Z10, K1, Z10
	VADDPS Z15, Z11, K2, Z11
	VCVTTPS2DQ Z10, Z10
	VCVTTPS2DQ Z11, Z11
	VPMOVDB Z10, 2(DI)
	VPMOVDB Z11, 18(DI)
	ADDQ $128, SI
	ADDQ $34, DI
	DECQ CX
	JNZ quantizeQ8x32_loop
	VZEROUPPER
	RET
