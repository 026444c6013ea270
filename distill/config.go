package distill

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/hlmproject/hlm/train"
)

// Config is one distillation run. DefaultConfig fills everything but the
// teacher and the output; Validate checks it before any model is loaded.
type Config struct {
	Teacher   string `json:"teacher"`             // teacher model spec
	Tokenizer string `json:"tokenizer,omitempty"` // teacher tokenizer override
	Out       string `json:"out"`                 // the draft GGUF to write
	OutType   string `json:"out_type"`            // f32 or f16

	// Student shape (0: the teacher's value, except Layers: 1). Ignored in
	// exit-head mode.
	Layers  int `json:"layers"`
	Dim     int `json:"dim"`
	Hidden  int `json:"hidden"`
	Heads   int `json:"heads"`
	KVHeads int `json:"kv_heads"`
	// Init is "random", "svd" (random layers; the embedding from the
	// teacher's, projected onto its top Dim singular directions), "exit=N"
	// (the teacher's embedding, first N layers, final norm and classifier,
	// all trained), or a model spec to start from.
	Init string `json:"init"`
	// ExitHead > 0 is exit-head mode (self-speculation, LayerSkip-style):
	// the teacher's embedding and first ExitHead layers stay frozen and only
	// a new final norm and classifier are trained (initialised from the
	// teacher's), plus one new layer with ExtraLayer.
	ExitHead   int  `json:"exit_head,omitempty"`
	ExtraLayer bool `json:"extra_layer,omitempty"`

	// SampleTemps are the temperatures teacher samples are drawn at, one per
	// sequence in turn (the soft labels are always the teacher's
	// distribution at temperature 1); nil means [1]. Hotter samples cover
	// more unusual contexts (names, rare words, real prompts).
	SampleTemps []float64 `json:"sample_temps,omitempty"`
	Data        []string  `json:"data,omitempty"` // text files (TinyStories format)
	TextFrac    float64   `json:"text_frac"`      // share of each batch from Data
	OnPolicy    float64   `json:"on_policy"`      // share sampled from the student, scored by the teacher

	Loss  train.Loss  `json:"loss"`
	Steps int         `json:"steps"`
	Batch int         `json:"batch"` // sequences per step
	Seq   int         `json:"seq"`   // tokens per sequence
	Opt   train.AdamW `json:"adamw"`
	Seed  uint64      `json:"seed"`

	// Not part of the run's identity (they change no trained bit).
	Threads         int  `json:"-"`
	EvalEvery       int  `json:"-"` // steps between held-out evaluations
	Heldout         int  `json:"-"` // held-out sequences
	CheckpointEvery int  `json:"-"` // steps between checkpoints
	Resume          bool `json:"-"`
	// Overwrite lets a fresh run (no Resume) replace the checkpoint an
	// earlier run left at Out's DRAFT.ckpt; without it that is refused.
	Overwrite bool `json:"-"`
}

// DefaultConfig is a sensible run for the small models here: teacher
// samples only, forward KL, 16 sequences of 256 tokens per step.
func DefaultConfig() Config {
	opt := train.DefaultAdamW()
	opt.Steps = 600
	return Config{
		OutType: "f32", Init: "random", Loss: train.FKL,
		Steps: opt.Steps, Batch: 16, Seq: 256, Opt: opt, Seed: 1,
		EvalEvery: 25, Heldout: 16, CheckpointEvery: 100,
	}
}

// initExit parses "exit=N".
func (c Config) initExit() (int, bool) {
	v, ok := strings.CutPrefix(c.Init, "exit=")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return -1, true
	}
	return n, true
}

// Validate reports impossible settings.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Teacher == "" {
		bad("a teacher model is required (--teacher SPEC)")
	}
	if c.Out == "" {
		bad("an output file is required (--out DRAFT.gguf)")
	}
	if c.OutType != "f32" && c.OutType != "f16" {
		bad("output type %q: want f32 or f16", c.OutType)
	}
	for _, v := range []struct {
		name string
		n    int
	}{{"layers", c.Layers}, {"dim", c.Dim}, {"hidden", c.Hidden}, {"heads", c.Heads}, {"kv-heads", c.KVHeads}} {
		if v.n < 0 {
			bad("--%s %d: want ≥ 0 (0: the default)", v.name, v.n)
		}
	}
	if n, ok := c.initExit(); ok && n <= 0 {
		bad("--init %q: want exit=N with N ≥ 1", c.Init)
	}
	if c.Init == "" {
		bad("--init: want random, svd, exit=N or a model spec")
	}
	if c.ExitHead < 0 {
		bad("--exit-head %d: want ≥ 0", c.ExitHead)
	}
	if c.ExitHead > 0 && c.Init != "random" {
		bad("--exit-head starts from the teacher's own layers; drop --init %s", c.Init)
	}
	if c.Resume && c.Overwrite {
		bad("--resume continues the checkpoint's run and --overwrite starts over in its place: give one")
	}
	if c.ExtraLayer && c.ExitHead == 0 {
		bad("--extra-layer needs --exit-head N")
	}
	if !(c.TextFrac >= 0 && c.TextFrac <= 1) || !(c.OnPolicy >= 0 && c.OnPolicy <= 1) || c.TextFrac+c.OnPolicy > 1 {
		bad("--text-frac %g and --on-policy %g: want shares in [0, 1] summing to at most 1", c.TextFrac, c.OnPolicy)
	}
	for _, t := range c.SampleTemps {
		if !(t > 0) || math.IsInf(t, 0) {
			bad("--sample-temps: temperature %g, want > 0", t)
		}
	}
	if c.TextFrac > 0 && len(c.Data) == 0 {
		bad("--text-frac %g needs --data FILE", c.TextFrac)
	}
	if c.Steps <= 0 || c.Batch <= 0 || c.Seq < 2 {
		bad("--steps %d, --batch %d, --seq %d: want steps ≥ 1, batch ≥ 1, seq ≥ 2", c.Steps, c.Batch, c.Seq)
	}
	if c.Batch*c.Seq > 1<<20 {
		bad("--batch × --seq = %d tokens per step: more than 2^20", c.Batch*c.Seq)
	}
	// With --steps out of range the schedule's own check would say so a
	// second time, in its words; its other checks wait for a valid --steps.
	if err := c.Opt.Validate(); err != nil && c.Steps > 0 {
		errs = append(errs, err)
	}
	if c.Opt.Steps != c.Steps {
		bad("the schedule's steps (%d) differ from --steps (%d)", c.Opt.Steps, c.Steps)
	}
	if c.EvalEvery <= 0 || c.Heldout <= 0 || c.CheckpointEvery <= 0 {
		bad("--eval-every %d, --heldout %d, --checkpoint-every %d: want ≥ 1", c.EvalEvery, c.Heldout, c.CheckpointEvery)
	}
	return errors.Join(errs...)
}
