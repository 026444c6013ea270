package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hlmproject/hlm/distill"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/train"
)

func init() {
	register("distill", "train a draft model on its target (knowledge distillation); writes a GGUF", runDistill)
}

func runDistill(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := distill.DefaultConfig()
	fs := newFlags("distill", "--out DRAFT.gguf [--teacher SPEC] [shape and training flags]", `
Train a small draft model on a teacher (the LLM it will draft for) by
knowledge distillation: the student learns the teacher's whole next-token
distribution at every position. By default the data is sampled from the
teacher at temperature 1 (unlimited and free); --data adds text. The loss is
chosen with --loss: fkl (forward KL, cross-entropy on the teacher's soft
labels), rkl (reverse KL), tvd (total variation: 1 − TV is exactly the
acceptance probability of speculative sampling, so it maximises acceptance
directly) or jsd (Jensen–Shannon).

Students:
  --init random            a fresh model of the shape --layers --dim --hidden
                           --heads --kv-heads (0 = the teacher's value; 1 layer)
  --init svd               like random, but the embedding starts from the
                           teacher's, projected onto its top --dim singular
                           directions (for a student narrower than the teacher)
  --init exit=N            start from the teacher's embedding and first N
                           layers, final norm and classifier, then train all
  --init SPEC              start from another model (same vocabulary)
  --exit-head N            self-speculation: keep the teacher's first N layers
                           frozen and train only a new final norm and
                           classifier (plus one layer with --extra-layer)

The run prints progress with the held-out acceptance estimate mean(1 − TV)
on teacher samples never trained on, writes DRAFT.gguf (with the teacher's
tokenizer), a checkpoint DRAFT.ckpt, and the learning curve DRAFT.curve.csv
and DRAFT.curve.png. Ctrl-C stops after the current step with a usable
checkpoint and draft; --resume continues bit for bit. The same flags and
seed write the same bytes.`, stdout)
	f := addDistillFlags(fs, &c)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := f.apply(&c); err != nil {
		return err
	}
	if c.Out != "" {
		if err := checkOutFile(c.Out); err != nil {
			return usageError{err}
		}
	}
	bar := newTrainBar(stderr)
	res, err := distill.Run(ctx, c, bar.update)
	bar.done()
	if err != nil {
		return err
	}
	if *f.asJSON {
		e := json.NewEncoder(stdout)
		e.SetIndent("", "  ")
		return e.Encode(res)
	}
	printDistill(stdout, c, res)
	return nil
}

// distillFlags holds the flags of hlm distill that are not fields of
// distill.Config as they are typed.
type distillFlags struct {
	temps, loss *string
	data        listFlag
	minLR       *float64
	asJSON      *bool
}

