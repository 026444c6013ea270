// Package distill trains small draft models on their target (knowledge
// distillation for speculative decoding): the student learns the teacher's
// full next-token distribution on sequences sampled from the teacher at
// temperature 1 (free and unlimited), on text, or on the student's own
// samples scored by the teacher (on-policy), with a loss chosen among
// forward/reverse KL, total variation and Jensen–Shannon. Total variation
// targets the acceptance probability 1 − TV(x, y) of speculative sampling
// directly (DistillSpec, Zhou et al. 2024).
//
// Two kinds of draft: a separate student of any shape (random or started
// from the teacher's first layers), and an exit head (self-speculation,
// LayerSkip-style) that keeps the teacher's first N layers frozen and
// trains a new final norm and classifier on top, optionally with one more
// layer.
//
// A run is deterministic: the batch of step s depends only on (seed, s) and
// the student's parameters, so the same configuration writes the same bytes,
// and a run resumed from a checkpoint continues exactly as if it had never
// stopped. The output is a GGUF with the teacher's tokenizer.
package distill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/hlmproject/hlm/internal/atomicfile"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/tensor"
	"github.com/hlmproject/hlm/train"
)

// Point is one row of the learning curve.
type Point struct {
	Step          int     `json:"step"`
	Tokens        int64   `json:"tokens"`
	Seconds       float64 `json:"seconds"`
	LR            float64 `json:"lr"`
	Loss          float64 `json:"loss"`
	TrainAccept   float64 `json:"train_accept"`   // mean 1 − TV on the step's batch
	HeldoutAccept float64 `json:"heldout_accept"` // mean 1 − TV on the held-out set (NaN between evaluations)
	HeldoutLoss   float64 `json:"heldout_loss"`
	GradNorm      float64 `json:"grad_norm"`
}

// pointJSON is Point with the held-out fields nullable: JSON has no NaN,
// and most steps have no held-out evaluation.
type pointJSON struct {
	Step          int      `json:"step"`
	Tokens        int64    `json:"tokens"`
	Seconds       float64  `json:"seconds"`
	LR            float64  `json:"lr"`
	Loss          float64  `json:"loss"`
	TrainAccept   float64  `json:"train_accept"`
	HeldoutAccept *float64 `json:"heldout_accept"`
	HeldoutLoss   *float64 `json:"heldout_loss"`
	GradNorm      float64  `json:"grad_norm"`
}

// MarshalJSON writes NaN held-out fields as null.
func (p Point) MarshalJSON() ([]byte, error) {
	opt := func(x float64) *float64 {
		if math.IsNaN(x) {
			return nil
		}
		return &x
	}
	return json.Marshal(pointJSON{p.Step, p.Tokens, p.Seconds, p.LR, p.Loss, p.TrainAccept, opt(p.HeldoutAccept), opt(p.HeldoutLoss), p.GradNorm})
}

// UnmarshalJSON reads null held-out fields as NaN.
func (p *Point) UnmarshalJSON(b []byte) error {
	var j pointJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	val := func(x *float64) float64 {
		if x == nil {
			return math.NaN()
		}
		return *x
	}
	*p = Point{j.Step, j.Tokens, j.Seconds, j.LR, j.Loss, j.TrainAccept, val(j.HeldoutAccept), val(j.HeldoutLoss), j.GradNorm}
	return nil
}

// Progress is reported after every step.
type Progress struct {
	Step, Steps   int
	Point         Point
	HeldoutAccept float64 // latest held-out estimate (NaN: none yet)
	HeldoutStep   int     // the step that estimate was made after
	TokensPerSec  float64
	Elapsed, ETA  time.Duration
	Evaluated     bool // this step ran the held-out evaluation
	Saved         bool // this step wrote a checkpoint
}

