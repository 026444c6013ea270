package cloud

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/hlmproject/hlm/edge"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/llama"
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
			var rounds64 int64
			var mu sync.Mutex
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var wg sync.WaitGroup
				for s := 0; s < sessions; s++ {
					wg.Add(1)
					go func(s int) {
						defer wg.Done()
						if _, err := fakeDevice(addr, uint64(s), rounds, L); err != nil {
							b.Error(err)
						}
						mu.Lock()
						rounds64 += rounds
						mu.Unlock()
					}(s)
				}
				wg.Wait()
			}
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(rounds64)/sec, "verifications/s")
			b.ReportMetric(float64(rounds64*int64(L+1))/sec, "positions/s")
		})
	}
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
