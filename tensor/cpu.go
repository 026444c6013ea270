package tensor

import (
	"fmt"
	"os"
	"strings"
)

// Kernel levels. Every level computes the same bits (each product has one
// summation order, written out by the portable Go code); a higher level only
// computes them faster.
const (
	levelPortable = iota // Go code, any architecture
	levelAVX2            // amd64 with AVX2, FMA and F16C
	levelAVX512          // amd64 with AVX-512 F, BW, VL and VNNI (and the AVX2 set)
)

var levelNames = [...]string{levelPortable: "portable", levelAVX2: "avx2", levelAVX512: "avx512"}

// KernelsEnv is the environment variable that caps the kernel level:
// "portable", "avx2" or "avx512" (a level the CPU lacks is not used). The
// purego build tag forces the portable kernels as well.
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

// parseLevel returns the level named by s (empty: max), capped at max.
func parseLevel(s string, max int) (int, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return max, nil
	}
	for l, n := range levelNames {
		if s == n {
			return min(l, max), nil
		}
	}
	return max, fmt.Errorf("%s=%q is not one of portable, avx2, avx512", KernelsEnv, s)
}

// Kernels names the kernel level in use ("portable", "avx2" or "avx512").
func Kernels() string { return levelNames[level] }

// AvailableKernels lists the kernel levels this CPU can run, portable first.
func AvailableKernels() []string { return levelNames[:cpuLevel+1] }

// SetKernels selects a kernel level by name (see KernelsEnv); a level the
// CPU lacks is an error. Results do not depend on it, only the speed: tests
// and benchmarks use it to compare levels. It must not be called while
// products run.
func SetKernels(name string) error {
	l, err := parseLevel(name, levelAVX512)
	if err != nil {
		return err
	}
	if l > cpuLevel {
		return fmt.Errorf("tensor: %s kernels need a CPU feature this machine lacks (available: %s)", name, strings.Join(AvailableKernels(), ", "))
	}
	level = l
	return nil
}

// hasAVX2 reports whether the AVX2 kernels (or better) are in use.
func hasAVX2() bool { return level >= levelAVX2 }
