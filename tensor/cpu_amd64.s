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

// SUBQ4K adds one Q4_K sub-block to Y0: codes in the 32 bytes of Y(codes)
// (0..15), inputs at DI, ds and dm at s+off and s+32+off:
// Y0 += ds·((q0x0 + q1x1) + (q2x2 + q3x3)) − dm·((x0 + x1) + (x2 + x3))
// over the four 8-lane quarters; DI advances by 32 floats.
#define SUBQ4K(codes, xcodes, off) \
	VPMOVZXBD    xcodes, Y7 \
	VPSHUFD      $0x4E, xcodes, X4 \
	VPMOVZXBD    X4, Y8 \
	VEXTRACTI128 $1, codes, X5 \
	VPMOVZXBD    X5, Y9 \
	VPSHUFD      $0x4E, X5, X5 \
	VPMOVZXBD    X5, Y10 \
	VCVTDQ2PS    Y7, Y7 \
	VCVTDQ2PS    Y8, Y8 \
	VCVTDQ2PS    Y9, Y9 \
	VCVTDQ2PS    Y10, Y10 \
	VMULPS       0(DI), Y7, Y7 \
	VMULPS       32(DI), Y8, Y8 \
	VMULPS       64(DI), Y9, Y9 \
	VMULPS       96(DI), Y10, Y10 \
	VADDPS       Y8, Y7, Y7 \
	VADDPS       Y10, Y9, Y9 \
	VADDPS       Y9, Y7, Y7 \
	VMOVUPS      0(DI), Y11 \
	VADDPS       32(DI), Y11, Y11 \
	VMOVUPS      64(DI), Y12 \
	VADDPS       96(DI), Y12, Y12 \
	VADDPS       Y12, Y11, Y11 \
	VBROADCASTSS off(R8), Y5 \
	VBROADCASTSS 32+off(R8), Y6 \
	VMULPS       Y5, Y7, Y7 \
	VMULPS       Y6, Y11, Y11 \
	VSUBPS       Y11, Y7, Y7 \
	VADDPS       Y7, Y0, Y0 \
	ADDQ         $128, DI

// GROUPQ4K handles 32 bytes of codes at SI: sub-block 2g (low nibbles) and
// 2g+1 (high nibbles).
#define GROUPQ4K(off0, off1) \
	VMOVDQU (SI), Y1 \
	VPAND   Y14, Y1, Y2 \
	VPSRLW  $4, Y1, Y3 \
	VPAND   Y14, Y3, Y3 \
	SUBQ4K(Y2, X2, off0) \
	SUBQ4K(Y3, X3, off1) \
	ADDQ    $32, SI

// func dotQ4Kx8(qs *byte, x *float32, s *[16]float32, acc *[8]float32)
// One Q4_K super-block, exactly as dotQ4K: acc is read and written back.
TEXT ·dotQ4Kx8(SB), NOSPLIT, $0-32
	MOVQ qs+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ s+16(FP), R8
	MOVQ acc+24(FP), DX
	VMOVUPS (DX), Y0
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	GROUPQ4K(0, 4)
	GROUPQ4K(8, 12)
	GROUPQ4K(16, 20)
	GROUPQ4K(24, 28)
	VMOVUPS Y0, (DX)
	VZEROUPPER
	RET

// SUB16Q6K adds one 16-element Q6_K sub-block to Y0: signed codes in the
// low 16 bytes of xq, inputs at xoff(DI), scale at soff(R8):
// Y0 += ds·(q0x0 + q1x1) over the two 8-lane halves.
#define SUB16Q6K(xq, xoff, soff) \
	VPMOVSXBD    xq, Y7 \
	VPSHUFD      $0x4E, xq, X4 \
	VPMOVSXBD    X4, Y8 \
	VCVTDQ2PS    Y7, Y7 \
	VCVTDQ2PS    Y8, Y8 \
	VMULPS       xoff(DI), Y7, Y7 \
	VMULPS       32+xoff(DI), Y8, Y8 \
	VADDPS       Y8, Y7, Y7 \
	VBROADCASTSS soff(R8), Y5 \
	VMULPS       Y5, Y7, Y7 \
	VADDPS       Y7, Y0, Y0

// Q6K32 handles the 32 codes of quarter k of a half (in Y9, already
// minus 32): sub-blocks 2k and 2k+1.
#define Q6K32(xoff, soff) \
	SUB16Q6K(X9, xoff, soff) \
	VEXTRACTI128 $1, Y9, X6 \
	SUB16Q6K(X6, 64+xoff, 4+soff)

// HALFQ6K handles one 128-element half: low bits at SI (64 bytes), high
// bits at BX (32 bytes), inputs at DI, scales at R8.
#define HALFQ6K \
	VMOVDQU (SI), Y1 \
	VMOVDQU 32(SI), Y2 \
	VMOVDQU (BX), Y3 \
	VPAND   Y14, Y1, Y9 \
	VPSLLW  $4, Y3, Y10 \
	VPAND   Y13, Y10, Y10 \
	VPOR    Y10, Y9, Y9 \
	VPSUBB  Y12, Y9, Y9 \
	Q6K32(0, 0) \
	VPAND   Y14, Y2, Y9 \
	VPSLLW  $2, Y3, Y10 \
	VPAND   Y13, Y10, Y10 \
	VPOR    Y10, Y9, Y9 \
	VPSUBB  Y12, Y9, Y9 \
	Q6K32(128, 8) \
	VPSRLW  $4, Y1, Y9 \
	VPAND   Y14, Y9, Y9 \
	VPAND   Y13, Y3, Y10 \
	VPOR    Y10, Y9, Y9 \
	VPSUBB  Y12, Y9, Y9 \
	Q6K32(256, 16) \
	VPSRLW  $4, Y2, Y9 \
	VPAND   Y14, Y9, Y9 \
	VPSRLW  $2, Y3, Y10 \
	VPAND   Y13, Y10, Y10 \
	VPOR    Y10, Y9, Y9 \
	VPSUBB  Y12, Y9, Y9 \
	Q6K32(384, 24)

// func dotQ6Kx8(blk *byte, x *float32, ds *[16]float32, acc *[8]float32)
// One Q6_K super-block, exactly as dotQ6K: acc is read and written back.
TEXT ·dotQ6Kx8(SB), NOSPLIT, $0-32
	MOVQ blk+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ ds+16(FP), R8
	MOVQ acc+24(FP), DX
	LEAQ 128(SI), BX
	VMOVUPS (DX), Y0
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	MOVL $0x30303030, AX
	VMOVD AX, X13
	VPBROADCASTD X13, Y13
	MOVL $0x20202020, AX
	VMOVD AX, X12
	VPBROADCASTD X12, Y12
	HALFQ6K
	ADDQ $64, SI
	ADDQ $32, BX
	ADDQ $512, DI
	ADDQ $32, R8
	HALFQ6K
	VMOVUPS Y0, (DX)
	VZEROUPPER
	RET
