// Package ddqn is a small, exact and reproducible double deep Q-network
// (DDQN) learner in pure Go, for the round-by-round choices of Q-S
// speculative decoding (paper 004, Sec. IV-B/C): at each round the device
// picks an action, a pair (draft length L, lattice resolution ℓ) from a
// table, from a state of prefix-confidence features and the uplink rate,
// and is rewarded with the tokens gained per unit of round time (eq. 13).
// The package knows nothing of language models: the simulator supplies
// states and rewards, the device consults the trained Policy.
//
// # Q-learning with two networks
//
// A Q-network maps a state s to one value Q(s, a) per action: the expected
// discounted return of taking a in s and acting greedily afterwards. Net is
// a fully connected network, inputs → hidden layers (ReLU) → one linear
// output per action, initialised He-uniform from a seeded generator.
//
// The Agent keeps two copies. The online network acts and learns; the
// target network, a copy refreshed every Config.TargetEvery updates, values
// the bootstrap. For a stored transition (s, a, r, s', done) the target is
//
//	a* = argmax_a' Q_online(s', a')
//	y  = r + γ·(1−done)·Q_target(s', a*)
//
// Plain DQN takes max_a' Q_target(s', a'), which picks and values the next
// action with the same noisy estimates and so overestimates; selecting with
// the online network and evaluating with the target network (van Hasselt,
// Guez and Silver, AAAI 2016, the paper's [15]) removes most of that bias.
//
// # Loss and update
//
// Train draws Config.BatchSize transitions uniformly, with replacement,
// from the replay buffer (the last Config.Replay transitions Observe
// stored) and minimises the mean Huber loss of the residuals
// d = Q_online(s, a) − y, with y held fixed:
//
//	h(d) = d²/2            if |d| ≤ δ
//	h(d) = δ·(|d| − δ/2)   otherwise
//
// which is quadratic near zero and grows only linearly for the large
// residuals of early training. The gradient, by backpropagation through the
// taken action's output only, is scaled down to global L2 norm
// Config.GradClip if larger, and one Adam step (β₁ = 0.9, β₂ = 0.999,
// ε = 1e-8) updates the online network. Act explores ε-greedily, ε falling
// linearly from EpsStart to EpsEnd over EpsDecaySteps calls; Greedy never
// explores.
//
// # Defaults
//
//	Hidden         {64, 64}   two ReLU layers
//	Gamma          0.9        discount
//	LearningRate   1e-3       Adam step size
//	BatchSize      32         transitions per update
//	Replay         10000      replay capacity
//	TargetEvery    200        updates between target copies
//	EpsStart/End   1.0 → 0.05 exploration
//	EpsDecaySteps  2000       Act calls of linear decay
//	Huber          1          loss threshold δ (+Inf: squared error)
//	GradClip       10         global-norm clip (0: none)
//
// # Normalisation
//
// Raw features differ in scale by orders of magnitude (confidences in
// [0, 1], rates in bit/s). Agent.SetNormalization sets a per-feature mean
// and standard deviation; the network then sees (x − mean)/std everywhere
// (Act, Greedy, Q, Train), and the pair is saved with the model so that the
// deployed Policy takes the same raw features.
//
// # Determinism
//
// Everything random comes from the agent's own PCG generator, seeded with
// (Config.Seed, "ddqn"): the initial weights, ε-greedy draws and minibatch
// indices. Numeric code iterates over slices only (no maps), starts no
// goroutines and reads no clock, and every product that feeds a sum is
// rounded explicitly (float64(x*y)) so that no compiler fuses it into an
// FMA. The same seed and the same sequence of calls therefore give
// bit-identical weights, actions and model files, on every GOARCH.
//
// # Model file
//
// Save writes one JSON object and a newline (FormatVersion 1):
//
//	{"format":"hlm-ddqn", "version":1,
//	 "inputs":I, "actions":A, "hidden":[H1,…],   layer widths
//	 "weights":[[…],…],   per layer, Sizes[l+1]×Sizes[l] row-major
//	 "biases":[[…],…],    per layer, Sizes[l+1]
//	 "mean":[…], "std":[…],                      optional, I each
//	 "metadata":{"key":"value",…}}               optional, sorted keys
//
// Numbers are written in the shortest form that reads back to the same
// float64, so a saved model reloads bit for bit. The metadata is free-form;
// hlm stores the action table there. Load accepts only this layout, checks
// every size against MaxWidth, MaxHidden, MaxParams, MaxMetadataEntries and
// MaxMetadataBytes and every number for finiteness, reads at most
// MaxModelBytes, and wraps ErrFormat or ErrLimit on failure; it is fuzzed.
// Only the online network is saved: a Policy can act but not resume
// training.
//
// # Example
//
//	cfg := ddqn.DefaultConfig()
//	cfg.Seed = 1
//	agent, err := ddqn.NewAgent(len(features), len(actionTable), cfg)
//	...
//	agent.SetNormalization(mean, std)
//	agent.SetMetadata("actions", tableJSON)
//	for each round of each episode {
//		a := agent.Act(s)                  // ε-greedy
//		r, next, done := env.Step(actionTable[a])
//		agent.Observe(s, a, r, next, done)
//		agent.Train()                      // no-op until BatchSize transitions
//		s = next
//	}
//	agent.Save(w)
//
//	// On the device:
//	policy, err := ddqn.Load(r)
//	a := policy.Greedy(s)
package ddqn
