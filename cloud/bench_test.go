package cloud

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hlmproject/hlm/edge"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/tensor"
	"github.com/hlmproject/hlm/tokenizer"
	"github.com/hlmproject/hlm/wire"
)

// BenchmarkBatching measures the server alone: 32 concurrent sessions each
// send rounds of 4 draft ids (the coupled method: no distributions, so no
// codec work) to a server running a random-weight LLM of the stories42M
// shape (vocabulary 32,000). It reports the aggregate rounds (verifications)
// per second and evaluated positions per second of wall time, with
// cross-session batching on (max-batch 32) and off (max-batch 1), for blocks
// of L = 1 and L = 4 drafts. The devices are fakes that draft random ids, so
// the machine's cores go to verification.
func BenchmarkBatching(b *testing.B) {
	w, err := llama.RandomWeights(model.Config{Dim: 512, Hidden: 1376, Layers: 8, Heads: 8, KVHeads: 8, Vocab: 32000, SeqLen: 512}, 1)
	if err != nil {
		b.Fatal(err)
	}
	llm, _ := llama.New(w, nil, "random-42M")
	const sessions, rounds = 32, 12
	for _, tc := range []struct{ L, maxBatch int }{{1, 1}, {1, 32}, {4, 1}, {4, 32}} {
		L, maxBatch := tc.L, tc.maxBatch
		b.Run(fmt.Sprintf("L=%d/max-batch=%d", L, maxBatch), func(b *testing.B) {
			_, addr := start(b, Config{LLM: llm, MaxBatch: maxBatch})
			b.ResetTimer()
			var rounds64 int64
			for i := 0; i < b.N; i++ {
				rounds64 += fakeDevices(b, addr, sessions, rounds, L)
			}
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(rounds64)/sec, "verifications/s")
			b.ReportMetric(float64(rounds64*int64(L+1))/sec, "positions/s")
		})
	}
}

// fakeDevices runs that many fakeDevice sessions at once, each of rounds rounds of
// L drafts, and returns the rounds verified.
func fakeDevices(b *testing.B, addr string, sessions, rounds, L int) int64 {
	var wg sync.WaitGroup
	for s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := fakeDevice(addr, uint64(s), rounds, L); err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
	return int64(sessions * rounds)
}

// fakeDevice opens a coupled session and sends rounds of L random drafts,
// returning the number of committed tokens.
func fakeDevice(addr string, seed uint64, rounds, L int) (int, error) {
	p := hybrid.DefaultParams()
	p.Method, p.Seed = hybrid.Coupled, seed
	prefix := []int{1, 2 + int(seed)}
	rem, err := edge.Connect(context.Background(), edge.Config{Addr: addr}, edge.Session{Params: p, Prefix: func() []int { return prefix }})
	if err != nil {
		return 0, err
	}
	defer rem.Close()
	rng := rand.New(rand.NewPCG(seed, 9))
	n := 0
	for r := 1; r <= rounds; r++ {
		up := &wire.Upload{Round: uint32(r)}
		for l := 0; l < L; l++ {
			up.Drafts = append(up.Drafts, wire.Draft{Token: int32(rng.IntN(32000))})
		}
		v, err := rem.Verify(context.Background(), up)
		if err != nil {
			return n, err
		}
		n += v.Accepted + 1
	}
	return n, nil
}

// freeLLM is an LLM whose evaluation costs nothing: every position's
// logits are one of a few fixed random rows over Qwen3's 151,936 tokens.
// Behind hlm serve it leaves only the server's own work — the protocol,
// batching, copying the logits and the verification on the CPU — which is
// what bounded hlm serve on a GPU (docs/BENCHMARKS.md, "On a GPU").
type freeLLM struct {
	cfg  model.Config
	rows [][]float32
	// decode, when set, is how long EvalBatchView takes without using the
	// CPU (a sleep): a GPU's batch, as the CPU sees it. slept and batches
	// add up how long the sleeps took (a sleep overshoots: 1.9 ms took 2.16
	// on average on a 2-core host) and how many there were.
	decode         time.Duration
	slept, batches atomic.Int64
}

func newFreeLLM(vocab int) *freeLLM {
	rng := rand.New(rand.NewPCG(5, 6))
	m := &freeLLM{cfg: model.Config{Dim: 64, Hidden: 64, Layers: 1, Heads: 1, KVHeads: 1, Vocab: vocab, SeqLen: 4096}}
	for range 7 {
		r := make([]float32, vocab)
		for i := range r {
			r[i] = float32(rng.NormFloat64() * 3)
		}
		m.rows = append(m.rows, r)
	}
	return m
}

