package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/hlmproject/hlm/ddqn"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/sim"
	"github.com/hlmproject/hlm/tensor"
)

func init() {
	register("train-ddqn", "train the Q-S draft-length/quantization policy (double DQN) in the simulator", runTrain)
}

// trainHelp is the --help text of hlm train.
const trainHelp = `
Train the adaptive policy of the Q-S paper (Sec. IV): a double deep
Q-network that picks, every round, the draft length L and the lattice
resolution ℓ from the device's state (Q-S Sec. IV-B: the SLM's confidence
in the latest generated tokens, their mean, the round's uplink rate, tokens
so far). Each round's reward is Q-S eq. 13: the expected number of tokens
the round commits given its drafts (g(x) of eq. 14) per second of the
round. Training runs in the simulator over prompts (by default TinyStories'
sample from $HLM_SHARED, else the stories built into hlm; --dataset,
--dataset-path or --prompts for others; a dataset's are held out from
hlm eval's with the same --seed where it has room, as in hlm calibrate),
cycling
--temperatures if given; the channel and timing are whatever --set says
(for example the Q-S Markov preset and the paper's timings: --set
channel_preset=qs --set tau_slm=0.005 --set tau_llm=0.032). Use the result
with --set draft=ddqn --set ddqn_model=policy.json in hlm sim, hlm edge,
hlm eval.`

func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	p := hybrid.DefaultParams()
	p.Method = hybrid.QS
	fs := newFlags("train-ddqn", "--out policy.json [--llm SPEC] [--slm SPEC] [--episodes N] [--dataset NAME | --prompts FILE] [--set key=value ...]", trainHelp, stdout)
	mf := addModelFlags(fs)
	pf := addPromptFlags(fs)
	method := fs.String("method", hybrid.QS, "q-s or s-q")
	out := fs.String("out", "", "policy file to write (required)")
	episodes := fs.Int("episodes", 200, "training episodes (one prompt's generation each)")
	n := fs.Int("n", 40, "distinct training prompts (a seeded sample of the dataset held out from hlm eval's; 0 or more than it has: all)")
	maxTokens := fs.Int("max-tokens", defaultMaxTokens, "tokens per episode")
	seed := fs.Uint64("seed", defaultSeed, "random seed (agent and episodes)")
	threads := threadsFlag(fs, "worker threads (0: all cores)")
	temps := fs.String("temperatures", "", "comma-separated sampling temperatures cycled over the episodes (default: the temperature --set gives)")
	var sets setFlags
	fs.Var(&sets, "set", "parameter override key=value (repeatable; see hlm sim --help)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usageError{errors.New("--out is required")}
	}
	if err := checkOutFile(*out); err != nil {
		return usageError{err}
	}
	if err := setsAgree(fs, sets, map[string]string{"method": "method", "max-tokens": "max_tokens", "seed": "seed"}); err != nil {
		return err
	}
	p.Method, p.MaxTokens, p.Seed = *method, *maxTokens, *seed
	if err := p.SetAll(sets); err != nil {
		return usageError{err}
	}
	if m, err := hybrid.MethodByName(p.Method); err != nil {
		return usageError{err}
	} else if !m.Controlled {
		return usageError{fmt.Errorf("method %s: train-ddqn trains the (L, ℓ) policy of a method that draft=ddqn controls (%s)", p.Method, strings.Join(controlledMethods(), ", "))}
	}
	temperatures, err := parseFloats(*temps)
	if err != nil {
		return usageError{fmt.Errorf("--temperatures: %w", err)}
	}
	tensor.SetThreads(*threads)
	prompts, err := pf.heldOut("train-ddqn", *n, *seed, stderr)
	if err != nil {
		return err
	}
	ms, err := mf.open(ctx)
	if err != nil {
		return err
	}
	cfg := ddqn.DefaultConfig()
	cfg.Seed = *seed
	var window []float64
	status := statusLine(stderr)
	agent, log, err := sim.TrainDDQN(ctx, ms, sim.TrainConfig{Params: p, Prompts: prompts, Episodes: *episodes, Agent: cfg, Temperatures: temperatures,
		Progress: func(ep int, t, eps float64) {
			window = append(window, t)
			if len(window) > 20 {
				window = window[1:]
			}
			status(ep, *episodes, fmt.Sprintf("episode %d/%d: %.2f tokens/s (mean of last %d: %.2f), ε %.2f", ep, *episodes, t, len(window), meanOf(window), eps))
		}})
	interrupted := err != nil && agent != nil && ctx.Err() != nil && len(log.Episodes) > 0
	if err != nil && !interrupted {
		return err
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	if err := agent.Save(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	tps := make([]float64, len(log.Episodes))
	for i, e := range log.Episodes {
		tps[i] = e.Throughput
	}
	k := min(20, len(tps))
	first, last := meanOf(tps[:k]), meanOf(tps[len(tps)-k:])
	fmt.Fprintf(stdout, "trained %d episodes on LLM %s, SLM %s: throughput %.2f tokens/s over the first %d, %.2f over the last %d; wrote %s\n", len(tps), ms.LLM.Name(), draftName(ms), first, k, last, k, *out)
	if interrupted {
		return fmt.Errorf("interrupted after %d of %d episodes: %s holds the policy they trained", len(tps), *episodes, *out)
	}
	return nil
}

func meanOf(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(max(1, len(xs)))
}

// parseFloats reads a comma-separated list of numbers ("": none).
func parseFloats(s string) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

// controlledMethods are the methods whose (L, ℓ) draft=ddqn chooses.
func controlledMethods() []string {
	var out []string
	for _, name := range hybrid.Methods {
		if m, _ := hybrid.MethodByName(name); m != nil && m.Controlled {
			out = append(out, name)
		}
	}
	return out
}
