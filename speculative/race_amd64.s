//go:build amd64 && !purego

#include "textflag.h"

// The exponential race's filter (race_amd64.go): for each token i of
// p[0:n], h = mix64(key ^ mix64(pmix ^ (tok0+i))) and
// u = (float64(h>>11) + 0.5)·2⁻⁵³, keyedUniform's but in the last cell,
// where this gives 1 and cellUniform 1 − 2⁻⁵³: the filter's u·loose there
// is still below the exact test's u·shrink (loose is shrink times
// 1 − 2⁻⁴⁵), so the filter never skips a token the exact test keeps. The
// loop stops at the first group of lanes where u·loose < s·p_i for some
// lane.

DATA raceC1<>+0(SB)/8, $0xbf58476d1ce4e5b9
GLOBL raceC1<>(SB), RODATA|NOPTR, $8
DATA raceC2<>+0(SB)/8, $0x94d049bb133111eb
GLOBL raceC2<>(SB), RODATA|NOPTR, $8
DATA raceHalf<>+0(SB)/8, $0.5
GLOBL raceHalf<>(SB), RODATA|NOPTR, $8
DATA raceUnit<>+0(SB)/8, $0x3ca0000000000000 // 2^-53
GLOBL raceUnit<>(SB), RODATA|NOPTR, $8
DATA raceIota<>+0(SB)/8, $0
DATA raceIota<>+8(SB)/8, $1
DATA raceIota<>+16(SB)/8, $2
DATA raceIota<>+24(SB)/8, $3
DATA raceIota<>+32(SB)/8, $4
DATA raceIota<>+40(SB)/8, $5
DATA raceIota<>+48(SB)/8, $6
DATA raceIota<>+56(SB)/8, $7
GLOBL raceIota<>(SB), RODATA|NOPTR, $64
DATA raceEight<>+0(SB)/8, $8
GLOBL raceEight<>(SB), RODATA|NOPTR, $8

// MIX512 is mix64 of the 8 lanes of z (t scratch; Z23, Z24 hold the
// multipliers).
#define MIX512(z, t) \
	VPSRLQ $30, z, t \
	VPXORQ t, z, z   \
	VPMULLQ Z23, z, z \
	VPSRLQ $27, z, t \
	VPXORQ t, z, z   \
	VPMULLQ Z24, z, z \
	VPSRLQ $31, z, t \
	VPXORQ t, z, z

// UNIFORM512 turns the token ids in z into u·loose (Z20 key, Z21 pmix,
// Z26 ½, Z27 2⁻⁵³·loose, which is exact: scaling by a power of two).
#define UNIFORM512(z, t) \
	VPXORQ Z21, z, z \
	MIX512(z, t)     \
	VPXORQ Z20, z, z \
	MIX512(z, t)     \
	VPSRLQ $11, z, z \
	VCVTUQQ2PD z, z  \
	VADDPD Z26, z, z \
	VMULPD Z27, z, z

// func raceSkip8(p *float64, n int, key, pmix uint64, tok0 int, s, loose float64) int
//
// n is a multiple of 8; two groups of 8 go through the loop together, for
// the multiplications' latency.
TEXT ·raceSkip8(SB), NOSPLIT, $0-64
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	VPBROADCASTQ key+16(FP), Z20
	VPBROADCASTQ pmix+24(FP), Z21
	VPBROADCASTQ tok0+32(FP), Z22
	VPADDQ raceIota<>(SB), Z22, Z22
	VPBROADCASTQ raceC1<>(SB), Z23
	VPBROADCASTQ raceC2<>(SB), Z24
	VPBROADCASTQ raceEight<>(SB), Z25
	VBROADCASTSD raceHalf<>(SB), Z26
	VBROADCASTSD raceUnit<>(SB), Z27
	VBROADCASTSD loose+48(FP), Z28
	VMULPD Z28, Z27, Z27
	VBROADCASTSD s+40(FP), Z29
	XORQ AX, AX
	MOVQ CX, DX
	ANDQ $-16, DX

