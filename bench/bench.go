// Package bench measures the inference engine's speed the way llama.cpp's
// llama-bench does, so the two can be run side by side on the same GGUF
// files: a prompt test ppP evaluates a block of P random tokens in one pass
// from an empty context, a generation test tgN evaluates N random tokens one
// at a time from an empty context, each repeated and reported as the mean ±
// sample standard deviation of tokens per second.
//
// A prompt test computes the logits of the block's last position only, as
// llama-bench does, so both engines do the same work. Two additions: with
// AllLogits it computes the logits of every position (what the server's
// block verification needs: the test is then named vbP, "verify block"),
// and the tests can run S sessions evaluated together in one pass (the
// server's cross-session batching): then ppP (vbP) evaluates S blocks of P
// tokens per pass and tgN advances S sessions by one token per pass, and
// tokens per second counts the tokens of all sessions.
package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hlmproject/hlm/metrics"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/engine"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/model/llamacpp"
	"github.com/hlmproject/hlm/tensor"
)

// Config is one benchmark run: every model × thread count × session count
// × test.
type Config struct {
	Models    []string // model specs (model.ParseSpec)
	Prompt    []int    // block sizes of the prompt tests (0: none)
	Gen       []int    // tokens of the generation tests (0: none)
	Depth     []int    // positions already in each session's cache when a test starts (llama-bench's -d; nil: 0)
	Reps      int      // timed repetitions of each test
	Threads   []int    // thread counts
	Sessions  []int    // sessions evaluated together
	Seed      uint64   // seeds the random tokens
	NoWarmup  bool     // skip the untimed warm-up run of each test
	AllLogits bool     // prompt tests compute the logits of every position
	Kernels   []string // kernel levels to compare (tensor.SetKernels); empty: the one in use
}

// DefaultConfig is pp8 and tg128, 5 repetitions, all cores, one session.
func DefaultConfig() Config {
	return Config{Prompt: []int{8}, Gen: []int{128}, Reps: 5, Threads: []int{runtime.GOMAXPROCS(0)}, Sessions: []int{1}}
}

// Validate reports impossible parameters.
func (c Config) Validate() error {
	if len(c.Models) == 0 {
		return errors.New("no model given")
	}
	if c.Reps < 1 {
		return fmt.Errorf("repetitions %d: want at least 1", c.Reps)
	}
	if len(c.Kernels) > 0 {
		for _, m := range c.Models {
			if sp, err := model.ParseSpec(m); err == nil && sp.Backend != "" {
				return fmt.Errorf("kernels choose hlm's own kernel levels; %s runs on %s's (drop --kernels, or compare hlm's engine with the spec without @%s)", m, sp.Backend, sp.Backend)
			}
		}
	}
	for _, list := range []struct {
		name string
		v    []int
		min  int
	}{{"prompt size", c.Prompt, 0}, {"generated tokens", c.Gen, 0}, {"depth", c.Depth, 0}, {"threads", c.Threads, 1}, {"sessions", c.Sessions, 1}} {
		for _, v := range list.v {
			if v < list.min || v > 1<<20 {
				return fmt.Errorf("%s %d out of range (%d…%d)", list.name, v, list.min, 1<<20)
			}
		}
	}
	if len(tests(c)) == 0 {
		return errors.New("no test: give a prompt size (-p) or a number of tokens to generate (-n) above 0")
	}
	if len(c.Threads) == 0 || len(c.Sessions) == 0 {
		return errors.New("no thread count or session count")
	}
	for _, k := range c.Kernels {
		if !slices.Contains(tensor.AvailableKernels(), k) {
			return fmt.Errorf("kernels %q: this machine runs %s", k, strings.Join(tensor.AvailableKernels(), ", "))
		}
	}
	return nil
}

// Result is one test on one model: field names follow llama-bench's JSON.
type Result struct {
	Model     string    `json:"model_filename"`
	Type      string    `json:"model_type"` // storage type of the layer matrices
	Size      int64     `json:"model_size"` // bytes of weights
	Params    int64     `json:"model_n_params"`
	Kernels   string    `json:"kernels"` // tensor.Kernels()
	Threads   int       `json:"n_threads"`
	Sessions  int       `json:"n_sessions"`
	Prompt    int       `json:"n_prompt"`
	Gen       int       `json:"n_gen"`
	Depth     int       `json:"n_depth"` // positions cached before the test (llama-bench's -d)
	Test      string    `json:"test"`
	SamplesNs []int64   `json:"samples_ns"` // wall time of each repetition
	SamplesTS []float64 `json:"samples_ts"` // tokens per second of each repetition
	AvgTS     float64   `json:"avg_ts"`
	StddevTS  float64   `json:"stddev_ts"`
}

