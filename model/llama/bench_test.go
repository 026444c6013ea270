package llama

import (
	"fmt"
	"testing"
	"time"

	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/tensor"
)

// The stories shapes of llama2.c (vocabulary 32,000), as in
// ../shared/perf/ANCHORS.md; weights are random, the cost is the same.
var benchShapes = []struct {
	name string
	cfg  model.Config
}{
	{"stories15M", model.Config{Dim: 288, Hidden: 768, Layers: 6, Heads: 6, KVHeads: 6, Vocab: 32000, SeqLen: 256}},
	{"stories42M", model.Config{Dim: 512, Hidden: 1376, Layers: 8, Heads: 8, KVHeads: 8, Vocab: 32000, SeqLen: 256}},
	{"stories110M", model.Config{Dim: 768, Hidden: 2048, Layers: 12, Heads: 12, KVHeads: 12, Vocab: 32000, SeqLen: 256}},
}

// BenchmarkDecode measures single-token decoding over a 256-token context
// (positions cycle 0…255, as a 256-token generation does).
func BenchmarkDecode(b *testing.B) {
	for _, sh := range benchShapes {
		b.Run(sh.name, func(b *testing.B) {
			m := randomModel(b, sh.cfg, 1)
			s := m.Session()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if s.Len() == sh.cfg.SeqLen {
					s.Truncate(0)
				}
				if _, err := s.Eval([]int{i % sh.cfg.Vocab}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkVerify8 measures the server's block verification: 8 draft tokens
// evaluated in one pass (logits for all 8), then rolled back, at context
// positions cycling through 0…248.
func BenchmarkVerify8(b *testing.B) {
	const L = 8
	for _, sh := range benchShapes {
		b.Run(sh.name, func(b *testing.B) {
			m := randomModel(b, sh.cfg, 1)
			s := m.Session()
			block := make([]int, L)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if s.Len()+L > sh.cfg.SeqLen {
					s.Truncate(0)
				}
				for j := range block {
					block[j] = (i*L + j) % sh.cfg.Vocab
				}
				if _, err := s.Eval(block); err != nil {
					b.Fatal(err)
				}
				// Keep one position so the context advances like a real decode.
				s.Truncate(s.Len() - L + 1)
			}
			b.ReportMetric(float64(b.N*L)/b.Elapsed().Seconds(), "tokens/s")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "blocks/s")
		})
	}
}

func ExampleModel_EarlyExit() {
	w, _ := RandomWeights(model.Config{Dim: 32, Hidden: 48, Layers: 4, Heads: 4, KVHeads: 2, Vocab: 50, SeqLen: 32}, 1)
	target, _ := New(w, nil, "target")
	draft, _ := target.EarlyExit(1)
	fmt.Println(target.Config().Layers, draft.Config().Layers, draft.Config().Vocab == target.Config().Vocab)
	// Output: 4 1 true
}

// BenchmarkDecodeQuant is BenchmarkDecode at the stories110M shape with
// every matrix (classifier included) quantized as `PATH@q8` / `PATH@q4` do.
func BenchmarkDecodeQuant(b *testing.B) {
	sh := benchShapes[2]
	for _, typ := range []tensor.DType{tensor.Q8_0, tensor.Q4_0} {
		b.Run(sh.name+"-"+typ.String(), func(b *testing.B) {
			m, _, err := randomModel(b, sh.cfg, 1).Quantized(typ)
			if err != nil {
				b.Fatal(err)
			}
			s := m.Session()
			// One step queues the packing of the quantized matrices
			// (tensor/pack.go); the timed steps start once it is done.
			if _, err := s.Eval([]int{0}); err != nil {
				b.Fatal(err)
			}
			tensor.WaitPacking()
			if err := s.Truncate(0); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if s.Len() == sh.cfg.SeqLen {
					s.Truncate(0)
				}
				if _, err := s.Eval([]int{i % sh.cfg.Vocab}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkBlockVsStep measures the block-versus-step target in one loop: an
// 8-token verification block (logits for all 8) against a decode step at
// the same context, taken in turns so that the machine's load drifts over
// both alike. It reports block÷step (the target is ≤ 1.25 at stories110M,
// F32) and each one's time.
//
//	go test -run='^$' -bench=BlockVsStep/stories110M -benchtime=200x ./model/llama
func BenchmarkBlockVsStep(b *testing.B) {
	const L = 8
	for _, sh := range benchShapes {
		b.Run(sh.name, func(b *testing.B) {
			m := randomModel(b, sh.cfg, 1)
			s := m.Session()
			block := make([]int, L)
			var step, blk time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if s.Len()+L+1 > sh.cfg.SeqLen {
					s.Truncate(0)
				}
				for j := range block {
					block[j] = (i*L + j) % sh.cfg.Vocab
				}
				t0 := time.Now()
				if _, err := s.Eval(block[:1]); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				s.Truncate(s.Len() - 1)
				if _, err := s.Eval(block); err != nil {
					b.Fatal(err)
				}
				step, blk = step+t1.Sub(t0), blk+time.Since(t1)
				// Keep one position so the context advances like a real decode.
				s.Truncate(s.Len() - L + 1)
			}
			b.ReportMetric(float64(blk)/float64(step), "block/step")
			b.ReportMetric(float64(step.Microseconds())/float64(b.N), "step-µs")
			b.ReportMetric(float64(blk.Microseconds())/float64(b.N), "block-µs")
		})
	}
}
