//go:build amd64 && !purego

package tensor

import "fmt"

func cpuid(eax, ecx uint32) (a, b, c, d uint32)
func xgetbv0() (eax uint32)

//go:noescape
func dotF16x32(w *uint16, x *float32, n int, acc *[32]float32)

//go:noescape
func putF16x8(dst *uint16, src *float32, n int)

//go:noescape
func wsumQ8x2(out *float32, a *float32, v *byte, stride uintptr, n int)

//go:noescape
func wsumQ8x1(out *float32, a *float32, v *byte, stride uintptr, n int)

//go:noescape
func quantizeQ8x32AVX512(dst *byte, src *float32, nb int)

//go:noescape
func wsumQ8x4AVX512(out *float32, a *float32, v *byte, stride uintptr, n int)

//go:noescape
func wsumQ8x2AVX512(out *float32, a *float32, v *byte, stride uintptr, n int)

//go:noescape
func wsumQ8x1AVX512(out *float32, a *float32, v *byte, stride uintptr, n int)

//go:noescape
func dotBF16x32(w *uint16, x *float32, n int, acc *[32]float32)

// cpuFeatures describes what the kernel levels use on this CPU.
func cpuFeatures() string {
	return fmt.Sprintf("best level %s; %s family %d model %d", levelNames[cpuLevel], cpuVendor, cpuFamily, cpuModel)
}

// archLevels are amd64's kernel levels.
var archLevels = []int{levelPortable, levelAVX2, levelAVX2Zen1, levelAVX512, levelAVX512Zen4, levelAVX512Zen5}

// The CPU's vendor and its family and model as Linux's /proc/cpuinfo
// gives them ("cpu family", "model": the extended fields included).
var cpuVendor, cpuFamily, cpuModel = func() (string, int, int) {
	_, b, c, d := cpuid(0, 0)
	v := make([]byte, 0, 12)
	for _, r := range []uint32{b, d, c} {
		v = append(v, byte(r), byte(r>>8), byte(r>>16), byte(r>>24))
	}
	a1, _, _, _ := cpuid(1, 0)
	fam, mod := int(a1>>8&0xf), int(a1>>4&0xf)
	if fam == 0xf {
		fam += int(a1 >> 20 & 0xff)
	}
	if fam >= 6 {
		mod |= int(a1>>16&0xf) << 4
	}
	return string(v), fam, mod
}()

// defaultLevel is the level this CPU runs unless told otherwise.
var defaultLevel = tunedLevel(cpuLevel)

// tunedLevel is the level a CPU of this kind whose best instructions are
// those of level max runs by default: Zen 4 (AMD family 25, the one
// family-25 design with AVX-512) runs avx512-zen4, whose single-token
// products stream memory faster there (docs/BENCHMARKS.md, "Single-token
// products per kernel level"); Zen 5 (AMD family 26, full-width 512-bit
// units) runs avx512-zen5, avx512 with one-row single-token tiles, which
// read memory faster there (zen5.go); Zen 1 and Zen+ (family 23 before
// model 0x30, where Zen 2 begins) run avx2-zen1, whose K-quant tiles of
// several tokens ask less of their one integer multiplier
// (docs/BENCHMARKS.md, "The K-quant tiles on the Zen 1"); every other CPU
// its best level, max.
func tunedLevel(max int) int { return tunedLevelFor(cpuVendor, cpuFamily, cpuModel, max) }

// tunedLevelFor is tunedLevel for a CPU of the given vendor, family and
// model.
func tunedLevelFor(vendor string, family, model, max int) int {
	if vendor != "AuthenticAMD" {
		return max
	}
	switch {
	case max == levelAVX512 && family == 25:
		return levelAVX512Zen4
	case max == levelAVX512 && family == 26:
		return levelAVX512Zen5
	case max == levelAVX2 && family == 23 && model < 0x30:
		return levelAVX2Zen1
	}
	return max
}