func (m *freeLLM) Config() model.Config            { return m.cfg }
func (m *freeLLM) NewSession() model.Session       { return &freeSession{m: m} }
func (m *freeLLM) Tokenizer() *tokenizer.Tokenizer { return nil }
func (m *freeLLM) Name() string                    { return "free" }
func (m *freeLLM) Fingerprint() string             { return "free-llm-of-fixed-rows" }
func (m *freeLLM) row(pos int, dst []float32) []float32 {
	return append(dst[:0], m.rows[pos%len(m.rows)]...)
}

// EvalBatchView leaves the rows where they are, as model/llamacpp's
// EvalBatchView leaves them in llama.cpp's buffer (the batcher's path for
// every method but trees and list matching).
func (m *freeLLM) EvalBatchView(buf []float32, sessions []model.Session, tokens [][]int, skip []int) ([][][]float32, error) {
	if m.decode > 0 {
		t := time.Now()
		time.Sleep(m.decode)
		m.slept.Add(int64(time.Since(t)))
		m.batches.Add(1)
	}
	out := make([][][]float32, len(sessions))
	for i, s := range sessions {
		fs := s.(*freeSession)
		for j := range tokens[i] {
			if j >= skip[i] {
				out[i] = append(out[i], m.rows[fs.n%len(m.rows)])
			}
			fs.n++
		}
	}
	return out, nil
}

func (m *freeLLM) ReleaseView() {}

// EvalBatchInto is EvalBatchView with the rows copied into buf, as
// model/llamacpp does.
func (m *freeLLM) EvalBatchInto(buf []float32, sessions []model.Session, tokens [][]int, skip []int) ([][][]float32, error) {
	out, _ := m.EvalBatchView(nil, sessions, tokens, skip)
	for _, rows := range out {
		for i, r := range rows {
			rows[i], buf = append(buf[:0:m.cfg.Vocab], r...), buf[m.cfg.Vocab:]
		}
	}
	return out, nil
}

type freeSession struct {
	m *freeLLM
	n int
}

func (s *freeSession) Eval(tokens []int) ([][]float32, error) {
	var out [][]float32
	for range tokens {
		out = append(out, s.m.row(s.n, nil))
		s.n++
	}
	return out, nil
}
func (s *freeSession) Prefill(tokens []int) ([]float32, error) {
	r, err := s.Eval(tokens)
	return r[len(r)-1], err
}
func (s *freeSession) Truncate(n int) error        { s.n = min(s.n, n); return nil }
func (s *freeSession) Len() int                    { return s.n }
func (s *freeSession) SetCapture(model.Capture)    {}
func (s *freeSession) Attention() *model.Attention { return nil }

// BenchmarkServerWork measures hlm serve's own work per round with an LLM
// that costs nothing (freeLLM, vocabulary 151,936): N sessions each send
// rounds of L = 4 draft ids (coupled), as bench/capacity does. It reports
// verifications (rounds) per second and the server's time per round of
// one session (wall time × threads ÷ verifications): what a GPU's decode
// cannot hide.
func BenchmarkServerWork(b *testing.B) {
	llm := newFreeLLM(151936)
	const rounds, L = 12, 4
	for _, sessions := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("N=%d", sessions), func(b *testing.B) {
			_, addr := start(b, Config{LLM: llm, MaxBatch: sessions, MaxSessions: 2 * sessions})
			var total int64
			for b.Loop() {
				total += fakeDevices(b, addr, sessions, rounds, L)
			}
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(total)/sec, "verifications/s")
			b.ReportMetric(sec*1e3*float64(tensor.Threads())/float64(total), "thread-ms/verification")
		})
	}
}

