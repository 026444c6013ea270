package sim

import (
	"context"
	"fmt"
	"io"

	"github.com/hlmproject/hlm/ddqn"
	"github.com/hlmproject/hlm/hybrid"
)

// TrainConfig configures DDQN training of the (L, ℓ) controller (Q-S Sec.
// IV-C) in the simulator.
type TrainConfig struct {
	Params   hybrid.Params // method q-s (or s-q), the channel, timing
	Prompts  []string
	Episodes int // one episode = one prompt's generation (prompts cycle)
	Agent    ddqn.Config
	Actions  []hybrid.Action
	// RewardScale divides the reward, tokens per second of the round
	// (Q-S eq. 13 with the realized count), to keep Q-values near 1.
	RewardScale float64
	Progress    func(episode int, meanTPS, epsilon float64)
}

// TrainDDQN trains a controller: in each round the agent picks (L, ℓ) from
// the device's state (prefix confidence, uplink rate), the round is
// simulated, and the reward is the committed tokens per second of that
// round. It returns the trained agent (with the action table in its
// metadata) and the throughput of each episode.
func TrainDDQN(ctx context.Context, ms *Models, tc TrainConfig) (*ddqn.Agent, []float64, error) {
	p := tc.Params
	p.Draft = "ddqn"
	p.DDQNModel = ""
	if err := p.Validate(); err != nil {
		return nil, nil, err
	}
	if len(tc.Prompts) == 0 || tc.Episodes < 1 {
		return nil, nil, fmt.Errorf("training needs prompts and at least one episode")
	}
	if len(tc.Actions) == 0 {
		tc.Actions = hybrid.DefaultActions()
	}
	if tc.RewardScale <= 0 {
		tc.RewardScale = 10
	}
	agent, err := ddqn.NewAgent(hybrid.ControlFeatures, len(tc.Actions), tc.Agent)
	if err != nil {
		return nil, nil, err
	}
	mean, std := hybrid.ControlNormalization()
	if err := agent.SetNormalization(mean, std); err != nil {
		return nil, nil, err
	}
	if err := agent.SetMetadata("actions", hybrid.FormatActions(tc.Actions)); err != nil {
		return nil, nil, err
	}
	agent.SetMetadata("method", p.Method)
	ctl := &trainingController{agent: agent, actions: tc.Actions}
	var tps []float64
	for ep := 0; ep < tc.Episodes; ep++ {
		pp := p
		pp.Seed = p.Seed + uint64(ep)
		s, err := ms.Session(pp, tc.Prompts[ep%len(tc.Prompts)], hybrid.SessionConfig{Controller: ctl,
			OnRound: func(ri hybrid.RoundInfo) {
				reward := float64(ri.Committed) / ri.Seconds / tc.RewardScale
				agent.Observe(ri.State.Features(), ctl.last, reward, ri.Next.Features(), ri.Done)
				agent.Train()
			}})
		if err != nil {
			return nil, nil, err
		}
		srv, err := hybrid.NewServer(pp, ms.LLM, s.Device.Sequence())
		if err != nil {
			return nil, nil, err
		}
		r, err := s.Run(ctx, &hybrid.Local{Server: srv}, nil)
		if err != nil {
			return nil, nil, err
		}
		tps = append(tps, r.ThroughputTPS)
		if tc.Progress != nil {
			tc.Progress(ep+1, r.ThroughputTPS, agent.Epsilon())
		}
	}
	return agent, tps, nil
}

// trainingController picks ε-greedy actions and remembers the last one.
type trainingController struct {
	agent   *ddqn.Agent
	actions []hybrid.Action
	last    int
}

func (c *trainingController) Choose(s hybrid.ControlState) (int, int) {
	c.last = c.agent.Act(s.Features())
	a := c.actions[c.last]
	return a.L, a.Ell
}

// SavePolicy writes a trained agent's policy.
func SavePolicy(w io.Writer, a *ddqn.Agent) error { return a.Save(w) }
