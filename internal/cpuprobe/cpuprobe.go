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
// dependent additions, one cycle each). Probes exist on amd64 with
// AVX-512 F, BW, VL and VNNI (the avx512 levels of tensor); elsewhere,
// and in builds tagged purego, the list is empty.
package cpuprobe

import "time"

// A Probe is one loop: Instructions independent instructions per
// iteration, on registers (or the 1 KiB buffer it is given).
type Probe struct {
	Name, Doc    string
	run          func(n int, buf *byte)
	Instructions int
}

// Probes returns the probes of this build and CPU (none without AVX-512).
func Probes() []Probe {
	if !supported() {
		return nil
	}
	return probes
}

// Clock returns the core's clock in Hz, measured over n iterations of a
// chain of eight dependent additions (n·8 cycles).
func Clock(n int) float64 {
	t := time.Now()
	chain(n)
	return float64(8*n) / time.Since(t).Seconds()
}

// Run runs p for n iterations on buf (at least 1 KiB) and returns the
// time it took.
func (p Probe) Run(n int, buf []byte) time.Duration {
	if len(buf) < 1024 {
		panic("cpuprobe: buffer under 1 KiB")
	}
	t := time.Now()
	p.run(n, &buf[0])
	return time.Since(t)
}
