package cloud

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/model"
)

// passLog is an LLM that records every block it evaluates — its length
// and the rows it was told to skip — through its sessions too, so that a
// lone session's pass (not batched) is recorded as well.
type passLog struct {
	model.Model
	delay  time.Duration // each block takes this long more
	mu     sync.Mutex
	blocks []block
}

type block struct{ n, skip int }

func (m *passLog) record(n, skip int) {
	time.Sleep(m.delay)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.blocks = append(m.blocks, block{n, skip})
}

func (m *passLog) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.blocks)
}

func (m *passLog) NewSession() model.Session {
	return &loggedSession{Session: m.Model.NewSession(), log: m}
}

func (m *passLog) EvalBatchSkip(sessions []model.Session, tokens [][]int, skip []int) ([][][]float32, error) {
	inner := make([]model.Session, len(sessions))
	for i, s := range sessions {
		inner[i] = s.(*loggedSession).Session
		m.record(len(tokens[i]), skip[i])
	}
	return m.Model.(model.SkipBatcher).EvalBatchSkip(inner, tokens, skip)
}

type loggedSession struct {
	model.Session
	log *passLog
}

func (s *loggedSession) Eval(tokens []int) ([][]float32, error) {
	s.log.record(len(tokens), 0)
	return s.Session.Eval(tokens)
}

func (s *loggedSession) EvalSkip(tokens []int, skip int) ([][]float32, error) {
	s.log.record(len(tokens), skip)
	return s.Session.(model.SkipSession).EvalSkip(tokens, skip)
}

func (s *loggedSession) EvalTree(tokens, parents []int) ([][]float32, error) {
	return s.Session.(model.TreeSession).EvalTree(tokens, parents)
}

func (s *loggedSession) KeepPath(path []int) error {
	return s.Session.(model.TreeSession).KeepPath(path)
}

// TestPrefillChunks: with PrefillChunk set, a prompt longer than it is
// evaluated a chunk per batch without logits (no block skips more than a
// chunk), the round finishing in the batch that evaluates the rest with
// the prompt's remaining rows skipped, not computed; and every method
// still commits the simulator's tokens, bits and counts.
func TestPrefillChunks(t *testing.T) {
	ms := models(t)
	const chunk = 50
	llm := &passLog{Model: ms.LLM}
	_, addr := start(t, Config{LLM: llm, Replicas: []model.Model{ms.SLM}, PrefillChunk: chunk})
	evaluated := 0
	for _, m := range hybrid.Methods {
		llm.mu.Lock()
		llm.blocks = nil
		llm.mu.Unlock()
		simMatchesNetwork(t, ms, addr, m, m, longPrompt)
		llm.mu.Lock()
		blocks := llm.blocks
		llm.mu.Unlock()
		if len(blocks) == 0 {
			continue // nothing was sent: slm never sends, and i-hlm and ui-hlm kept every token on the device here
		}
		evaluated++
		// The prompt, fitted to the context, has about 470 tokens: nine
		// chunks, then the rest with the first round's block.
		chunks, rest := 0, 0
		for _, b := range blocks {
			switch {
			case b.skip > chunk:
				t.Fatalf("%s: a block of %d tokens skips %d rows: more than a chunk (%d) of prompt in one pass", m, b.n, b.skip, chunk)
			case b.n == chunk && b.skip == chunk:
				chunks++
			case b.skip > 0:
				rest++
			}
		}
		if chunks != 9 || rest != 1 || blocks[0] != (block{chunk, chunk}) {
			t.Errorf("%s: %d chunks and %d rests of prompt, the first block %v; want 9, 1 and a chunk", m, chunks, rest, blocks[0])
		}
	}
	if evaluated < len(hybrid.Methods)-3 {
		t.Errorf("only %d of %d methods evaluated blocks on the server", evaluated, len(hybrid.Methods))
	}
}

// TestShutdownStopsChunkedPrompt: when Shutdown's context ends while a
// prompt is evaluated a chunk at a time (57 chunks of 8 tokens, 50 ms
// each), the rest of it is not evaluated: Shutdown returns within a second
// instead of waiting almost 3 s for the prompt.
func TestShutdownStopsChunkedPrompt(t *testing.T) {
	ms := models(t)
	llm := &passLog{Model: ms.LLM, delay: 50 * time.Millisecond}
	srv, addr := start(t, Config{LLM: llm, PrefillChunk: 8})
	p := params(hybrid.QS, 1)
	p.FitPrompt = true
	g := generator(t, ms, addr, p)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go g.One(ctx, p, longPrompt, nil)
	for deadline := time.Now().Add(30 * time.Second); llm.count() < 3; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no chunk of the prompt was evaluated within 30 s")
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	srv.Shutdown(sctx)
	if took := time.Since(start); took > time.Second {
		t.Errorf("Shutdown took %v: it waited for the prompt's chunks (%d blocks evaluated)", took, llm.count())
	}
}

// TestChunkedPromptLetsOthersIn: a round queued while a long prompt is
// evaluated a chunk at a time gets into a pass before the prompt's chunks
// are all done — at --max-batch 2, and at 1, where the carried prompt and
// the queued rounds take turns. (Before, the carried jobs went first and
// filled a batch of one: the short round waited for every chunk.)
func TestChunkedPromptLetsOthersIn(t *testing.T) {
	const chunk = 16
	for _, maxBatch := range []int{2, 1} {
		t.Run(fmt.Sprint("max-batch ", maxBatch), func(t *testing.T) {
			ms := models(t)
			llm := &passLog{Model: ms.LLM, delay: 20 * time.Millisecond}
			_, addr := start(t, Config{LLM: llm, MaxBatch: maxBatch, PrefillChunk: chunk})
			p := params(hybrid.QS, 1)
			p.FitPrompt = true
			p.MaxTokens = 4
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			long := generator(t, ms, addr, p)
			go long.One(ctx, p, longPrompt, nil)
			for deadline := time.Now().Add(30 * time.Second); llm.count() < 2; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("no chunk within 30 s")
				}
			}
			q := params(hybrid.QS, 2)
			q.MaxTokens = 4
			if _, _, err := generator(t, ms, addr, q).One(ctx, q, prompt, nil); err != nil {
				t.Fatal(err)
			}
			llm.mu.Lock()
			blocks := slices.Clone(llm.blocks)
			llm.mu.Unlock()
			// The short device's first block is the first that is not a
			// chunk; chunks must follow it.
			first := slices.IndexFunc(blocks, func(b block) bool { return b != block{chunk, chunk} })
			if first < 0 || !slices.Contains(blocks[first:], block{chunk, chunk}) {
				t.Errorf("the short device's round was evaluated only after every chunk of the long prompt (%d blocks: %v)", len(blocks), blocks)
			}
		})
	}
}
