package sim

import (
	"context"
	"fmt"
	"io"

	"github.com/hlmproject/hlm/ddqn"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/speculative"
)

// TrainConfig configures DDQN training of the (L, ℓ) controller (Q-S Sec.
// IV-C) in the simulator.
type TrainConfig struct {
	Params   hybrid.Params // method q-s (or s-q), the channel, timing
	Prompts  []string
	Episodes int // one episode = one prompt's generation
	// Temperatures, when set, are cycled over the episodes (episode e runs
	// at Temperatures[e mod n] and prompt (e div n) mod len(Prompts)), so
	// one policy learns every evaluated temperature; empty: the Params'
	// temperature, prompts cycled.
	Temperatures []float64
	Agent        ddqn.Config
	Actions      []hybrid.Action
	// RewardScale divides the reward, the expected committed tokens per
	// second of the round (Q-S eq. 13–14), to keep Q-values near 1; 0:
	// 1/(τ_SLM + τ_LLM), the throughput of a one-draft round that commits
	// one token (10 when both times are 0).
	RewardScale float64
	// EvalEvery, when > 0, evaluates the greedy policy before training,
	// every EvalEvery episodes and after the last, on EvalPrompts at every
	// temperature, without exploring or learning: the learning curve
	// (TrainLog.Curve).
	EvalEvery   int
	EvalPrompts []string
	Progress    func(episode int, meanTPS, epsilon float64)
}

// Episode is one training episode's record.
type Episode struct {
	Temperature float64 `json:"temperature"`
	Throughput  float64 `json:"throughput_tps"` // realized tokens per virtual second (ε-greedy actions)
	MeanReward  float64 `json:"mean_reward"`    // mean per-round reward before scaling, tokens/s
	Epsilon     float64 `json:"epsilon"`        // exploration at the episode's end
}

// Checkpoint is the greedy policy's throughput on the evaluation prompts
// after Episode episodes: total tokens over total virtual seconds, over
// every prompt and temperature.
type Checkpoint struct {
	Episode    int     `json:"episode"`
	Throughput float64 `json:"throughput_tps"`
}

// TrainLog is what training recorded.
type TrainLog struct {
	Episodes []Episode    `json:"episodes"`
	Curve    []Checkpoint `json:"curve"`
}

// roundReward is Q-S's immediate reward (eq. 13): the tokens the round is
// expected to commit, g(x) of eq. 14 — the accepted drafts and the
// resampled or bonus token after them —, per second of the round.
func roundReward(ri hybrid.RoundInfo) float64 {
	return speculative.ExpectedTokens(ri.Alpha) / ri.Seconds
}

// TrainDDQN trains a controller: in each round the agent picks (L, ℓ) from
// the device's state (Q-S Sec. IV-B: the prefix confidences, their mean and
// the uplink rate), the round is simulated, and the reward is Q-S eq. 13,
// N_avg/T^t: the expected number of tokens the round commits given its
// drafts, g(x) = speculative.ExpectedTokens(α) with α_l = min(1, p_l(x_l)/q̂_l(x_l))
// (eq. 14 with the drafts drawn, an unbiased estimate of N_avg), over the
// round's duration T^t (eq. 9). It returns the trained agent (with the
// action table in its metadata) and the training record. Cancelled, it
// returns the agent as trained by the episodes that finished, their
// record, and ctx's error.
func TrainDDQN(ctx context.Context, ms *Models, tc TrainConfig) (*ddqn.Agent, TrainLog, error) {
	var log TrainLog
	p, err := tc.setup()
	if err != nil {
		return nil, log, err
	}
	agent, err := newAgent(tc, p.Method)
	if err != nil {
		return nil, log, err
	}
	// The pair the policy was trained on, saved with it: a policy trained
	// on hlm's engine and one trained @llama.cpp are otherwise the same
	// kind of file.
	if err := agent.SetMetadata("llm", ms.LLM.Name()); err != nil {
		return nil, log, err
	}
	if ms.SLM != nil {
		if err := agent.SetMetadata("slm", ms.SLM.Name()); err != nil {
			return nil, log, err
		}
	}
	ctl := &trainingController{agent: agent, actions: tc.Actions}
	if tc.EvalEvery > 0 { // the untrained policy: where the curve starts
		tps, err := tc.evalGreedy(ctx, ms, p, agent)
		if err != nil {
			return nil, log, err
		}
		log.Curve = append(log.Curve, Checkpoint{Episode: 0, Throughput: tps})
	}
	for ep := 0; ep < tc.Episodes; ep++ {
		pp, prompt := tc.episode(p, ep)
		var rewards []float64
		learn := func(ri hybrid.RoundInfo) {
			reward := roundReward(ri)
			rewards = append(rewards, reward)
			agent.Observe(ri.State.Features(), ctl.last, reward/tc.RewardScale, ri.Next.Features(), ri.Done)
			agent.Train()
		}
		r, err := runEpisode(ctx, ms, pp, prompt, ctl, learn)
		if ctx.Err() != nil {
			// Interrupted: an episode cut short is no episode; the agent
			// as the finished ones trained it, and their log.
			return agent, log, ctx.Err()
		}
		if err != nil {
			return nil, log, err
		}
		log.Episodes = append(log.Episodes, Episode{Temperature: pp.Temperature, Throughput: r.ThroughputTPS, MeanReward: mean(rewards), Epsilon: agent.Epsilon()})
		if tc.Progress != nil {
			tc.Progress(ep+1, r.ThroughputTPS, agent.Epsilon())
		}
		if tc.EvalEvery > 0 && ((ep+1)%tc.EvalEvery == 0 || ep+1 == tc.Episodes) {
			tps, err := tc.evalGreedy(ctx, ms, p, agent)
			if err != nil {
				return nil, log, err
			}
			log.Curve = append(log.Curve, Checkpoint{Episode: ep + 1, Throughput: tps})
		}
	}
	return agent, log, nil
}

