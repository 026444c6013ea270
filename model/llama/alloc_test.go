package llama

import (
	"fmt"
	"testing"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/tensor"
)

// maxEvalAllocs is the most heap allocations one Eval of a decode step or
// a verification block may cost once the session is warm: what it returns
// (the logits, the slices of their rows and the list of sessions' slices)
// and nothing else. The run state is the session's (runState, allocated
// once as llama2.c's malloc_run_state), the products' bookkeeping and
// quantized inputs are recycled (tensor.MatMuls), the thread pool reuses
// its jobs (tensor.ParallelLoop). Before these it was 138 per decoded token
// on stories260K at 2 threads.
const maxEvalAllocs = 3

// allocModels are the models TestEvalAllocs decodes: the built-in
// stories260K (F32, and quantized as PATH@q8 / PATH@q4 do: Q8_0 and Q4_0
// products quantize their inputs), and a random model wide enough that
// every product and the attention run on the threads.
var allocModels = []struct {
	name string
	open func(testing.TB) *Model
}{
	{"stories260K", builtinModel("")},
	{"stories260K@q8", builtinModel("q8")},
	{"stories260K@q4", builtinModel("q4")},
	{"wide", wideModel(tensor.F32)},
	{"wide-q8", wideModel(tensor.Q8_0)},
}

func builtinModel(quant string) func(testing.TB) *Model {
	return func(tb testing.TB) *Model {
		spec := "builtin:stories260K"
		if quant != "" {
			spec += "@" + quant
		}
		m, err := OpenSpec(spec, "")
		if err != nil {
			tb.Fatal(err)
		}
		return m
	}
}

func wideModel(t tensor.DType) func(testing.TB) *Model {
	return func(tb testing.TB) *Model {
		c := model.Config{Dim: 256, Hidden: 512, Layers: 2, Heads: 8, KVHeads: 4, Vocab: 1000, SeqLen: 160}
		m := randomModel(tb, c, 3)
		if t != tensor.F32 {
			q, _, err := m.Quantized(t)
			if err != nil {
				tb.Fatal(err)
			}
			m = q
		}
		return m
	}
}

// evalLoop returns a session of m with a short prompt evaluated and a
// step that evaluates a block of L tokens, going back to the prompt when
// the context is full.
func evalLoop(tb testing.TB, m *Model, L int) func() {
	tb.Helper()
	s := m.Session()
	prompt := []int{1, 403 % m.cfg.Vocab, 407 % m.cfg.Vocab, 261 % m.cfg.Vocab}
	if _, err := s.Eval(prompt); err != nil {
		tb.Fatal(err)
	}
	block := make([]int, L)
	i := 0
	return func() {
		if s.Len()+L > m.cfg.SeqLen {
			if err := s.Truncate(len(prompt)); err != nil {
				tb.Fatal(err)
			}
		}
		for j := range block {
			block[j] = 10 + (i*L+j)%(m.cfg.Vocab-10)
		}
		i++
		if _, err := s.Eval(block); err != nil {
			tb.Fatal(err)
		}
	}
}

// TestEvalAllocs pins the heap allocations of a decode step (one token)
// and of an 8-token verification block at 2 threads, over enough steps
// that the context fills and starts again, for each weight type's path.
func TestEvalAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector sync.Pool drops what it is given")
	}
	// 300 steps fill the context and start again, so the caches' growth
	// averages out; -short (the emulated arm64 run of internal/crossarch,
	// where a step is ~100× slower) first fills the context with 64 steps
	// (the growth done) and counts 20.
	runs, warm := 300, 1
	if testing.Short() {
		runs, warm = 20, 64
	}
	defer tensor.SetThreads(tensor.Threads())
	tensor.SetThreads(2)
	for _, am := range allocModels {
		m := am.open(t)
		for _, L := range []int{1, 8} {
			t.Run(fmt.Sprintf("%s/L=%d", am.name, L), func(t *testing.T) {
				step := evalLoop(t, m, L)
				for range warm {
					step() // the run state and the caches grow
				}
				tensor.WaitPacking() // the packed rows the first steps queued, made (they allocate)
				got := testing.AllocsPerRun(runs, step)
				t.Logf("%.1f allocations per Eval of %d tokens", got, L)
				if got > maxEvalAllocs {
					t.Errorf("Eval of %d tokens allocates %.1f objects, want ≤ %d", L, got, maxEvalAllocs)
				}
			})
		}
	}
}

// BenchmarkDecodeStories260K decodes the built-in stories260K one token at
// a time at 2 threads and reports the allocations:
//
//	go test -run XXX -bench DecodeStories260K ./model/llama
func BenchmarkDecodeStories260K(b *testing.B) {
	defer tensor.SetThreads(tensor.Threads())
	tensor.SetThreads(2)
	step := evalLoop(b, builtinModel("")(b), 1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		step()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// TestKVBytes: a session's KV cache of n positions holds Model.KVBytes(n),
// the figure hlm serve states for its sessions: whole pages of 64
// positions, no more, at every length (a cache that doubled held up to
// twice its length).
func TestKVBytes(t *testing.T) {
	m := wideModel(tensor.F32)(t)
	cfg := m.Config()
	if got, want := m.KVBytes(10), int64(64*cfg.Layers*cfg.KVDim()*2*4); got != want {
		t.Fatalf("KVBytes(10) = %d, want %d", got, want)
	}
	if m.KVBytes(64) != m.KVBytes(1) || m.KVBytes(65) != 2*m.KVBytes(64) || m.KVBytes(0) != 0 {
		t.Fatalf("KVBytes(1, 64, 65) = %d, %d, %d: not whole pages", m.KVBytes(1), m.KVBytes(64), m.KVBytes(65))
	}
	s := m.Session()
	if s.KVBytes() != 0 {
		t.Fatalf("a new session holds %d bytes", s.KVBytes())
	}
	for s.Len() < cfg.SeqLen {
		if _, err := s.Eval(make([]int, min(7, cfg.SeqLen-s.Len()))); err != nil {
			t.Fatal(err)
		}
		n := s.Len()
		if got := s.KVBytes(); got != m.KVBytes(n) {
			t.Errorf("at %d positions the cache holds %d bytes, want %d", n, got, m.KVBytes(n))
		}
	}
}