// BenchmarkServerGPULike puts behind hlm serve an LLM whose batches take
// the time llama.cpp took on an NVIDIA H200 for the same batches
// (docs/BENCHMARKS.md, "On a GPU": Qwen3-0.6B Q8_0, 32 × 5 positions in
// 9.6 ms, 8 × 5 in 4.5 ms, 1 × 5 in 1.9 ms, p50 of rounds.cpp) without
// using the CPU, and freeLLM's rows: N devices send coupled rounds of
// L = 4. It reports the verified positions per second and their share of
// the bound N·5/decode — the capacity target's ratio (≥ 0.9) for a server
// whose CPU does the rest with this machine's threads — and of the bound
// with the time the sleeps actually took ("of-slept": a sleep overshoots,
// which is no work of the server's). A model of the GPU, not a GPU: the
// decode time is fixed, and the CPU is this one.
func BenchmarkServerGPULike(b *testing.B) {
	const rounds, L = 24, 4
	for _, c := range []struct {
		n      int
		decode time.Duration
	}{{1, 1900 * time.Microsecond}, {8, 4500 * time.Microsecond}, {32, 9600 * time.Microsecond}} {
		llm := newFreeLLM(151936)
		llm.decode = c.decode
		b.Run(fmt.Sprintf("N=%d/decode=%v", c.n, c.decode), func(b *testing.B) {
			_, addr := start(b, Config{LLM: llm, MaxBatch: c.n, MaxSessions: 2 * c.n, BatchWindow: 2 * time.Millisecond})
			llm.slept.Store(0)
			llm.batches.Store(0)
			var total int64
			for b.Loop() {
				total += fakeDevices(b, addr, c.n, rounds, L)
			}
			pos := float64(total*(L+1)) / b.Elapsed().Seconds()
			b.ReportMetric(pos, "positions/s")
			b.ReportMetric(pos/(float64(c.n*(L+1))/c.decode.Seconds()), "of-bound")
			if n := llm.batches.Load(); n > 0 {
				slept := time.Duration(llm.slept.Load() / n)
				b.ReportMetric(pos/(float64(c.n*(L+1))/slept.Seconds()), "of-slept")
			}
		})
	}
}

// BenchmarkConversation measures a chat's later turns, each the whole
// conversation so far and 32 new tokens, generating 32 tokens with q-s:
// with each turn a new session ("new") and with the last turn's session
// continued ("continue": edge.Conversations). It reports, averaged over
// turns 2…6 (2…HLM_BENCH_TURNS), the bytes of the Open frame (the prompt sent up the link),
// the time to the first committed tokens (both models' prefill of the
// prompt, and the first round) and the turn's wall time. The models are
// the built-in stories260K pair, or HLM_BENCH_LLM and HLM_BENCH_SLM (model
// specs: e.g. a Qwen3-0.6B GGUF and the same file @exit=2), at 2 threads.
func BenchmarkConversation(b *testing.B) {
	llmSpec, slmSpec := os.Getenv("HLM_BENCH_LLM"), os.Getenv("HLM_BENCH_SLM")
	if llmSpec == "" {
		llmSpec, slmSpec = stories, stories+"@exit=2"
	}
	llm, err := llama.OpenSpec(llmSpec, "")
	if err != nil {
		b.Fatal(err)
	}
	slm, err := llama.OpenSpec(slmSpec, "")
	if err != nil {
		b.Fatal(err)
	}
	defer tensor.SetThreads(tensor.Threads())
	tensor.SetThreads(2)
	_, addr := start(b, Config{LLM: llm})
	turns, add := 6, 32
	if n, err := strconv.Atoi(os.Getenv("HLM_BENCH_TURNS")); err == nil && n > 1 {
		turns = n
	}
	for _, keep := range []bool{false, true} {
		name := "new"
		if keep {
			name = "continue"
		}
		b.Run(name, func(b *testing.B) {
			var openBytes, n int64
			var ttft, wall time.Duration
			for i := 0; i < b.N; i++ {
				p := hybrid.DefaultParams()
				p.Method, p.MaxTokens, p.Seed = hybrid.QS, 32, uint64(i)
				g, err := edge.NewGenerator(edge.Config{Addr: addr}, slm, p)
				if err != nil {
					b.Fatal(err)
				}
				if keep {
					g.Conversations = &edge.Conversations{}
				}
				rng := rand.New(rand.NewPCG(uint64(i), 7))
				seq := []int{g.Tok.BOS()}
				for turn := 1; turn <= turns; turn++ {
					for range add {
						seq = append(seq, 3+rng.IntN(llm.Config().Vocab-3))
					}
					start := time.Now()
					var first time.Duration
					r, st, err := g.OneTokens(context.Background(), p, seq, func([]int) {
						if first == 0 {
							first = time.Since(start)
						}
					})
					if err != nil {
						b.Fatal(err)
					}
					if turn > 1 {
						openBytes += st.OpenBytes
						ttft += first
						wall += time.Since(start)
						n++
					}
					seq = append(seq, r.Tokens...)
				}
			}
			b.ReportMetric(float64(openBytes)/float64(n), "open-B/turn")
			b.ReportMetric(float64(ttft.Milliseconds())/float64(n), "first-ms/turn")
			b.ReportMetric(float64(wall.Milliseconds())/float64(n), "ms/turn")
		})
	}
}