loop16:
	CMPQ AX, DX
	JGE  tail8
	VMOVDQA64 Z22, Z0
	VPADDQ Z25, Z22, Z5
	VPADDQ Z25, Z5, Z22 // the next pair's ids
	UNIFORM512(Z0, Z2)
	UNIFORM512(Z5, Z6)
	VMULPD (SI)(AX*8), Z29, Z1
	VMULPD 64(SI)(AX*8), Z29, Z7
	VCMPPD $0x11, Z1, Z0, K1 // u·loose < s·p (ordered: NaN is no candidate)
	VCMPPD $0x11, Z7, Z5, K2
	KORTESTB K1, K1
	JNZ  done8
	KORTESTB K2, K2
	JNZ  second8
	ADDQ $16, AX
	JMP  loop16

second8:
	ADDQ $8, AX
	JMP  done8

tail8:
	CMPQ AX, CX
	JGE  done8
	VMOVDQA64 Z22, Z0
	UNIFORM512(Z0, Z2)
	VMULPD (SI)(AX*8), Z29, Z1
	VCMPPD $0x11, Z1, Z0, K1
	KORTESTB K1, K1
	JNZ  done8
	ADDQ $8, AX

done8:
	MOVQ AX, ret+56(FP)
	VZEROUPPER
	RET

// The AVX2 kernel's constants, 4 lanes each, read as memory operands.
DATA raceC1hi<>+0(SB)/8, $0xbf58476d
DATA raceC1hi<>+8(SB)/8, $0xbf58476d
DATA raceC1hi<>+16(SB)/8, $0xbf58476d
DATA raceC1hi<>+24(SB)/8, $0xbf58476d
GLOBL raceC1hi<>(SB), RODATA|NOPTR, $32
DATA raceC2hi<>+0(SB)/8, $0x94d049bb
DATA raceC2hi<>+8(SB)/8, $0x94d049bb
DATA raceC2hi<>+16(SB)/8, $0x94d049bb
DATA raceC2hi<>+24(SB)/8, $0x94d049bb
GLOBL raceC2hi<>(SB), RODATA|NOPTR, $32
DATA raceLow32x4<>+0(SB)/8, $0xffffffff
DATA raceLow32x4<>+8(SB)/8, $0xffffffff
DATA raceLow32x4<>+16(SB)/8, $0xffffffff
DATA raceLow32x4<>+24(SB)/8, $0xffffffff
GLOBL raceLow32x4<>(SB), RODATA|NOPTR, $32
DATA raceM52x4<>+0(SB)/8, $0x4330000000000000
DATA raceM52x4<>+8(SB)/8, $0x4330000000000000
DATA raceM52x4<>+16(SB)/8, $0x4330000000000000
DATA raceM52x4<>+24(SB)/8, $0x4330000000000000
GLOBL raceM52x4<>(SB), RODATA|NOPTR, $32
DATA raceM84x4<>+0(SB)/8, $0x4530000000000000
DATA raceM84x4<>+8(SB)/8, $0x4530000000000000
DATA raceM84x4<>+16(SB)/8, $0x4530000000000000
DATA raceM84x4<>+24(SB)/8, $0x4530000000000000
GLOBL raceM84x4<>(SB), RODATA|NOPTR, $32
DATA raceM84p52x4<>+0(SB)/8, $0x4530000000100000
DATA raceM84p52x4<>+8(SB)/8, $0x4530000000100000
DATA raceM84p52x4<>+16(SB)/8, $0x4530000000100000
DATA raceM84p52x4<>+24(SB)/8, $0x4530000000100000
GLOBL raceM84p52x4<>(SB), RODATA|NOPTR, $32
DATA raceFour4<>+0(SB)/8, $4
DATA raceFour4<>+8(SB)/8, $4
DATA raceFour4<>+16(SB)/8, $4
DATA raceFour4<>+24(SB)/8, $4
GLOBL raceFour4<>(SB), RODATA|NOPTR, $32

// MULC256 sets z to z·C mod 2⁶⁴ per lane (AVX2 has no 64-bit multiply):
// lo(z)·lo(C) + (hi(z)·lo(C) + lo(z)·hi(C))·2³², with C in clo (its low
// half used) and its high half in the memory operand chi; t, w scratch.
#define MULC256(z, t, w, clo, chi) \
	VPSRLQ $32, z, t   \
	VPMULUDQ clo, t, t \
	VPMULUDQ chi, z, w \
	VPADDQ w, t, t     \
	VPSLLQ $32, t, t   \
	VPMULUDQ clo, z, z \
	VPADDQ t, z, z

