//go:build amd64 && !purego

package speculative

import (
	"strings"

	"github.com/hlmproject/hlm/tensor"
	"golang.org/x/sys/cpu"
)

// raceSkip8 and raceSkip4 (race_amd64.s: AVX-512 with DQ, AVX2) compute
// u = keyedUniform(key, pos, tok0+i) for 8 or 4 tokens at a time and
// return the length of the leading run of p[:n] (n a multiple of the
// lanes) in which no lane has u·loose < s·p_i (loose is raceLoose): the
// tokens that cannot beat the score s. They stop at the first group holding a possible winner.
//
//go:noescape
func raceSkip8(p *float64, n int, key, pmix uint64, tok0 int, s, loose float64) int

//go:noescape
func raceSkip4(p *float64, n int, key, pmix uint64, tok0 int, s, loose float64) int

// raceSkip returns how many leading tokens of p the vector code found
// unable to beat s, and the number of lanes it works in (0: no vector code
// at this kernel level, HLM_KERNELS=portable included). The kernels follow
// tensor's level, so that a level chosen to compare speeds applies here.
func raceSkip(p []float64, key, pmix uint64, tok0 int, s float64) (int, int) {
	if uint64(tok0)+uint64(len(p)) > 1<<32 {
		return 0, 0 // token ids beyond uint32: keyedUniform's truncation
	}
	switch k := tensor.Kernels(); {
	case strings.HasPrefix(k, "avx512") && cpu.X86.HasAVX512DQ:
		if n := len(p) &^ 7; n > 0 {
			return raceSkip8(&p[0], n, key, pmix, tok0, s, raceLoose), 8
		}
		return 0, 8
	case k == "avx2" || strings.HasPrefix(k, "avx512"):
		if n := len(p) &^ 3; n > 0 {
			return raceSkip4(&p[0], n, key, pmix, tok0, s, raceLoose), 4
		}
		return 0, 4
	}
	return 0, 0
}
