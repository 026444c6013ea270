// Command ports measures how many cycles this CPU needs for the vector
// instruction mixes at the heart of hlm's AVX2 quantized tiles, from
// registers only (no loads, no dependencies beyond the accumulators): the
// floor those tiles' arithmetic sets, against which their measured time
// per (row, token, block) can be read (docs/BENCHMARKS.md, "Vector input
// quantization and GeGLU"). The clock is estimated from a chain of
// dependent 64-bit multiply-adds (3 + 1 cycles each on the x86 cores of
// this decade), so the cycle counts are estimates; amd64 only.
//
//	go run ./bench/ports
package main

import (
	"fmt"
	"os"
	"time"
)

// A mix is an assembly loop body run n times; per is how many units
// (instructions, or (row, token, block) pairs) one iteration holds.
type mix struct {
	name string
	run  func(n int)
	per  int
	unit string
}

//go:noinline
func chain(n int, x uint64) uint64 {
	for i := 0; i < n; i++ {
		x = x*0x9E3779B97F4A7C15 + 1 // a multiply (3 cycles) and an add (1), dependent
	}
	return x
}

// best is the shortest of three timed runs of f.
func best(f func()) time.Duration {
	b := time.Duration(1 << 62)
	for r := 0; r < 3; r++ {
		t := time.Now()
		f()
		b = min(b, time.Since(t))
	}
	return b
}

func main() {
	if len(mixes) == 0 {
		fmt.Fprintln(os.Stderr, "ports: amd64 only")
		os.Exit(1)
	}
	const chainN = 200_000_000
	var sink uint64
	d := best(func() { sink += chain(chainN, sink) })
	ghz := 4 * chainN / d.Seconds() / 1e9
	fmt.Printf("clock ≈ %.2f GHz (dependent multiply-add chain)\n", ghz)
	const n = 10_000_000
	for _, m := range mixes {
		d := best(func() { m.run(n) })
		fmt.Printf("%-13s %.2f cycles per %s\n", m.name, d.Seconds()*ghz*1e9/float64(n*m.per), m.unit)
	}
}
