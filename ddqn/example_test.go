package ddqn_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/hlmproject/hlm/ddqn"
)

// A one-step problem in the shape of Q-S's: the state is (mean draft
// confidence, uplink rate in bit/s), the actions are draft lengths, and the
// reward is tokens gained per unit of round time (eq. 13): long drafts pay
// when confidence is high.
func Example() {
	lengths := []int{2, 4, 8}
	cfg := ddqn.DefaultConfig()
	cfg.Hidden = []int{16}
	cfg.Gamma = 0 // every round is scored on its own here
	cfg.EpsDecaySteps = 500
	cfg.Seed = 1
	agent, err := ddqn.NewAgent(2, len(lengths), cfg)
	if err != nil {
		panic(err)
	}
	// Feed raw features; the agent standardises them.
	if err := agent.SetNormalization([]float64{0.5, 1e6}, []float64{0.3, 5e5}); err != nil {
		panic(err)
	}
	if err := agent.SetMetadata("lengths", fmt.Sprint(lengths)); err != nil {
		panic(err)
	}

	env := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		s := []float64{0.99 * env.Float64(), 1e6 + 5e5*(2*env.Float64()-1)}
		a := agent.Act(s)
		// Each drafted token is accepted with probability s[0] (and the
		// verifier adds one token), so a round gains (1−α^(L+1))/(1−α)
		// tokens on average; it costs 1 plus 0.1 per drafted token.
		alpha, L := s[0], float64(lengths[a])
		reward := (1 - math.Pow(alpha, L+1)) / (1 - alpha) / (1 + 0.1*L)
		agent.Observe(s, a, reward, nil, true)
		agent.Train()
	}

	var file bytes.Buffer
	if err := agent.Save(&file); err != nil {
		panic(err)
	}
	policy, err := ddqn.Load(&file)
	if err != nil {
		panic(err)
	}
	fmt.Println("lengths", policy.Metadata()["lengths"])
	for _, conf := range []float64{0.1, 0.9} {
		fmt.Printf("confidence %.1f: draft %d\n", conf, lengths[policy.Greedy([]float64{conf, 1.2e6})])
	}
	// Output:
	// lengths [2 4 8]
	// confidence 0.1: draft 2
	// confidence 0.9: draft 8
}
