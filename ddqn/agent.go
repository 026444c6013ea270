package ddqn

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// pcgStream is the second PCG seed word; Config.Seed is the first.
const pcgStream = 0x6464716e // "ddqn"

// Agent is a double-DQN learner: an online network that acts and learns, a
// target network that evaluates bootstrap targets, Adam's state, a replay
// buffer, the ε schedule and its own random generator. Everything it does
// is a deterministic function of Config.Seed and the sequence of calls.
// An Agent is not safe for concurrent use.
type Agent struct {
	cfg             Config
	inputs, actions int

	online, target *Net
	grad           *Net // gradient of the current minibatch, the online net's shape
	opt            *adam
	buf            replay
	rng            *rand.Rand

	mean, std []float64 // input normalisation, nil for none
	meta      map[string]string

	steps   int // Act calls
	updates int // Train updates

	// scratch
	tr, trAct *trace
	x, x2, dq []float64
}

// NewAgent returns an agent for states of inputs features and actions
// discrete actions. The online network is initialised from a PCG generator
// seeded with (cfg.Seed, "ddqn") and copied to the target network.
func NewAgent(inputs, actions int, cfg Config) (*Agent, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Hidden = append([]int(nil), cfg.Hidden...)
	rng := rand.New(rand.NewPCG(cfg.Seed, pcgStream))
	online, err := NewNet(inputs, cfg.Hidden, actions, rng)
	if err != nil {
		return nil, err
	}
	return &Agent{
		cfg:     cfg,
		inputs:  inputs,
		actions: actions,
		online:  online,
		target:  online.Clone(),
		grad:    newZeroNet(online.Sizes),
		opt:     newAdam(online, cfg.LearningRate),
		buf:     replay{capacity: cfg.Replay, inputs: inputs},
		rng:     rng,
		meta:    map[string]string{},
		tr:      newTrace(online),
		trAct:   newTrace(online),
		x:       make([]float64, inputs),
		x2:      make([]float64, inputs),
		dq:      make([]float64, actions),
	}, nil
}

// SetNormalization makes the agent feed the network (x_i − mean_i)/std_i
// instead of the raw feature x_i, in Act, Greedy, Q and Train (including
// transitions already stored, which are kept raw), and saves mean and std
// with the model. Both nil removes the normalisation. Otherwise both need
// one finite value per input, with std > 0.
func (a *Agent) SetNormalization(mean, std []float64) error {
	if mean == nil && std == nil {
		a.mean, a.std = nil, nil
		return nil
	}
	if err := checkNormalization(a.inputs, mean, std); err != nil {
		return err
	}
	a.mean, a.std = append([]float64(nil), mean...), append([]float64(nil), std...)
	return nil
}

func checkNormalization(inputs int, mean, std []float64) error {
	if len(mean) != inputs || len(std) != inputs {
		return fmt.Errorf("%w: normalisation has %d means and %d deviations for %d inputs", ErrConfig, len(mean), len(std), inputs)
	}
	for i := range mean {
		if math.IsNaN(mean[i]) || math.IsInf(mean[i], 0) || !(std[i] > 0) || math.IsInf(std[i], 0) {
			return fmt.Errorf("%w: normalisation of input %d: mean %v, std %v", ErrConfig, i, mean[i], std[i])
		}
	}
	return nil
}

// normalize writes the network input for raw state s to dst and returns it.
func normalize(dst, s, mean, std []float64) []float64 {
	if mean == nil {
		copy(dst, s)
		return dst
	}
	for i, v := range s {
		dst[i] = (v - mean[i]) / std[i]
	}
	return dst
}

// SetMetadata stores a free-form key/value pair saved with the model (for
// example the table mapping action indices to decisions). Keys and values
// must be valid UTF-8, and all of them together within MaxMetadataEntries
// and MaxMetadataBytes.
func (a *Agent) SetMetadata(key, value string) error {
	next := make(map[string]string, len(a.meta)+1)
	for k, v := range a.meta {
		next[k] = v
	}
	next[key] = value
	if err := checkMetadata(next); err != nil {
		return err
	}
	a.meta = next
	return nil
}

// checkState panics unless s is a finite state of the agent's width: a
// wrong state is a bug in the caller, and a NaN stored for training would
// silently poison the network.
func (a *Agent) checkState(what string, s []float64) {
	if len(s) != a.inputs {
		panic(fmt.Sprintf("ddqn: %s has %d features, agent takes %d", what, len(s), a.inputs))
	}
	for i, v := range s {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			panic(fmt.Sprintf("ddqn: %s feature %d is %v", what, i, v))
		}
	}
}

// Epsilon returns the exploration rate the next Act will use: EpsStart
// decaying linearly to EpsEnd over EpsDecaySteps calls, then constant.
func (a *Agent) Epsilon() float64 {
	if a.steps >= a.cfg.EpsDecaySteps {
		return a.cfg.EpsEnd
	}
	frac := float64(a.steps) / float64(a.cfg.EpsDecaySteps)
	return a.cfg.EpsStart + float64(frac*(a.cfg.EpsEnd-a.cfg.EpsStart))
}

// Steps returns the number of Act calls so far.
func (a *Agent) Steps() int { return a.steps }

// Updates returns the number of minibatch updates Train has made.
func (a *Agent) Updates() int { return a.updates }

// Transitions returns the number of transitions in the replay buffer.
func (a *Agent) Transitions() int { return a.buf.len() }

