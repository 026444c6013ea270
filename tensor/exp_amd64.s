//go:build amd64 && !purego

#include "textflag.h"

DATA expconst<>+0(SB)/8, $1.4426950408889634     // log2(e)
DATA expconst<>+8(SB)/8, $0.6931471803691238     // ln2 hi
DATA expconst<>+16(SB)/8, $1.9082149292705877e-10 // ln2 lo
DATA expconst<>+24(SB)/8, $-708.0                // lower limit
DATA expconst<>+32(SB)/8, $1023                  // exponent bias (int64)
GLOBL expconst<>(SB), RODATA|NOPTR, $40

// func expShifted4(dst *float64, x *float32, n int, shift, scale float64, acc *[4]float64, coef *[12]float64)
// For i < n (a multiple of 4), four lanes at a time:
//   v = (float64(x[i]) − shift)·scale
//   k = round-to-even(v·log2e); r = (v − k·ln2hi) − k·ln2lo
//   p = Horner(coef, r); e = p·2^k, or 0 where !(v ≥ −708)
//   dst[i] = e; acc[i%4] += e
// Each step is one IEEE operation, as in expNeg and ExpShifted.
TEXT ·expShifted4(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSD shift+24(FP), Y14
	VBROADCASTSD scale+32(FP), Y15
	MOVQ acc+40(FP), DX
	MOVQ coef+48(FP), R8
	VMOVUPD (DX), Y13                 // running sums
	VBROADCASTSD expconst<>+0(SB), Y12  // log2e
	VBROADCASTSD expconst<>+8(SB), Y11  // ln2hi
	VBROADCASTSD expconst<>+16(SB), Y10 // ln2lo
	VBROADCASTSD expconst<>+24(SB), Y9  // -708
	VPBROADCASTQ expconst<>+32(SB), Y8  // 1023
	SHRQ $2, CX
	JZ   done
loop:
	VCVTPS2PD (SI), Y0       // v = float64(x)
	VSUBPD    Y14, Y0, Y0    // v − shift
	VMULPD    Y15, Y0, Y0    // ·scale
	VCMPPD    $0x1D, Y9, Y0, Y7 // mask: v ≥ −708 (GE_OQ: false for NaN)
	VMAXPD    Y9, Y0, Y0     // keep v finite for the polynomial (lanes masked later)
	VMULPD    Y12, Y0, Y1    // v·log2e
	VROUNDPD  $0, Y1, Y1     // k, nearest even
	VMULPD    Y11, Y1, Y2    // k·ln2hi
	VSUBPD    Y2, Y0, Y2     // r = v − k·ln2hi
	VMULPD    Y10, Y1, Y3    // k·ln2lo
	VSUBPD    Y3, Y2, Y2     // r −= k·ln2lo
	VBROADCASTSD 0(R8), Y3   // p = coef[0]
	VBROADCASTSD 8(R8), Y4
	VMULPD    Y2, Y3, Y3
	VADDPD    Y4, Y3, Y3
	VBROADCASTSD 16(R8), Y4
	VMULPD    Y2, Y3, Y3
	VADDPD    Y4, Y3, Y3
	VBROADCASTSD 24(R8), Y4
	VMULPD    Y2, Y3, Y3
	VADDPD    Y4, Y3, Y3
	VBROADCASTSD 32(R8), Y4
	VMULPD    Y2, Y3, Y3
	VADDPD    Y4, Y3, Y3
	VBROADCASTSD 40(R8), Y4
	VMULPD    Y2, Y3, Y3
	VADDPD    Y4, Y3, Y3
	VBROADCASTSD 48(R8), Y4
	VMULPD    Y2, Y3, Y3
	VADDPD    Y4, Y3, Y3
	VBROADCASTSD 56(R8), Y4
	VMULPD    Y2, Y3, Y3
	VADDPD    Y4, Y3, Y3
	VBROADCASTSD 64(R8), Y4
	VMULPD    Y2, Y3, Y3
	VADDPD    Y4, Y3, Y3
	VBROADCASTSD 72(R8), Y4
	VMULPD    Y2, Y3, Y3
	VADDPD    Y4, Y3, Y3
	VBROADCASTSD 80(R8), Y4
	VMULPD    Y2, Y3, Y3
	VADDPD    Y4, Y3, Y3
	VBROADCASTSD 88(R8), Y4
	VMULPD    Y2, Y3, Y3
	VADDPD    Y4, Y3, Y3
	// 2^k: int64(k) + 1023 shifted into the exponent field.
	VCVTPD2DQY Y1, X5        // 4 × int32
	VPMOVSXDQ X5, Y5         // 4 × int64
	VPADDQ    Y8, Y5, Y5
	VPSLLQ    $52, Y5, Y5
	VMULPD    Y5, Y3, Y3     // e = p·2^k
	VANDPD    Y7, Y3, Y3     // 0 where !(v ≥ −708)
	VMOVUPD   Y3, (DI)
	VADDPD    Y3, Y13, Y13
	ADDQ $16, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  loop
done:
	VMOVUPD Y13, (DX)
	VZEROUPPER
	RET

// func expShifted8(dst *float64, x *float32, n int, shift, scale float64, acc *[4]float64, coef *[12]float64)
// expShifted4 with eight lanes (AVX-512F; n a multiple of 8): the same
// operations lane by lane (VRNDSCALEPD $0 rounds to nearest even as
// VROUNDPD $0 does), and the sums in the same order: elements i…i+3 are
// added to the four partials, then i+4…i+7.
TEXT ·expShifted8(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSD shift+24(FP), Z14
	VBROADCASTSD scale+32(FP), Z15
	MOVQ acc+40(FP), DX
	MOVQ coef+48(FP), R8
	VMOVUPD (DX), Y13                   // running sums
	VBROADCASTSD expconst<>+0(SB), Z12  // log2e
	VBROADCASTSD expconst<>+8(SB), Z11  // ln2hi
	VBROADCASTSD expconst<>+16(SB), Z10 // ln2lo
	VBROADCASTSD expconst<>+24(SB), Z9  // -708
	VPBROADCASTQ expconst<>+32(SB), Z8  // 1023
	VBROADCASTSD 0(R8), Z16             // the coefficients
	VBROADCASTSD 8(R8), Z17
	VBROADCASTSD 16(R8), Z18
	VBROADCASTSD 24(R8), Z19
	VBROADCASTSD 32(R8), Z20
	VBROADCASTSD 40(R8), Z21
	VBROADCASTSD 48(R8), Z22
	VBROADCASTSD 56(R8), Z23
	VBROADCASTSD 64(R8), Z24
	VBROADCASTSD 72(R8), Z25
	VBROADCASTSD 80(R8), Z26
	VBROADCASTSD 88(R8), Z27
	SHRQ $3, CX
	JZ   done8
loop8:
	VCVTPS2PD (SI), Z0          // v = float64(x)
	VSUBPD    Z14, Z0, Z0       // v − shift
	VMULPD    Z15, Z0, Z0       // ·scale
	VCMPPD    $0x1D, Z9, Z0, K1 // v ≥ −708 (GE_OQ: false for NaN)
	VMAXPD    Z9, Z0, Z0
	VMULPD    Z12, Z0, Z1       // v·log2e
	VRNDSCALEPD $0, Z1, Z1      // k, nearest even
	VMULPD    Z11, Z1, Z2       // k·ln2hi
	VSUBPD    Z2, Z0, Z2        // r = v − k·ln2hi
	VMULPD    Z10, Z1, Z3       // k·ln2lo
	VSUBPD    Z3, Z2, Z2        // r −= k·ln2lo
	VMULPD    Z2, Z16, Z3       // Horner: p = coef[0]·r + coef[1], …
	VADDPD    Z17, Z3, Z3
	VMULPD    Z2, Z3, Z3
	VADDPD    Z18, Z3, Z3
	VMULPD    Z2, Z3, Z3
	VADDPD    Z19, Z3, Z3
	VMULPD    Z2, Z3, Z3
	VADDPD    Z20, Z3, Z3
	VMULPD    Z2, Z3, Z3
	VADDPD    Z21, Z3, Z3
	VMULPD    Z2, Z3, Z3
	VADDPD    Z22, Z3, Z3
	VMULPD    Z2, Z3, Z3
	VADDPD    Z23, Z3, Z3
	VMULPD    Z2, Z3, Z3
	VADDPD    Z24, Z3, Z3
	VMULPD    Z2, Z3, Z3
	VADDPD    Z25, Z3, Z3
	VMULPD    Z2, Z3, Z3
	VADDPD    Z26, Z3, Z3
	VMULPD    Z2, Z3, Z3
	VADDPD    Z27, Z3, Z3
	VCVTPD2DQ Z1, Y5            // 8 × int32
	VPMOVSXDQ Y5, Z5            // 8 × int64
	VPADDQ    Z8, Z5, Z5
	VPSLLQ    $52, Z5, Z5
	VMULPD    Z5, Z3, Z3        // e = p·2^k
	VMOVAPD.Z Z3, K1, Z3        // 0 where !(v ≥ −708)
	VMOVUPD   Z3, (DI)
	VEXTRACTF64X4 $1, Z3, Y6
	VADDPD    Y3, Y13, Y13      // elements i…i+3
	VADDPD    Y6, Y13, Y13      // then i+4…i+7
	ADDQ $32, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  loop8
done8:
	VMOVUPD Y13, (DX)
	VZEROUPPER
	RET