// Result summarises a run.
type Result struct {
	Out        string `json:"out"`
	Checkpoint string `json:"checkpoint"`
	CurveCSV   string `json:"curve_csv"`
	CurvePNG   string `json:"curve_png"`

	Steps         int     `json:"steps"`          // steps done (all of them unless interrupted)
	Tokens        int64   `json:"tokens"`         // training tokens seen
	Seconds       float64 `json:"seconds"`        // wall time of the whole run, resumed parts included
	HeldoutAccept float64 `json:"heldout_accept"` // final held-out mean(1 − TV)
	Interrupted   bool    `json:"interrupted"`

	Params      int   `json:"params"`
	Trainable   int   `json:"trainable"`
	TeacherMACs int64 `json:"teacher_macs"` // per token at position Seq/2
	StudentMACs int64 `json:"student_macs"`
	// MaxMACsRatio is the largest ratio of the student's multiply-adds to
	// the teacher's at any position of the teacher's context, reached at
	// MaxMACsRatioPos.
	MaxMACsRatio    float64 `json:"max_macs_ratio"`
	MaxMACsRatioPos int     `json:"max_macs_ratio_pos"`
	// Where the time of this process's steps went.
	DataSeconds     float64 `json:"data_seconds"`
	ForwardSeconds  float64 `json:"forward_seconds"`
	BackwardSeconds float64 `json:"backward_seconds"`
	OptSeconds      float64 `json:"opt_seconds"`
	// TokensPerSec is training tokens per second of wall time (data
	// generation included); StepOverForward is a step's training time
	// (forward, loss, backward, optimizer) over 3× its forward pass.
	TokensPerSec    float64 `json:"tokens_per_s"`
	StepOverForward float64 `json:"step_over_forward"`
}

// Paths of a run's files beside the draft.
func paths(out string) (ckpt, csv, png string) {
	base := strings.TrimSuffix(out, ".gguf")
	return base + ".ckpt", base + ".curve.csv", base + ".curve.png"
}

// run is a distillation in progress.
type run struct {
	cfg       Config
	teacher   *llama.Model
	bos       int
	vocab     int
	text      *corpus
	m         *train.Model[float32]
	opt       *train.Optimizer[float32]
	curve     []Point
	heldout   *batch
	stu       *llama.Model // the student as an engine model, for on-policy sampling
	stuStep   int
	seconds0  float64        // wall time of earlier (resumed) parts
	start     time.Time      // when this process's part began
	dz        []float32      // the loss gradient, (batch·seq)×vocab
	ahead     chan madeBatch // the next step's batch, being made (see nextBatch)
	aheadStep int
	timeSplit [4]time.Duration
	// Files, and the run's identity (a resumed run must match it).
	ckpt, csv, png        string
	identity, fingerprint string
}

// ErrNonFinite reports a run stopped by a NaN or infinite loss or gradient.
var ErrNonFinite = errors.New("training diverged")

// ErrExists is returned when a fresh run would replace an earlier run's
// checkpoint (Config.Overwrite allows it).
var ErrExists = errors.New("an earlier run's checkpoint is in the way")

