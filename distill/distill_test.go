package distill

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/tensor"
	"github.com/hlmproject/hlm/train"
)

// smallConfig is a few steps on stories260K, enough to exercise every part.
func smallConfig(t *testing.T, out string) Config {
	c := DefaultConfig()
	c.Teacher = sharedPath(t, "models/stories260K/stories260K.bin")
	c.Out = out
	c.Hidden, c.Dim, c.Heads, c.KVHeads = 32, 32, 4, 2
	c.Steps, c.Opt.Steps, c.Opt.Warmup = 6, 6, 2
	c.Batch, c.Seq = 3, 16
	c.EvalEvery, c.Heldout, c.CheckpointEvery = 2, 2, 2
	return c
}

func mustRun(t *testing.T, ctx context.Context, c Config, progress func(Progress)) *Result {
	t.Helper()
	res, err := Run(ctx, c, progress)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func read(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Same configuration and seed, any thread count: the same bytes. A
// different seed: different bytes.
func TestDeterministic(t *testing.T) {
	dir := t.TempDir()
	defer tensor.SetThreads(0)
	var outs [][]byte
	for i, threads := range []int{1, 2, 2} {
		c := smallConfig(t, filepath.Join(dir, "d"+string(rune('a'+i))+".gguf"))
		c.Threads = threads
		c.OnPolicy = 0.34 // one on-policy sequence per batch
		if i == 2 {
			c.Seed = 2
		}
		mustRun(t, context.Background(), c, nil)
		outs = append(outs, read(t, c.Out))
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Fatal("1 and 2 threads wrote different drafts")
	}
	// Every kernel level (AVX-512, AVX2, portable Go) writes the same bytes:
	// a machine without the wide kernels trains the same draft.
	for _, k := range tensor.AvailableKernels() {
		if err := tensor.SetKernels(k); err != nil {
			t.Fatal(err)
		}
		c := smallConfig(t, filepath.Join(dir, "k-"+k+".gguf"))
		c.OnPolicy = 0.34
		mustRun(t, context.Background(), c, nil)
		if !bytes.Equal(read(t, c.Out), outs[0]) {
			t.Errorf("kernel level %s wrote another draft", k)
		}
	}
	tensor.SetKernels(tensor.AvailableKernels()[len(tensor.AvailableKernels())-1])
	if bytes.Equal(outs[0], outs[2]) {
		t.Fatal("seeds 1 and 2 wrote the same draft")
	}
	// The draft loads as a model with the teacher's tokenizer.
	m, err := llama.OpenSpec(filepath.Join(dir, "da.gguf"), "")
	if err != nil {
		t.Fatal(err)
	}
	teacher, _ := llama.OpenSpec(smallConfig(t, "").Teacher, "")
	if m.Tokenizer() == nil || m.Tokenizer().Fingerprint() != teacher.Tokenizer().Fingerprint() {
		t.Fatal("the draft does not carry the teacher's tokenizer")
	}
	if c := m.Config(); c.Dim != 32 || c.Layers != 1 || c.Vocab != 512 {
		t.Fatalf("draft shape %+v", c)
	}
}

// An interrupted run resumed from its checkpoint ends with exactly the bytes
// of an uninterrupted run.
func TestInterruptAndResume(t *testing.T) {
	dir := t.TempDir()
	whole := smallConfig(t, filepath.Join(dir, "whole.gguf"))
	mustRun(t, context.Background(), whole, nil)

	part := smallConfig(t, filepath.Join(dir, "part.gguf"))
	ctx, cancel := context.WithCancel(context.Background())
	res := mustRun(t, ctx, part, func(p Progress) {
		if p.Step == 5 { // Ctrl-C during step 6: it finishes, then saves (step 3 had no held-out evaluation)
			cancel()
		}
	})
	if !res.Interrupted || res.Steps != 5 {
		t.Fatalf("interrupted %v after %d steps, want true after 5", res.Interrupted, res.Steps)
	}
	if _, err := llama.OpenSpec(part.Out, ""); err != nil {
		t.Fatalf("the draft left by an interrupted run does not load: %v", err)
	}
	part.Resume = true
	res = mustRun(t, context.Background(), part, nil)
	if res.Steps != 6 || res.Interrupted {
		t.Fatalf("resumed run: %d steps, interrupted %v", res.Steps, res.Interrupted)
	}
	if !bytes.Equal(read(t, whole.Out), read(t, part.Out)) {
		t.Fatal("interrupted + resumed run wrote a different draft from the uninterrupted one")
	}
	// Resuming with another configuration is refused.
	part.Seed = 9
	_, err := Run(context.Background(), part, nil)
	if err == nil || !strings.Contains(err.Error(), "another configuration") {
		t.Fatalf("resume with another seed: %v", err)
	}
	// It names the field that differs, and only it.
	if msg := err.Error(); !strings.Contains(msg, "seed 1 in the checkpoint, 9 now") || strings.Count(msg, " now") != 1 {
		t.Errorf("resume with another seed: %q; want the seed named, alone", msg)
	}
}

// A diverging run stops with a clear error and keeps its last good
// checkpoint.
func TestDivergenceKeepsCheckpoint(t *testing.T) {
	c := smallConfig(t, filepath.Join(t.TempDir(), "nan.gguf"))
	c.Opt.LR, c.Opt.MinLR, c.Opt.Warmup, c.Opt.Clip = 1e30, 1e30, 0, 0
	c.Steps, c.Opt.Steps, c.CheckpointEvery = 20, 20, 1
	_, err := Run(context.Background(), c, nil)
	if !errors.Is(err, ErrNonFinite) {
		t.Fatalf("error %v, want ErrNonFinite", err)
	}
	t.Log(err)
	ckpt, _, _ := paths(c.Out)
	st, err2 := train.LoadCheckpoint(ckpt)
	if err2 != nil {
		t.Fatalf("the last good checkpoint does not load: %v", err2)
	}
	if !strings.Contains(err.Error(), "step") || st.Opt.Step < 1 {
		t.Fatalf("checkpoint at step %d; error %v", st.Opt.Step, err)
	}
}

func TestExitHeadKeepsTeacherLayers(t *testing.T) {
	c := smallConfig(t, filepath.Join(t.TempDir(), "head.gguf"))
	c.Hidden, c.Dim, c.Heads, c.KVHeads = 0, 0, 0, 0
	c.ExitHead, c.ExtraLayer = 2, true
	res := mustRun(t, context.Background(), c, nil)
	d, err := llama.OpenSpec(c.Out, "")
	if err != nil {
		t.Fatal(err)
	}
	teacher, _ := llama.OpenSpec(c.Teacher, "")
	dw, tw := d.Weights(), teacher.Weights()
	if len(dw.Layers) != 3 || dw.Output == dw.Embedding {
		t.Fatalf("exit head: %d layers, tied %v; want 3 layers and its own classifier", len(dw.Layers), dw.Output == dw.Embedding)
	}
	same := func(a, b *tensor.Matrix) bool { return bytes.Equal(a.Bytes(), b.Bytes()) }
	if !same(dw.Embedding, tw.Embedding) || !same(dw.Layers[0].Wq, tw.Layers[0].Wq) || !same(dw.Layers[1].W2, tw.Layers[1].W2) {
		t.Fatal("a frozen teacher tensor changed")
	}
	if same(dw.Output, tw.Output) || same(dw.Layers[2].W1, tw.Layers[2].W1) {
		t.Fatal("the head or the extra layer did not train")
	}
	if res.Trainable >= res.Params {
		t.Fatalf("trainable %d of %d", res.Trainable, res.Params)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	notUTF8 := filepath.Join(dir, "bin.txt")
	os.WriteFile(notUTF8, []byte{0xff, 0xfe, 'a', 0x80}, 0o644)
	empty := filepath.Join(dir, "empty.txt")
	os.WriteFile(empty, []byte("  \n\n "), 0o644)
	other := sharedPath(t, "models/tinystories-656k")
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"missing teacher", func(c *Config) { c.Teacher = filepath.Join(dir, "nope.bin") }, "teacher"},
		{"corrupt teacher", func(c *Config) { c.Teacher = notUTF8 }, "teacher"},
		{"data not UTF-8", func(c *Config) { c.Data, c.TextFrac = []string{notUTF8}, 0.5 }, "not UTF-8"},
		{"empty data", func(c *Config) { c.Data, c.TextFrac = []string{empty}, 0.5 }, "no text"},
		{"vocabulary mismatch", func(c *Config) { c.Init = other }, "vocabulary"},
		{"exit beyond the teacher", func(c *Config) { c.ExitHead = 9; c.Dim, c.Hidden, c.Heads, c.KVHeads = 0, 0, 0, 0 }, "teacher has 5 layers"},
		{"exit init with another width", func(c *Config) { c.Init = "exit=1" }, "must be the teacher's"},
		{"seq beyond the context", func(c *Config) { c.Seq = 100000; c.Batch = 1 }, "context length"},
		{"resume without checkpoint", func(c *Config) { c.Resume = true }, "resume"},
		{"heads that do not divide the width", func(c *Config) { c.Dim, c.Heads, c.KVHeads = 7, 2, 1; c.Init = "random" }, "--dim must be a multiple of --heads"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := smallConfig(t, filepath.Join(dir, "x.gguf"))
			tc.edit(&c)
			_, err := Run(context.Background(), c, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
			if _, err := os.Stat(c.Out); err == nil {
				t.Fatal("a draft was written despite the error")
			}
		})
	}
}

func TestMix(t *testing.T) {
	for _, tc := range []struct {
		b                     int
		text, on              float64
		teacher, txt, student int
	}{{16, 0, 0, 16, 0, 0}, {16, 0.5, 0.25, 4, 8, 4}, {3, 0, 0.34, 2, 0, 1}, {5, 1, 0, 0, 5, 0}} {
		a, b, c := mix(tc.b, tc.text, tc.on)
		if a != tc.teacher || b != tc.txt || c != tc.student {
			t.Errorf("mix(%d, %g, %g) = %d, %d, %d; want %d, %d, %d", tc.b, tc.text, tc.on, a, b, c, tc.teacher, tc.txt, tc.student)
		}
	}
}

// Whatever temperature draws the tokens, the labels are the teacher's
// distribution at temperature 1 after each prefix: scoring the sampled
// sequences in one block gives the same numbers bit for bit.
func TestSampleLabels(t *testing.T) {
	m, err := llama.OpenSpec(sharedPath(t, "models/stories260K/stories260K.bin"), "")
	if err != nil {
		t.Fatal(err)
	}
	n, tt, v := 3, 24, m.Config().Vocab
	for _, temps := range [][]float64{nil, {2}, {1, 0.5}} {
		toks := make([]int, n*tt)
		probs := make([]float32, n*tt*v)
		rngs := make([]*rand.Rand, n)
		for i := range rngs {
			rngs[i] = rngFor(5, 0, i, fromTeacher)
		}
		if err := sample(m, 1, toks, probs, n, tt, rngs, temps); err != nil {
			t.Fatal(err)
		}
		ref := make([]float32, len(probs))
		if err := score(m, toks, ref, n, tt); err != nil {
			t.Fatal(err)
		}
		for i := range ref {
			if ref[i] != probs[i] {
				t.Fatalf("temps %v: label %d is %g, the teacher's distribution says %g", temps, i, probs[i], ref[i])
			}
		}
	}
	// A hot sampler draws other tokens than a cold one with the same stream.
	draw := func(temp float64) []int {
		toks := make([]int, tt)
		sample(m, 1, toks, nil, 1, tt, []*rand.Rand{rngFor(5, 0, 0, fromTeacher)}, []float64{temp})
		return toks
	}
	if slices.Equal(draw(1), draw(3)) {
		t.Fatal("temperature 3 drew the same sequence as temperature 1")
	}
}

// --init svd gives the student the teacher's token geometry: the projected
// embedding reproduces the teacher's embedding inner products better than
// any other rank-Dim embedding would (here: within the SVD's own error).
func TestInitSVD(t *testing.T) {
	teacher, err := llama.OpenSpec(sharedPath(t, "models/tinystories-656k"), "")
	if err != nil {
		t.Fatal(err)
	}
	c := DefaultConfig()
	c.Init, c.Dim, c.Heads, c.KVHeads, c.Hidden = "svd", 64, 8, 4, 96
	p, err := newStudent(c, teacher, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Inner products of a few token pairs: projected ≈ teacher's (the
	// embedding's spectrum decays, so 64 of 128 directions keep most of it).
	tw := teacher.Weights()
	d := tw.Config.Dim
	a, b := make([]float32, d), make([]float32, d)
	var errSum, refSum float64
	for _, pr := range [][2]int{{100, 200}, {300, 301}, {5, 900}, {1500, 1501}, {42, 42}} {
		tw.Embedding.Row(a, pr[0])
		tw.Embedding.Row(b, pr[1])
		var ref, got float64
		for i := range a {
			ref += float64(a[i]) * float64(b[i])
		}
		ea, eb := p.Embedding[pr[0]*64:(pr[0]+1)*64], p.Embedding[pr[1]*64:(pr[1]+1)*64]
		for i := range ea {
			got += float64(ea[i]) * float64(eb[i])
		}
		errSum += math.Abs(got - ref)
		refSum += math.Abs(ref)
	}
	if errSum > 0.5*refSum {
		t.Fatalf("projected inner products are off by %.3g of %.3g", errSum, refSum)
	}
	c.Dim = 256
	if _, err := newStudent(c, teacher, nil); err == nil || !strings.Contains(err.Error(), "must not be wider") {
		t.Fatalf("a student wider than the teacher: %v", err)
	}
}

// Each bad setting is reported once: --steps 0 used to be refused twice,
// by the flags' check and again by the schedule's in its own words.
func TestValidateReportsOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*Config)
		lines int
	}{
		{"steps 0", func(c *Config) { c.Steps, c.Opt.Steps = 0, 0 }, 1},
		{"steps -3", func(c *Config) { c.Steps, c.Opt.Steps = -3, -3 }, 1},
		{"warmup -1", func(c *Config) { c.Opt.Warmup = -1 }, 1},
		{"steps 0 and eval-every 0", func(c *Config) { c.Steps, c.Opt.Steps, c.EvalEvery = 0, 0, 0 }, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			c.Teacher, c.Out = "teacher.gguf", "draft.gguf"
			tc.edit(&c)
			err := c.Validate()
			if err == nil {
				t.Fatal("accepted")
			}
			if n := len(strings.Split(err.Error(), "\n")); n != tc.lines {
				t.Fatalf("%d lines, want %d:\n%v", n, tc.lines, err)
			}
		})
	}
}

// TestCheckpointInTheWay: a fresh run refuses to replace an earlier run's
// checkpoint unless told to (Overwrite); Resume continues it.
func TestCheckpointInTheWay(t *testing.T) {
	c := smallConfig(t, filepath.Join(t.TempDir(), "d.gguf"))
	c.Steps, c.Opt.Steps = 2, 2
	mustRun(t, context.Background(), c, nil)
	if _, err := Run(context.Background(), c, nil); !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "--resume") {
		t.Fatalf("a second fresh run: %v, want ErrExists naming --resume", err)
	}
	c.Overwrite = true
	mustRun(t, context.Background(), c, nil)
	c.Overwrite, c.Resume = false, true
	if res := mustRun(t, context.Background(), c, nil); res.Steps != 2 {
		t.Fatalf("resumed at step %d, want 2", res.Steps)
	}
	c.Overwrite = true
	if err := c.Validate(); err == nil {
		t.Error("--resume with --overwrite: accepted")
	}
}