// setup checks the configuration, fills its defaults and returns the
// training runs' parameters.
func (tc *TrainConfig) setup() (hybrid.Params, error) {
	p := tc.Params
	p.Draft = "ddqn"
	p.DDQNModel = ""
	if err := p.Validate(); err != nil {
		return p, err
	}
	if len(tc.Prompts) == 0 || tc.Episodes < 1 {
		return p, fmt.Errorf("training needs prompts and at least one episode")
	}
	if tc.EvalEvery > 0 && len(tc.EvalPrompts) == 0 {
		return p, fmt.Errorf("a learning curve (EvalEvery %d) needs evaluation prompts", tc.EvalEvery)
	}
	for _, t := range tc.Temperatures {
		if !(t >= 0) {
			return p, fmt.Errorf("training temperature %v", t)
		}
	}
	if len(tc.Actions) == 0 {
		tc.Actions = hybrid.DefaultActions()
	}
	if tc.RewardScale <= 0 {
		tc.RewardScale = 10
		if t := p.TauSLM + p.TauLLM; t > 0 {
			tc.RewardScale = 1 / t
		}
	}
	return p, nil
}

// newAgent is an untrained agent for the controller's features and actions.
func newAgent(tc TrainConfig, method string) (*ddqn.Agent, error) {
	agent, err := ddqn.NewAgent(hybrid.ControlFeatures, len(tc.Actions), tc.Agent)
	if err != nil {
		return nil, err
	}
	mean, std := hybrid.ControlNormalization()
	if err := agent.SetNormalization(mean, std); err != nil {
		return nil, err
	}
	if err := agent.SetMetadata("actions", hybrid.FormatActions(tc.Actions)); err != nil {
		return nil, err
	}
	if err := agent.SetMetadata("method", method); err != nil {
		return nil, err
	}
	return agent, nil
}

// episode is episode ep's parameters (seed, temperature) and prompt.
func (tc TrainConfig) episode(p hybrid.Params, ep int) (hybrid.Params, string) {
	p.Seed += uint64(ep)
	prompt := tc.Prompts[ep%len(tc.Prompts)]
	if n := len(tc.Temperatures); n > 0 {
		p.Temperature = tc.Temperatures[ep%n]
		prompt = tc.Prompts[(ep/n)%len(tc.Prompts)]
	}
	return p, prompt
}

// runEpisode generates for one prompt with a controller, in process, the
// server's distributions at hand (RoundInfo.Alpha).
func runEpisode(ctx context.Context, ms *Models, p hybrid.Params, prompt string, ctl hybrid.Controller, onRound func(hybrid.RoundInfo)) (hybrid.Result, error) {
	p.FitPrompt = true // dataset prompts may be longer than a small model's context
	s, err := ms.Session(p, prompt, hybrid.SessionConfig{Controller: ctl, OnRound: onRound})
	if err != nil {
		return hybrid.Result{}, err
	}
	srv, err := hybrid.NewServer(p, ms.LLM, s.Device.Sequence())
	if err != nil {
		return hybrid.Result{}, err
	}
	defer srv.Close()
	local := &hybrid.Local{Server: srv}
	return s.Run(ctx, local, local)
}

// evalGreedy is the greedy policy's throughput over the evaluation prompts
// (EvalController).
func (tc TrainConfig) evalGreedy(ctx context.Context, ms *Models, p hybrid.Params, agent *ddqn.Agent) (float64, error) {
	return tc.evalController(ctx, ms, p, &hybrid.PolicyController{Policy: agent.Policy(), Actions: tc.Actions})
}

// EvalController is a controller's throughput on the learning curve's runs
// (tc.EvalPrompts at every temperature, the seeds of TrainDDQN's
// checkpoints): total tokens over total virtual seconds. A fixed action
// measured here is a baseline for the curve.
func EvalController(ctx context.Context, ms *Models, tc TrainConfig, ctl hybrid.Controller) (float64, error) {
	p, err := tc.setup()
	if err != nil {
		return 0, err
	}
	return tc.evalController(ctx, ms, p, ctl)
}

func (tc TrainConfig) evalController(ctx context.Context, ms *Models, p hybrid.Params, ctl hybrid.Controller) (float64, error) {
	temps := tc.Temperatures
	if len(temps) == 0 {
		temps = []float64{p.Temperature}
	}
	var tokens, seconds float64
	for i, prompt := range tc.EvalPrompts {
		for _, t := range temps {
			pp := p
			pp.Seed, pp.Temperature = p.Seed+1<<32+uint64(i), t // far from the training episodes' seeds
			r, err := runEpisode(ctx, ms, pp, prompt, ctl, nil)
			if err != nil {
				return 0, err
			}
			tokens += float64(len(r.Tokens))
			seconds += r.VirtualSeconds
		}
	}
	return tokens / seconds, nil
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
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