// Run distils cfg.Teacher into cfg.Out. It reports progress after every
// step (progress may be nil). When ctx is cancelled it finishes the current
// step, writes a checkpoint and the draft, and returns with Interrupted set.
func Run(ctx context.Context, cfg Config, progress func(Progress)) (*Result, error) {
	r, err := open(cfg)
	if err != nil {
		return nil, err
	}
	p := r.m.P
	res := &Result{Out: cfg.Out, Checkpoint: r.ckpt, CurveCSV: r.csv, CurvePNG: r.png,
		Params: len(p.Data), Trainable: p.Trainable(),
		TeacherMACs: r.teacher.Config().MACs(cfg.Seq / 2), StudentMACs: p.Shape.Config.MACs(cfg.Seq / 2)}
	res.MaxMACsRatio, res.MaxMACsRatioPos = p.Shape.Config.MaxMACsRatio(r.teacher.Config(), r.teacher.Config().SeqLen)
	last, lastStep := lastHeldout(r.curve)
	first := r.opt.Step
	n := cfg.Batch * cfg.Seq
	for step := first; step < cfg.Steps; step++ {
		if ctx.Err() != nil {
			res.Interrupted = true
			break
		}
		pt, err := r.step(step)
		if err != nil {
			return nil, err
		}
		pr := Progress{Step: step + 1, Steps: cfg.Steps}
		if (step+1)%cfg.EvalEvery == 0 || step+1 == cfg.Steps || step == first {
			if pt.HeldoutLoss, pt.HeldoutAccept, err = r.evalHeldout(); err != nil {
				return nil, err
			}
			last, lastStep = pt.HeldoutAccept, step+1
			pr.Evaluated = true
		}
		pt.Seconds = r.seconds()
		r.curve = append(r.curve, pt)
		if (step+1)%cfg.CheckpointEvery == 0 && step+1 < cfg.Steps {
			if err := r.save(); err != nil {
				return nil, err
			}
			pr.Saved = true
		}
		if progress != nil {
			el := time.Since(r.start)
			done := step + 1 - first
			pr.Point, pr.HeldoutAccept, pr.HeldoutStep, pr.Elapsed = pt, last, lastStep, el
			pr.TokensPerSec = float64(int64(done)*int64(n)) / el.Seconds()
			pr.ETA = time.Duration(float64(el) / float64(done) * float64(cfg.Steps-step-1))
			progress(pr)
		}
	}
	if k := len(r.curve) - 1; res.Interrupted && k >= 0 && math.IsNaN(r.curve[k].HeldoutAccept) {
		if r.curve[k].HeldoutLoss, r.curve[k].HeldoutAccept, err = r.evalHeldout(); err != nil {
			return nil, err
		}
		last = r.curve[k].HeldoutAccept
	}
	if err := r.save(); err != nil {
		return nil, err
	}
	res.Steps = r.opt.Step
	if k := len(r.curve); k > 0 {
		res.Tokens = r.curve[k-1].Tokens
	}
	res.Seconds = r.seconds()
	res.HeldoutAccept = last
	ts := r.timeSplit
	res.DataSeconds, res.ForwardSeconds, res.BackwardSeconds, res.OptSeconds = ts[0].Seconds(), ts[1].Seconds(), ts[2].Seconds(), ts[3].Seconds()
	if done := r.opt.Step - first; done > 0 {
		total := ts[0] + ts[1] + ts[2] + ts[3]
		res.TokensPerSec = float64(int64(done)*int64(n)) / total.Seconds()
		res.StepOverForward = (ts[1] + ts[2] + ts[3]).Seconds() / (3 * ts[1].Seconds())
	}
	return res, nil
}

// open loads the teacher and the data, and builds the student — fresh, or
// from the checkpoint when resuming — and the held-out set.
func open(cfg Config) (*run, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ckpt, csv, png := paths(cfg.Out)
	if !cfg.Resume && !cfg.Overwrite {
		if _, err := os.Stat(ckpt); err == nil {
			return nil, fmt.Errorf("%w: %s; --resume continues that run, --overwrite starts over in its place, or choose another --out", ErrExists, ckpt)
		}
	}
	tensor.SetThreads(cfg.Threads)
	teacher, err := llama.OpenSpec(cfg.Teacher, cfg.Tokenizer)
	if err != nil {
		return nil, fmt.Errorf("teacher: %w", err)
	}
	tok := teacher.Tokenizer()
	if tok == nil {
		return nil, fmt.Errorf("teacher %s: no tokenizer found (pass --tokenizer): the draft must carry the teacher's", cfg.Teacher)
	}
	r := &run{cfg: cfg, teacher: teacher, bos: tok.BOS(), vocab: teacher.Config().Vocab, stuStep: -1, start: time.Now()}
	if r.bos < 0 {
		return nil, fmt.Errorf("teacher %s: its tokenizer has no BOS token to start sequences with", cfg.Teacher)
	}
	if cfg.Seq > teacher.Config().SeqLen {
		return nil, fmt.Errorf("--seq %d exceeds the teacher's context length %d", cfg.Seq, teacher.Config().SeqLen)
	}
	if len(cfg.Data) > 0 {
		if r.text, err = loadCorpus(cfg.Data, os.ReadFile, tok); err != nil {
			return nil, err
		}
	}
	r.ckpt, r.csv, r.png = ckpt, csv, png
	identity, _ := json.Marshal(cfg)
	r.identity, r.fingerprint = string(identity), teacher.Fingerprint()

	var p *train.Params[float32]
	if cfg.Resume {
		if p, err = r.resume(); err != nil {
			return nil, fmt.Errorf("--resume: %w", err)
		}
	} else {
		if p, err = newStudent(cfg, teacher, func(spec string) (*llama.Model, error) { return llama.OpenSpec(spec, "") }); err != nil {
			return nil, err
		}
		r.opt = train.NewOptimizer(cfg.Opt, p)
	}
	if p.Shape.Vocab != r.vocab {
		return nil, fmt.Errorf("the student's vocabulary (%d) is not the teacher's (%d)", p.Shape.Vocab, r.vocab)
	}
	if cfg.Seq > p.Shape.SeqLen {
		return nil, fmt.Errorf("--seq %d exceeds the student's context length %d", cfg.Seq, p.Shape.SeqLen)
	}
	r.m = train.NewModel(p)
	r.dz = make([]float32, cfg.Batch*cfg.Seq*r.vocab)
	if r.heldout, err = r.heldoutBatch(cfg.Heldout); err != nil {
		return nil, fmt.Errorf("held-out set: %w", err)
	}
	return r, nil
}

