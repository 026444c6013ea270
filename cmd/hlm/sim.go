package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/sim"
	"github.com/hlmproject/hlm/tensor"
)

func init() {
	register("sim", "simulate a device–server pair over a wireless link on a virtual clock", runSim)
}

// setFlags collects repeated --set key=value flags.
type setFlags []string

func (s *setFlags) String() string     { return strings.Join(*s, " ") }
func (s *setFlags) Set(v string) error { *s = append(*s, v); return nil }

func keysHelp() string {
	var b strings.Builder
	for _, k := range hybrid.KeyHelp() {
		fmt.Fprintf(&b, "  %-16s %s\n", k.Name, k.Help)
		switch {
		case k.Default == "default": // u_th, sample_from: the method decides
			fmt.Fprintf(&b, "  %-16s default: the method's own; %s\n", "", k.Accepts)
		case k.Accepts != "" && k.Default != "":
			fmt.Fprintf(&b, "  %-16s default %s; %s\n", "", k.Default, k.Accepts)
		case k.Accepts != "":
			fmt.Fprintf(&b, "  %-16s %s\n", "", k.Accepts)
		case k.Default != "":
			fmt.Fprintf(&b, "  %-16s default %s\n", "", k.Default)
		}
	}
	return b.String()
}

func runSim(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	p := hybrid.DefaultParams()
	fs := newFlags("sim", "[--method NAME] [--llm SPEC] [--slm SPEC] [--prompt TEXT | --prompts FILE] [--set key=value ...] [--json] [--ui ADDR]", `
Run one method of hybrid inference: the SLM drafts on the "device", the LLM
verifies on the "server", and a link model carries the uplink. Time is
virtual: per round L·tau_slm + uplink time + tau_llm + downlink time (Q-S
eq. 9). The same command and seed give the same tokens and figures;
only the wall-clock fields (wall_seconds, wall_throughput_tps) differ
from run to run. The text goes to stdout and the summary to stderr (as
with hlm edge and generate); --json prints the summary on stdout instead.

Methods (docs/design.md, Methods), with the method-specific keys each reads:
`+hybrid.MethodHelp(80)+`
The defaults are one setting for every method: CU-HLM's link and codec
(10 MHz, Rayleigh at 10 dB mean SNR, 8-bit probabilities with their token
ids), τ_SLM 25.6 ms and τ_LLM 104.6 ms, u_th by method (0.8 for CU-HLM,
0.431 for U-HLM and U+I), 64 new tokens. A paper's own setting is what
hlm eval paper NAME runs; U-HLM's, for instance, is --set
channel_preset=uhlm --set prob_bits=32 --set index_bits=false (1 MHz, full
distributions at 32 bits).

Parameters (--set key=value, repeatable):
`+keysHelp(), stdout)
	mf := addModelFlags(fs)
	threads := threadsFlag(fs, "worker threads for the models (0: all cores)")
	rf := addRunFlags(fs, p, "parameter override key=value (repeatable; see the list above)")
	uf := addUIFlags(fs, true)
	if err := parse(fs, args); err != nil {
		return err
	}
	p, err := rf.params(p)
	if err != nil {
		return err
	}
	for _, u := range unusedSets("--set", rf.sets, p) {
		fmt.Fprintf(stderr, "warning: %s\n", u)
	}
	cfg := sim.Config{LLM: *mf.llm, SLM: *mf.slm, Tokenizer: *mf.tok, Params: p}
	var llmName, slmName string // the models that ran, for the summary
	loaded := loadingNotice("the models (LLM " + *mf.llm + ")")
	defer loaded()
	cfg.Opened = func(ms *sim.Models) {
		loaded()
		llmName = ms.LLM.Name()
		if ms.SLM != nil && p.Family() != hybrid.FamilyLLM {
			slmName = ms.SLM.Name()
		}
	}
	if cfg.Prompts, err = rf.promptTexts(); err != nil {
		return err
	}
	trace, closeTrace, err := rf.openTrace()
	if err != nil {
		return err
	}
	defer closeTrace()
	cfg.Trace = trace
	if len(cfg.Prompts) > 1 && !*rf.asJSON {
		status := statusLine(stderr)
		cfg.Progress = func(done, total int) { status(done, total, fmt.Sprintf("prompt %d/%d", done, total)) }
	}
	tensor.SetThreads(*threads)
	view, err := uf.start("hlm sim", stderr)
	if err != nil {
		return err
	}
	var sum hybrid.Summary
	if view == nil {
		sum, err = sim.Run(ctx, cfg)
	} else {
		sum, err = simWatched(ctx, cfg, view)
	}
	if err != nil {
		return err
	}
	if view != nil {
		defer view.keep(ctx, stderr)
	}
	if *rf.asJSON {
		e := json.NewEncoder(stdout)
		return e.Encode(struct {
			hybrid.Summary
			LLM string `json:"llm"`
			SLM string `json:"slm,omitempty"`
		}{sum, llmName, slmName})
	}
	// The text on stdout, the summary on stderr, as hlm edge and generate.
	fmt.Fprintf(stdout, "%s\n", sum.Text)
	r := sum.Result
	r.Text = ""
	printSummary(stderr, &r)
	if slmName != "" {
		fmt.Fprintf(stderr, "  models: LLM %s, SLM %s\n", llmName, slmName)
	} else {
		fmt.Fprintf(stderr, "  model: LLM %s\n", llmName)
	}
	return nil
}