// addDistillFlags defines hlm distill's flags on fs, the config's fields
// bound to c.
func addDistillFlags(fs *flag.FlagSet, c *distill.Config) *distillFlags {
	f := &distillFlags{}
	fs.StringVar(&c.Teacher, "teacher", builtin.DefaultLLM, "teacher (target) model spec")
	fs.StringVar(&c.Tokenizer, "tokenizer", "", "teacher tokenizer file, when not found with the model")
	fs.StringVar(&c.Out, "out", "", "draft GGUF to write (required)")
	fs.StringVar(&c.OutType, "type", c.OutType, "draft storage: f32 or f16")
	fs.IntVar(&c.Layers, "layers", 0, "student layers (0: 1, or N with --init exit=N)")
	fs.IntVar(&c.Dim, "dim", 0, "student width (0: the teacher's)")
	fs.IntVar(&c.Hidden, "hidden", 0, "student feed-forward width (0: the teacher's)")
	fs.IntVar(&c.Heads, "heads", 0, "student attention heads (0: the teacher's)")
	fs.IntVar(&c.KVHeads, "kv-heads", 0, "student key/value heads (0: the teacher's)")
	fs.StringVar(&c.Init, "init", c.Init, "student initialisation: random, svd, exit=N or a model spec")
	fs.IntVar(&c.ExitHead, "exit-head", 0, "exit-head mode: freeze the teacher's first N layers, train a new head")
	fs.BoolVar(&c.ExtraLayer, "extra-layer", false, "exit-head mode: also train one new layer above the frozen ones")
	f.temps = fs.String("sample-temps", "1", "temperatures of the teacher samples, one per sequence in turn (comma-separated); the labels stay at temperature 1")
	fs.Var(&f.data, "data", "training text file (TinyStories format; repeatable)")
	c.TextFrac = -1
	fs.Var(unsetFloat{&c.TextFrac}, "text-frac", "`share` of each batch taken from --data (default: 1 with --data, else 0)")
	fs.Float64Var(&c.OnPolicy, "on-policy", 0, "share of each batch sampled from the student and scored by the teacher")
	f.loss = fs.String("loss", c.Loss.String(), "loss on the teacher's distribution: fkl, rkl, tvd or jsd")
	fs.IntVar(&c.Steps, "steps", c.Steps, "optimizer steps")
	fs.IntVar(&c.Batch, "batch", c.Batch, "sequences per step")
	fs.IntVar(&c.Seq, "seq", c.Seq, "tokens per sequence")
	fs.Float64Var(&c.Opt.LR, "lr", c.Opt.LR, "peak learning rate (AdamW)")
	f.minLR = new(float64)
	*f.minLR = -1
	fs.Var(unsetFloat{f.minLR}, "min-lr", "final learning rate `LR` of the cosine decay (default: lr/10)")
	fs.IntVar(&c.Opt.Warmup, "warmup", c.Opt.Warmup, "linear warmup steps")
	fs.Float64Var(&c.Opt.WeightDecay, "weight-decay", c.Opt.WeightDecay, "AdamW weight decay (matrices only)")
	fs.Float64Var(&c.Opt.Clip, "clip", c.Opt.Clip, "clip the gradient's global norm to this (0: off)")
	fs.Uint64Var(&c.Seed, "seed", defaultSeed, "random seed (initialisation and data)")
	threadsVar(fs, &c.Threads, "worker threads (0: all cores; results do not depend on it)")
	fs.IntVar(&c.EvalEvery, "eval-every", c.EvalEvery, "steps between held-out evaluations")
	fs.IntVar(&c.Heldout, "heldout", c.Heldout, "held-out teacher samples (sequences of --seq tokens)")
	fs.IntVar(&c.CheckpointEvery, "checkpoint-every", c.CheckpointEvery, "steps between checkpoints")
	fs.BoolVar(&c.Resume, "resume", false, "continue from DRAFT.ckpt (same flags)")
	fs.BoolVar(&c.Overwrite, "overwrite", false, "start over where an earlier run left DRAFT.ckpt, replacing it (without --resume or --overwrite that is refused)")
	f.asJSON = fs.Bool("json", false, "print the result as JSON on stdout")
	return f
}

// apply completes c from the flags that need parsing or depend on others.
func (f *distillFlags) apply(c *distill.Config) error {
	c.Data = f.data
	for _, s := range strings.Split(*f.temps, ",") {
		t, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return usageError{fmt.Errorf("--sample-temps %q: %v", *f.temps, err)}
		}
		c.SampleTemps = append(c.SampleTemps, t)
	}
	if len(c.SampleTemps) == 1 && c.SampleTemps[0] == 1 {
		c.SampleTemps = nil
	}
	if c.TextFrac < 0 {
		c.TextFrac = 0
		if len(f.data) > 0 {
			c.TextFrac = 1 - c.OnPolicy
		}
	}
	var err error
	if c.Loss, err = train.ParseLoss(*f.loss); err != nil {
		return usageError{err}
	}
	c.Opt.Steps = c.Steps
	c.Opt.MinLR = c.Opt.LR / 10
	if *f.minLR >= 0 {
		c.Opt.MinLR = *f.minLR
	}
	if err := c.Validate(); err != nil {
		return usageError{err}
	}
	return nil
}

