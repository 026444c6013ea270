package tensor

import (
	"fmt"
	"os"
	"runtime"
	"strings"
)

// Kernel levels. Every level computes the same bits (each product has one
// summation order, written out by the portable Go code); a higher level only
// computes them faster. Each architecture has its own levels (archLevels).
// A tuned level uses the instructions of another (isa) with tiles chosen
// for one kind of CPU; the level a CPU runs by default (defaultLevel) may
// be a tuned one.
const (
	levelPortable = iota // Go code, any architecture
	levelAVX2            // amd64 with AVX2, FMA and F16C
	levelAVX512          // amd64 with AVX-512 F, BW, VL and VNNI (and the AVX2 set)
	levelNEON            // arm64 (Advanced SIMD; the integer types also need the dot product instructions)
	// levelAVX512Zen4 is avx512 with the single-token products of Zen 4
	// (AMD family 25 with AVX-512): one row at a time without software
	// prefetch, Q8_0/Q4_0 from the packed rows, so each thread reads one
	// sequential stream that the hardware prefetcher follows (zen4.go).
	levelAVX512Zen4
	// levelAVX512Zen5 is avx512 with the single-token products of Zen 5
	// (AMD family 26): avx512's own one-row tiles, prefetching the next
	// row, so each thread reads one sequential stream (zen5.go).
	levelAVX512Zen5
	// levelAVX2Zen1 is avx2 with the K-quant tiles of several tokens that
	// Zen 1 and Zen+ (AMD family 23 before model 0x30: 128-bit vector
	// units, one of them multiplying integers) run faster: two chunks per
	// VPMADDWD (gen_kernels.go, kPairAVX2).
	levelAVX2Zen1
	numLevels
)

var levelNames = [numLevels]string{levelPortable: "portable", levelAVX2: "avx2", levelAVX512: "avx512", levelNEON: "neon", levelAVX512Zen4: "avx512-zen4", levelAVX512Zen5: "avx512-zen5", levelAVX2Zen1: "avx2-zen1"}

// isa is the level whose instructions level l uses.
func isa(l int) int {
	switch l {
	case levelAVX512Zen4, levelAVX512Zen5:
		return levelAVX512
	case levelAVX2Zen1:
		return levelAVX2
	}
	return l
}

// KernelsEnv is the environment variable that chooses the kernel level:
// "portable", or a level of this architecture ("avx2", "avx2-zen1",
// "avx512", "avx512-zen4" or "avx512-zen5" on amd64, "neon" on arm64). A level the
// CPU lacks is an error: the message goes to standard error and the CPU's
// own level runs (SetKernels returns it). The purego build tag forces the
// portable kernels.
const KernelsEnv = "HLM_KERNELS"

// level is the kernel level in use: the CPU's default, or KernelsEnv's.
// Tests lower it to compare levels; nothing else writes it.
var level = func() int {
	l, err := parseLevel(os.Getenv(KernelsEnv), cpuLevel)
	if err != nil {
		fmt.Fprintf(os.Stderr, "warning: %v; running %s instead\n", err, levelNames[defaultLevel])
		return defaultLevel
	}
	if l < 0 {
		return defaultLevel
	}
	return l
}()

// rank is l's position in archLevels (−1: not a level of this
// architecture).
func rank(l int) int {
	for i, a := range archLevels {
		if a == l {
			return i
		}
	}
	return -1
}

// parseLevel returns the level named by s: −1 for an empty s (the CPU's
// default), an error for a name that is not a level of this architecture
// or a level whose instructions are beyond max (the CPU's isa level).
func parseLevel(s string, max int) (int, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return -1, nil
	}
	var names []string
	for _, l := range archLevels {
		if s == levelNames[l] {
			if rank(isa(l)) > rank(max) {
				return -1, fmt.Errorf("%s=%s needs %s, which this CPU lacks (it runs %s)", KernelsEnv, s, levelNeeds[isa(l)], strings.Join(levelList(max), ", "))
			}
			return l, nil
		}
		names = append(names, levelNames[l])
	}
	return -1, fmt.Errorf("%s=%q is not one of %s (on %s)", KernelsEnv, s, strings.Join(names, ", "), runtime.GOARCH)
}

// levelNeeds says what each instruction level needs of the CPU.
var levelNeeds = [numLevels]string{
	levelAVX2:   "AVX2, FMA and F16C",
	levelAVX512: "AVX-512 F, BW, VL and VNNI",
	levelNEON:   "Advanced SIMD",
}

// Kernels names the kernel level in use ("portable", "avx2", "avx2-zen1",
// "avx512", "avx512-zen4", "avx512-zen5" or "neon").
func Kernels() string { return levelNames[level] }

// AvailableKernels lists the kernel levels this CPU can run, portable
// first and the one it runs by default last.
func AvailableKernels() []string { return levelList(cpuLevel) }

// levelList names the levels a CPU whose isa level is max can run,
// portable first and its default level last.
func levelList(max int) []string {
	var names []string
	for _, l := range levelsUpTo(max) {
		names = append(names, levelNames[l])
	}
	return names
}

// availableLevels are the levels this CPU can run, portable first and the
// default last.
func availableLevels() []int { return levelsUpTo(cpuLevel) }

// levelsUpTo lists the levels of archLevels whose instructions are at most
// max's, in archLevels' order with max's default level (tunedLevel) moved
// to the end.
func levelsUpTo(max int) []int {
	def := tunedLevel(max)
	var ls []int
	for _, l := range archLevels {
		if rank(isa(l)) <= rank(max) && l != def {
			ls = append(ls, l)
		}
	}
	return append(ls, def)
}

// SetKernels selects a kernel level by name (see KernelsEnv); a level the
// CPU lacks is an error. Results do not depend on it, only the speed: tests
// and benchmarks use it to compare levels. It must not be called while
// products run.
func SetKernels(name string) error {
	l, err := parseLevel(name, cpuLevel)
	if err != nil {
		return fmt.Errorf("tensor: %w (available: %s)", err, strings.Join(AvailableKernels(), ", "))
	}
	if l < 0 {
		l = defaultLevel
	}
	level = l
	return nil
}

// UsesAVX512 and UsesAVX2 report whether the kernel level in use runs
// AVX-512 (avx512, avx512-zen4, avx512-zen5) or at least AVX2 instructions: for vector
// code outside this package that follows the level (HLM_KERNELS,
// SetKernels) as the products do.
func UsesAVX512() bool { return hasAVX512() }

// UsesAVX2: see UsesAVX512.
func UsesAVX2() bool { return hasAVX2() }

// hasAVX2 reports whether the AVX2 kernels (or better) are in use.
func hasAVX2() bool { return isa(level) == levelAVX2 || isa(level) == levelAVX512 }

// hasAVX512 reports whether the AVX-512 kernels are in use.
func hasAVX512() bool { return isa(level) == levelAVX512 }
