package ddqn

import (
	"math/rand/v2"
	"testing"
)

// Realistic size for Q-S: a handful of confidence and rate features, an
// action table of draft lengths × lattice resolutions (here 4 × 3), the
// default {64, 64} network and minibatch of 32.
const benchInputs, benchActions = 8, 12

func benchAgent(b *testing.B) *Agent {
	a, err := NewAgent(benchInputs, benchActions, DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	state := func() []float64 {
		s := make([]float64, benchInputs)
		for i := range s {
			s[i] = rng.NormFloat64()
		}
		return s
	}
	for range 1000 {
		a.Observe(state(), rng.IntN(benchActions), rng.Float64(), state(), rng.IntN(20) == 0)
	}
	return a
}

func BenchmarkTrain(b *testing.B) {
	a := benchAgent(b)
	for b.Loop() {
		a.Train()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/update")
}

func BenchmarkPolicyGreedy(b *testing.B) {
	p := benchAgent(b).Policy()
	s := make([]float64, benchInputs)
	for b.Loop() {
		p.Greedy(s)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N), "µs/decision")
}
