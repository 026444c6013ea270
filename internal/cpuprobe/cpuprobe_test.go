package cpuprobe

import (
	"testing"
	"time"
)

// probesOrSkip returns Probes(), skipping tb when there are none.
func probesOrSkip(tb testing.TB) []Probe {
	ps := Probes()
	if len(ps) == 0 {
		tb.Skip("no probes on this CPU or build (they need amd64 with AVX2 and FMA, most of them AVX-512 F, BW, VL and VNNI)")
	}
	return ps
}

// TestProbesRun runs each probe briefly: the loops assemble, run and
// return, and a longer run takes longer (the loop really iterates).
func TestProbesRun(t *testing.T) {
	ps := probesOrSkip(t)
	buf := make([]byte, 1024)
	for _, p := range ps {
		if p.Instructions <= 0 || p.Name == "" || p.Doc == "" {
			t.Errorf("probe %q: incomplete", p.Name)
		}
		short, long := p.Run(1000, buf), p.Run(1_000_000, buf)
		if long <= short {
			t.Errorf("probe %s: 10⁶ iterations took %v, 10³ %v", p.Name, long, short)
		}
	}
	if f := Clock(1_000_000); f < 1e8 || f > 1e11 {
		t.Errorf("clock %.3g Hz", f)
	}
}

// BenchmarkProbes reports, for each probe, cycles per iteration and per
// instruction at the clock measured right before it.
//
//	go test -run='^$' -bench=Probes ./internal/cpuprobe
func BenchmarkProbes(b *testing.B) {
	ps := probesOrSkip(b)
	buf := make([]byte, 1024)
	for _, p := range ps {
		b.Run(p.Name, func(b *testing.B) {
			hz := Clock(5_000_000)
			b.ResetTimer()
			d := p.Run(b.N, buf)
			cycles := d.Seconds() * hz / float64(b.N)
			b.ReportMetric(cycles, "cycles/iter")
			b.ReportMetric(cycles/float64(p.Instructions), "cycles/instr")
			if p.Groups > 1 && p.Instructions > p.Groups {
				b.ReportMetric(cycles/float64(p.Groups), "cycles/group")
			}
			b.ReportMetric(hz/1e9, "GHz")
		})
	}
}

// TestZeroIterations: the assembly loops count down to zero, so n = 0
// must not reach them as 0 (it would run 2⁶⁴ iterations).
func TestZeroIterations(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		Clock(0)
		buf := make([]byte, 1024)
		for _, p := range Probes() {
			p.Run(0, buf)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Clock(0) or Run(0, …) did not return within 10 s")
	}
}
