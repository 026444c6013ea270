//go:build arm64 && !purego

package tensor

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// archLevels are arm64's kernel levels.
var archLevels = []int{levelPortable, levelNEON}

// cpuLevel is neon where the CPU has Advanced SIMD (every arm64 CPU Go
// runs on). The products then compute each row with the assembly of
// cpu_arm64.s (dotF32x16, dotF16x32, dotBF16x32; dotQuantNEON where the
// CPU has the dot product instructions, hasDotProd) and the Go code of the
// portable level for the rest: there are no multi-row tiles on arm64 yet,
// and the K-quants run the portable code.
var cpuLevel = func() int {
	if cpu.ARM64.HasASIMD {
		return levelNEON
	}
	return levelPortable
}()

// hasDotProd reports SDOT (ARMv8.2 dot product, mandatory from v8.4):
// Linux reports it; on Apple's systems, which x/sys/cpu cannot query, every
// arm64 chip a Mac or iPhone runs Go on has it.
var hasDotProd = cpu.ARM64.HasASIMDDP || runtime.GOOS == "darwin" || runtime.GOOS == "ios"

//go:noescape
func dotF32x16(a, b *float32, n int, acc *[16]float32)

//go:noescape
func dotQuantNEON(w *byte, a *actBlock, nb int, q4 bool, acc *[8]float32)

// chunksF32 computes dotF32's whole 16-element chunks into acc and returns
// how many elements it took (0 below the neon level).
func chunksF32(a, b []float32, acc *[16]float32) int {
	n := len(a) &^ 15
	if level != levelNEON || n == 0 {
		return 0
	}
	dotF32x16(&a[0], &b[0], n, acc)
	return n
}

// blocksQuant computes dotQuant's blocks into acc and returns how many it
// took: all of them at the neon level on a CPU with SDOT, else 0.
func blocksQuant(t DType, w []byte, a []actBlock, acc *[8]float32) int {
	if level != levelNEON || !hasDotProd || len(a) == 0 {
		return 0
	}
	if len(w) < len(a)*t.BlockBytes() {
		panic("tensor: dotQuant row shorter than its inputs")
	}
	dotQuantNEON(unsafe.SliceData(w), &a[0], len(a), t == Q4_0, acc)
	return len(a)
}

//go:noescape
func dotF16x32(w *uint16, x *float32, n int, acc *[32]float32)

//go:noescape
func dotBF16x32(w *uint16, x *float32, n int, acc *[32]float32)

// chunksF16 and chunksBF16 compute dotF16's and dotBF16's whole 32-element
// chunks into acc and return how many elements they took (0 below neon).
func chunksF16(w []byte, x []float32, acc *[32]float32) int {
	return chunksHalf(level == levelNEON, dotF16x32, w, x, acc)
}

func chunksBF16(w []byte, x []float32, acc *[32]float32) int {
	return chunksHalf(level == levelNEON, dotBF16x32, w, x, acc)
}