// printDistill prints the result of a run as text.
func printDistill(stdout io.Writer, c distill.Config, res *distill.Result) {
	if res.Interrupted {
		fmt.Fprintf(stdout, "interrupted after step %d of %d; checkpoint %s and draft %s are saved: rerun with --resume to continue\n", res.Steps, c.Steps, res.Checkpoint, res.Out)
	}
	fmt.Fprintf(stdout, "wrote %s (%d parameters, %d trained) after %d steps, %.2fM tokens, %s\n", res.Out, res.Params, res.Trainable, res.Steps, float64(res.Tokens)/1e6, time.Duration(res.Seconds*float64(time.Second)).Round(time.Second))
	fmt.Fprintf(stdout, "  held-out acceptance mean(1 − TV) %.4f\n", res.HeldoutAccept)
	fmt.Fprintf(stdout, "  multiply-adds per token at position %d: student %d, teacher %d (ratio %.3f); at most %.3f at any position of the teacher's context (position %d)\n",
		c.Seq/2, res.StudentMACs, res.TeacherMACs, float64(res.StudentMACs)/float64(res.TeacherMACs), res.MaxMACsRatio, res.MaxMACsRatioPos)
	if res.TokensPerSec > 0 {
		fmt.Fprintf(stdout, "  %.0f training tokens/s; time: data %.0f s, forward %.0f s, backward %.0f s, optimizer %.1f s; step/(3×forward) %.2f\n",
			res.TokensPerSec, res.DataSeconds, res.ForwardSeconds, res.BackwardSeconds, res.OptSeconds, res.StepOverForward)
	}
	fmt.Fprintf(stdout, "  checkpoint %s, learning curve %s and %s\n", res.Checkpoint, res.CurveCSV, res.CurvePNG)
}

// trainBar draws training progress: a redrawn line on a terminal, a line
// per held-out evaluation otherwise.
type trainBar struct {
	w    io.Writer
	tty  bool
	drew bool
}

func newTrainBar(w io.Writer) *trainBar { return &trainBar{w: w, tty: isTerminal(w)} }

func (b *trainBar) update(p distill.Progress) {
	// A step without its own evaluation shows the latest one with its step,
	// so that a line does not pass an old estimate off as a new one.
	acc := "   -  "
	switch {
	case p.Evaluated:
		acc = fmt.Sprintf("%.4f", p.HeldoutAccept)
	case !math.IsNaN(p.HeldoutAccept):
		acc = fmt.Sprintf("%.4f (step %d)", p.HeldoutAccept, p.HeldoutStep)
	}
	line := fmt.Sprintf("step %d/%d  loss %.4f  accept(train) %.4f  accept(held-out) %s  %.0f tok/s  eta %s",
		p.Step, p.Steps, p.Point.Loss, p.Point.TrainAccept, acc, p.TokensPerSec, p.ETA.Round(time.Second))
	if p.Saved {
		line += "  [checkpoint]"
	}
	if b.tty {
		const width = 20
		n := width * p.Step / max(p.Steps, 1)
		fmt.Fprintf(b.w, "\r[%s%s] %s   ", strings.Repeat("#", n), strings.Repeat(".", width-n), line)
		b.drew = true
		return
	}
	if p.Evaluated || p.Saved || p.Step == p.Steps {
		fmt.Fprintln(b.w, line)
	}
}

func (b *trainBar) done() {
	if b.drew {
		fmt.Fprintln(b.w)
	}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// unsetFloat is a float flag whose default, a negative "not given", is
// described in its usage: the help shows no "(default -1)" beside it.
type unsetFloat struct{ p *float64 }

func (u unsetFloat) String() string {
	if u.p == nil || *u.p < 0 {
		return ""
	}
	return strconv.FormatFloat(*u.p, 'g', -1, 64)
}

func (u unsetFloat) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 {
		return errors.New("want a number ≥ 0")
	}
	*u.p = v
	return nil
}