#define MIX256(z, t, w) \
	VPSRLQ $30, z, t \
	VPXOR t, z, z    \
	MULC256(z, t, w, Y12, raceC1hi<>(SB)) \
	VPSRLQ $27, z, t \
	VPXOR t, z, z    \
	MULC256(z, t, w, Y11, raceC2hi<>(SB)) \
	VPSRLQ $31, z, t \
	VPXOR t, z, z

// UNIFORM256 turns the token ids in z into u·loose (Y15 key, Y14 pmix,
// Y8 ½, Y9 2⁻⁵³·loose). float64(x) for x < 2⁵³ is
// (2⁸⁴ + hi·2³²) − (2⁸⁴ + 2⁵²) + (2⁵² + lo), each step exact.
#define UNIFORM256(z, t, w) \
	VPXOR Y14, z, z    \
	MIX256(z, t, w)    \
	VPXOR Y15, z, z    \
	MIX256(z, t, w)    \
	VPSRLQ $11, z, z   \
	VPSRLQ $32, z, t   \
	VPOR raceM84x4<>(SB), t, t \
	VPAND raceLow32x4<>(SB), z, w \
	VPOR raceM52x4<>(SB), w, w \
	VSUBPD raceM84p52x4<>(SB), t, t \
	VADDPD w, t, z     \
	VADDPD Y8, z, z    \
	VMULPD Y9, z, z

// func raceSkip4(p *float64, n int, key, pmix uint64, tok0 int, s, loose float64) int
//
// n is a multiple of 4; two groups of 4 go through the loop together.
TEXT ·raceSkip4(SB), NOSPLIT, $0-64
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	VPBROADCASTQ key+16(FP), Y15
	VPBROADCASTQ pmix+24(FP), Y14
	VPBROADCASTQ tok0+32(FP), Y13
	VPADDQ raceIota<>(SB), Y13, Y13
	VPBROADCASTQ raceC1<>(SB), Y12
	VPBROADCASTQ raceC2<>(SB), Y11
	VBROADCASTSD s+40(FP), Y10
	VBROADCASTSD raceUnit<>(SB), Y9
	VBROADCASTSD loose+48(FP), Y8
	VMULPD Y8, Y9, Y9
	VBROADCASTSD raceHalf<>(SB), Y8
	XORQ AX, AX
	MOVQ CX, DX
	ANDQ $-8, DX

loop8x4:
	CMPQ AX, DX
	JGE  tail4
	VMOVDQA Y13, Y0
	VPADDQ raceFour4<>(SB), Y13, Y4
	VPADDQ raceFour4<>(SB), Y4, Y13 // the next pair's ids
	UNIFORM256(Y0, Y1, Y2)
	UNIFORM256(Y4, Y5, Y6)
	VMULPD (SI)(AX*8), Y10, Y1
	VMULPD 32(SI)(AX*8), Y10, Y5
	VCMPPD $0x11, Y1, Y0, Y1 // u·loose < s·p (ordered: NaN is no candidate)
	VCMPPD $0x11, Y5, Y4, Y5
	VMOVMSKPD Y1, BX
	TESTL BX, BX
	JNZ  done4
	VMOVMSKPD Y5, BX
	TESTL BX, BX
	JNZ  second4
	ADDQ $8, AX
	JMP  loop8x4

second4:
	ADDQ $4, AX
	JMP  done4

tail4:
	CMPQ AX, CX
	JGE  done4
	VMOVDQA Y13, Y0
	UNIFORM256(Y0, Y1, Y2)
	VMULPD (SI)(AX*8), Y10, Y1
	VCMPPD $0x11, Y1, Y0, Y1
	VMOVMSKPD Y1, BX
	TESTL BX, BX
	JNZ  done4
	ADDQ $4, AX

done4:
	MOVQ AX, ret+56(FP)
	VZEROUPPER
	RET