// Run opens each model and runs the tests, reporting progress to progress
// (nil: none).
func Run(ctx context.Context, cfg Config, progress io.Writer) ([]Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if progress == nil {
		progress = io.Discard
	}
	defer tensor.SetThreads(tensor.Threads())
	kernels := cfg.Kernels
	if len(kernels) == 0 {
		kernels = []string{tensor.Kernels()}
	}
	defer tensor.SetKernels(tensor.Kernels())
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x62656e6368))
	var out []Result
	for _, spec := range cfg.Models {
		m, err := engine.OpenSpec(spec, "")
		if err != nil {
			return out, fmt.Errorf("%s: %w", spec, err)
		}
		for _, k := range kernels {
			if err := tensor.SetKernels(k); err != nil {
				return out, err
			}
			if out, err = runModel(ctx, cfg, m, spec, rng, progress, out); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// runModel runs every thread count × session count × test on one model
// with the kernels in use, appending to out.
func runModel(ctx context.Context, cfg Config, m model.Model, spec string, rng *rand.Rand, progress io.Writer, out []Result) ([]Result, error) {
	base := describe(m, spec)
	threads := cfg.Threads
	lc, onLlamaCpp := m.(*llamacpp.Model)
	if onLlamaCpp && lc.Spec().LlamaCpp.Threads > 0 {
		threads = []int{lc.Spec().LlamaCpp.Threads} // the spec's t= names this model's threads
		if !slices.Equal(cfg.Threads, threads) {
			fmt.Fprintf(progress, "hlm bench: %s: its t=%d sets its threads (not -t %s)\n", spec, threads[0], joinInts(cfg.Threads))
		}
	}
	if onLlamaCpp {
		if s := slices.Max(cfg.Sessions); s > lc.Slots() {
			fmt.Fprintf(progress, "hlm bench: %s: --batch-sessions %d on np=%d sequences: its passes include sessions taking turns (%s); add @np=%d to measure without\n", spec, s, lc.Slots(), lc.Evicted(), s)
		}
	}
	for _, th := range threads {
		tensor.SetThreads(th)
		if onLlamaCpp {
			lc.SetThreads(th)
		}
		for _, s := range cfg.Sessions {
			for _, tc := range tests(cfg) {
				if n := tc.depth + max(tc.prompt, tc.gen); n > m.Config().SeqLen {
					return out, fmt.Errorf("%s: %d positions (depth %d and the test's %d) exceed the context length %d", spec, n, tc.depth, max(tc.prompt, tc.gen), m.Config().SeqLen)
				}
				r := base
				r.Threads, r.Sessions, r.Prompt, r.Gen, r.Depth = th, s, tc.prompt, tc.gen, tc.depth
				r.Test = testName(tc.prompt, tc.gen, tc.depth, cfg.AllLogits)
				fmt.Fprintf(progress, "hlm bench: %s, %s kernels, %d threads: %s …\n", r.Model, r.Kernels, th, r.Label())
				ds, err := repeat(ctx, cfg, m, s, tc, rng)
				if err != nil {
					return out, err
				}
				for _, d := range ds {
					r.SamplesNs = append(r.SamplesNs, d.Nanoseconds())
					r.SamplesTS = append(r.SamplesTS, float64(s*max(tc.prompt, tc.gen))/d.Seconds())
				}
				r.AvgTS, r.StddevTS = meanSD(r.SamplesTS)
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// onThread runs a repetition where the model's decodes are made (on the
// llama.cpp backend, its decoding thread: llamacpp.Model.OnDecodingThread),
// as llama-bench's loop runs on the thread of its OpenMP team.
func onThread(m model.Model, rep func() (time.Duration, error)) (d time.Duration, err error) {
	lc, ok := m.(*llamacpp.Model)
	if !ok {
		return rep()
	}
	lc.OnDecodingThread(func() { d, err = rep() })
	return d, err
}

// test is a prompt test of prompt tokens or a generation test of gen, each
// session's cache holding depth positions before it.
type test struct{ prompt, gen, depth int }

// tests lists the prompt tests, then the generation tests, as llama-bench
// orders them, each at every depth.
func tests(cfg Config) []test {
	depths := cfg.Depth
	if len(depths) == 0 {
		depths = []int{0}
	}
	var ts []test
	for _, p := range cfg.Prompt {
		if p <= 0 {
			continue
		}
		for _, d := range depths {
			ts = append(ts, test{prompt: p, depth: d})
		}
	}
	for _, n := range cfg.Gen {
		if n <= 0 {
			continue
		}
		for _, d := range depths {
			ts = append(ts, test{gen: n, depth: d})
		}
	}
	return ts
}

// testName is llama-bench's name of a test ("pp8", "tg128", "tg128 @ d512"
// at a depth; "vb8" for a block with every position's logits); the
// sessions are a column of their own (Result.Sessions), as the threads
// are.
func testName(prompt, gen, depth int, allLogits bool) string {
	name := fmt.Sprintf("tg%d", gen)
	switch {
	case prompt > 0 && allLogits:
		name = fmt.Sprintf("vb%d", prompt)
	case prompt > 0:
		name = fmt.Sprintf("pp%d", prompt)
	}
	if depth > 0 {
		name += fmt.Sprintf(" @ d%d", depth)
	}
	return name
}

// Label is the test's name as the Markdown table and the progress lines
// show it: with the sessions when there are several ("pp8 ×4 sessions").
func (r Result) Label() string {
	if r.Sessions > 1 {
		return fmt.Sprintf("%s ×%d sessions", r.Test, r.Sessions)
	}
	return r.Test
}

// repeat runs test tc on s sessions of m: the warm-up (unless
// cfg.NoWarmup) and cfg.Reps timed repetitions, whose times it returns.
// One set of sessions serves them all, emptied before each (as
// llama-bench clears its context's memory): a repetition on new sessions
// allocated their caches and buffers, and the collections that reclaimed
// them ran during later repetitions (Qwen3-0.6B Q8_0 pp8 on the Zen 5:
// 95–122 tokens/s in the repetitions a collection overlapped, 245–285 in
// the others).
func repeat(ctx context.Context, cfg Config, m model.Model, s int, tc test, rng *rand.Rand) ([]time.Duration, error) {
	ev := newEvaluator(m, s)
	defer ev.done()
	if !cfg.NoWarmup {
		warm := tc
		warm.gen = min(warm.gen, 16)
		if _, err := onThread(m, func() (time.Duration, error) { return once(ev, warm, cfg.AllLogits, rng) }); err != nil {
			return nil, err
		}
		// The packed rows the warm-up's products queued are made before
		// the timed runs, as llama.cpp repacks its rows while it loads.
		tensor.WaitPacking()
	}
	var ds []time.Duration
	for i := 0; i < cfg.Reps; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d, err := onThread(m, func() (time.Duration, error) { return once(ev, tc, cfg.AllLogits, rng) })
		if err != nil {
			return nil, err
		}
		ds = append(ds, d)
	}
	return ds, nil
}

// once runs one repetition of tc on ev's sessions, emptied first, and
// returns its wall time; the depth's prefill, before it, is not timed (as
// in llama-bench).
func once(ev *evaluator, tc test, allLogits bool, rng *rand.Rand) (time.Duration, error) {
	if err := ev.reset(); err != nil {
		return 0, err
	}
	vocab := ev.vocab
	block := func(n int) [][]int {
		b := make([][]int, ev.sessions)
		for i := range b {
			b[i] = make([]int, n)
			for j := range b[i] {
				b[i][j] = rng.IntN(vocab)
			}
		}
		return b
	}
	if tc.depth > 0 {
		if err := ev.eval(block(tc.depth), true); err != nil {
			return 0, err
		}
	}
	if tc.prompt > 0 {
		toks := block(tc.prompt)
		start := time.Now()
		err := ev.eval(toks, !allLogits)
		return time.Since(start), err
	}
	steps := make([][][]int, tc.gen)
	for i := range steps {
		steps[i] = block(1)
	}
	start := time.Now()
	for _, toks := range steps {
		if err := ev.eval(toks, true); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

// An evaluator holds the sessions of a test on m and evaluates them
// batched, computing only each session's last logits when lastOnly is
// set, as llama-bench does: on hlm's engine or on llama.cpp's
// (model/llamacpp, whose rows then stay in its buffer, PrefillBatchView,
// as llama-bench reads none).
type evaluator struct {
	sessions int
	vocab    int
	eval     func(toks [][]int, lastOnly bool) error
	list     []model.Session // to empty (reset)
	done     func()          // closes the sessions
}

// newEvaluator opens sessions sessions on m.
func newEvaluator(m model.Model, sessions int) *evaluator {
	ev := &evaluator{sessions: sessions, vocab: m.Config().Vocab, done: func() {}}
	if lc, ok := m.(*llamacpp.Model); ok {
		ss := make([]model.Session, sessions)
		for i := range ss {
			ss[i] = lc.NewSession()
		}
		ev.list = ss
		ev.eval = func(toks [][]int, lastOnly bool) error {
			if lastOnly {
				_, err := lc.PrefillBatchView(ss, toks)
				if err == nil {
					lc.ReleaseView()
				}
				return err
			}
			_, err := lc.EvalBatch(ss, toks)
			return err
		}
		ev.done = func() {
			for _, s := range ss {
				s.(*llamacpp.Session).Close()
			}
		}
		return ev
	}
	hm := m.(*llama.Model)
	ss := make([]*llama.Session, sessions)
	for i := range ss {
		ss[i] = hm.Session()
		ev.list = append(ev.list, ss[i])
	}
	ev.eval = func(toks [][]int, lastOnly bool) error {
		_, err := llama.EvalBatch(ss, toks, lastOnly)
		return err
	}
	return ev
}

// reset empties every session (Truncate(0)): llama_memory_seq_rm on
// llama.cpp, as llama-bench's llama_memory_clear between repetitions.
func (ev *evaluator) reset() error {
	for _, s := range ev.list {
		if err := s.Truncate(0); err != nil {
			return err
		}
	}
	return nil
}

// describe fills the model columns: file name, layer storage type, weight
// bytes and parameter count.
func describe(mm model.Model, spec string) Result {
	r := Result{Model: filepath.Base(spec), Kernels: tensor.Kernels()}
	if lc, ok := mm.(*llamacpp.Model); ok {
		r.Model = filepath.Base(lc.Path())
		r.Kernels = "llama.cpp " + lc.Library().Version()
		r.Params, r.Size = int64(lc.NParams()), int64(lc.SizeBytes())
		d := strings.Fields(lc.Describe())
		if len(d) > 0 {
			r.Type = d[len(d)-1]
		}
		return r
	}
	m := mm.(*llama.Model)
	w := m.Weights()
	bytesOf := map[string]int64{}
	w.Matrices(func(_ string, t *tensor.Matrix) {
		r.Params += int64(t.Rows) * int64(t.Cols)
		r.Size += int64(t.Rows) * int64(t.RowBytes())
		if t.Type != tensor.F32 {
			bytesOf[t.Type.String()] += int64(t.Rows) * int64(t.RowBytes())
		}
	})
	norms := int64(len(w.FinalNorm))
	for _, l := range w.Layers {
		norms += int64(len(l.AttnNorm) + len(l.FFNNorm))
	}
	r.Params += norms
	r.Size += 4 * norms
	r.Type = typeMix(bytesOf)
	return r
}

// typeMix names the storage of a model's matrices: their types by the bytes
// they hold, largest first, joined by "+" (e.g. "Q4_K+Q6_K" for a Q4_K_M
// file), "F32" when every matrix is F32.
func typeMix(bytesOf map[string]int64) string {
	if len(bytesOf) == 0 {
		return "F32"
	}
	types := slices.Collect(maps.Keys(bytesOf))
	slices.SortFunc(types, func(a, b string) int {
		if c := cmp.Compare(bytesOf[b], bytesOf[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return strings.Join(types, "+")
}

// meanSD is the mean and the sample standard deviation (0 for one sample:
// JSON has no NaN).
func meanSD(x []float64) (mean, sd float64) {
	mean, sd = metrics.MeanStd(x)
	if len(x) < 2 {
		sd = 0
	}
	return mean, sd
}

// joinInts writes xs as a flag takes them: "1,2".
func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}
