package ddqn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// banditReward is the contextual bandit's mean reward: the projection of
// the state x ∈ [−1, 1]² on action a's direction (+x, −x, +y, −y). The best
// action points along the larger coordinate of x, with that coordinate's
// sign.
func banditReward(x []float64, a int) float64 {
	switch a {
	case 0:
		return x[0]
	case 1:
		return -x[0]
	case 2:
		return x[1]
	default:
		return -x[1]
	}
}

func banditBest(x []float64) int {
	best := 0
	for a := 1; a < 4; a++ {
		if banditReward(x, a) > banditReward(x, best) {
			best = a
		}
	}
	return best
}

// TestLearnBandit trains on a contextual bandit (γ = 0, every transition
// terminal; agent seed 1) with rewards observed with uniform noise of
// ±0.1, then checks the greedy action on n = 2000 fresh states: it must be
// optimal on at least 95% of them, and the mean regret must stay below
// 0.005. (Agent seeds 10…29 give 95.3–98.5%; the misses are states close
// to a tie.)
func TestLearnBandit(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Hidden = []int{32, 32}
	cfg.Gamma = 0
	cfg.LearningRate = 3e-3
	cfg.EpsDecaySteps = 1000
	cfg.EpsEnd = 0.2
	cfg.Seed = 1
	agent, err := NewAgent(2, 4, cfg)
	if err != nil {
		t.Fatal(err)
	}
	env := rand.New(rand.NewPCG(1, 100))
	const steps = 4000
	for range steps {
		x := []float64{2*env.Float64() - 1, 2*env.Float64() - 1}
		a := agent.Act(x)
		r := banditReward(x, a) + 0.2*(env.Float64()-0.5)
		agent.Observe(x, a, r, nil, true)
		agent.Train()
	}

	eval := rand.New(rand.NewPCG(2, 200))
	const n = 2000
	optimal, regret := 0, 0.0
	for range n {
		x := []float64{2*eval.Float64() - 1, 2*eval.Float64() - 1}
		a, best := agent.Greedy(x), banditBest(x)
		if a == best {
			optimal++
		}
		regret += banditReward(x, best) - banditReward(x, a)
	}
	frac := float64(optimal) / n
	t.Logf("after %d updates: greedy optimal on %.1f%% of %d states, mean regret %.4f", agent.Updates(), 100*frac, n, regret/n)
	if frac < 0.95 || regret/n > 0.005 {
		t.Errorf("greedy optimal on %.1f%% (want ≥ 95%%), mean regret %.4f (want ≤ 0.005)", 100*frac, regret/n)
	}
}

// chain is a corridor of chainLen cells; cell chainLen−1 is the goal. Action
// 0 moves left (staying put at cell 0), action 1 right; entering the goal
// pays 1 and ends the episode. Every other step pays 0.
const chainLen = 6

func chainState(s int) []float64 {
	x := make([]float64, chainLen)
	x[s] = 1
	return x
}

// chainQ is the optimal Q-function: from cell s, going right reaches the
// goal in k = goal−1−s further steps, so Q(s, right) = γ^k; going left
// first costs one step back (none at cell 0), Q(s, left) = γ·V(max(s−1, 0)).
func chainQ(s, a int, gamma float64) float64 {
	goal := chainLen - 1
	v := func(c int) float64 { return math.Pow(gamma, float64(goal-1-c)) }
	if a == 1 {
		return v(s)
	}
	return gamma * v(max(s-1, 0))
}

// TestLearnChain trains on the corridor with γ = 0.9 from ε-greedy episodes
// that start in a random cell and are cut after 20 steps (a cut is not
// terminal: the transition still bootstraps). The greedy policy must go
// right from every cell, and every Q-value must lie within 1e-3 of the
// closed form r·γ^k above (with one-hot cells the network can represent
// Q* exactly, and across seeds 10…29 the error ends below 1e-14).
func TestLearnChain(t *testing.T) {
	const gamma = 0.9
	cfg := DefaultConfig()
	cfg.Hidden = []int{32}
	cfg.Gamma = gamma
	cfg.LearningRate = 1e-3
	cfg.TargetEvery = 100
	cfg.EpsDecaySteps = 3000
	cfg.EpsEnd = 0.2
	cfg.Seed = 3
	agent, err := NewAgent(chainLen, 2, cfg)
	if err != nil {
		t.Fatal(err)
	}
	env := rand.New(rand.NewPCG(3, 300))
	goal := chainLen - 1
	for agent.Updates() < 8000 {
		s := env.IntN(goal)
		for step := 0; step < 20; step++ {
			a := agent.Act(chainState(s))
			next := s + 2*a - 1
			next = max(next, 0)
			done := next == goal
			r := 0.0
			if done {
				r = 1
			}
			agent.Observe(chainState(s), a, r, chainState(next), done)
			agent.Train()
			if done {
				break
			}
			s = next
		}
	}
	const tol = 1e-3
	worst := 0.0
	for s := 0; s < goal; s++ {
		q := agent.Q(chainState(s), nil)
		if agent.Greedy(chainState(s)) != 1 {
			t.Errorf("cell %d: greedy action left, Q = %.4f", s, q)
		}
		for a := range 2 {
			want := chainQ(s, a, gamma)
			worst = math.Max(worst, math.Abs(q[a]-want))
			if math.Abs(q[a]-want) > tol {
				t.Errorf("cell %d action %d: Q = %.4f, closed form %.4f (tolerance %g)", s, a, q[a], want, tol)
			}
		}
	}
	t.Logf("after %d updates: max |Q − Q*| = %.2g", agent.Updates(), worst)
}