// cpuLevel is the best kernel level this CPU and OS support: AVX2 needs
// AVX2, FMA and F16C with the OS saving YMM state; AVX-512 needs F, BW, VL
// and VNNI with the OS saving the opmask and ZMM state.
var cpuLevel = func() int {
	maxID, _, _, _ := cpuid(0, 0)
	if maxID < 7 {
		return levelPortable
	}
	_, _, c1, _ := cpuid(1, 0)
	const fma, osxsave, avx, f16c = 1 << 12, 1 << 27, 1 << 28, 1 << 29
	if c1&(fma|osxsave|avx|f16c) != fma|osxsave|avx|f16c {
		return levelPortable
	}
	xcr0 := xgetbv0()
	if xcr0&6 != 6 { // XMM and YMM state
		return levelPortable
	}
	_, b7, c7, _ := cpuid(7, 0)
	if b7&(1<<5) == 0 { // AVX2
		return levelPortable
	}
	const avx512f, avx512bw, avx512vl, vnni = 1 << 16, 1 << 30, 1 << 31, 1 << 11
	if b7&(avx512f|avx512bw|avx512vl) == avx512f|avx512bw|avx512vl && c7&vnni != 0 && xcr0&0xe0 == 0xe0 {
		return levelAVX512
	}
	return levelAVX2
}()

func chunksF16(w []byte, x []float32, acc *[32]float32) int {
	return chunksHalf(hasAVX2(), dotF16x32, w, x, acc)
}

func chunksBF16(w []byte, x []float32, acc *[32]float32) int {
	return chunksHalf(hasAVX2(), dotBF16x32, w, x, acc)
}

// The row-at-a-time dot products run the portable Go code on amd64 (the
// products use the tiles of gen_kernels.go instead).
func chunksF32(a, b []float32, acc *[16]float32) int                   { return 0 }
func blocksQuant(t DType, w []byte, a []actBlock, acc *[8]float32) int { return 0 }
func blocksK(t DType, w []byte, a []actBlockK, acc *[16]float32) int   { return 0 }

// putF16Chunks converts src's whole 8-value chunks into dst by VCVTPS2PH
// (F16C, which the AVX2 kernels require) when they are in use, with
// F32ToF16's bits, and returns how many it converted.
func putF16Chunks(dst []uint16, src []float32) int {
	n := len(src) &^ 7
	if !hasAVX2() || n == 0 {
		return 0
	}
	putF16x8(&dst[0], &src[0], n)
	return n
}

// quantizeQ8Chunks encodes src's whole blocks into dst (QuantizeQ8_0's
// bytes) with the AVX-512 kernels when they are in use, and returns how
// many blocks it encoded.
func quantizeQ8Chunks(dst []byte, src []float32) int {
	nb := len(src) / QK
	if !hasAVX512() || nb == 0 {
		return 0
	}
	_ = dst[nb*(2+QK)-1]
	quantizeQ8x32AVX512(&dst[0], &src[0], nb)
	return nb
}

// wsumQ8Chunks computes WeightedSumAddQ8_0 over all of out's blocks by
// VPMOVSXBD, VCVTDQ2PS, a VMULPS by the block's scale (the exact widened
// value), a VMULPS by the weight and a VADDPS, up to four blocks at a time
// (two in YMM registers), when the AVX kernels are in use, and returns how
// many blocks it summed. The caller has checked the rows' bounds and that a
// is not empty.
func wsumQ8Chunks(out, a []float32, v []byte, stride int) int {
	nb := len(out) / QK
	if !hasAVX2() || nb == 0 {
		return 0
	}
	b := 0
	if hasAVX512() {
		for ; b+4 <= nb; b += 4 {
			wsumQ8x4AVX512(&out[b*QK], &a[0], &v[b*(2+QK)], uintptr(stride), len(a))
		}
		for ; b+2 <= nb; b += 2 {
			wsumQ8x2AVX512(&out[b*QK], &a[0], &v[b*(2+QK)], uintptr(stride), len(a))
		}
		if b < nb {
			wsumQ8x1AVX512(&out[b*QK], &a[0], &v[b*(2+QK)], uintptr(stride), len(a))
		}
		return nb
	}
	for ; b+2 <= nb; b += 2 {
		wsumQ8x2(&out[b*QK], &a[0], &v[b*(2+QK)], uintptr(stride), len(a))
	}
	if b < nb {
		wsumQ8x1(&out[b*QK], &a[0], &v[b*(2+QK)], uintptr(stride), len(a))
	}
	return nb
}