// The race over logits (raceLogitSkip8/4): for each lane the bound
// logitBound(y, s2) = s2·2^n, y = (float64(x_i) − zmax)·scale,
// n = round-to-even(max(y·log2 e, −1020)), against the same u·loose.
DATA raceLog2e<>+0(SB)/8, $1.4426950408889634
GLOBL raceLog2e<>(SB), RODATA|NOPTR, $8
DATA raceClamp<>+0(SB)/8, $-1020.0
GLOBL raceClamp<>(SB), RODATA|NOPTR, $8

// BOUND512 turns the 8 float32 logits at m into the bound in z
// (Z16 zmax, Z17 scale, Z18 log2 e, Z19 −1020, Z30 s2).
#define BOUND512(m, z) \
	VCVTPS2PD m, z          \
	VSUBPD Z16, z, z        \
	VMULPD Z17, z, z        \
	VMULPD Z18, z, z        \
	VMAXPD Z19, z, z        \
	VRNDSCALEPD $0, z, z    \
	VSCALEFPD z, Z30, z

// func raceLogitSkip8(x *float32, n int, key, pmix uint64, tok0 int, zmax, scale, s2, loose float64) int
TEXT ·raceLogitSkip8(SB), NOSPLIT, $0-80
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VPBROADCASTQ key+16(FP), Z20
	VPBROADCASTQ pmix+24(FP), Z21
	VPBROADCASTQ tok0+32(FP), Z22
	VPADDQ raceIota<>(SB), Z22, Z22
	VPBROADCASTQ raceC1<>(SB), Z23
	VPBROADCASTQ raceC2<>(SB), Z24
	VPBROADCASTQ raceEight<>(SB), Z25
	VBROADCASTSD raceHalf<>(SB), Z26
	VBROADCASTSD raceUnit<>(SB), Z27
	VBROADCASTSD loose+64(FP), Z28
	VMULPD Z28, Z27, Z27
	VBROADCASTSD zmax+40(FP), Z16
	VBROADCASTSD scale+48(FP), Z17
	VBROADCASTSD raceLog2e<>(SB), Z18
	VBROADCASTSD raceClamp<>(SB), Z19
	VBROADCASTSD s2+56(FP), Z30
	XORQ AX, AX
	MOVQ CX, DX
	ANDQ $-16, DX

lloop16:
	CMPQ AX, DX
	JGE  ltail8
	VMOVDQA64 Z22, Z0
	VPADDQ Z25, Z22, Z5
	VPADDQ Z25, Z5, Z22 // the next pair's ids
	UNIFORM512(Z0, Z2)
	UNIFORM512(Z5, Z6)
	BOUND512((SI)(AX*4), Z1)
	BOUND512(32(SI)(AX*4), Z7)
	VCMPPD $0x11, Z1, Z0, K1 // u·loose < bound (ordered: NaN is no candidate)
	VCMPPD $0x11, Z7, Z5, K2
	KORTESTB K1, K1
	JNZ  ldone8
	KORTESTB K2, K2
	JNZ  lsecond8
	ADDQ $16, AX
	JMP  lloop16

lsecond8:
	ADDQ $8, AX
	JMP  ldone8

ltail8:
	CMPQ AX, CX
	JGE  ldone8
	VMOVDQA64 Z22, Z0
	UNIFORM512(Z0, Z2)
	BOUND512((SI)(AX*4), Z1)
	VCMPPD $0x11, Z1, Z0, K1
	KORTESTB K1, K1
	JNZ  ldone8
	ADDQ $8, AX

ldone8:
	MOVQ AX, ret+72(FP)
	VZEROUPPER
	RET

