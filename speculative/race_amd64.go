//go:build amd64 && !purego

package speculative

import (
	"github.com/hlmproject/hlm/tensor"
	"golang.org/x/sys/cpu"
)

// raceSkip8 and raceSkip4 (race_amd64.s: AVX-512 with DQ, AVX2) compute
// u = keyedUniform(key, pos, tok0+i) for 8 or 4 tokens at a time (but 1
// for the last cell, which cellUniform holds at 1 − 2⁻⁵³: raceLoose
// covers the difference) and
// return the length of the leading run of p[:n] (n a multiple of the
// lanes) in which no lane has u·loose < s·p_i (loose is raceLoose): the
// tokens that cannot beat the score s. They stop at the first group
// holding a possible winner.
//
//go:noescape
func raceSkip8(p *float64, n int, key, pmix uint64, tok0 int, s, loose float64) int

//go:noescape
func raceSkip4(p *float64, n int, key, pmix uint64, tok0 int, s, loose float64) int

// raceKernel is the vector filter of the kernel level in use and its lanes
// (nil and 0 without one, HLM_KERNELS=portable included): it follows
// tensor's level, so that a level chosen to compare speeds applies here.
func raceKernel() (raceFilter, int) {
	switch lanes := raceLanes(); lanes {
	case 8:
		return raceSkip8, lanes
	case 4:
		return raceSkip4, lanes
	}
	return nil, 0
}

// raceLanes is the vector width of the races' filters at the kernel level
// in use: 8 (AVX-512 with DQ), 4 (AVX2) or 0.
func raceLanes() int {
	switch {
	case tensor.UsesAVX512() && cpu.X86.HasAVX512DQ:
		return 8
	case tensor.UsesAVX2():
		return 4
	}
	return 0
}

// raceLogitSkip8 and raceLogitSkip4 (race_amd64.s) are the race's filter
// over logits (raceLogitFilter): the same hash as raceSkip8 and raceSkip4,
// compared with logitBound((x_i − zmax)·scale, s2) built from the
// logit's float32 — VSCALEFPD at AVX-512, the exponent bits at AVX2.
//
//go:noescape
func raceLogitSkip8(x *float32, n int, key, pmix uint64, tok0 int, zmax, scale, s2, loose float64) int

//go:noescape
func raceLogitSkip4(x *float32, n int, key, pmix uint64, tok0 int, zmax, scale, s2, loose float64) int

// raceLogitKernel is raceKernel's choice for the race over logits.
func raceLogitKernel() (raceLogitFilter, int) {
	switch lanes := raceLanes(); lanes {
	case 8:
		return raceLogitSkip8, lanes
	case 4:
		return raceLogitSkip4, lanes
	}
	return nil, 0
}