// simWatched is sim.Run with each prompt's generation streamed to the live
// view.
func simWatched(ctx context.Context, cfg sim.Config, view *ui) (hybrid.Summary, error) {
	if err := cfg.Params.Validate(); err != nil {
		return hybrid.Summary{}, err
	}
	ms, err := interruptible(ctx, "the models", func() (*sim.Models, error) { return sim.Open(cfg.LLM, cfg.SLM, cfg.Tokenizer) })
	if err != nil {
		return hybrid.Summary{}, err
	}
	if cfg.Opened != nil {
		cfg.Opened(ms)
	}
	var runs []hybrid.Result
	for i, prompt := range cfg.Prompts {
		one := cfg
		one.Prompts, one.Progress = []string{prompt}, nil
		one.Params.Seed += uint64(i)
		base := cfg.Trace
		if base != nil && len(cfg.Prompts) > 1 { // say whose each line is, as sim.RunModels does
			base = hybrid.RunTrace(base, i+1)
		}
		run, trace := view.begin(ctx, one.Params, prompt, i, len(cfg.Prompts), ms.Tok, base)
		one.Trace = trace
		s, err := sim.RunModels(ctx, ms, one)
		run.End(s.Result, err)
		if err != nil {
			return hybrid.Summary{}, fmt.Errorf("prompt %d: %w", i, err)
		}
		runs = append(runs, s.Result)
		if cfg.Progress != nil {
			cfg.Progress(i+1, len(cfg.Prompts))
		}
	}
	return hybrid.Aggregate(runs), nil
}

func printSummary(w io.Writer, r *hybrid.Result) {
	f := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprintf("%.4f", *p)
	}
	// The deviation is often ~1e-16 (a lossless method, up to rounding):
	// significant digits show it.
	g := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprintf("%.3g", *p)
	}
	if r.Text != "" {
		fmt.Fprintf(w, "%s\n", r.Text)
	}
	fmt.Fprintln(w) // a blank line after the text (printed here or streamed before)
	fmt.Fprintf(w, "method %s, seed %d: %d tokens (%s)\n", r.Method, r.Seed, len(r.Tokens), r.Stop)
	fmt.Fprintf(w, "  rounds %d, uploads %d (TR %.3f), skipped %d (TSR %s)\n", r.Rounds, r.Uploads, r.TransmissionRate, r.Skipped, f(r.TrueSkipRate))
	if t := r.Tree; t != nil && t.Trees > 0 {
		// A tree's nodes are all sent, and the walk reaches a few: the
		// rejection rate counts the candidates it checked.
		n := float64(t.Trees)
		fmt.Fprintf(w, "  drafts sent %d (tree nodes), accepted %d, resampled %d (rejection rate %s of those checked), bonus %d, accepted/verified round %.2f\n", r.Verified, r.Accepted, r.Resampled, f(r.RejectionRate), r.Bonus, r.AcceptedPerRound)
		fmt.Fprintf(w, "  trees: %.1f nodes/round (%d repeats, never acceptable), depth %.2f, SLM passes %.2f/round; tree bits: payload %d, ids %d, parents %d\n",
			float64(t.Nodes)/n, t.Dups, float64(t.Depth)/n, float64(t.Internal)/n, t.PayloadBits, t.IDBits, t.ParentBits)
	} else {
		// The rate is over the drafts examined (accepted + resampled); the
		// ones after a rejection are sent but not examined. Accepted drafts
		// are per verified round (an upload): a skipped token's round has
		// none to verify (eval's accepted_per_round).
		fmt.Fprintf(w, "  drafts verified %d, accepted %d, resampled %d (rejection rate %s of the %d examined), bonus %d, accepted/verified round %.2f\n", r.Verified, r.Accepted, r.Resampled, f(r.RejectionRate), r.Accepted+r.Resampled, r.Bonus, r.AcceptedPerRound)
	}
	fmt.Fprintf(w, "  uplink %d bits (%.1f bits/token, compression %s), downlink %d bits; frames %d B up, %d B down\n", r.UplinkBits, r.BitsPerToken, f(r.CompressionRatio), r.DownlinkBits, r.UplinkBytes, r.DownlinkBytes)
	fmt.Fprintf(w, "  virtual time %.3f s: %.2f tokens/s; energy %.1f; mean deviation from the LLM %s; wall %.2f s\n", r.VirtualSeconds, r.ThroughputTPS, r.Energy, g(r.MeanDeviation), r.WallSeconds)
	fmt.Fprintf(w, "  virtual time spent: SLM %.3f s, uplink %.3f s, LLM %.3f s, downlink %.3f s\n", r.SLMSeconds, r.UplinkSeconds, r.LLMSeconds, r.DownlinkSeconds)
	if r.Probed > 0 {
		fmt.Fprintf(w, "  SLM passes: %d drafts and %d budget tests (a batch's next draft computed to learn that its bits do not fit budget_bits, not sent)\n", r.Drafted, r.Probed)
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
}