DATA raceLog2e4<>+0(SB)/8, $1.4426950408889634
DATA raceLog2e4<>+8(SB)/8, $1.4426950408889634
DATA raceLog2e4<>+16(SB)/8, $1.4426950408889634
DATA raceLog2e4<>+24(SB)/8, $1.4426950408889634
GLOBL raceLog2e4<>(SB), RODATA|NOPTR, $32
DATA raceClamp4<>+0(SB)/8, $-1020.0
DATA raceClamp4<>+8(SB)/8, $-1020.0
DATA raceClamp4<>+16(SB)/8, $-1020.0
DATA raceClamp4<>+24(SB)/8, $-1020.0
GLOBL raceClamp4<>(SB), RODATA|NOPTR, $32
DATA raceRound4<>+0(SB)/8, $6755399441055744.0 // 1.5·2⁵²
DATA raceRound4<>+8(SB)/8, $6755399441055744.0
DATA raceRound4<>+16(SB)/8, $6755399441055744.0
DATA raceRound4<>+24(SB)/8, $6755399441055744.0
GLOBL raceRound4<>(SB), RODATA|NOPTR, $32
DATA raceBias4<>+0(SB)/8, $1023
DATA raceBias4<>+8(SB)/8, $1023
DATA raceBias4<>+16(SB)/8, $1023
DATA raceBias4<>+24(SB)/8, $1023
GLOBL raceBias4<>(SB), RODATA|NOPTR, $32

// BOUND256 turns the 4 float32 logits at m into the bound in z (Y3 zmax,
// Y7 scale, Y10 s2). n is an integer in [−1020, 0]: n + 1.5·2⁵² holds it
// in its low bits, and the low 12 bits of that plus 1023, shifted to the
// top, are the bits of 2^n.
#define BOUND256(m, z) \
	VCVTPS2PD m, z                 \
	VSUBPD Y3, z, z                \
	VMULPD Y7, z, z                \
	VMULPD raceLog2e4<>(SB), z, z  \
	VMAXPD raceClamp4<>(SB), z, z  \
	VROUNDPD $0, z, z              \
	VADDPD raceRound4<>(SB), z, z  \
	VPADDQ raceBias4<>(SB), z, z   \
	VPSLLQ $52, z, z               \
	VMULPD Y10, z, z

// func raceLogitSkip4(x *float32, n int, key, pmix uint64, tok0 int, zmax, scale, s2, loose float64) int
TEXT ·raceLogitSkip4(SB), NOSPLIT, $0-80
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VPBROADCASTQ key+16(FP), Y15
	VPBROADCASTQ pmix+24(FP), Y14
	VPBROADCASTQ tok0+32(FP), Y13
	VPADDQ raceIota<>(SB), Y13, Y13
	VPBROADCASTQ raceC1<>(SB), Y12
	VPBROADCASTQ raceC2<>(SB), Y11
	VBROADCASTSD s2+56(FP), Y10
	VBROADCASTSD raceUnit<>(SB), Y9
	VBROADCASTSD loose+64(FP), Y8
	VMULPD Y8, Y9, Y9
	VBROADCASTSD raceHalf<>(SB), Y8
	VBROADCASTSD zmax+40(FP), Y3
	VBROADCASTSD scale+48(FP), Y7
	XORQ AX, AX
	MOVQ CX, DX
	ANDQ $-8, DX

lloop8x4:
	CMPQ AX, DX
	JGE  ltail4
	VMOVDQA Y13, Y0
	VPADDQ raceFour4<>(SB), Y13, Y4
	VPADDQ raceFour4<>(SB), Y4, Y13 // the next pair's ids
	UNIFORM256(Y0, Y1, Y2)
	UNIFORM256(Y4, Y5, Y6)
	BOUND256((SI)(AX*4), Y1)
	BOUND256(16(SI)(AX*4), Y5)
	VCMPPD $0x11, Y1, Y0, Y1 // u·loose < bound (ordered: NaN is no candidate)
	VCMPPD $0x11, Y5, Y4, Y5
	VMOVMSKPD Y1, BX
	TESTL BX, BX
	JNZ  ldone4
	VMOVMSKPD Y5, BX
	TESTL BX, BX
	JNZ  lsecond4
	ADDQ $8, AX
	JMP  lloop8x4

lsecond4:
	ADDQ $4, AX
	JMP  ldone4

ltail4:
	CMPQ AX, CX
	JGE  ldone4
	VMOVDQA Y13, Y0
	UNIFORM256(Y0, Y1, Y2)
	BOUND256((SI)(AX*4), Y1)
	VCMPPD $0x11, Y1, Y0, Y1
	VMOVMSKPD Y1, BX
	TESTL BX, BX
	JNZ  ldone4
	ADDQ $4, AX

ldone4:
	MOVQ AX, ret+72(FP)
	VZEROUPPER
	RET