// resume reads the checkpoint of an earlier run of the same configuration
// and teacher: the parameters, the optimizer and the learning curve.
func (r *run) resume() (*train.Params[float32], error) {
	st, err := train.LoadCheckpoint(r.ckpt)
	if err != nil {
		return nil, err
	}
	if st.Meta["config"] != r.identity {
		return nil, fmt.Errorf("%s was made by another configuration (%s): rerun with the checkpoint's values, or with --overwrite instead of --resume to start anew", r.ckpt, configDiff(st.Meta["config"], r.identity))
	}
	if st.Meta["teacher"] != r.fingerprint {
		return nil, fmt.Errorf("the teacher's weights changed since %s was written", r.ckpt)
	}
	if err := json.Unmarshal([]byte(st.Meta["curve"]), &r.curve); err != nil {
		return nil, fmt.Errorf("%s: learning curve: %w", r.ckpt, err)
	}
	fmt.Sscan(st.Meta["seconds"], &r.seconds0)
	r.opt = st.Opt
	r.opt.Config = r.cfg.Opt
	return st.Params, nil
}

// step takes one optimizer step: the batch, the forward pass, the loss on
// the teacher's distributions, the backward pass and AdamW. A non-finite
// loss or gradient stops the run before anything is changed.
func (r *run) step(step int) (Point, error) {
	c := r.cfg
	n := c.Batch * c.Seq
	t0 := time.Now()
	bt, err := r.nextBatch(step)
	if err != nil {
		return Point{}, fmt.Errorf("step %d: data: %w", step, err)
	}
	t1 := time.Now()
	z, err := r.m.Forward(bt.tokens, bt.b, bt.t)
	if err != nil {
		return Point{}, fmt.Errorf("step %d: %w", step, err)
	}
	t2 := time.Now()
	loss, tv := train.Eval(c.Loss, r.dz, z, bt.probs, n, r.vocab)
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return Point{}, r.diverged(step, fmt.Sprintf("the loss is %v", loss))
	}
	r.m.ZeroGrad()
	r.m.Backward(r.dz)
	t3 := time.Now()
	norm, lr, err := r.opt.Update(r.m.P, r.m.G)
	if err != nil {
		return Point{}, r.diverged(step, fmt.Sprintf("the gradient norm is %v", norm))
	}
	t4 := time.Now()
	for i, d := range []time.Duration{t1.Sub(t0), t2.Sub(t1), t3.Sub(t2), t4.Sub(t3)} {
		r.timeSplit[i] += d
	}
	var tokens int64
	if k := len(r.curve); k > 0 {
		tokens = r.curve[k-1].Tokens
	}
	return Point{Step: step + 1, Tokens: tokens + int64(n), LR: lr, Loss: loss, TrainAccept: 1 - tv, GradNorm: norm,
		HeldoutAccept: math.NaN(), HeldoutLoss: math.NaN()}, nil
}

// seconds is the run's wall time, resumed parts included.
func (r *run) seconds() float64 { return r.seconds0 + time.Since(r.start).Seconds() }

// save writes the checkpoint, the draft and the learning curve.
func (r *run) save() error {
	curve, err := json.Marshal(r.curve)
	if err != nil {
		return fmt.Errorf("checkpoint: learning curve: %w", err)
	}
	meta := map[string]string{"config": r.identity, "teacher": r.fingerprint, "curve": string(curve), "seconds": fmt.Sprint(r.seconds())}
	if err := train.SaveCheckpoint(r.ckpt, train.State{Params: r.m.P, Opt: r.opt, Meta: meta}); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := r.writeDraft(); err != nil {
		return err
	}
	return writeCurve(r.curve, r.csv, r.png)
}