// Act returns an ε-greedy action for training: with probability Epsilon()
// a uniformly random action, otherwise Greedy(state). It draws from the
// agent's generator and advances the ε schedule. It panics on a state of
// the wrong width or with a non-finite feature.
func (a *Agent) Act(state []float64) int {
	a.checkState("Act state", state)
	eps := a.Epsilon()
	a.steps++
	if a.rng.Float64() < eps {
		return a.rng.IntN(a.actions)
	}
	return a.Greedy(state)
}

// Greedy returns argmax_a Q(state, a) under the online network, the lowest
// index on ties. It uses no randomness and does not advance ε.
func (a *Agent) Greedy(state []float64) int {
	return argmax(a.q(state))
}

// q returns the online network's Q-values for state in scratch space.
func (a *Agent) q(state []float64) []float64 {
	if len(state) != a.inputs {
		panic(fmt.Sprintf("ddqn: state has %d features, agent takes %d", len(state), a.inputs))
	}
	return a.online.forward(normalize(a.x, state, a.mean, a.std), a.trAct)
}

// Q returns the online network's Q-values for state, written to out if it
// has room. It panics on a state of the wrong width.
func (a *Agent) Q(state []float64, out []float64) []float64 {
	q := a.q(state)
	if cap(out) < len(q) {
		out = make([]float64, len(q))
	}
	out = out[:len(q)]
	copy(out, q)
	return out
}

// argmax returns the index of the largest value, the lowest on ties.
func argmax(q []float64) int {
	best := 0
	for i := 1; i < len(q); i++ {
		if q[i] > q[best] {
			best = i
		}
	}
	return best
}

// Observe stores the transition (s, action, reward, next, done) in the
// replay buffer, overwriting the oldest once it holds Config.Replay. When
// done, next is not used and may be nil. Observe panics on states of the
// wrong width, non-finite values or an action out of range: those are bugs
// in the caller.
func (a *Agent) Observe(s []float64, action int, reward float64, next []float64, done bool) {
	a.checkState("Observe state", s)
	if done && next == nil {
		next = make([]float64, a.inputs)
	}
	a.checkState("Observe next state", next)
	if action < 0 || action >= a.actions {
		panic(fmt.Sprintf("ddqn: Observe: action %d of %d", action, a.actions))
	}
	if math.IsNaN(reward) || math.IsInf(reward, 0) {
		panic(fmt.Sprintf("ddqn: Observe: reward %v", reward))
	}
	a.buf.add(s, action, reward, next, done)
}

// huber returns the Huber loss of residual d with threshold kappa and its
// derivative:
//
//	h(d) = d²/2             if |d| ≤ κ      h'(d) = d
//	h(d) = κ(|d| − κ/2)     otherwise        h'(d) = κ·sign(d)
func huber(d, kappa float64) (loss, grad float64) {
	ad := math.Abs(d)
	if ad <= kappa {
		return float64(0.5 * d * d), d
	}
	return float64(kappa * (ad - float64(0.5*kappa))), math.Copysign(kappa, d)
}

// sampleGrad adds to g the gradient of h(Q(x)[action] − y)·w with respect
// to net's parameters and returns the unweighted loss h(Q(x)[action] − y).
func sampleGrad(net *Net, x []float64, action int, y, kappa, w float64, g *Net, tr *trace, dq []float64) float64 {
	q := net.forward(x, tr)
	loss, dl := huber(q[action]-y, kappa)
	clear(dq)
	dq[action] = dl * w
	net.backward(tr, dq, g)
	return loss
}

// Train makes one double-DQN update from a minibatch of Config.BatchSize
// transitions drawn uniformly, with replacement, from the replay buffer,
// and returns the minibatch's mean Huber loss before the update. It does
// nothing and returns ok = false while the buffer holds fewer than
// BatchSize transitions.
//
// For each transition (s, a, r, s', done) the target is
//
//	y = r + γ·(1−done)·Q_target(s', argmax_a' Q_online(s', a'))
//
// (the online network chooses the next action, the target network values
// it). The loss is the mean of h(Q_online(s, a) − y) with h the Huber
// function; its gradient, clipped to global norm Config.GradClip, takes one
// Adam step on the online network. Every Config.TargetEvery updates the
// online network is copied to the target network.
func (a *Agent) Train() (loss float64, ok bool) {
	n := a.buf.len()
	if n < a.cfg.BatchSize {
		return 0, false
	}
	a.grad.zero()
	w := 1 / float64(a.cfg.BatchSize)
	for range a.cfg.BatchSize {
		k := a.rng.IntN(n)
		y := a.buf.r[k]
		if !a.buf.done[k] && a.cfg.Gamma != 0 {
			x2 := normalize(a.x2, a.buf.nextState(k), a.mean, a.std)
			best := argmax(a.online.forward(x2, a.tr))
			y += float64(a.cfg.Gamma * a.target.forward(x2, a.tr)[best])
		}
		x := normalize(a.x, a.buf.state(k), a.mean, a.std)
		loss += sampleGrad(a.online, x, a.buf.a[k], y, a.cfg.Huber, w, a.grad, a.tr, a.dq)
	}
	loss *= w
	if a.cfg.GradClip > 0 {
		if norm := a.grad.norm(); norm > a.cfg.GradClip {
			a.grad.scale(a.cfg.GradClip / norm)
		}
	}
	a.opt.step(a.online, a.grad)
	a.updates++
	if a.updates%a.cfg.TargetEvery == 0 {
		a.target.copyFrom(a.online)
	}
	return loss, true
}
