package tensor

import (
	"fmt"
	"os"
	"runtime"
	"strings"
)

// Kernel levels. Every level computes the same bits (each product has one
// summation order, written out by the portable Go code); a higher level only
// computes them faster. Each architecture has its own levels (archLevels,
// in increasing order).
const (
	levelPortable = iota // Go code, any architecture
	levelAVX2            // amd64 with AVX2, FMA and F16C
	levelAVX512          // amd64 with AVX-512 F, BW, VL and VNNI (and the AVX2 set)
	levelNEON            // arm64 (Advanced SIMD; the integer types also need the dot product instructions)
	numLevels
)

var levelNames = [numLevels]string{levelPortable: "portable", levelAVX2: "avx2", levelAVX512: "avx512", levelNEON: "neon"}

// KernelsEnv is the environment variable that caps the kernel level:
// "portable", or a level of this architecture ("avx2" or "avx512" on
// amd64, "neon" on arm64; a level the CPU lacks is not used). The purego
// build tag forces the portable kernels as well.
const KernelsEnv = "HLM_KERNELS"

// level is the kernel level in use: the CPU's, capped by KernelsEnv. Tests
// lower it to compare levels; nothing else writes it.
var level = func() int {
	l, err := parseLevel(os.Getenv(KernelsEnv), cpuLevel)
	if err != nil {
		fmt.Fprintf(os.Stderr, "tensor: %v; using %s\n", err, levelNames[cpuLevel])
		return cpuLevel
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

// parseLevel returns the level named by s (empty: max), capped at max.
func parseLevel(s string, max int) (int, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return max, nil
	}
	var names []string
	for _, l := range archLevels {
		if s == levelNames[l] {
			if rank(l) > rank(max) {
				return max, nil
			}
			return l, nil
		}
		names = append(names, levelNames[l])
	}
	return max, fmt.Errorf("%s=%q is not one of %s (on %s)", KernelsEnv, s, strings.Join(names, ", "), runtime.GOARCH)
}

// Kernels names the kernel level in use ("portable", "avx2", "avx512" or
// "neon").
func Kernels() string { return levelNames[level] }

// AvailableKernels lists the kernel levels this CPU can run, portable first.
func AvailableKernels() []string {
	var names []string
	for _, l := range availableLevels() {
		names = append(names, levelNames[l])
	}
	return names
}

// availableLevels are the levels this CPU can run, portable first.
func availableLevels() []int { return archLevels[:rank(cpuLevel)+1] }

// SetKernels selects a kernel level by name (see KernelsEnv); a level the
// CPU lacks is an error. Results do not depend on it, only the speed: tests
// and benchmarks use it to compare levels. It must not be called while
// products run.
func SetKernels(name string) error {
	l, err := parseLevel(name, archLevels[len(archLevels)-1])
	if err != nil {
		return err
	}
	if rank(l) > rank(cpuLevel) {
		return fmt.Errorf("tensor: %s kernels need a CPU feature this machine lacks (available: %s)", name, strings.Join(AvailableKernels(), ", "))
	}
	level = l
	return nil
}

// hasAVX2 reports whether the AVX2 kernels (or better) are in use.
func hasAVX2() bool { return level == levelAVX2 || level == levelAVX512 }
