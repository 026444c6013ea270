// Package cpuprobe measures, on the CPU at hand, the throughput of the
// vector instructions hlm's kernels are made of: how many cycles a loop
// of independent instructions of one kind, or of a mix of two kinds,
// takes per iteration. The kernels of tensor are tuned per CPU kind
// (docs/BENCHMARKS.md, "CPU kinds"), and what bounds a tile on one kind
// — which instructions share an execution pipe, whether 512-bit
// instructions run at half the rate of 256-bit ones — is read from these
// numbers before a kernel is rewritten:
//
//	go test -run='^$' -bench=Probes ./internal/cpuprobe
//
// reports cycles per iteration and per instruction for each probe, the
// cycles counted with the clock measured right before it (a chain of
// dependent additions, one cycle each), and for the mixes of one tile
// step (Groups of them an iteration) cycles per group. The avx2-…-tile
// probes are loops of tensor's generated tiles themselves (gen_probes.go
// reads them from tensor/gemm_amd64.s): the same instructions with every
// dependency removed and the data in L1, so their time is what the
// arithmetic alone takes, against the tile's in a real product. Probes exist on
// amd64: the avx2-… ones with AVX2 and FMA (the avx2 levels of tensor),
// the others with AVX-512 F, BW, VL and VNNI (the avx512 levels);
// elsewhere, and in builds tagged purego, the list is empty.
package cpuprobe

import "time"

// A Probe is one loop: Instructions independent instructions per
// iteration, on registers (or the 1 KiB buffer it is given), Groups times
// the probe's group of instructions (one tile step for a mix).
type Probe struct {
	Name, Doc    string
	run          func(n int, buf *byte)
	Instructions int
	Groups       int
	AVX2         bool // needs only AVX2 and FMA, not AVX-512
}

// Probes returns the probes of this build and CPU: the AVX2 ones where
// the CPU has AVX2 and FMA, all of them where it also has AVX-512 F, BW,
// VL and VNNI.
func Probes() []Probe {
	var ps []Probe
	for _, p := range probes {
		if (p.AVX2 && supportedAVX2()) || supported() {
			ps = append(ps, p)
		}
	}
	return ps
}

// Clock returns the core's clock in Hz, measured over n ≥ 1 iterations
// of a chain of eight dependent additions (n·8 cycles; on other
// architectures than amd64 a Go loop of as many additions, a rough
// figure).
func Clock(n int) float64 {
	n = max(n, 1) // the assembly loop counts down to zero
	t := time.Now()
	if chain(n) != 8*n {
		panic("cpuprobe: the clock's chain miscounted")
	}
	return float64(8*n) / time.Since(t).Seconds()
}

// Run runs p for n ≥ 1 iterations on buf (at least 1 KiB) and returns the
// time it took.
func (p Probe) Run(n int, buf []byte) time.Duration {
	if len(buf) < 1024 {
		panic("cpuprobe: buffer under 1 KiB")
	}
	n = max(n, 1) // the assembly loop counts down to zero
	t := time.Now()
	p.run(n, &buf[0])
	return time.Since(t)
}