// lastHeldout is the latest held-out estimate of a curve and its step
// (NaN and 0: none).
func lastHeldout(curve []Point) (float64, int) {
	for i := len(curve) - 1; i >= 0; i-- {
		if !math.IsNaN(curve[i].HeldoutAccept) {
			return curve[i].HeldoutAccept, curve[i].Step
		}
	}
	return math.NaN(), 0
}

type madeBatch struct {
	bt  *batch
	err error
}

// nextBatch is step's batch. Unless the batch depends on the student
// (on-policy data), the following step's batch is made in the background
// while this step trains: it depends only on (seed, step), so the result is
// the same either way.
func (r *run) nextBatch(step int) (*batch, error) {
	var m madeBatch
	if r.ahead != nil && r.aheadStep == step {
		m = <-r.ahead
	} else {
		m.bt, m.err = r.makeBatch(step)
	}
	r.ahead = nil
	if m.err == nil && r.cfg.OnPolicy == 0 && step+1 < r.cfg.Steps {
		ch := make(chan madeBatch, 1)
		go func() {
			bt, err := r.makeBatch(step + 1)
			ch <- madeBatch{bt, err}
		}()
		r.ahead, r.aheadStep = ch, step+1
	}
	return m.bt, m.err
}

// diverged is the error of a run that met a non-finite value: nothing from
// the bad step is written, so the last checkpoint on disk stays good.
func (r *run) diverged(step int, what string) error {
	last := "no checkpoint was written yet"
	if r.opt.Step >= r.cfg.CheckpointEvery {
		last = fmt.Sprintf("the last good checkpoint is %s (step %d)", r.ckpt, r.opt.Step/r.cfg.CheckpointEvery*r.cfg.CheckpointEvery)
	}
	return fmt.Errorf("%w at step %d: %s; stopped without saving it (%s). Try a lower --lr or a longer --warmup", ErrNonFinite, step+1, what, last)
}

// evalHeldout is the loss and mean acceptance 1 − TV on the held-out set.
func (r *run) evalHeldout() (loss, accept float64, err error) {
	h := r.heldout
	z, err := r.m.Forward(h.tokens, h.b, h.t)
	if err != nil {
		return 0, 0, err
	}
	loss, tv := train.Eval[float32](r.cfg.Loss, nil, z, h.probs, h.b*h.t, r.vocab)
	return loss, 1 - tv, nil
}

// studentModel is the student as an engine model (rebuilt once per step).
func (r *run) studentModel() (*llama.Model, error) {
	if r.stuStep == r.opt.Step && r.stu != nil {
		return r.stu, nil
	}
	w, err := r.m.P.Weights()
	if err != nil {
		return nil, err
	}
	r.stu, err = llama.New(w, r.teacher.Tokenizer(), "student")
	r.stuStep = r.opt.Step
	return r.stu, err
}

// writeDraft writes the student as a GGUF with the teacher's tokenizer.
func (r *run) writeDraft() error {
	w, err := r.m.P.Weights()
	if err != nil {
		return err
	}
	m, err := llama.New(w, r.teacher.Tokenizer(), "draft")
	if err != nil {
		return err
	}
	dt := tensor.F32
	if r.cfg.OutType == "f16" {
		dt = tensor.F16
	}
	return atomicfile.Write(r.cfg.Out, func(out io.Writer) error {
		// Named by the teacher's fingerprint, not its path: the bytes
		// do not depend on how the teacher was spelled.
		fp := r.teacher.Fingerprint()
		_, err := llama.WriteGGUF(out, m, dt, "hlm draft for "+fp[:min(16, len(fp))], llama.Meta{Key: llama.TeacherKey, Value: fp})
		return err
	})
}

// configDiff names the fields in which two runs' identities (JSON objects
// of their configurations) differ, with both values: "Steps 100 in the
// checkpoint, 200 now".
func configDiff(was, now string) string {
	var a, b map[string]any
	if json.Unmarshal([]byte(was), &a) != nil || json.Unmarshal([]byte(now), &b) != nil {
		return "checkpoint: " + was + "; now: " + now
	}
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var diffs []string
	for k := range keys {
		x, _ := json.Marshal(a[k])
		y, _ := json.Marshal(b[k])
		if string(x) != string(y) {
			diffs = append(diffs, fmt.Sprintf("%s %s in the checkpoint, %s now", k, x, y))
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "; ")
}
